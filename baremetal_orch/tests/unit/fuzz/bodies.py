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
"""hypothesis strategies of API requests: bodies, patches, queries, headers.

Values that only exist once the test's fixtures do (a node's UUID, a
deployment's token) are drawn as placeholders: ``'@node'`` and friends,
which the test replaces with :func:`resolve`.
"""

import json
import urllib.parse
import uuid

from hypothesis import strategies as st

from baremetal_orch.tests.unit.fuzz import base as fuzz
from baremetal_orch.tests.unit.fuzz import documents

#: What a secret in driver_info looks like: nothing else in a request
#: contains it, so finding it in a response is a leak.
SECRET_MARKER = 'zSECRETz'

PLACEHOLDERS = ('@node', '@node_name', '@active', '@chassis', '@port',
                '@strategy', '@deployment', '@action', '@task', '@host',
                '@random_uuid')


def resolve(value, known):
    """``value`` with every placeholder replaced from ``known``, and every
    ``'@secret'`` by a new, unique secret."""
    if isinstance(value, str):
        if value == '@secret':
            return SECRET_MARKER + uuid.uuid4().hex
        return known.get(value, value)
    if isinstance(value, list):
        return [resolve(v, known) for v in value]
    if isinstance(value, dict):
        return {resolve(k, known): resolve(v, known)
                for k, v in value.items()}
    return value


def is_secret_key(key):
    """Whether values under ``key`` are masked (api-ref/source)."""
    return isinstance(key, str) and any(
        w in key.lower() for w in ('password', 'secret', 'token', 'key'))


def secrets_in(value):
    """The secrets a driver_info holds: marked strings under secret keys,
    at any depth of maps (inside lists too)."""
    found = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if (isinstance(item, str) and SECRET_MARKER in item
                    and is_secret_key(key)):
                found.add(item)
            else:
                found |= secrets_in(item)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)):
                found |= secrets_in(item)
    return found


def secrets_sent(method, path, body):
    """The secrets a node request stores in driver_info/instance_info."""
    found = set()
    if method == 'post' and path == '/v1/nodes' and isinstance(body, dict):
        for field in ('driver_info', 'instance_info'):
            found |= secrets_in(body.get(field))
    elif (method == 'patch' and path.startswith('/v1/nodes/')
            and isinstance(body, list)):
        for op in body:
            if not isinstance(op, dict) or not isinstance(op.get('path'),
                                                          str):
                continue
            parts = op['path'].split('/')
            if len(parts) > 1 and parts[1] in ('driver_info',
                                               'instance_info'):
                found |= secrets_in({parts[-1]: op.get('value')})
    return found


UUIDS = st.one_of(
    st.sampled_from(['@node', '@chassis', '@port', '@deployment',
                     '@action', '@task', '@random_uuid']),
    st.uuids().map(str), st.uuids().map(lambda u: u.hex),
    st.uuids().map(lambda u: str(u).upper()), fuzz.SCALARS)
NODE_IDENTS = st.one_of(
    st.sampled_from(['@node', '@node_name', '@active', 'n1', 'N1',
                     'n1 ', '%s', 'nodes']),
    UUIDS, fuzz.TEXT)
NAMES = st.one_of(
    st.from_regex(r'\A[A-Za-z0-9][A-Za-z0-9._~-]{0,8}\Z'),
    st.sampled_from(['n1', 'n2', 'a' * 255, 'a' * 256, '-x', 'x y',
                     'detail', 'filter']),
    fuzz.SCALARS)
OPTIONAL_TEXT = st.one_of(st.none(), fuzz.TEXT, fuzz.SCALARS)


#: A secret value: a new unique marked string each time (see resolve).
SECRETS = st.just('@secret')
SECRET_KEYS = st.sampled_from(['ipmi_password', 'api_token', 'secret',
                               'ssh_key', 'Password', 'redfish_password',
                               'auth_key', 'X_TOKEN', 'keystone_secret'])
PLAIN_KEYS = st.sampled_from(['ipmi_address', 'fake_duration',
                              'fake_fail_phase', 'deploy_kernel', 'port',
                              'user', ''])
#: driver_info: secrets under secret keys (and one level down), plain
#: values elsewhere, the fake driver's own keys, or not a map at all.
DRIVER_INFO = st.one_of(
    st.builds(lambda secret, plain: dict(plain, **secret),
              st.dictionaries(SECRET_KEYS, SECRETS, max_size=3),
              st.dictionaries(PLAIN_KEYS, fuzz.SCALARS, max_size=3)),
    st.builds(lambda k, v: {'nested': {k: v}, 'fake_duration': 0},
              SECRET_KEYS, SECRETS),
    st.fixed_dictionaries({}, optional={
        'fake_fail_phase': st.one_of(
            st.sampled_from(['prepare', 'deploy']), fuzz.SCALARS),
        'fake_duration': st.one_of(st.sampled_from([0, 0.0, '0', -1]),
                                   fuzz.NUMBERS, fuzz.TEXT)}),
    fuzz.SCALARS)

