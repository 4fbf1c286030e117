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
"""What the adversarial suite sends: raw HTTP, YAML features, sizes.

Bodies, patches, queries and headers come from the unit fuzzers
(:mod:`baremetal_orch.tests.unit.fuzz.bodies`); this adds what only a real
listener sees (request lines, framing, pipelining, encodings), YAML's own
features, and documents at and past each limit of
:mod:`baremetal_orch.common.limits`.

Replay a failing request (attached to the failed test as
``failing-request``, base64) against a running service, and sum the
figures of a run::

    python -m baremetal_orch.tests.functional.adversarial replay \\
        FILE http://127.0.0.1:6388
    python -m baremetal_orch.tests.functional.adversarial report FIGURES
"""

import base64
import json
import socket
import sys
import urllib.parse

from hypothesis import strategies as st

from baremetal_orch.common import limits
from baremetal_orch.deployment import strategy as strategy_mod
from baremetal_orch.tests.unit.fuzz import bodies

# Sizes at and past the limits -------------------------------------------


def _nested(depth, leaf='x'):
    value = leaf
    for _i in range(depth):
        value = {'a': value}
    return value


def _chain(n):
    return [{'name': 'g%d' % i, 'critical': False,
             'depends_on': ['g%d' % (i - 1)] if i else [], 'selectors': []}
            for i in range(n)]


def _document(groups=None, name='size-doc', **metadata):
    metadata['name'] = name
    return {'schema': strategy_mod.SCHEMA_NAME, 'metadata': metadata,
            'data': {'groups': groups or []}}


def _group(selectors):
    return [{'name': 'a', 'critical': True, 'depends_on': [],
             'selectors': selectors}]


#: (method, path, JSON document) at and just past each limit.
SIZED = [
    ('POST', '/v1/nodes', {'driver': 'fake', 'extra': {'a': 'x' * n}})
    for n in (1024 * 1024 - 60, 1024 * 1024 - 40, 1024 * 1024)
] + [
    ('POST', '/v1/nodes', {'driver': 'fake', 'extra': _nested(d)})
    for d in (limits.MAX_DEPTH - 2, limits.MAX_DEPTH - 1, limits.MAX_DEPTH,
              limits.MAX_DEPTH + 1, 500)
] + [
    ('POST', '/v1/deployment_strategies/validate', _document(_chain(n)))
    for n in (limits.MAX_GROUPS, limits.MAX_GROUPS + 1)
] + [
    ('POST', '/v1/nodes/filter', {'selectors': s}) for s in (
        [{'node_tags': ['t']}] * limits.MAX_SELECTORS,
        [{'node_tags': ['t']}] * (limits.MAX_SELECTORS + 1),
        [{'node_names': ['n%d' % i for i in range(limits.MAX_VALUES)]}],
        [{'node_names': ['n%d' % i for i in range(limits.MAX_VALUES + 1)]}],
        [{'node_labels': ['k:v%d' % i for i in range(
            limits.MAX_LABEL_PAIRS + 1)]}],
        [{'node_labels': ['k:v%d' % i for i in range(1200)]}],
        [{'node_names': ['n%d' % i for i in range(1200)]}] * 2)
] + [
    ('POST', '/v1/deployment_strategies/validate', _document(_group(s)))
    for s in ([{'node_names': ['n']}] * (limits.MAX_SELECTORS + 1),
              [{'node_labels': [{'k%d' % i: 'v'} for i in range(1200)]}])
] + [
    ('POST', '/v1/deployment_strategies/validate', _document(name=n))
    for n in ('n' * limits.NAME_MAX_LENGTH, 'n' * (limits.NAME_MAX_LENGTH
                                                   + 1), 'a/b', 'a b')
] + [
    ('POST', '/v1/nodes', {'driver': 'fake', 'tags': [
        i if i % 2 else str(i) for i in range(n)]}) for n in (2000, 50000)
] + [
    ('PATCH', '/v1/nodes/@node', [
        {'op': 'add', 'path': '/extra/k%d' % i, 'value': i}
        for i in range(n)])
    for n in (limits.MAX_PATCH_OPERATIONS, limits.MAX_PATCH_OPERATIONS + 1)
] + [
    ('PATCH', '/v1/nodes/@node', [
        {'op': 'copy', 'from': '/extra', 'path': '/extra/c%d' % i}
        for i in range(30)]),
    ('PATCH', '/v1/nodes/@node', [
        {'op': 'add', 'path': '/extra/deep', 'value': _nested(500)}]),
]


