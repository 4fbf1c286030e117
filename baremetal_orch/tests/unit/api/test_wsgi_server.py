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
"""The API listener on a real socket: keep-alive in step, 503 past its
capacity, graceful closes, API-SIG errors from the server itself, strict
framing, deadlines, slow and idle clients."""

import socket
import threading

from baremetal_orch.api import app
from baremetal_orch.api import wsgi_server
from baremetal_orch.tests import base
from baremetal_orch_testing import httpraw

GET = httpraw.request('GET', '/v1/nodes')
ERROR_KEYS = {'status', 'code', 'title', 'detail', 'request_id'}


class ListenerTestCase(base.ConductorTestCase):

    THREADS = 2
    QUEUE = 2
    HEADER_TIMEOUT = 10
    MAX_HEADER = 4096

    def setUp(self):
        super().setUp()
        self.config(group='api', auth_strategy='noauth')
        self.server = wsgi_server.Server(
            self.application(), '127.0.0.1', 0, threads=self.THREADS,
            max_queued=self.QUEUE, max_header_size=self.MAX_HEADER,
            header_timeout=self.HEADER_TIMEOUT)
        self.server.start()
        self.addCleanup(self.server.stop)

    def application(self):
        return app.setup_app()

    def connect(self):
        conn = httpraw.Connection('127.0.0.1', self.server.port, timeout=60)
        self.addCleanup(conn.close)
        return conn

    def assertApiSig(self, resp, status):
        self.assertEqual(status, resp.status, resp)
        self.assertEqual('application/json', resp.headers['content-type'])
        errors = resp.json()['errors']
        self.assertEqual(ERROR_KEYS, set(errors[0]))
        self.assertEqual(status, errors[0]['status'])
        return errors[0]

    def assertClosedCleanly(self, conn):
        """The server closed: an end of stream, not a reset."""
        self.assertEqual(b'', conn.file.read())


class TestKeepAliveInStep(ListenerTestCase):

    def test_chunked_body_answered_early(self):
        # 415 before the chunked body was read, then a pipelined GET: the
        # GET was read as the rest of the body ("400 Malformed
        # Request-Line"), a desync a proxy would hand to another client.
        conn = self.connect()
        conn.send(httpraw.request('POST', '/v1/nodes', b'hello ' * 100,
                                  {'Content-Type': 'text/plain'},
                                  chunked=True) + GET)
        first = conn.read('POST')
        self.assertApiSig(first, 415)
        if first.closes:
            # Announced: the GET is for a new connection.
            self.assertClosedCleanly(conn)
            conn = self.connect()
            conn.send(GET)
        second = conn.read()
        self.assertEqual(200, second.status, second)
        self.assertIn('nodes', second.json())

    def test_sized_body_answered_early_keeps_the_connection(self):
        conn = self.connect()
        for _i in range(3):
            conn.send(httpraw.request('POST', '/v1/nodes', b'x' * 5000,
                                      {'Content-Type': 'text/plain'}) + GET)
            first = conn.read('POST')
            self.assertApiSig(first, 415)
            self.assertFalse(first.closes)
            self.assertEqual(200, conn.read().status)

    def test_malformed_chunked_body_is_a_400(self):
        conn = self.connect()
        conn.send(b'POST /v1/nodes HTTP/1.1\r\nHost: x\r\n'
                  b'Content-Type: application/json\r\n'
                  b'Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n')
        error = self.assertApiSig(conn.read('POST'), 400)
        self.assertIn('chunk size', error['detail'])

    def test_body_past_the_limit_gets_its_answer(self):
        # 413 while the client is still sending: the answer arrives, then
        # an end of stream (a close with unread bytes would be a reset).
        self.config(group='api', max_request_body_size=1024 * 1024)
        conn = self.connect()
        conn.send(httpraw.request('POST', '/v1/nodes', b'x' * (3 << 20),
                                  {'Content-Type': 'application/json'}))
        resp = conn.read('POST')
        self.assertApiSig(resp, 413)
        self.assertTrue(resp.closes)
        self.assertClosedCleanly(conn)


class TestServerOwnErrors(ListenerTestCase):

    def test_protocol_errors_are_api_sig_documents(self):
        for raw, status in (
                (b'GARBAGE\r\n\r\n', 400),
                (b'GET /v1 HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', 400),
                (b'GET /v1 HTTP/1.1\r\nHost: x\r\nX-Big: ' + b'a' * 8000 +
                 b'\r\n\r\n', 413),
                (b'GET /' + b'a' * 8000 + b' HTTP/1.1\r\n\r\n', 414)):
            conn = self.connect()
            conn.send(raw)
            resp = conn.read()
            error = self.assertApiSig(resp, status)
            self.assertTrue(error['detail'])
            self.assertTrue(resp.closes)