LABELS = st.dictionaries(documents.LABEL_KEYS, documents.LABEL_VALUES,
                         max_size=3)
#: Strings a column of 255 takes, the odd ones included.
SHORT_TEXT = st.one_of(st.text(max_size=20), fuzz.ODD_STRINGS.filter(
    lambda s: len(s) <= 255), st.text(min_size=250, max_size=255))
OBJECTS = st.dictionaries(fuzz.TEXT, fuzz.JSON, max_size=4)


@st.composite
def near(draw, valid, required=()):
    """A request body with at most one thing wrong.

    A map of valid values (``required`` keys always there, the others
    sometimes); then, now and then, one value replaced by any JSON, one
    key dropped or one unknown key added; or, rarely, any JSON at all.
    """
    body = draw(st.fixed_dictionaries(
        {k: valid[k] for k in required},
        optional={k: v for k, v in valid.items() if k not in required}))
    how = draw(st.sampled_from(
        ['valid'] * 5 + ['bad_value', 'bad_value', 'missing', 'extra',
                         'garbage']))
    if how == 'bad_value':
        body[draw(st.sampled_from(sorted(valid)))] = draw(fuzz.JSON)
    elif how == 'missing' and body:
        del body[draw(st.sampled_from(sorted(body)))]
    elif how == 'extra':
        body[draw(fuzz.TEXT)] = draw(fuzz.JSON)
    elif how == 'garbage':
        return draw(fuzz.JSON)
    return body


NODE_FIELDS = {
    'uuid': st.one_of(st.uuids().map(str), st.just('@node')),
    'name': st.one_of(
        st.from_regex(r'\A[A-Za-z0-9][A-Za-z0-9._~-]{0,8}\Z'),
        st.sampled_from(['n1', 'n2', 'a' * 255, None])),
    'driver': st.sampled_from(['fake', 'fake', 'fake', 'ironic']),
    'ironic_uuid': st.one_of(st.none(), st.uuids().map(str)),
    'chassis_uuid': st.one_of(st.none(), st.uuids().map(str),
                              st.just('@chassis')),
    'rack_name': st.one_of(st.none(), SHORT_TEXT),
    'tags': st.lists(SHORT_TEXT.filter(bool), unique=True, max_size=4),
    'labels': LABELS,
    'shard': st.one_of(st.none(), SHORT_TEXT),
    'conductor_group': st.one_of(st.none(), SHORT_TEXT),
    'driver_info': DRIVER_INFO.filter(lambda d: isinstance(d, dict)),
    'instance_info': OBJECTS, 'extra': OBJECTS,
    'owner': st.one_of(st.none(), SHORT_TEXT,
                       st.sampled_from(['project-a', 'project-b'])),
}
NODE_BODIES = near(NODE_FIELDS, ('driver',))

MACS = st.one_of(
    st.builds(lambda b, sep: sep.join('%02x' % x for x in b),
              st.binary(min_size=6, max_size=6), st.sampled_from([':', '-'])),
    st.sampled_from(['52:54:00:00:00:01', '52-54-00-00-00-01',
                     'AA:BB:CC:DD:EE:FF']))
PORT_FIELDS = {
    'uuid': st.one_of(st.uuids().map(str), st.just('@port')),
    'node_uuid': st.one_of(st.sampled_from(['@node', '@node', '@active']),
                           st.uuids().map(str)),
    'address': MACS,
    'pxe_enabled': st.booleans(),
    'local_link_connection': st.fixed_dictionaries({}, optional={
        'switch_id': fuzz.TEXT, 'port_id': fuzz.TEXT,
        'switch_info': fuzz.TEXT}),
    'extra': OBJECTS,
}
PORT_BODIES = near(PORT_FIELDS, ('node_uuid', 'address'))

CHASSIS_BODIES = near({
    'uuid': st.one_of(st.uuids().map(str), st.just('@chassis')),
    'description': st.one_of(st.none(), SHORT_TEXT), 'extra': OBJECTS})

# JSON patches ---------------------------------------------------------------

