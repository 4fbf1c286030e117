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
"""Strict HTTP framing, deadlines, slow and idle clients, on raw sockets
to the listener (urllib and requests normalise the bytes that matter)."""

import select
import socket

from baremetal_orch.tests.unit.api import test_wsgi_server as base
from baremetal_orch_testing import httpraw

HEAD = b'Host: x\r\nContent-Type: application/json\r\n'
#: A request hidden after a body: it must never run.
HIDDEN = b'GET /v1/hidden HTTP/1.1\r\nHost: x\r\n\r\n'

#: Requests RFC 9112 says a server must refuse: 400, then a close.
REFUSED = {
    'cl_and_te': b'POST /v1/nodes/filter HTTP/1.1\r\n' + HEAD +
    b'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n'
    b'0\r\n\r\n' + HIDDEN,
    'te_and_cl': b'POST /v1/nodes/filter HTTP/1.1\r\n' + HEAD +
    b'Transfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n'
    b'0\r\n\r\n' + HIDDEN,
    'space_before_colon': b'POST /v1/nodes/filter HTTP/1.1\r\n' + HEAD +
    b'Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n' + HIDDEN,
    'obs_fold': b'GET /v1 HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n',
    'te_gzip': b'POST /v1/nodes/filter HTTP/1.1\r\n' + HEAD +
    b'Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n',
    'te_http10': b'POST /v1/nodes/filter HTTP/1.0\r\n' + HEAD +
    b'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'two_cl': b'POST /v1/nodes/filter HTTP/1.1\r\n' + HEAD +
    b'Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}',
    'no_host': b'GET /v1 HTTP/1.1\r\n\r\n',
    'two_hosts': b'GET /v1 HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n',
    'bad_host': b'GET /v1 HTTP/1.1\r\nHost: a b/c\r\n\r\n',
    'cr_in_target': b'GET /v1/no\rdes HTTP/1.1\r\nHost: x\r\n\r\n',
    'tab_in_target': b'GET /v1/no\tdes HTTP/1.1\r\nHost: x\r\n\r\n',
    'nul_in_target': b'GET /v1/no\x00des HTTP/1.1\r\nHost: x\r\n\r\n',
    'nul_in_value': b'GET /v1 HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n',
    'cr_in_value': b'GET /v1 HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n',
    'tab_in_value': b'GET /v1 HTTP/1.1\r\nHost: x\r\nX-A: a\tb\r\n\r\n',
    'cr_in_host_post': b'POST /v1/nodes HTTP/1.1\r\nHost: x\ry\r\n'
    b'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
}
# An absolute-form target (RFC 9112 3.2.2) of another scheme than http(s),
# or whose authority is empty, holds user information or is no host.
for _target in (b'ftp://x/v1', b'http:///v1', b'http:/v1', b'http://u@x/v1',
                b'https://x:y/v1', b'v1:x'):
    REFUSED['absolute_form_%r' % _target] = (
        b'GET ' + _target + b' HTTP/1.1\r\nHost: x\r\n\r\n')
for _cl in (b'+2', b'1_1', b'-1', b'0x2', b' 2 2'):
    REFUSED['content_length_%r' % _cl] = (
        b'POST /v1/nodes/filter HTTP/1.1\r\n' + HEAD + b'Content-Length: ' +
        _cl + b'\r\n\r\n{}' + HIDDEN)
for _size in (b'+11', b'0x11', b'1_1', b'-1', b' 11', b'7fffffffffffffff',
              b'ffffffffffffffffffffffff'):
    REFUSED['chunk_size_%r' % _size] = (
        b'POST /v1/nodes/filter HTTP/1.1\r\n' + HEAD +
        b'Transfer-Encoding: chunked\r\n\r\n' + _size +
        b'\r\n{"selectors": []}\r\n0\r\n\r\n' + HIDDEN)


