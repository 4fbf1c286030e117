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
"""HTTP/1.1 on a raw socket: pipelining, keep-alive, and what broke.

``requests`` and ``http.client`` neither pipeline nor tell a reset
connection from a closed one; the listener tests need both. A
:class:`Connection` sends requests as bytes (several at once when
pipelined) and reads the answers one by one; every way it can go wrong is
an exception of its own: :class:`Reset` (RST, or EOF where an answer was
due on a connection the server never announced it would close),
:class:`Timeout` (no answer within the bound: a hang) and
:class:`Malformed` (bytes that are not an HTTP answer).

:func:`run_load` drives many such connections at once and counts.
"""

import collections
import json
import socket
import threading
import time

#: Seconds one answer may take before it is a hang.
ANSWER_TIMEOUT = 30


class Broken(Exception):
    """The connection did not give an answer it owed."""


class Reset(Broken):
    kind = 'reset'


class Timeout(Broken):
    kind = 'timeout'


class Malformed(Broken):
    kind = 'malformed'


class Response:
    def __init__(self, status, reason, headers, body):
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body

    @property
    def closes(self):
        """Whether the server said it closes the connection after this."""
        return 'close' in self.headers.get('connection', '').lower()

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return '<Response %s %s %r>' % (self.status, self.reason,
                                        self.body[:200])


def request(method, path, body=b'', headers=None, chunked=False,
            host='127.0.0.1'):
    """The bytes of one HTTP/1.1 request."""
    lines = ['%s %s HTTP/1.1' % (method, path), 'Host: %s' % host]
    for key, value in (headers or {}).items():
        lines.append('%s: %s' % (key, value))
    if chunked:
        lines.append('Transfer-Encoding: chunked')
        payload = b''
        if body:
            payload = b'%x\r\n%s\r\n' % (len(body), body)
        payload += b'0\r\n\r\n'
    else:
        if body or method in ('POST', 'PUT', 'PATCH'):
            lines.append('Content-Length: %d' % len(body))
        payload = body
    # Any text: what is not latin-1 goes as UTF-8 bytes.
    head = '\r\n'.join(lines).encode('utf-8', 'surrogatepass')
    head += b'\r\n\r\n'
    return head + payload


class Connection:
    """One keep-alive connection."""

    def __init__(self, host, port, timeout=ANSWER_TIMEOUT):
        self.timeout = timeout
        try:
            self.sock = socket.create_connection((host, port),
                                                 timeout=timeout)
        except socket.timeout as e:
            raise Timeout('connect: %s' % e)
        except ConnectionResetError as e:
            raise Reset('connect: %s' % e)
        self.file = self.sock.makefile('rb')

    def close(self):
        try:
            self.file.close()
        finally:
            self.sock.close()

    def send(self, data):
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError) as e:
            raise Reset('send: %s' % e)
        except socket.timeout as e:
            raise Timeout('send: %s' % e)

    def _line(self):
        try:
            line = self.file.readline(65537)
        except ConnectionResetError as e:
            raise Reset('read: %s' % e)
        except socket.timeout as e:
            raise Timeout('read: %s' % e)
        return line

    def _exact(self, size):
        try:
            data = self.file.read(size)
        except ConnectionResetError as e:
            raise Reset('read: %s' % e)
        except socket.timeout as e:
            raise Timeout('read: %s' % e)
        if len(data) < size:
            raise Reset('EOF inside a body')
        return data

    def read(self, method='GET'):
        """The next final answer on the connection (a ``100 Continue``
        before it is skipped)."""
        while True:
            resp = self._read(method)
            if resp.status >= 200 or resp.status < 100:
                return resp

    def _read(self, method):
        line = self._line()
        if not line:
            raise Reset('EOF where an answer was due')
        parts = line.decode('latin-1').rstrip('\r\n').split(' ', 2)
        if len(parts) < 2 or not parts[0].startswith('HTTP/1.'):
            raise Malformed('status line %r' % line[:100])
        try:
            status = int(parts[1])
        except ValueError:
            raise Malformed('status line %r' % line[:100])
        headers = {}
        while True:
            line = self._line()
            if not line:
                raise Reset('EOF inside the headers')
            if line in (b'\r\n', b'\n'):
                break
            key, _sep, value = line.decode('latin-1').partition(':')
            headers[key.strip().lower()] = value.strip()
        body = b''
        if method == 'HEAD' or status in (204, 304) or status < 200:
            pass
        elif 'chunked' in headers.get('transfer-encoding', '').lower():
            while True:
                size = int(self._line().split(b';')[0].strip() or b'0', 16)
                if size == 0:
                    while self._line() not in (b'\r\n', b'\n', b''):
                        pass
                    break
                body += self._exact(size)
                self._exact(2)
        elif 'content-length' in headers:
            body = self._exact(int(headers['content-length']))
        else:
            try:
                body = self.file.read()
            except ConnectionResetError as e:
                raise Reset('read: %s' % e)
        return Response(status, parts[2] if len(parts) > 2 else '',
                        headers, body)


# Load ------------------------------------------------------------------------

_GET = ('GET', '/v1/nodes?limit=5', b'', {}, False)