class TestDefaultHeaderLimit(ListenerTestCase):

    MAX_HEADER = 65536

    def test_long_request_line_and_headers_in_many_reads(self):
        # 70 KB, past the default limit: the server reads them in several
        # pieces. The request line was a 413, as if it had ended, once a
        # piece without its end came; and both answers said HTTP/1.0 to an
        # HTTP/1.1 client.
        for raw, status in (
                (b'GET /' + b'a' * 70000 + b' HTTP/1.1\r\nHost: x\r\n\r\n',
                 b'414'),
                (b'GET /v1 HTTP/1.1\r\nHost: x\r\nX-Big: ' + b'a' * 70000 +
                 b'\r\n\r\n', b'413')):
            with self.subTest(status=status):
                conn = self.connect()
                conn.send(raw)
                self.assertEqual(b'HTTP/1.1 ' + status,
                                 conn.file.readline()[:12])


class TestPastCapacity(ListenerTestCase):

    THREADS = 1
    QUEUE = 1

    def application(self):
        # /hold runs until the test releases it: it holds the one thread.
        self.release = threading.Event()
        self.held = threading.Event()
        api = app.setup_app()

        def application(environ, start_response):
            if environ['PATH_INFO'] == '/hold':
                self.held.set()
                self.release.wait(60)
                start_response('200 OK', [('Content-Length', '0')])
                return [b'']
            return api(environ, start_response)
        self.addCleanup(lambda: self.release.set())
        return application

    def hold(self):
        conn = self.connect()
        conn.send(httpraw.request('GET', '/hold'))
        self.assertTrue(self.held.wait(30))
        return conn

    def test_503_not_a_reset(self):
        # One thread, one place in the queue. A holds the thread, B waits
        # in the queue: C is past the capacity and gets a 503 at once.
        a = self.hold()
        b = self.connect()
        b.send(GET)
        self.wait_for(lambda: len(self.server._server.task_dispatcher.queue)
                      == 1)
        c = self.connect()
        c.send(GET)
        resp = c.read()
        error = self.assertApiSig(resp, 503)
        self.assertEqual('baremetal_orch.service_unavailable', error['code'])
        self.assertIn('[api]max_queued_requests', error['detail'])
        self.assertEqual('1', resp.headers['retry-after'])
        self.assertTrue(resp.closes)
        self.assertClosedCleanly(c)
        self.assertEqual(1, self.server.refused)
        # Those within the capacity are served.
        self.release.set()
        self.assertEqual(200, a.read().status)
        self.assertEqual(200, b.read().status)

    def test_pipelined_requests_past_capacity(self):
        # A keep-alive connection whose next request waits in its buffer
        # while the server is full: 200, then a 503 or a 200, never a
        # reset.
        blocker = self.hold()
        waiting = self.connect()
        waiting.send(GET + GET)
        self.wait_for(lambda: len(self.server._server.task_dispatcher.queue)
                      == 1)
        self.release.set()
        self.assertEqual(200, blocker.read().status)
        first = waiting.read()
        self.assertEqual(200, first.status)
        second = waiting.read()
        self.assertIn(second.status, (200, 503))


class TestConfiguration(base.TestCase):

    def test_from_config(self):
        from baremetal_orch.api import wsgi_server as ws
        self.config(group='api', host_ip='127.0.0.1', port=0, workers=3,
                    backlog=77, max_queued_requests=5,
                    max_keepalive_connections=9,
                    max_request_header_size=2048, header_timeout=4)
        server = ws.Server.from_config(lambda e, s: [], base.CONF)
        self.addCleanup(server.stop)
        inner = server._server
        self.assertEqual(3, len(inner.task_dispatcher.threads))
        self.assertEqual(77, inner.adj.backlog)
        self.assertEqual(5, inner.task_dispatcher.max_queued)
        self.assertEqual(9, inner.max_keepalive)
        self.assertEqual(2048, inner.adj.max_request_header_size)
        self.assertEqual(4, inner.adj.header_timeout)
        with socket.create_connection(('127.0.0.1', server.port)):
            pass

    def test_api_workers_is_the_deprecated_name_of_workers(self):
        import os
        import tempfile

        from oslo_config import cfg

        from baremetal_orch.conf import api
        conf = cfg.ConfigOpts()
        api.register_opts(conf)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'old.conf')
            with open(path, 'w') as f:
                f.write('[api]\napi_workers = 3\n')
            conf(['--config-file', path], default_config_files=[])
            self.assertEqual(3, conf.api.workers)

    def test_defaults(self):
        from baremetal_orch.conf import api
        defaults = {o.name: o.default for o in api.opts}
        self.assertEqual(4, defaults['workers'])
        self.assertEqual(128, defaults['max_queued_requests'])
        self.assertEqual(4096, defaults['backlog'])
        self.assertEqual(256, defaults['max_keepalive_connections'])
        self.assertEqual(65536, defaults['max_request_header_size'])
        self.assertEqual(10, defaults['header_timeout'])