class TestFraming(base.ListenerTestCase):

    def application(self):
        self.ran = []
        api = super().application()

        def application(environ, start_response):
            self.ran.append((environ['REQUEST_METHOD'],
                             environ['PATH_INFO']))
            return api(environ, start_response)
        return application

    def test_refused(self):
        for name, raw in sorted(REFUSED.items()):
            with self.subTest(name):
                del self.ran[:]
                conn = self.connect()
                conn.send(raw)
                resp = conn.read()
                error = self.assertApiSig(resp, 400)
                self.assertTrue(error['detail'])
                self.assertTrue(resp.closes)
                self.assertClosedCleanly(conn)
                # Nothing reached the application: not the request, not
                # what was hidden after it.
                self.assertEqual([], self.ran)

    def test_trailers_read_and_dropped(self):
        conn = self.connect()
        conn.send(b'POST /v1/nodes/filter HTTP/1.1\r\n' + HEAD +
                  b'Transfer-Encoding: chunked\r\n\r\n'
                  b'11\r\n{"selectors": []}\r\n0\r\nX-Trailer: 1\r\n'
                  b'Content-Length: 99\r\n\r\n' +
                  httpraw.request('GET', '/v1'))
        first = conn.read('POST')
        self.assertEqual(200, first.status, first)
        self.assertFalse(first.closes)
        second = conn.read()
        self.assertEqual(200, second.status, second)
        self.assertEqual([('POST', '/v1/nodes/filter'), ('GET', '/v1')],
                         self.ran)

    def test_body_cut_by_the_client_gets_a_400(self):
        # The client shuts its side inside the body: an answer, not a
        # close without a word.
        conn = self.connect()
        conn.send(b'POST /v1/nodes/filter HTTP/1.1\r\n' + HEAD +
                  b'Content-Length: 100\r\n\r\n{"sel')
        conn.sock.shutdown(socket.SHUT_WR)
        error = self.assertApiSig(conn.read('POST'), 400)
        self.assertIn('ended early', error['detail'])
        self.assertClosedCleanly(conn)
        self.assertEqual([], self.ran)

    def test_body_past_the_limit_in_small_chunks_is_a_413(self):
        # No chunk is past the limit (a 400): the body is, a 413.
        chunk = b'%x\r\n%s\r\n' % (65536, b'x' * 65536)
        conn = self.connect()
        try:
            conn.send(b'POST /v1/nodes/filter HTTP/1.1\r\n' + HEAD +
                      b'Transfer-Encoding: chunked\r\n\r\n' + chunk * 20 +
                      b'0\r\n\r\n')
        except httpraw.Reset:
            pass
        resp = conn.read('POST')
        self.assertApiSig(resp, 413)
        self.assertTrue(resp.closes)
        self.assertEqual([], self.ran)

    def test_absolute_form(self):
        # RFC 9112 3.2.2: a server accepts a target in absolute form, and
        # takes the host from it, not from the Host header.
        conn = self.connect()
        conn.send(b'GET http://example.org/v1/nodes HTTP/1.1\r\n'
                  b'Host: example.org\r\n\r\n')
        resp = conn.read()
        self.assertEqual(200, resp.status, resp)
        self.assertIn('nodes', resp.json())
        for head in (b'GET http://target.example:8/v1 HTTP/1.1\r\n'
                     b'Host: other.example\r\n\r\n',
                     b'GET HTTPS://target.example:8/v1 HTTP/1.1\r\n'
                     b'Host: other.example\r\n\r\n',
                     b'GET http://target.example:8/v1 HTTP/1.0\r\n'
                     b'Connection: keep-alive\r\n\r\n'):
            with self.subTest(head):
                conn.send(head)
                resp = conn.read()
                self.assertEqual(200, resp.status, resp)
                self.assertEqual('http://target.example:8/v1/',
                                 resp.json()['links'][0]['href'])
        self.assertEqual([('GET', '/v1/nodes')] + [('GET', '/v1')] * 3,
                         self.ran)

    def test_head_allow_and_content_encoding(self):
        conn = self.connect()
        for path in ('/', '/v1', '/v1/nodes'):
            conn.send(httpraw.request('HEAD', path))
            resp = conn.read('HEAD')
            self.assertEqual(200, resp.status, (path, resp))
            self.assertEqual('application/json',
                             resp.headers['content-type'])
        for method, path in (('PUT', '/v1/nodes'), ('DELETE', '/v1/nodes'),
                             ('POST', '/'), ('PATCH', '/v1')):
            conn.send(httpraw.request(method, path, b'{}', {
                'Content-Type': 'application/json'}))
            resp = conn.read(method)
            self.assertApiSig(resp, 405)
            allow = resp.headers['allow']
            self.assertIn('GET', allow)
            self.assertNotIn(method, allow)
        for coding in ('gzip', 'deflate', 'br', 'x-unknown'):
            conn.send(httpraw.request('POST', '/v1/nodes/filter', b'{}', {
                'Content-Type': 'application/json',
                'Content-Encoding': coding}))
            error = self.assertApiSig(conn.read('POST'), 415)
            self.assertIn('Content-Encoding', error['detail'])