# YAML's own features ------------------------------------------------------

_SCHEMA = strategy_mod.SCHEMA_NAME


def _yaml_doc(extra='', name='y1', groups='[]'):
    return ('schema: %s\nmetadata: {name: %s}\ndata: {groups: %s}\n%s'
            % (_SCHEMA, name, groups, extra))


def _alias_bomb(levels, width=10):
    lines = ['a0: &a0 [%s]' % ', '.join(['x'] * width)]
    for i in range(1, levels):
        lines.append('a%d: &a%d [%s]' % (i, i, ', '.join(
            ['*a%d' % (i - 1)] * width)))
    return '\n'.join(lines) + '\n'


YAML_TEXTS = st.one_of(
    st.sampled_from([
        'a: &x [*x]', 'a: &x {b: *x}', '&x [*x, *x]',
        _alias_bomb(9), _alias_bomb(4), _alias_bomb(3, 3),
        _yaml_doc('x: &a {k: v}\ny: *a\n'),
        _yaml_doc('base: &b {k: v}\nother: {<<: *b, j: w}\n'),
        _yaml_doc(name='&n y2', groups='[{name: *n, critical: true, '
                  'depends_on: [], selectors: []}]'),
        _yaml_doc('x: !!python/object/apply:os.system [ls]\n'),
        _yaml_doc('x: !!python/name:os.system\n'),
        _yaml_doc('x: !custom tag\n'), _yaml_doc('x: !!binary aGk=\n'),
        _yaml_doc('x: !!set {a, b}\n'), _yaml_doc('x: 2026-11-24\n'),
        _yaml_doc('x: 2026-11-24T10:00:00Z\n'), _yaml_doc('x: !!omap '
                                                          '[a: 1]\n'),
        _yaml_doc('x: ' + '9' * 5000 + '\n'),
        _yaml_doc('x: ' + '9' * 4300 + '\n'),
        _yaml_doc('x: -' + '9' * 4301 + '\n'),
        _yaml_doc('x: 0x' + 'f' * 4000 + '\n'),
        _yaml_doc('x: 0o' + '7' * 5000 + '\n'),
        _yaml_doc('x: 1:2:3:4:5:6:7:8:9:10\n'),
        _yaml_doc('x: .nan\n'), _yaml_doc('x: -.inf\n'),
        _yaml_doc('x: 1.0e+999\n'), _yaml_doc('x: 1e999\n'),
        _yaml_doc('? [a, b]\n: c\n'), _yaml_doc('? {a: b}\n: c\n'),
        _yaml_doc('~: null-key\n'), _yaml_doc('1: int-key\n'),
        _yaml_doc('x: 1\nx: 2\n'),
        _yaml_doc() + '---\n' + _yaml_doc(name='y2'),
        '--- |\n  literal\n', '%YAML 1.1\n---\n' + _yaml_doc(),
        '%YAML 2.0\n---\na: 1\n', '%TAG ! tag:example.com,2000:\n---\n'
        '!foo a\n',
        '\ufeff' + _yaml_doc(), _yaml_doc('x: "\\x00"\n'),
        _yaml_doc('x: "\\uD800"\n'), _yaml_doc('x: "\\U0010FFFF"\n'),
        _yaml_doc('x: "\\U00110000"\n'),
        '[' * 70 + ']' * 70, '[' * 64 + ']' * 64, '{a: ' * 65 + '}' * 65,
        '[' * 100000, '[' * 20000 + ']' * 20000,
        ''.join(' ' * i + 'a:\n' for i in range(200)),
        ''.join('- ' * 70) + 'x\n',
        'a: "' + '\\' * 1000 + '"\n', 'a: \'' + 'x' * 100000 + '\'\n',
        '- ' + '\n- '.join(['x'] * 50000) + '\n',
        '{' + ', '.join('k%d: v' % i for i in range(30000)) + '}\n',
        ': : :\n', '- - - -\n', '&a *a', '*unknown', '!!str', '! ! !',
        '\t- a\n', 'a: b: c\n', '"unterminated', "'", '|', '>', '@',
        '`', '\x00', '\x85\u2028\u2029',
    ]),
    st.text(max_size=60),
    st.text(alphabet='[]{}:,-&*!|>\'"#%@` \n\t?ab01', max_size=80))

