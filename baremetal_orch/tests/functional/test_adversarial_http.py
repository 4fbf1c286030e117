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
"""The adversarial suite, documents and HTTP: strategy documents in JSON
and YAML (YAML's own features, encodings), sizes at and past every limit,
any header, content type and body on any path, and raw HTTP (request
lines, framing, pipelining). See
:mod:`baremetal_orch.tests.functional.adversarial_base`. Then smuggling,
slowloris and idle sockets against the all-in-one's listener."""

import json
import select
import socket
import time

import hypothesis
from hypothesis import strategies as st
import requests
import yaml

from baremetal_orch.tests.functional import adversarial
from baremetal_orch.tests.functional import adversarial_base as adv
from baremetal_orch.tests.functional import aio
from baremetal_orch.tests.functional import base
from baremetal_orch.tests.unit.fuzz import base as fuzz
from baremetal_orch.tests.unit.fuzz import bodies
from baremetal_orch.tests.unit.fuzz import documents
from baremetal_orch_testing import httpraw


class TestDocumentsAndHttp(adv.ServiceClass):
    """Strategy documents in JSON and YAML, sizes, and raw HTTP."""

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(data=st.data(),
                      path=st.sampled_from([
                          '/v1/deployment_strategies',
                          '/v1/deployment_strategies/validate']))
    def test_strategy_documents(self, data, path):
        self.case()
        document = bodies.resolve(data.draw(bodies.STRATEGY_DOCUMENTS),
                                  self.known)
        how = data.draw(st.sampled_from(['json', 'yaml', 'yaml-types']))
        if how == 'json':
            raw, ctype = json.dumps(document).encode(), 'application/json'
        else:
            if how == 'yaml-types':
                document = documents.mutate(data, document, last=False)
            try:
                text = yaml.dump(document, allow_unicode=True)
            except (yaml.YAMLError, RecursionError):
                text = json.dumps(document)
            raw = adversarial.encode(text, data.draw(adversarial.ENCODINGS))
            ctype = data.draw(st.sampled_from([
                'application/yaml', 'application/x-yaml', 'text/yaml',
                'application/yaml; charset=utf-16']))
        resp = self.send('POST', path, raw=raw, content_type=ctype)
        if resp.status == 201:
            name = resp.json()['name']
            self.send('GET', '/v1/deployment_strategies/%s'
                      % bodies.path_segment(name), content_type=None)
            if name != self.known['@strategy']:
                self.send('DELETE', '/v1/deployment_strategies/%s'
                          % bodies.path_segment(name), content_type=None)

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(text=adversarial.YAML_TEXTS,
                      encoding=adversarial.ENCODINGS,
                      path=st.sampled_from([
                          '/v1/deployment_strategies/validate',
                          '/v1/deployment_strategies']))
    def test_yaml_features(self, text, encoding, path):
        self.case()
        resp = self.send('POST', path, raw=adversarial.encode(text,
                                                              encoding),
                         content_type='application/yaml')
        if resp.status == 201:
            self.send('DELETE', '/v1/deployment_strategies/%s'
                      % bodies.path_segment(resp.json()['name']),
                      content_type=None)

    @hypothesis.seed(adv.SEED)
    @adv.examples(scale=0.3)
    @hypothesis.given(case=st.sampled_from(adversarial.SIZED),
                      chunked=st.booleans())
    def test_sizes(self, case, chunked):
        self.case()
        method, path, body = case
        resp = self.send(method, path, body, chunked=chunked)
        if resp.status == 201 and path == '/v1/nodes':
            self.send('DELETE', '/v1/nodes/%s' % resp.json()['uuid'],
                      content_type=None)

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(
        method=st.sampled_from(['GET', 'POST', 'PUT', 'PATCH', 'DELETE',
                                'HEAD', 'OPTIONS']),
        path=st.one_of(st.sampled_from([
            '/', '/v1', '/v1/', '/v1/nodes', '/v1/nodes/@node',
            '/v1/nodes/@node/states/provision', '/v1/nodes/filter',
            '/v1/nodes/@node/maintenance', '/v1/ports', '/v1/ports/@port',
            '/v1/chassis', '/v1/chassis/@chassis',
            '/v1/deployment_strategies',
            '/v1/deployment_strategies/validate',
            '/v1/deployment_strategies/@strategy', '/v1/actions',
            '/v1/actions/@action', '/v1/tasks/@task', '/v1/services',
            '/v1/services/@host', '/v1/shards', '/v1/events',
            '/v1/deployments', '/v1/deployments/@deployment',
            '/v1/signals/@deployment', '/healthcheck', '/v2',
            '/v1/nodes/@node?_method=delete', '/v1/nodes/%FF',
            '/v1/nodes/%00', '/v1/nodes/a%2Fb', '/v1/nodes/..',
            '/v1/nodes.json', '/v1/chassis?uuid=@chassis']),
            fuzz.TEXT.map(lambda t: '/v1/' + bodies.path_segment(t))),
        headers=bodies.EXTRA_HEADERS,
        version=st.one_of(st.none(), bodies.API_VERSIONS),
        content_type=st.one_of(bodies.CONTENT_TYPES, st.sampled_from([
            'application/json; charset=x-unknown',
            'application/json; charset=utf-16',
            'application/x-www-form-urlencoded'])),
        raw=st.one_of(bodies.RAW_BODIES.filter(lambda b: len(b) < 300000),
                      st.sampled_from([b'_method=delete',
                                       b'_method=DELETE&x=1'])),
        chunked=st.booleans())
    def test_headers_and_bodies(self, method, path, headers, version,
                                content_type, raw, chunked):
        self.case()
        headers = dict(headers)
        if version is not None:
            headers['OpenStack-API-Version'] = version
        if method == 'DELETE' and '@' in path:
            # Keep the fixtures of the next examples.
            method = 'GET'
        self.send(method, path, raw=raw, headers=headers,
                  content_type=content_type, chunked=chunked)
        self.send('GET', '/v1/nodes/@node', content_type=None)

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(data=st.data(), pipelined=st.integers(1, 3))
    def test_raw_http(self, data, pipelined):
        """Any request line and framing, several on one connection: every
        request gets an answer, unless an answer before it announced the
        close; never a reset, never garbage. A fresh connection each."""
        self.case()
        requests_ = [data.draw(adversarial.raw_requests(self.known))
                     for _i in range(pipelined)]
        payload = b''.join(head + body for head, body, _c in requests_)
        closes = any(c for _h, _b, c in requests_)
        self.last_request = payload
        self.requests += pipelined
        conn = httpraw.Connection('127.0.0.1', self.service.port,
                                  timeout=adv.ANSWER_TIMEOUT)
        self.addCleanup(conn.close)
        try:
            conn.send(payload)
        except httpraw.Reset:
            # The server answered and closed before we finished sending
            # (a 413, an error in the request line): read what it said.
            pass
        if closes:
            try:
                conn.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        for i, (head, _body, _closes) in enumerate(requests_):
            method = head.split(b' ', 1)[0].decode('latin-1')
            try:
                resp = conn.read(method)
            except httpraw.Reset as e:
                if i == 0 and 'EOF where' in str(e):
                    # Nothing at all: only for bytes that are no request
                    # (the server closes without a word only then).
                    self.assertFalse(head.startswith(b'GET / HTTP/1.1\r\n'),
                                     payload[:300])
                    break
                self.fail('%s after %d answers to %r' % (e, i,
                                                         payload[:300]))
            except httpraw.Malformed as e:
                self.fail('garbage answer: %s to %r' % (e, payload[:300]))
            self.check(resp, method)
            # HTTP/1.0 (and what is not HTTP/1.1) closes after its answer
            # unless it asked to keep the connection.
            first_line = head.split(b'\r\n', 1)[0].split(b'\n', 1)[0]
            if resp.closes or not first_line.endswith(b' HTTP/1.1'):
                break
        conn.close()
        # The server still answers a plain request on a new connection.
        self.conn = None
        self.send('GET', '/v1', content_type=None)