class TestDeadlines(base.ListenerTestCase):

    HEADER_TIMEOUT = 1

    def test_header_deadline_does_not_restart_with_each_byte(self):
        # A byte every 0.3 s: within any inactivity timeout, yet the head
        # never ends. The connection is cut (a 408), the client did not
        # get to send its whole head.
        conn = self.connect()
        head = b'GET /v1 HTTP/1.1\r\nHost: x\r\nX-Slow: ' + b'a' * 200
        sent = 0
        for byte in head:
            # Until the server answers (or the whole head went out).
            if select.select([conn.sock], [], [], 0.3)[0]:
                break
            try:
                conn.send(bytes([byte]))
            except httpraw.Broken:
                break
            sent += 1
        self.assertLess(sent, len(head))
        resp = conn.read()
        error = self.assertApiSig(resp, 408)
        self.assertIn('[api]header_timeout', error['detail'])
        self.assertClosedCleanly(conn)

    def test_short_body_gets_a_400_before_the_close(self):
        conn = self.connect()
        conn.send(b'POST /v1/nodes/filter HTTP/1.1\r\n' + HEAD +
                  b'Content-Length: 100\r\n\r\n{"sel')
        resp = conn.read('POST')
        error = self.assertApiSig(resp, 400)
        self.assertIn('ended early', error['detail'])
        self.assertTrue(resp.closes)
        self.assertClosedCleanly(conn)

    def test_idle_connection_closed_after_the_deadline(self):
        conn = self.connect()
        self.assertClosedCleanly(conn)


class TestSlowAndIdleClients(base.ListenerTestCase):
    """One worker thread: a slow or idle client that held it would keep
    every other client waiting."""

    THREADS = 1
    QUEUE = 1
    HEADER_TIMEOUT = 30

    def test_slowloris_does_not_hold_the_thread(self):
        slow = []
        for i in range(8):
            conn = self.connect()
            conn.send(b'GET /v1 HTTP/1.1\r\nHost: x\r\nX-%d: ' % i)
            slow.append(conn)
        for _round in range(3):
            for conn in slow:
                conn.send(b'a')
            client = httpraw.Connection('127.0.0.1', self.server.port,
                                        timeout=20)
            self.addCleanup(client.close)
            client.send(GET)
            self.assertEqual(200, client.read().status)

    def test_idle_sockets_do_not_delay_nor_refuse(self):
        idle = []
        for _i in range(200):
            sock = socket.create_connection(('127.0.0.1', self.server.port))
            self.addCleanup(sock.close)
            idle.append(sock)
        for _i in range(3):
            client = httpraw.Connection('127.0.0.1', self.server.port,
                                        timeout=20)
            self.addCleanup(client.close)
            client.send(GET)
            resp = client.read()
            self.assertEqual(200, resp.status, resp)
        self.assertEqual(0, self.server.refused)


GET = base.GET