#: Encodings a YAML (or JSON) body may come in.
ENCODINGS = st.sampled_from(['utf-8', 'utf-8', 'utf-8', 'utf-8-sig',
                             'utf-16', 'utf-16-le', 'utf-32', 'latin-1'])


def encode(text, encoding):
    return text.encode(encoding, 'surrogatepass' if encoding.startswith(
        'utf') else 'replace')


# HTTP framing --------------------------------------------------------------

METHODS = st.one_of(
    st.sampled_from(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD',
                     'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'get',
                     'G E T', 'GET\x00', '']),
    st.text(alphabet='ABCDEFGHIJKLMNOPQRSTUVWXYZ-_', min_size=1,
            max_size=12))
TARGETS = st.one_of(
    st.sampled_from([
        '/', '/v1', '/v1/nodes', '/v1/nodes/@node', '/v1/nodes/%ff',
        '/v1/nodes/%', '/v1/nodes/%zz', '/v1/nodes/%00', '*',
        'http://127.0.0.1/v1/nodes', 'http://evil.example/v1', '//v1',
        '/v1/nodes?%ff=%fe', '/v1/nodes?limit=1&limit=2',
        '/v1/nodes?' + '&'.join('k%d=v' % i for i in range(2000)),
        '/v1/' + 'a' * 5000, '/v1/nodes#frag', '/v1/../v1/nodes',
        '/v1/nodes/@node/states/provision', '/v1/signals/@deployment',
        '/v1/deployment_strategies/validate', '/healthcheck', '']),
    st.text(max_size=30).map(lambda t: '/' + urllib.parse.quote(
        t.encode('utf-8', 'surrogatepass'), safe='/?=&')))
VERSIONS = st.sampled_from(['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0',
                            'HTTP/1.2', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1',
                            'http/1.1', 'HTTP/1.1 extra', 'FOO/1.1', ''])
HEADER_NAMES = st.one_of(
    st.sampled_from(['Content-Type', 'Content-Length', 'Transfer-Encoding',
                     'Expect', 'Connection', 'Host', 'Accept',
                     'Accept-Charset', 'Content-Encoding',
                     'OpenStack-API-Version', 'X-Signal-Token',
                     'X-Forwarded-Proto', 'X-Forwarded-For', 'Forwarded',
                     'Origin', 'Range', 'If-Match', 'Cookie',
                     'X-HTTP-Method-Override', 'X-Method-Override',
                     'X-OpenStack-Request-Id', 'Trailer', 'Upgrade', 'Te']),
    st.text(alphabet='abcdefghijklmnopqrstuvwxyz-', min_size=1,
            max_size=20))
HEADER_VALUES = st.one_of(
    st.sampled_from(['application/json', 'application/yaml',
                     'text/plain; charset=utf-16', 'chunked',
                     'gzip, chunked', 'identity', '100-continue', 'close',
                     'keep-alive', 'Upgrade', 'h2c', 'DELETE', '0', '-1',
                     '1' * 30, '*/*', 'bytes=0-10', 'websocket',
                     'baremetal-orch latest', '\x00', 'a\r\nInjected: 1',
                     ' leading space', 'trailing ', 'é', 'x' * 10000]),
    bodies.HEADER_TEXT)
FRAMINGS = st.sampled_from(['length', 'length', 'chunked', 'none',
                            'short_length', 'long_length', 'two_lengths',
                            'length_and_chunked', 'bad_chunk',
                            'chunk_extension', 'trailers', 'obs_fold',
                            'bare_lf', 'no_host', 'expect_continue'])