PATCH_PATHS = st.one_of(
    st.sampled_from([
        '/name', '/description', '/extra', '/extra/a', '/extra/a/b',
        '/driver_info', '/driver_info/ipmi_password', '/driver_info/x',
        '/driver_info/nested/api_token', '/driver_info/fake_duration',
        '/driver_info/nested/x/y', '/driver_info/x/y', '/instance_info/a/b',
        '/driver_info/nested/api_token/x', '/driver_info/ipmi_password/0',
        '/driver_info/fake_fail_phase', '/instance_info/x', '/tags',
        '/tags/0', '/tags/-', '/tags/99', '/labels', '/labels/role',
        '/labels/kubernetes.io~1hostname', '/owner', '/chassis_uuid',
        '/rack_name', '/shard', '/conductor_group', '/ironic_uuid',
        '/uuid', '/driver', '/provision_state', '/links', '/links/0/href',
        '/node_uuid', '/address', '/pxe_enabled',
        '/local_link_connection/switch_id', '/created_at', '', '/',
        '//driver_info', '/~1', '/~2', '/extra/~0', '/-', '/0']),
    fuzz.TEXT)
PATCH_VALUES = st.one_of(
    fuzz.JSON, SHORT_TEXT, st.booleans(), st.none(), OBJECTS, LABELS,
    st.lists(SHORT_TEXT, max_size=3), SECRETS,
    SECRETS.map(lambda s: {'password': s}), DRIVER_INFO,
    st.sampled_from(['@node', '@active', '@chassis', 'fake', 'ironic',
                     'prepare', 'deploy', 'project-b', '52:54:00:00:00:02']),
    st.uuids().map(str))
PATCH_OPERATION = st.fixed_dictionaries(
    {'op': st.sampled_from(['add', 'remove', 'replace', 'move', 'copy',
                            'test']),
     'path': PATCH_PATHS},
    optional={'value': PATCH_VALUES, 'from': PATCH_PATHS})
PATCHES = st.one_of(
    st.lists(PATCH_OPERATION, min_size=1, max_size=3),
    st.lists(PATCH_OPERATION, min_size=1, max_size=3),
    st.lists(PATCH_OPERATION, min_size=1, max_size=3),
    st.lists(st.one_of(PATCH_OPERATION, fuzz.JSON), max_size=3),
    fuzz.JSON)

# Other bodies ----------------------------------------------------------------

STRATEGY_DOCUMENTS = st.one_of(
    documents.NEAR_VALID, documents.valid_documents(),
    documents.valid_documents(), fuzz.JSON,
    documents.valid_documents().map(
        lambda d: dict(d, metadata=dict(d['metadata'], name='@strategy'))))

TARGETS = st.one_of(
    st.sampled_from(['@node', '@node_name', '@active', 'n2', 'nope']),
    SHORT_TEXT)
ACTION_BODIES = st.one_of(
    near({'name': st.sampled_from(['deploy_site', 'update_site']),
          'parameters': near({'deployment_strategy': st.one_of(
              st.sampled_from(['@strategy', '@strategy', 'nope']),
              SHORT_TEXT)}),
          'dry_run': st.booleans()}, ('name',)),
    near({'name': st.just('update_labels'),
          'parameters': near({'target_nodes': st.lists(
              TARGETS, max_size=3)}, ('target_nodes',)),
          'dry_run': st.booleans()}, ('name', 'parameters')))

FILTER_BODIES = near({'selectors': st.one_of(
    st.lists(documents.VALID_SELECTOR, max_size=3),
    st.lists(documents.SELECTORS, max_size=3))}, ('selectors',))

SIGNAL_BODIES = near({
    'deploy_status': st.sampled_from(['IN_PROGRESS', 'IN_PROGRESS',
                                      'COMPLETE', 'FAILED', None]),
    'deploy_status_reason': st.one_of(st.none(), fuzz.TEXT),
    'deploy_stdout': st.one_of(st.none(), fuzz.TEXT, st.builds(
        lambda t, n: t * n, st.text(min_size=1, max_size=3),
        st.sampled_from([17000, 40000]))),
    'deploy_stderr': st.one_of(st.none(), fuzz.TEXT),
    'deploy_status_code': st.one_of(
        st.integers(-2 ** 31, 2 ** 31 - 1), st.none(),
        st.sampled_from(['0', ' 1 ', '-2147483648', '+5'])),
    'result': fuzz.JSON, 'big_output': st.just('x' * 40000),
})

# Queries, headers, raw bodies ---------------------------------------------

QUERY_KEYS = st.one_of(st.sampled_from([
    'limit', 'marker', 'sort_key', 'sort_dir', 'fields', 'detail',
    'driver', 'provision_state', 'maintenance', 'shard', 'conductor_group',
    'rack_name', 'conductor', 'tag', 'sharded', 'owner', 'ironic_uuid',
    'node', 'address', 'state', 'name', 'resource_uuid', 'action_uuid',
    'node_uuid', 'event_type', 'status', 'tree', 'uuid', 'node_ident']),
    fuzz.TEXT)