#: Exchanges a load client cycles through: each is a list of requests sent
#: at once (pipelined). The first of most is answered early, before its
#: body is read; the GET after it must get its own 200.
SCENARIOS = {
    'get': [_GET],
    'one_shot': [('GET', '/v1/nodes?limit=5', b'', {'Connection': 'close'},
                  False)],
    'pipelined_gets': [_GET, ('GET', '/v1', b'', {}, False), _GET],
    'chunked_415': [('POST', '/v1/nodes', b'hello world ' * 50,
                     {'Content-Type': 'text/plain'}, True), _GET],
    'length_415': [('POST', '/v1/nodes', b'x' * 3000,
                    {'Content-Type': 'text/plain'}, False), _GET],
    'unknown_path_404': [('POST', '/v1/nowhere', b'{"a": 1}' * 100,
                          {'Content-Type': 'application/json'}, False),
                         _GET],
    'chunked_404': [('PUT', '/v1/nowhere', b'{"a": 1}' * 100,
                     {'Content-Type': 'application/json'}, True), _GET],
    'bad_path_400': [('GET', '/v1/nodes/%ff', b'', {}, False), _GET],
    'too_large_413': [('POST', '/v1/nodes', b'x' * (1024 * 1024 + 10),
                       {'Content-Type': 'application/json'}, False), _GET],
}


class Counts:
    """What the clients of a load run saw (thread-safe)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.statuses = collections.Counter()
        self.problems = collections.Counter()
        self.examples = {}
        self.exchanges = 0
        self.resent = 0

    def status(self, status):
        with self.lock:
            self.statuses[status] += 1

    def problem(self, kind, detail):
        with self.lock:
            self.problems[kind] += 1
            self.examples.setdefault(kind, str(detail)[:300])

    def add(self, name, value=1):
        with self.lock:
            setattr(self, name, getattr(self, name) + value)

    def as_dict(self):
        return {'exchanges': self.exchanges,
                'answers': sum(self.statuses.values()),
                'statuses': {str(k): v for k, v in
                             sorted(self.statuses.items())},
                'resets': self.problems['reset'],
                'timeouts': self.problems['timeout'],
                'malformed': self.problems['malformed'],
                'desyncs': self.problems['desync'],
                'connect_errors': self.problems['connect'],
                'bad_error_documents': self.problems['bad_error_document'],
                'service_unavailable': self.statuses.get(503, 0),
                'resent_after_close': self.resent,
                'examples': dict(self.examples)}


def _is_api_sig(resp):
    try:
        error = resp.json()['errors'][0]
        return error['status'] == resp.status and bool(error['code'])
    except (ValueError, KeyError, IndexError, TypeError):
        return False


def _exchange(conn, requests_, counts):
    """Send ``requests_`` pipelined; read their answers.

    :returns: ``(keep, unanswered)``: whether the connection may carry
        more, and the requests the server closed on (announced) that the
        client must send again.
    """
    conn.send(b''.join(request(*r) for r in requests_))
    for i, (method, path, _b, _h, _c) in enumerate(requests_):
        resp = conn.read(method)
        counts.status(resp.status)
        if resp.status >= 400 and not _is_api_sig(resp):
            counts.problem('bad_error_document', resp)
        if i > 0 and resp.status != 200 and resp.status != 503:
            counts.problem('desync', '%s %s after %s %s answered %r' % (
                method, path, requests_[0][0], requests_[0][1], resp))
        if resp.closes:
            return False, requests_[i + 1:]
    return True, []


def _client(host, port, scenario_names, rounds, counts, timeout):
    conn = None
    try:
        for i in range(rounds):
            pending = list(SCENARIOS[scenario_names[i % len(
                scenario_names)]])
            counts.add('exchanges')
            while pending:
                keep = True
                try:
                    if conn is None:
                        try:
                            conn = Connection(host, port, timeout)
                        except Broken:
                            raise
                        except OSError as e:
                            counts.problem('connect', e)
                            return
                    keep, pending = _exchange(conn, pending, counts)
                    if pending:
                        counts.add('resent', len(pending))
                except Broken as e:
                    counts.problem(e.kind, e)
                    keep, pending = False, []
                if not keep and conn is not None:
                    conn.close()
                    conn = None
    finally:
        if conn is not None:
            conn.close()


def run_load(host, port, clients, rounds, scenarios=None, timeout=None):
    """``clients`` connections at once, ``rounds`` exchanges each.

    After a problem (reset, timeout, garbage) a client drops its connection
    and goes on with a new one. Returns :meth:`Counts.as_dict` plus the
    wall time.
    """
    names = list(scenarios or SCENARIOS)
    counts = Counts()
    start = threading.Barrier(clients + 1)

    def client(offset):
        # Each client starts at another scenario, so every kind of
        # exchange is in flight at once.
        order = names[offset % len(names):] + names[:offset % len(names)]
        start.wait()
        _client(host, port, order, rounds, counts,
                timeout or ANSWER_TIMEOUT)

    threads = [threading.Thread(target=client, args=(i,), daemon=True)
               for i in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    began = time.monotonic()
    for t in threads:
        t.join()
    result = counts.as_dict()
    result.update(clients=clients, rounds=rounds,
                  seconds=round(time.monotonic() - began, 2))
    return result