@st.composite
def raw_requests(draw, known):
    """``(head, body, closes_write)``: one request, any framing.

    ``closes_write``: the client shuts its side after sending (a body
    shorter than announced then ends, instead of the server waiting for
    the rest until its timeout).
    """
    method = draw(METHODS)
    target = draw(TARGETS)
    for placeholder in sorted(known, key=len, reverse=True):
        target = target.replace(placeholder, bodies.path_segment(
            known[placeholder]))
    version = draw(VERSIONS)
    headers = draw(st.lists(st.tuples(HEADER_NAMES, HEADER_VALUES),
                            max_size=4))
    body = draw(st.one_of(bodies.RAW_BODIES.filter(
        lambda b: len(b) < 200000), st.just(b'')))
    framing = draw(FRAMINGS)
    lines = ['%s %s %s' % (method, target, version)]
    if framing != 'no_host':
        lines.append('Host: 127.0.0.1')
    for name, value in headers:
        lines.append('%s: %s' % (name, value))
    payload = body
    closes = False
    if framing == 'length':
        lines.append('Content-Length: %d' % len(body))
    elif framing == 'short_length':
        lines.append('Content-Length: %d' % max(0, len(body) - 1))
    elif framing == 'long_length':
        lines.append('Content-Length: %d' % (len(body) + 10))
        closes = True
    elif framing == 'two_lengths':
        lines.append('Content-Length: %d' % len(body))
        lines.append('Content-Length: %d' % (len(body) + 1))
        closes = True
    elif framing in ('chunked', 'length_and_chunked', 'bad_chunk',
                     'chunk_extension', 'trailers'):
        lines.append('Transfer-Encoding: chunked')
        if framing == 'length_and_chunked':
            lines.append('Content-Length: %d' % len(body))
        size = b'%x' % len(body)
        if framing == 'bad_chunk':
            size = draw(st.sampled_from([b'zz', b'-1', b'', b'ffffffffffff',
                                         b'1' * 40]))
            closes = True
        elif framing == 'chunk_extension':
            size += b';name=value'
        payload = (size + b'\r\n' + body + b'\r\n' if body else b'') + \
            b'0\r\n' + (b'X-Trailer: 1\r\n' if framing == 'trailers'
                        else b'') + b'\r\n'
    elif framing == 'obs_fold':
        lines.append('X-Folded: a\r\n  b')
        lines.append('Content-Length: %d' % len(body))
    elif framing == 'expect_continue':
        lines.append('Expect: 100-continue')
        lines.append('Content-Length: %d' % len(body))
    elif framing == 'none':
        closes = bool(body)
    head = '\r\n'.join(lines) + '\r\n\r\n'
    if framing == 'bare_lf':
        head = head.replace('\r\n', '\n')
    return head.encode('utf-8', 'surrogatepass'), payload, closes


def replay(path, url):
    """Send the raw bytes of ``path`` to ``url``; print the answer."""
    with open(path, 'rb') as f:
        data = f.read()
    try:
        data = base64.b64decode(data, validate=True)
    except ValueError:
        pass
    parsed = urllib.parse.urlsplit(url)
    with socket.create_connection((parsed.hostname, parsed.port),
                                  timeout=30) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    sys.stdout.write(b''.join(chunks).decode('latin-1'))
    return 0


def report(path):
    """Sum the figures the tests wrote (one JSON line each)."""
    cases = requests = 0
    statuses = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            doc = json.loads(line)
            cases += doc['cases']
            requests += doc['requests']
            for status, count in doc['statuses'].items():
                statuses[status] = statuses.get(status, 0) + count
    server_errors = sum(c for s, c in statuses.items() if int(s) >= 500)
    print(json.dumps({'cases': cases, 'requests': requests,
                      'answers_5xx': server_errors,
                      'statuses': dict(sorted(statuses.items()))}))
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == 'replay':
        return replay(argv[2], argv[3])
    if len(argv) == 3 and argv[1] == 'report':
        return report(argv[2])
    sys.stderr.write('usage: %s replay FILE URL | report FILE\n' % argv[0])
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