QUERY_VALUES = st.one_of(
    st.sampled_from(['0', '1', '-1', '1000', '1001', '99999999999999999999',
                     '1.5', 'asc', 'desc', 'ASC', 'true', 'false', 'yes',
                     'uuid', 'name', 'id', 'created_at', 'links',
                     'driver_info', 'uuid,name', 'name,,', ',', 'a,b',
                     'fake', 'enroll', '@node', '@node_name', '@chassis',
                     '@port', '@action', '@deployment', '@strategy',
                     '@task', '@random_uuid', '@host']),
    fuzz.TEXT)
QUERIES = st.lists(st.tuples(QUERY_KEYS, QUERY_VALUES), max_size=5)


def _quote(value):
    if isinstance(value, str):
        value = value.encode('utf-8', 'surrogatepass')
    return urllib.parse.quote(value, safe='')


def query_string(pairs):
    """``k=v&...``, any string percent-encoded (lone surrogates too)."""
    return '&'.join('%s=%s' % (_quote(k), _quote(v)) for k, v in pairs)


def path_segment(value):
    """One path segment; str() of any JSON scalar, percent-encoded."""
    return _quote(value if isinstance(value, str) else str(value))


#: Printable latin-1 header values (what an HTTP server hands a WSGI app).
HEADER_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xff,
                           exclude_categories=('Cc',)), max_size=40)
API_VERSIONS = st.one_of(
    st.sampled_from([
        'baremetal-orch 1.0', 'baremetal-orch latest', 'baremetal-orch 1.1',
        'baremetal-orch 0.9', 'baremetal-orch 2.0', 'baremetal-orch 1',
        'baremetal-orch 1.0.0', 'baremetal-orch', 'baremetal-orch  1.0 ',
        'baremetal-orch -1.-1', 'baremetal-orch 1.0, baremetal-orch 1.0',
        'baremetal-orch 99999999999999999999999.0', 'baremetal-orch 1.x',
        'baremetal-orch 1.０', 'other 1.0', 'BAREMETAL-ORCH 1.0', '',
        ',', 'baremetal-orch 1.0,other 2.0']),
    HEADER_TEXT.map(lambda t: 'baremetal-orch ' + t), HEADER_TEXT)
CONTENT_TYPES = st.one_of(
    st.sampled_from([
        'application/json', 'application/json; charset=utf-8',
        'application/JSON', 'application/yaml', 'application/x-yaml',
        'text/yaml', 'text/plain', 'application/x-www-form-urlencoded',
        'multipart/form-data', 'multipart/form-data; boundary=x',
        'application/javascript', 'application/octet-stream', '*/*',
        'application/json;', 'application/json; charset=latin-1',
        'application/merge-patch+json', 'application/json-patch+json']),
    HEADER_TEXT)
EXTRA_HEADERS = st.dictionaries(
    st.sampled_from(['OpenStack-API-Version', 'X-OpenStack-Request-Id',
                     'Accept', 'X-Signal-Token', 'X-Forwarded-Proto',
                     'X-Forwarded-Host', 'Forwarded', 'Origin',
                     'Access-Control-Request-Method',
                     'X-Openstack-Baremetal-Orch-Api-Version',
                     'OpenStack-System-Scope', 'X-Roles', 'X-Project-Id']),
    HEADER_TEXT, max_size=3)


def _json_bytes(value):
    return json.dumps(value).encode()


RAW_BODIES = st.one_of(
    st.binary(max_size=64),
    fuzz.JSON.map(_json_bytes),
    st.builds(lambda n, c: c * n, st.sampled_from([1000, 5000, 100000]),
              st.sampled_from([b'[', b'{"a":', b'{', b'["a",'])),
    fuzz.DEPTHS.map(lambda n: b'[' * n + b']' * n),
    fuzz.DEPTHS.map(lambda n: b'{"a":' * n + b'1' + b'}' * n),
    st.sampled_from([
        b'', b'null', b'[]', b'{}', b'"x"', b'1e999', b'NaN', b'-Infinity',
        b'\xff\xfe{}', b'\xef\xbb\xbf{}', b'{"a": "\\ud800"}',
        b'{"name": "\\udfff"}', b'{"a":1,"a":2}', b'{"driver": "fake"}',
        b'\x00', b'{"driver": "fake", "name": "\\u0000"}',
        b'a: [1, 2\n', b'--- !!python/object:os.system ls\n',
        b'!!binary aGk=', b'a: &x [*x]', b'? [a]\n: b\n',
        b'schema: x\nmetadata: {name: 2020-01-01}\n',
        b'x' * (1024 * 1024 + 1)]))
