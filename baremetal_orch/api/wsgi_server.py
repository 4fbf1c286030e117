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
"""A threaded HTTP/1.1 WSGI server (cheroot): no eventlet.

Its capacity comes from ``[api]``: ``workers`` threads run requests,
``max_queued_requests`` more wait for a thread, the kernel holds
``backlog`` connections not accepted yet, and ``max_keepalive_connections``
stay open between requests. Past that capacity:

* a request that finds every thread busy and the queue full is answered at
  once ``503`` (an API-SIG document, ``Retry-After``), never a reset
  connection;
* a connection past the keep-alive limit gets ``Connection: close`` with
  its answer.

Every connection the server closes is closed gracefully: it stops writing,
then reads and drops what the client still sends until the client closes
too (at most ``LINGER_SECONDS`` and ``LINGER_BYTES``). A close with unread
bytes would send a reset, which can destroy the answer in flight.

An early answer (a 4xx before the body was read) keeps the connection in
step: a body of known length is read to its end (cheroot does this), a
chunked body that was not read to its end closes the connection
(``Connection: close``), so a pipelined request never starts in the middle
of a body. Errors cheroot answers itself (a malformed request line,
oversized headers) are API-SIG documents too.
"""

import collections
import json
import logging
import queue
import selectors
import socket
import threading
import time

from cheroot import errors as cheroot_errors
from cheroot import server as cheroot_server
from cheroot import wsgi
from oslo_log import log

from baremetal_orch.api import errors as api_errors
from baremetal_orch.common import exception

LOG = log.getLogger(__name__)

#: How long, and how many bytes, a closing connection drains.
LINGER_SECONDS = 5.0
LINGER_BYTES = 16 * 1024 * 1024
#: Seconds a client is told to wait after a 503.
RETRY_AFTER = 1


def _error_bytes(status, detail, code=None, extra=()):
    """A whole HTTP answer: an API-SIG error document, then close."""
    number = int(status.split(' ', 1)[0])
    body = json.dumps(api_errors.document(
        number, code or api_errors.http_code(number), detail)).encode()
    lines = ['HTTP/1.1 %s' % status,
             'Content-Type: application/json',
             'Content-Length: %d' % len(body),
             'Connection: close']
    lines.extend(extra)
    return ('\r\n'.join(lines) + '\r\n\r\n').encode('latin-1') + body


class _Closer(threading.Thread):
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
                _hard_close(sock)
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
            _hard_close(state['sock'])

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
                _hard_close(sock)
            self._incoming.clear()
        self._selector.close()
        _hard_close(self._wake_r)
        _hard_close(self._wake_w)


def _hard_close(sock):
    try:
        sock.close()
    except OSError:
        pass


class _Input:
    """wsgi.input: a body that breaks off or is malformed (a bad chunk
    size, a chunked body past its limit) is the client's mistake, a 400,
    not an error of the service."""

    def __init__(self, stream):
        self._stream = stream

    def _call(self, method, *args):
        try:
            return getattr(self._stream, method)(*args)
        except (ValueError, IOError, cheroot_errors.MaxSizeExceeded) as e:
            if isinstance(e, socket.timeout):
                reason = 'the request body did not arrive in time'
            else:
                reason = 'the request body is malformed: %s' % e
            raise exception.InvalidParameterValue(reason=reason)

    def read(self, *args):
        return self._call('read', *args)

    def readline(self, *args):
        return self._call('readline', *args)

    def readlines(self, *args):
        return self._call('readlines', *args)

    def __iter__(self):
        return iter(self.readline, b'')


class _Gateway(wsgi.Gateway_10):
    def get_environ(self):
        environ = super().get_environ()
        environ['wsgi.input'] = _Input(environ['wsgi.input'])
        return environ