class TestHostileClients(base.FunctionalTestCase):
    """The all-in-one's listener against smuggling, slowloris and idle
    sockets, on raw sockets to 127.0.0.1 (bounded in count and time)."""

    HEADER_TIMEOUT = 3
    #: Seconds a GET may take while slow or idle clients are connected:
    #: well under HEADER_TIMEOUT, which one of them holding a worker
    #: thread until it is cut would cost.
    PROMPT = 1.5

    def setUp(self):
        super().setUp()
        self.service = self.useFixture(aio.AllInOne({'api': {
            'workers': 2, 'max_queued_requests': 8,
            'header_timeout': self.HEADER_TIMEOUT}}))
        self.url = self.service.url

    def connect(self, timeout=30):
        conn = httpraw.Connection('127.0.0.1', self.service.port,
                                  timeout=timeout)
        self.addCleanup(conn.close)
        return conn

    def node(self, name):
        resp = requests.post(self.url + '/v1/nodes', timeout=30,
                             json={'driver': 'fake', 'name': name})
        self.assertEqual(201, resp.status_code, resp.text)
        return resp.json()['uuid']

    def prompt_get(self):
        """GET /v1/nodes, answered within PROMPT seconds; the status."""
        start = time.monotonic()
        resp = requests.get(self.url + '/v1/nodes', timeout=20)
        self.assertLess(time.monotonic() - start, self.PROMPT)
        return resp

    def exists(self, name):
        return requests.get(self.url + '/v1/nodes/%s' % name,
                            timeout=30).status_code == 200

    def test_smuggled_delete_does_not_run(self):
        delete = b'DELETE /v1/nodes/smuggled HTTP/1.1\r\nHost: x\r\n\r\n'
        head = (b'POST /v1/nodes/filter HTTP/1.1\r\nHost: x\r\n'
                b'Content-Type: application/json\r\n')
        body = b'{"selectors": []}'
        chunk = b'%x\r\n%s\r\n' % (len(body), body)
        variants = {
            'cl_te': head + b'Content-Length: %d\r\nTransfer-Encoding: '
            b'chunked\r\n\r\n' % len(chunk) + chunk + b'0\r\n\r\n' + delete,
            'te_space_colon': head + b'Transfer-Encoding : chunked\r\n'
            b'Content-Length: %d\r\n\r\n' % len(body) + body + delete,
            'cl_plus': head + b'Content-Length: +%d\r\n\r\n' % len(body) +
            body + delete,
            'cl_underscore': head + b'Content-Length: 1_7\r\n\r\n' + body +
            delete,
            'trailer': head + b'Transfer-Encoding: chunked\r\n\r\n' + chunk +
            b'0\r\n' + delete,
        }
        for size in (b'+11', b'0x11', b'1_1', b'-1', b'7fffffffffffffff',
                     b'ffffffffffffffffffffffff'):
            variants['chunk_%r' % size] = (
                head + b'Transfer-Encoding: chunked\r\n\r\n' + size +
                b'\r\n' + body + b'\r\n0\r\n\r\n' + delete)
        self.node('smuggled')
        for name, raw in sorted(variants.items()):
            with self.subTest(name):
                conn = self.connect()
                conn.send(raw)
                resp = conn.read('POST')
                if name == 'trailer':
                    # The DELETE is a trailer: read and dropped.
                    self.assertEqual(200, resp.status, resp)
                else:
                    self.assertEqual(400, resp.status, resp)
                    self.assertTrue(resp.closes)
                    self.assertEqual(b'', conn.file.read())
                self.assertTrue(self.exists('smuggled'), name)
        self.assertNotIn(b'Traceback', self.service.log_since(0))

    def test_cr_in_host_creates_nothing(self):
        conn = self.connect()
        body = json.dumps({'driver': 'fake', 'name': 'crhost'}).encode()
        conn.send(b'POST /v1/nodes HTTP/1.1\r\nHost: a\rb\r\n'
                  b'Content-Type: application/json\r\n'
                  b'Content-Length: %d\r\n\r\n' % len(body) + body)
        self.assertEqual(400, conn.read('POST').status)
        self.assertFalse(self.exists('crhost'))

    def test_slowloris_is_cut_and_delays_nobody(self):
        # 8 clients, a header byte a second each, more than both worker
        # threads: each is cut at the head deadline (before it could send
        # its whole head) and GETs meanwhile are answered.
        heads = [b'GET /v1 HTTP/1.1\r\nHost: x\r\nX-Slow-%d: %s\r\n\r\n'
                 % (i, b'a' * 40) for i in range(8)]
        slow = [[self.connect(), head, 0] for head in heads]
        answered = []
        for _second in range(len(heads[0])):
            for item in slow:
                conn, head, sent = item
                if sent is None:
                    continue
                if select.select([conn.sock], [], [], 0)[0]:
                    item[2] = None
                    continue
                try:
                    conn.send(head[sent:sent + 1])
                    item[2] = sent + 1
                except httpraw.Broken:
                    item[2] = None
            answered.append(self.prompt_get().status_code)
            if all(item[2] is None for item in slow):
                break
            time.sleep(1)
        self.assertEqual([None] * 8, [item[2] for item in slow])
        self.assertEqual({200}, set(answered))
        for conn, _head, _sent in slow:
            resp = conn.read()
            self.assertEqual(408, resp.status, resp)

    def test_idle_sockets_delay_and_refuse_nobody(self):
        idle = []
        for _i in range(200):
            sock = socket.create_connection(('127.0.0.1', self.service.port))
            self.addCleanup(sock.close)
            idle.append(sock)
        for _i in range(5):
            resp = self.prompt_get()
            self.assertEqual(200, resp.status_code, resp.text)

    def test_short_body_answered_before_the_close(self):
        conn = self.connect()
        conn.send(b'POST /v1/nodes/filter HTTP/1.1\r\nHost: x\r\n'
                  b'Content-Type: application/json\r\n'
                  b'Content-Length: 100\r\n\r\n{"selectors"')
        resp = conn.read('POST')
        self.assertEqual(400, resp.status, resp)
        self.assertTrue(resp.closes)
        self.assertEqual(b'', conn.file.read())
