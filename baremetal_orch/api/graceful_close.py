#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.
"""Graceful closes of many sockets at once, on one thread.

A close with bytes the server has not read sends a reset, which can destroy
the answer in flight. A socket handed to :class:`Closer` gets its last bytes
written, its write side shut (the client sees the end of the answer), then
what the client still sends is read and dropped until it closes its side or
``LINGER_SECONDS`` or ``LINGER_BYTES`` run out; only then is it closed.
"""

import collections
import selectors
import socket
import threading
import time

#: How long, and how many bytes, a closing connection drains.
LINGER_SECONDS = 5.0
LINGER_BYTES = 16 * 1024 * 1024


class Closer(threading.Thread):
    """Closes sockets gracefully, many at once, on one thread.

    Each socket handed over gets its last bytes written (a refusal), its
    write side shut (the client sees the end of the answer), then what the
    client still sends is read and dropped until it closes its side or the
    linger time or byte budget runs out; only then is it closed.
    """

    def __init__(self):
        super().__init__(name='wsgi-closer', daemon=True)
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        # A wake that does not fit is not needed: one is pending already.
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._incoming = collections.deque()
        self._lock = threading.Lock()
        self._stopping = False

    def add(self, sock, data=b''):
        """Take ``sock`` over: write ``data``, then close it gracefully."""
        with self._lock:
            if self._stopping:
                hard_close(sock)
                return
            self._incoming.append((sock, data))
        try:
            self._wake_w.send(b'x')
        except OSError:
            pass

    def stop(self):
        with self._lock:
            self._stopping = True
        try:
            self._wake_w.send(b'x')
        except OSError:
            pass

    def _take(self, states):
        with self._lock:
            incoming, self._incoming = self._incoming, collections.deque()
        for sock, data in incoming:
            try:
                sock.setblocking(False)
                fd = sock.fileno()
            except OSError:
                continue
            state = {'sock': sock, 'out': bytearray(data), 'read': 0,
                     'deadline': time.monotonic() + LINGER_SECONDS,
                     'shut': False}
            states[fd] = state
            self._step(fd, state, states)

    def _step(self, fd, state, states):
        """Advance one socket: write, shut, drain; close when done."""
        sock = state['sock']
        try:
            while state['out']:
                sent = sock.send(state['out'])
                del state['out'][:sent]
        except BlockingIOError:
            self._watch(fd, state, selectors.EVENT_WRITE)
            return
        except OSError:
            self._forget(fd, states)
            return
        if not state['shut']:
            state['shut'] = True
            try:
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                self._forget(fd, states)
                return
        try:
            while True:
                data = sock.recv(65536)
                if not data:
                    self._forget(fd, states)
                    return
                state['read'] += len(data)
                if state['read'] > LINGER_BYTES:
                    self._forget(fd, states)
                    return
        except BlockingIOError:
            self._watch(fd, state, selectors.EVENT_READ)
        except OSError:
            self._forget(fd, states)

    def _watch(self, fd, state, events):
        try:
            self._selector.modify(fd, events, state)
        except KeyError:
            self._selector.register(fd, events, state)

    def _forget(self, fd, states):
        state = states.pop(fd, None)
        try:
            self._selector.unregister(fd)
        except (KeyError, ValueError):
            pass
        if state is not None:
            hard_close(state['sock'])

    def run(self):
        states = {}
        while True:
            with self._lock:
                stopping = self._stopping
            if stopping:
                break
            for key, _events in self._selector.select(timeout=0.5):
                if key.fileobj is self._wake_r:
                    try:
                        while self._wake_r.recv(4096):
                            pass
                    except BlockingIOError:
                        pass
                    continue
                if key.fd in states:
                    self._step(key.fd, states[key.fd], states)
            self._take(states)
            now = time.monotonic()
            for fd in [fd for fd, s in states.items()
                       if s['deadline'] < now]:
                self._forget(fd, states)
        for fd in list(states):
            self._forget(fd, states)
        with self._lock:
            for sock, _data in self._incoming:
                hard_close(sock)
            self._incoming.clear()
        self._selector.close()
        hard_close(self._wake_r)
        hard_close(self._wake_w)


def hard_close(sock):
    try:
        sock.close()
    except OSError:
        pass