class _Request(cheroot_server.HTTPRequest):
    """cheroot's request: keep-alive kept in step, API-SIG errors."""

    def send_headers(self):
        if self.chunked_read and not getattr(self.rfile, 'closed', True):
            # Answered before the end of a chunked body: what follows on
            # the connection is body, not a request.
            self.close_connection = True
        return super().send_headers()

    def simple_response(self, status, msg=''):
        """An error cheroot answers itself, as an API-SIG document.

        A transfer coding or an HTTP version the server does not speak is
        the client's mistake: 400, not cheroot's 501 or 505 (a 5xx tells
        operators that the service failed).
        """
        status = str(status)
        if not status[:3].isdigit():
            status = '500 Internal Server Error'
        detail = msg or status[4:]
        if status[:3] in ('501', '505'):
            detail = '%s: %s' % (status[4:], detail) if msg else status[4:]
            status = '400 Bad Request'
        self.close_connection = True
        try:
            self.conn.wfile.write(_error_bytes(status, detail))
        except OSError as e:
            if e.args and e.args[0] not in \
                    cheroot_errors.socket_errors_to_ignore:
                raise
        self.sent_headers = True


class _Connection(cheroot_server.HTTPConnection):
    RequestHandlerClass = _Request

    def close(self):
        """Close gracefully (see :class:`_Closer`)."""
        closer = getattr(self.server, 'closer', None)
        if closer is None or self.linger:
            return super().close()
        _close_files(self)
        closer.add(self.socket)


def _close_files(conn):
    """Close the file objects of a connection, not its socket."""
    for f in (conn.rfile, conn.wfile):
        try:
            f.close()
        except (OSError, ValueError):
            pass


class _CherootServer(wsgi.Server):
    ConnectionClass = _Connection

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.closer = _Closer()
        self.refused = 0

    def process_conn(self, conn):
        """A connection with a request ready: queue it for a thread, or
        answer 503 at once when every thread is busy and the queue full."""
        try:
            self.requests.put(conn)
        except queue.Full:
            self.refused += 1
            _close_files(conn)
            self.closer.add(conn.socket, _error_bytes(
                '503 Service Unavailable',
                'The API is at its capacity ([api]workers busy and '
                '[api]max_queued_requests waiting); retry later.',
                code=exception.ServiceUnavailable.code,
                extra=('Retry-After: %d' % RETRY_AFTER,)))

    def error_log(self, msg='', level=logging.INFO, traceback=False):
        # cheroot's own messages (a client that went away, a bad request):
        # no traceback unless cheroot itself failed.
        if level >= logging.ERROR:
            LOG.error('HTTP server: %s', msg, exc_info=traceback)
        else:
            LOG.debug('HTTP server: %s', msg)


class Server:
    """The API's HTTP listener.

    :param threads: threads running requests (``[api]workers``).
    :param backlog: the listen(2) backlog (``[api]backlog``).
    :param max_queued: requests waiting for a thread before a 503
        (``[api]max_queued_requests``).
    :param max_keepalive: connections kept open between requests
        (``[api]max_keepalive_connections``).
    :param max_header_size: bytes of request line and headers
        (``[api]max_request_header_size``).
    """

    def __init__(self, application, host, port, threads=4, backlog=4096,
                 max_queued=128, max_keepalive=256, max_header_size=65536):
        self._server = _CherootServer(
            (host, port), application, numthreads=threads, max=threads,
            server_name='baremetal-orch', request_queue_size=backlog,
            accepted_queue_size=max(1, max_queued),
            accepted_queue_timeout=0)
        self._server.gateway = _Gateway
        self._server.keep_alive_conn_limit = max_keepalive
        self._server.max_request_header_size = max_header_size
        self._server.prepare()
        self._server.closer.start()
        self.port = self._server.bind_addr[1]
        self._thread = None

    @classmethod
    def from_config(cls, application, conf):
        """A server with the ``[api]`` options of ``conf``."""
        api = conf.api
        return cls(application, api.host_ip, api.port,
                   threads=api.workers, backlog=api.backlog,
                   max_queued=api.max_queued_requests,
                   max_keepalive=api.max_keepalive_connections,
                   max_header_size=api.max_request_header_size)

    @property
    def refused(self):
        """Requests answered 503 because the server was at capacity."""
        return self._server.refused

    def start(self):
        """Serve in a background thread (the API's and the all-in-one's
        oslo.service Service, tests)."""
        self._thread = threading.Thread(target=self._server.serve,
                                        daemon=True, name='wsgi')
        self._thread.start()

    def stop(self):
        self._server.stop()
        self._server.closer.stop()
