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
"""A small, real Kubernetes API server for tests of the label drivers.

It serves ``GET /api/v1/nodes/{name}`` and ``PATCH /api/v1/nodes/{name}``
over HTTP on 127.0.0.1 from an in-memory node store, with JSON merge-patch
semantics (RFC 7386: ``null`` deletes a key). PATCH requests with any other
content type are refused with 415, as a strict API server would. Every
request is recorded (method, path, content type, JSON body) so tests can
check the exact sequence the driver sends.
"""

import http.server
import json
import socket
import threading

import fixtures

NODE_PATH = '/api/v1/nodes/'
MERGE_PATCH = 'application/merge-patch+json'


def json_merge_patch(target, patch):
    """Apply an RFC 7386 merge patch to ``target`` (returns a new value)."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = json_merge_patch(result.get(key), value)
    return result


def write_kubeconfig(path, contexts, current_context, token):
    """Write a kubeconfig with one cluster and context per ``contexts`` item.

    :param contexts: dict of context name to API server URL.
    """
    config = {
        'apiVersion': 'v1',
        'kind': 'Config',
        'clusters': [{'name': name, 'cluster': {'server': url}}
                     for name, url in contexts.items()],
        'users': [{'name': 'tester', 'user': {'token': token}}],
        'contexts': [{'name': name,
                      'context': {'cluster': name, 'user': 'tester'}}
                     for name in contexts],
        'current-context': current_context,
    }
    with open(path, 'w') as f:
        json.dump(config, f)  # JSON is YAML
    return path


def closed_port_url():
    """An URL on 127.0.0.1 where nothing listens (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    return 'http://127.0.0.1:%d' % port


class SilentServer(fixtures.Fixture):
    """A socket that accepts connections and never answers."""

    def _setUp(self):
        self.sock = socket.socket()
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(8)
        self.addCleanup(self.sock.close)
        self.url = 'http://127.0.0.1:%d' % self.sock.getsockname()[1]


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    # Send each response in one write (flushed after each request): headers
    # and body in separate packets meet delayed ACKs and cost 40 ms each.
    wbufsize = -1

    def log_message(self, format, *args):
        pass  # keep test output clean

    def _send(self, status, body):
        data = json.dumps(body).encode('utf-8')
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _status(self, code, reason, message):
        self._send(code, {'kind': 'Status', 'apiVersion': 'v1',
                          'status': 'Failure', 'reason': reason,
                          'message': message, 'code': code})

    def _handle(self, method):
        api = self.server.api
        length = int(self.headers.get('Content-Length') or 0)
        raw = self.rfile.read(length) if length else b''
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode('utf-8', 'replace')
        content_type = self.headers.get('Content-Type')
        with api.lock:
            api.requests.append((method, self.path, content_type, body))
            if (self.headers.get('Authorization')
                    != 'Bearer %s' % api.token):
                return self._status(401, 'Unauthorized', 'Unauthorized')
            if api.fail_status and method in api.fail_methods:
                return self._status(api.fail_status, 'InternalError',
                                    'injected failure')
            if not self.path.startswith(NODE_PATH):
                return self._status(404, 'NotFound', 'no such path')
            name = self.path[len(NODE_PATH):].split('?')[0]
            node = api.nodes.get(name)
            if node is None:
                return self._status(404, 'NotFound',
                                    'nodes "%s" not found' % name)
            if method == 'PATCH':
                if content_type != MERGE_PATCH:
                    return self._status(415, 'UnsupportedMediaType',
                                        'not a merge patch: %s'
                                        % content_type)
                if not isinstance(body, dict):
                    return self._status(400, 'BadRequest',
                                        'a merge patch must be an object')
                node = json_merge_patch(node, body)
                labels = node.get('metadata', {}).get('labels') or {}
                if not all(isinstance(v, str) for v in labels.values()):
                    return self._status(422, 'Invalid',
                                        'label values must be strings')
                version = int(node['metadata']['resourceVersion']) + 1
                node['metadata']['resourceVersion'] = str(version)
                api.nodes[name] = node
            return self._send(200, node)

    def do_GET(self):
        self._handle('GET')

    def do_PATCH(self):
        self._handle('PATCH')


class FakeKubernetesAPI(fixtures.Fixture):
    """The fake API server, running in a thread for the fixture's life."""

    def __init__(self, token='test-token'):
        super().__init__()
        self.token = token
        self.lock = threading.Lock()
        self.nodes = {}
        self.requests = []
        self.fail_status = None
        self.fail_methods = ('GET', 'PATCH')

    def _setUp(self):
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Handler)
        server.daemon_threads = True
        server.api = self
        thread = threading.Thread(target=server.serve_forever,
                                  kwargs={'poll_interval': 0.05},
                                  daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(thread.join)
        self.addCleanup(server.shutdown)
        self.url = 'http://127.0.0.1:%d' % server.server_address[1]

    def add_node(self, name, labels=None):
        with self.lock:
            self.nodes[name] = {
                'apiVersion': 'v1', 'kind': 'Node',
                'metadata': {'name': name, 'resourceVersion': '1',
                             'labels': dict(labels or {})}}

    def labels(self, name):
        with self.lock:
            return dict(self.nodes[name]['metadata'].get('labels') or {})

    def fail(self, status, methods=('GET', 'PATCH')):
        """Answer the given methods with status from now on."""
        with self.lock:
            self.fail_status = status
            self.fail_methods = tuple(methods)
