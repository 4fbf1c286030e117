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
"""The API's HTTP/1.1 WSGI server: waitress, made strict; no eventlet.

A connection waits in waitress's selector loop until its whole request
(head and body, up to the limits) has arrived; only then does a worker
thread run it. Idle and slow clients therefore hold a socket, never a
thread. The request head is parsed strictly
(:mod:`baremetal_orch.api.http_strict`).

Its capacity comes from ``[api]``: ``workers`` threads run requests,
``max_queued_requests`` more wait for a thread, the kernel holds
``backlog`` connections not accepted yet, and ``max_keepalive_connections``
stay open between requests. Past that capacity:

* a request that finds every thread busy and the queue full is answered at
  once ``503`` (an API-SIG document, ``Retry-After``), never a reset
  connection;
* past ``max_keepalive_connections`` open connections an answer carries
  ``Connection: close``; past that plus ``max_queued_requests`` and
  ``workers`` the server stops accepting until one closes.

Deadlines (``[api]header_timeout``): a connection that has not sent a whole
request head that long after it opened (or after its last answer) is
closed, the clock not restarting with each byte; a body that stops
arriving for that long is answered 400, then closed.

Every connection the server closes is closed gracefully: it stops writing,
then reads and drops what the client still sends until the client closes
too (:mod:`baremetal_orch.api.graceful_close`). A close with unread
bytes would send a reset, which can destroy the answer in flight. Errors
the server answers itself are API-SIG documents.

waitress documents ``serve`` and ``create_server``; the channel, task,
dispatcher and server classes extended here (and the parser in
:mod:`~baremetal_orch.api.http_strict`) are its internals, pinned to the
constrained waitress release by ``tests/unit/test_private_overrides.py``.
They are retired by waitress answering 503 itself past a bounded request
queue, holding a deadline for a whole request head, closing connections
gracefully (lingering) and taking a hook for the error answers it writes.
"""

import http.client
import json
import threading
import time

from oslo_log import log
from waitress import adjustments
from waitress import channel as w_channel
from waitress import server as w_server
from waitress import task as w_task
from waitress import wasyncore

from baremetal_orch.api import errors as api_errors
from baremetal_orch.api import graceful_close
from baremetal_orch.api import http_strict
from baremetal_orch.common import exception

LOG = log.getLogger(__name__)

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


def _refusal(status, detail):
    """The bytes of an error the server answers outside any request."""
    return _error_bytes('%d %s' % (status, http.client.responses[status]),
                        detail)


class _ErrorTask(w_task.ErrorTask):
    """An error waitress answers itself, as an API-SIG document.

    A transfer coding or an HTTP version the server does not speak is the
    client's mistake: 400, not 501 or 505 (a 5xx tells operators that the
    service failed).
    """

    def execute(self):
        error = self.request.error
        status, detail = error.code, str(error.body)
        if status in (501, 505):
            status, detail = 400, '%s: %s' % (error.reason, detail)
        if status >= 500:
            detail = 'An unexpected error occurred; see the service log.'
        body = json.dumps(api_errors.document(
            status, api_errors.http_code(status), detail)).encode()
        self.status = '%d %s' % (status, http.client.responses[status])
        self.response_headers.append(('Content-Type', 'application/json'))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _WSGITask(w_task.WSGITask):
    def execute(self):
        server = self.channel.server
        if len(server.active_channels) > server.max_keepalive:
            # The client opens a new connection for its next request.
            self.set_close_on_finish()
        return super().execute()


class _Channel(w_channel.HTTPChannel):
    """A connection: strict parser, deadlines, API-SIG errors, graceful
    close."""

    parser_class = http_strict.Parser
    task_class = _WSGITask
    error_task_class = _ErrorTask

    def __init__(self, server, sock, addr, adj, map=None):
        super().__init__(server, sock, addr, adj, map=map)
        self.head_deadline = self.creation_time + adj.header_timeout

    def service(self):
        super().service()
        # The next request head has the whole timeout from now.
        self.head_deadline = time.time() + self.adj.header_timeout

    def answer_and_close(self, data):
        """Send ``data`` (a whole answer), then close gracefully; what
        was received and not run yet is dropped."""
        with self.outbuf_lock:
            self.outbufs[-1].append(data)
            self.total_outbufs_len += len(data)
        for request in self.requests:
            request.close()
        self.requests = []
        if self.request is not None:
            self.request.close()
            self.request = None
        self.close_when_flushed = True

    def recv(self, buffer_size):
        request = self.request
        if request is None or self.close_when_flushed or not (
                request.headers_finished or request.header_plus.strip()):
            return super().recv(buffer_size)
        try:
            data = self.socket.recv(buffer_size)
        except OSError:
            self.handle_close()
            return b''
        if not data:
            # The client shut its side within a request: it still reads.
            self.answer_and_close(_refusal(
                400, 'The request ended early: the client closed its side '
                     'of the connection within it.'))
        return data

    def check_deadlines(self, now):
        """Called by the selector loop about once a second."""
        if self.requests or self.will_close or self.close_when_flushed:
            return
        request = self.request
        timeout = self.adj.header_timeout
        if request is None or not request.headers_finished:
            if now < self.head_deadline:
                return
            if request is None:
                # Nothing sent since the last answer: an idle connection.
                self.will_close = True
            else:
                self.answer_and_close(_refusal(
                    408, 'The request head did not arrive within '
                         '[api]header_timeout (%s seconds).' % timeout))
        elif now - self.last_activity >= timeout:
            self.answer_and_close(_refusal(
                400, 'The request body ended early: nothing arrived for '
                     '[api]header_timeout (%s seconds) before its end.'
                     % timeout))

    def handle_close(self):
        """Hand the socket to the graceful closer."""
        with self.outbuf_lock:
            for outbuf in self.outbufs:
                try:
                    outbuf.close()
                except Exception:
                    LOG.exception('Could not close an output buffer')
            self.total_outbufs_len = 0
            self.connected = False
            self.outbuf_lock.notify()
        sock = self.socket
        self.del_channel()
        self.socket = None
        if sock is not None:
            self.server.closer.add(sock)


class _Dispatcher(w_task.ThreadedTaskDispatcher):
    """waitress's worker threads, with a bounded queue."""

    max_queued = 1

    def offer(self, channel):
        """Queue ``channel``'s request unless the queue is full."""
        with self.lock:
            idle = len(self.threads) - self.stop_count - self.active_count
            if len(self.queue) >= max(idle, 0) + self.max_queued:
                return False
            self.queue.append(channel)
            self.queue_cv.notify()
        return True


class _WaitressServer(w_server.TcpWSGIServer):
    channel_class = _Channel

    def __init__(self, application, adj, closer, max_keepalive, **kwargs):
        self.closer = closer
        self.max_keepalive = max_keepalive
        self.refused = 0
        super().__init__(application, adj=adj, **kwargs)

    def add_task(self, channel):
        """A request has arrived whole: queue it for a thread, or answer
        503 at once when every thread is busy and the queue full."""
        if channel.close_when_flushed:
            # Refused already: what was pipelined after it is dropped.
            channel.requests = []
            return
        if self.task_dispatcher.offer(channel):
            return
        self.refused += 1
        channel.answer_and_close(_error_bytes(
            '503 Service Unavailable',
            'The API is at its capacity ([api]workers busy and '
            '[api]max_queued_requests waiting); retry later.',
            code=exception.ServiceUnavailable.code,
            extra=('Retry-After: %d' % RETRY_AFTER,)))
        self.pull_trigger()

    def maintenance(self, now):
        # Ours first: a stalled body gets its 400 before waitress's
        # inactivity timeout (twice as long) would close it without one.
        for channel in list(self.active_channels.values()):
            channel.check_deadlines(now)
        super().maintenance(now)


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
    :param max_body_size: bytes of a request body
        (``[api]max_request_body_size``).
    :param header_timeout: seconds a request head may take in all, and a
        body may stall (``[api]header_timeout``).
    """

    def __init__(self, application, host, port, threads=4, backlog=4096,
                 max_queued=128, max_keepalive=256, max_header_size=65536,
                 max_body_size=1048576, header_timeout=10.0):
        adj = adjustments.Adjustments(
            host=host, port=port, threads=threads, backlog=backlog,
            ident='baremetal-orch', max_request_header_size=max_header_size,
            # A body past the limit by a little (chunk framing) reaches
            # the application, which answers its own 413.
            max_request_body_size=max_body_size + 65536,
            connection_limit=max_keepalive + max_queued + threads,
            cleanup_interval=1, channel_timeout=int(header_timeout * 2) + 1,
            asyncore_use_poll=True, clear_untrusted_proxy_headers=False,
            log_socket_errors=False, expose_tracebacks=False)
        adj.header_timeout = header_timeout
        adj.body_limit = max_body_size
        dispatcher = _Dispatcher()
        dispatcher.max_queued = max(1, max_queued)
        dispatcher.set_thread_count(threads)
        self._closer = graceful_close.Closer()
        # The server's sockets and connections: the selector loop's map.
        self._map = {}
        self._server = _WaitressServer(application, adj, self._closer,
                                       max_keepalive, dispatcher=dispatcher,
                                       map=self._map)
        self._closer.start()
        self.port = self._server.effective_port
        self._stopping = threading.Event()
        self._thread = None

    @classmethod
    def from_config(cls, application, conf):
        """A server with the ``[api]`` options of ``conf``."""
        api = conf.api
        return cls(application, api.host_ip, api.port,
                   threads=api.workers, backlog=api.backlog,
                   max_queued=api.max_queued_requests,
                   max_keepalive=api.max_keepalive_connections,
                   max_header_size=api.max_request_header_size,
                   max_body_size=api.max_request_body_size,
                   header_timeout=api.header_timeout)

    @property
    def refused(self):
        """Requests answered 503 because the server was at capacity."""
        return self._server.refused

    def start(self):
        """Serve in a background thread (the API's and the all-in-one's
        oslo.service Service, tests)."""
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='wsgi')
        self._thread.start()

    def _run(self):
        server = self._server
        smap = self._map
        while not self._stopping.is_set():
            wasyncore.loop(timeout=1, map=smap, use_poll=True, count=1)
        # No new connection; the requests running end, their answers are
        # written (for a bounded time), then every connection is closed.
        server.del_channel()
        server.socket.close()
        server.task_dispatcher.shutdown(timeout=5)
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and any(
                getattr(c, 'total_outbufs_len', 0) for c in smap.values()):
            wasyncore.loop(timeout=0.1, map=smap, use_poll=True, count=1)
        for channel in list(server.active_channels.values()):
            channel.handle_close()
        server.trigger.close()
        self._closer.stop()

    def stop(self):
        if self._thread is None:
            self._server.close()
            self._server.task_dispatcher.shutdown(timeout=1)
            self._closer.stop()
            return
        self._stopping.set()
        self._server.pull_trigger()
        self._thread.join(15)
