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
"""Fuzzing the REST API (R3).

hypothesis bodies, JSON patches, query strings, headers and raw bytes on
every write call and every list, through the whole WSGI stack (webtest,
middleware, policy with personas, the in-process conductor, sqlite). For
every answer:

* the status is below 500;
* a 4xx is an API-SIG error document ``{"errors": [{"status", "code",
  "title", "detail", "request_id"}]}`` whose status is the response's;
* no secret stored in driver_info or instance_info (a marked string under
  a key with password, secret, token or key in it) shows unmasked, not
  even in an error about the request that sent it.

Each test method builds its fixtures once (a node with secrets, an active
node, a port, a chassis, a strategy, a deployment record, an action and
its task) and its examples run one after the other against them, on
sqlite, or on a throw-away MariaDB or PostgreSQL database with
``BAREMETAL_ORCH_FUZZ_DB=mysql`` or ``postgresql``.
"""

import json
import os

import hypothesis
from hypothesis import strategies as st
from oslo_utils import uuidutils
import yaml

from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import deployment as deployments
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.fuzz import base as fuzz
from baremetal_orch.tests.unit.fuzz import bodies
from baremetal_orch.tests.unit.fuzz import documents

DB_ENV = 'BAREMETAL_ORCH_FUZZ_DB'
ERROR_KEYS = {'status', 'code', 'title', 'detail', 'request_id'}
PERSONAS = st.sampled_from(sorted(base.ApiTestCase.PERSONAS))
ADMIN_MOSTLY = st.one_of(st.just('system_admin'), PERSONAS)
SECRET = bodies.SECRET_MARKER

STRATEGY = {
    'schema': 'shipyard/DeploymentStrategy/v1',
    'metadata': {'name': 'deployment-strategy'},
    'data': {'groups': [
        {'name': 'control', 'critical': True, 'depends_on': [],
         'selectors': [{'node_names': ['n1']}]},
        {'name': 'rest', 'critical': False, 'depends_on': ['control'],
         'selectors': [{'node_tags': ['compute'],
                        'node_labels': ['role:ctl']}],
         'success_criteria': {'percent_successful_nodes': 50}}]},
}

#: Every list call, and where one item is shown.
LISTS = ('nodes', 'nodes/detail', 'ports', 'chassis',
         'deployment_strategies', 'actions', 'events', 'deployments',
         'services', 'shards')
SHOW = ('nodes', 'ports', 'chassis', 'deployment_strategies', 'actions',
        'tasks', 'deployments', 'services', 'nodes/@node/states')


class ApiFuzzTestCase(fuzz.FuzzMixin, base.ApiTestCase):

    def config(self, group=None, **kw):
        # BAREMETAL_ORCH_FUZZ_DB=mysql|postgresql: a throw-away database on
        # that server instead of sqlite (column sizes, NUL, 4-byte UTF-8).
        engine = os.environ.get(DB_ENV)
        if group == 'database' and 'connection' in kw and engine not in (
                None, '', 'sqlite'):
            from baremetal_orch_testing.fixtures import databases
            kw['connection'] = self.useFixture(
                databases.Database(engine)).url
        super().config(group=group, **kw)

    def setUp(self):
        super().setUp()
        self.node = self.post('/v1/nodes', {
            'driver': 'fake', 'name': 'n1', 'rack_name': 'rack01',
            'tags': ['control'], 'labels': {'role': 'ctl'},
            'driver_info': {'ipmi_password': SECRET + 'a',
                            'nested': {'api_token': SECRET + 'b'},
                            'ssh_key': SECRET + 'c', 'fake_duration': 0},
        }, status=201).json
        self.active = self.create_node(
            name='n2', provision_state='active', tags=['compute'],
            driver_info={'deploy_secret': SECRET + 'd'})
        self.chassis = self.post('/v1/chassis', {'description': 'c1'},
                                 status=201).json
        self.port = self.post('/v1/ports', {
            'node_uuid': self.node['uuid'],
            'address': '52:54:00:00:00:01'}, status=201).json
        self.post('/v1/deployment_strategies', STRATEGY, status=201)
        self.record, self.token = deployments.create(
            self.active, None, 'test-conductor')
        action = dbapi.create_action({
            'name': 'deploy_site', 'state': 'complete', 'result': 'success',
            'parameters': {'deployment_strategy': 'deployment-strategy'}})
        self.task = dbapi.create_task({
            'action_uuid': action.uuid, 'kind': 'action',
            'name': 'deploy_site', 'status': 'success'})
        dbapi.update_action(action.uuid, {'task_uuid': self.task})
        #: Every secret stored in a driver_info so far.
        self.secrets = {SECRET + x for x in 'abcd'}
        self.known = {
            '@node': self.node['uuid'], '@node_name': 'n1',
            '@active': self.active.uuid, '@chassis': self.chassis['uuid'],
            '@port': self.port['uuid'], '@strategy': 'deployment-strategy',
            '@deployment': self.record.uuid, '@action': action.uuid,
            '@task': self.task, '@host': 'test-conductor',
            '@random_uuid': uuidutils.generate_uuid()}

    # The property ---------------------------------------------------------

    def check(self, resp, what):
        """status < 500; a 4xx is an API-SIG document; no secret shows."""
        text = resp.body.decode('utf-8', 'replace')
        where = '%s -> %s: %s' % (what, resp.status, text[:2000])
        self.assertLess(resp.status_int, 500, where)
        for secret in self.secrets:
            self.assertNotIn(secret, text, where)
        if resp.status_int >= 400:
            self.assertEqual('application/json', resp.content_type, where)
            errors = json.loads(text)['errors']
            self.assertIsInstance(errors, list, where)
            self.assertTrue(errors, where)
            for error in errors:
                self.assertEqual(ERROR_KEYS, set(error), where)
                self.assertEqual(resp.status_int, error['status'], where)
                self.assertTrue(error['code'].startswith('baremetal_orch.'),
                                where)
                self.assertTrue(error['title'], where)
                self.assertTrue(error['detail'], where)
            self.assertEqual(resp.headers.get('x-openstack-request-id'),
                             errors[0]['request_id'], where)
        elif text and resp.content_type == 'application/json':
            json.loads(text)
        return resp

    def send(self, method, path, body=None, persona='system_admin',
             content_type='application/json', headers=None, raw=None):
        """One request through the whole stack, then the property.

        Placeholders in ``path`` and ``body`` are replaced first; the
        Content-Type goes to the environ as it is (webtest would rewrite a
        multipart one, and drop an empty one).
        """
        for placeholder in sorted(self.known, key=len, reverse=True):
            path = path.replace(placeholder, bodies.path_segment(
                self.known[placeholder]))
        if raw is None and body is not None:
            body = bodies.resolve(body, self.known)
            self.secrets |= bodies.secrets_sent(method, path, body)
            raw = json.dumps(body).encode()
        kwargs = {'headers': self.headers(persona, None, headers),
                  'expect_errors': True,
                  'extra_environ': {'CONTENT_TYPE': content_type}}
        if method != 'get':
            kwargs['params'] = raw or b''
        resp = getattr(self.app, method)(path, **kwargs)
        return self.check(resp, '%s %s %r' % (method.upper(), path,
                                              (raw or b'')[:500]))

    def node_path(self, ident, suffix=''):
        ident = bodies.resolve(ident, self.known)
        return '/v1/nodes/%s%s' % (bodies.path_segment(ident), suffix)

    # Nodes ----------------------------------------------------------------

    @fuzz.settings()
    @hypothesis.given(body=bodies.NODE_BODIES, persona=ADMIN_MOSTLY)
    def test_post_nodes(self, body, persona):
        self.case()
        self.send('post', '/v1/nodes', body, persona)

    @fuzz.settings()
    @hypothesis.given(ident=st.one_of(st.just('@node'), st.just('@node'),
                                      bodies.NODE_IDENTS),
                      patch=bodies.PATCHES, persona=ADMIN_MOSTLY)
    def test_patch_node(self, ident, patch, persona):
        self.case()
        self.send('patch', self.node_path(ident), patch, persona)

    @fuzz.settings()
    @hypothesis.given(
        ident=st.one_of(st.sampled_from(['@node', '@active']),
                        bodies.NODE_IDENTS),
        call=st.sampled_from([('put', '/states/provision'),
                              ('put', '/states/console'),
                              ('put', '/maintenance'),
                              ('delete', '/maintenance'),
                              ('get', '/states')]),
        body=st.one_of(
            st.fixed_dictionaries({'target': st.one_of(st.sampled_from(
                ['manage', 'provide', 'active', 'deleted', 'rebuild']),
                bodies.fuzz.SCALARS)}),
            st.fixed_dictionaries({'enabled': st.one_of(
                st.booleans(), bodies.fuzz.SCALARS)}),
            st.fixed_dictionaries({}, optional={
                'reason': bodies.OPTIONAL_TEXT}),
            bodies.fuzz.JSON),
        persona=ADMIN_MOSTLY)
    def test_node_states(self, ident, call, body, persona):
        self.case()
        method, suffix = call
        self.send(method, self.node_path(ident, suffix),
                  body if method == 'put' else None, persona)

    @fuzz.settings()
    @hypothesis.given(body=bodies.FILTER_BODIES, persona=PERSONAS)
    def test_node_filter(self, body, persona):
        self.case()
        self.send('post', '/v1/nodes/filter', body, persona)

    # Ports and chassis ------------------------------------------------------

    @fuzz.settings()
    @hypothesis.given(body=bodies.PORT_BODIES, patch=bodies.PATCHES,
                      ident=st.one_of(st.just('@port'), bodies.UUIDS),
                      method=st.sampled_from(['post', 'patch']),
                      persona=ADMIN_MOSTLY)
    def test_ports(self, body, patch, ident, method, persona):
        self.case()
        if method == 'post':
            self.send('post', '/v1/ports', body, persona)
        else:
            ident = bodies.resolve(ident, self.known)
            self.send('patch', '/v1/ports/' + bodies.path_segment(ident),
                      patch, persona)

    @fuzz.settings()
    @hypothesis.given(body=bodies.CHASSIS_BODIES, patch=bodies.PATCHES,
                      ident=st.one_of(st.just('@chassis'), bodies.UUIDS),
                      method=st.sampled_from(['post', 'patch']),
                      persona=ADMIN_MOSTLY)
    def test_chassis(self, body, patch, ident, method, persona):
        self.case()
        if method == 'post':
            self.send('post', '/v1/chassis', body, persona)
        else:
            ident = bodies.resolve(ident, self.known)
            self.send('patch', '/v1/chassis/' + bodies.path_segment(ident),
                      patch, persona)

    # Strategies and actions -------------------------------------------------

    def _strategy_request(self, data):
        """A strategy document as JSON or YAML, or raw text."""
        document = bodies.resolve(data.draw(bodies.STRATEGY_DOCUMENTS),
                                  self.known)
        encoding = data.draw(st.sampled_from(
            ['json', 'json', 'yaml', 'yaml-types', 'raw']))
        if encoding == 'json':
            return json.dumps(document).encode(), 'application/json'
        content_type = data.draw(st.sampled_from(
            ['application/yaml', 'application/x-yaml', 'text/yaml',
             'application/yaml; charset=utf-8', 'application/json', '',
             'text/plain']))
        if encoding == 'yaml':
            return yaml.safe_dump(document).encode(), content_type
        if encoding == 'yaml-types':
            # Dates, binary, sets: YAML has them, JSON does not.
            # (No deep nesting: yaml.dump would hit the recursion limit
            # here, in the test.)
            document = documents.mutate(data, document, last=False)
            where = data.draw(st.sampled_from(
                [None, 'metadata', 'name', 'labels', 'layering']))
            value = data.draw(documents.YAML_VALUES)
            if isinstance(document, dict) and where:
                meta = document.setdefault('metadata', {})
                if isinstance(meta, dict):
                    if where == 'name':
                        meta['name'] = value
                    elif where == 'labels':
                        meta['labels'] = {'when': value}
                    elif where == 'layering':
                        meta['layeringDefinition'] = {value: 'x'} if (
                            not isinstance(value, set)) else {'x': value}
                    else:
                        meta['extra'] = value
            return yaml.dump(document).encode(), content_type
        return data.draw(bodies.RAW_BODIES), content_type

    @fuzz.settings()
    @hypothesis.given(data=st.data(), persona=ADMIN_MOSTLY)
    def test_post_strategies(self, data, persona):
        self.case()
        raw, content_type = self._strategy_request(data)
        self.send('post', '/v1/deployment_strategies', persona=persona,
                  raw=raw, content_type=content_type)

    @fuzz.settings()
    @hypothesis.given(data=st.data(), persona=ADMIN_MOSTLY)
    def test_validate_strategies(self, data, persona):
        self.case()
        raw, content_type = self._strategy_request(data)
        self.send('post', '/v1/deployment_strategies/validate',
                  persona=persona, raw=raw, content_type=content_type)

    @fuzz.settings()
    @hypothesis.given(body=bodies.ACTION_BODIES, persona=ADMIN_MOSTLY)
    def test_actions(self, body, persona):
        self.case()
        self.send('post', '/v1/actions', body, persona)

    # Signals --------------------------------------------------------------

    @fuzz.settings()
    @hypothesis.given(
        fresh=st.booleans(),
        ident=st.one_of(st.just('@deployment'), st.just('@deployment'),
                        bodies.UUIDS),
        token=st.one_of(st.sampled_from(['@token', '@token', '@token ',
                                         None, '']),
                        bodies.HEADER_TEXT),
        body=bodies.SIGNAL_BODIES, raw=st.one_of(
            st.none(), st.none(), st.none(), bodies.RAW_BODIES),
        content_type=st.one_of(
            st.sampled_from(['application/json',
                             'application/x-www-form-urlencoded', '']),
            bodies.CONTENT_TYPES))
    def test_signals(self, fresh, ident, token, body, raw, content_type):
        self.case()
        if fresh:
            self.record, self.token = deployments.create(
                self.active, None, 'test-conductor')
            self.known['@deployment'] = self.record.uuid
        ident = bodies.resolve(ident, self.known)
        headers = {}
        if token is not None:
            headers['X-Signal-Token'] = token.replace('@token', self.token)
        if raw is None:
            raw = json.dumps(bodies.resolve(body, self.known)).encode()
        path = '/v1/signals/' + bodies.path_segment(ident)
        # A node's request: no Keystone headers at all.
        resp = self.app.post(path, params=raw, headers=headers,
                             extra_environ={'CONTENT_TYPE': content_type},
                             expect_errors=True)
        self.check(resp, 'POST %s %r' % (path, raw[:500]))

    # Queries, headers and raw bytes ---------------------------------------

    @fuzz.settings()
    @hypothesis.given(
        resource=st.sampled_from(LISTS), query=bodies.QUERIES,
        persona=PERSONAS)
    def test_list_queries(self, resource, query, persona):
        self.case()
        query = [(k, bodies.resolve(v, self.known)) for k, v in query]
        self.send('get', '/v1/%s?%s' % (resource,
                                        bodies.query_string(query)),
                  persona=persona)

    @fuzz.settings()
    @hypothesis.given(
        resource=st.sampled_from(SHOW),
        ident=st.one_of(st.sampled_from(bodies.PLACEHOLDERS),
                        bodies.UUIDS, bodies.NODE_IDENTS),
        query=bodies.QUERIES, persona=PERSONAS)
    def test_show_queries(self, resource, ident, query, persona):
        self.case()
        ident = bodies.resolve(ident, self.known)
        query = [(k, bodies.resolve(v, self.known)) for k, v in query]
        self.send('get', '/v1/%s/%s?%s' % (
            resource, bodies.path_segment(ident),
            bodies.query_string(query)), persona=persona)

    @fuzz.settings()
    @hypothesis.given(
        method=st.sampled_from(['get', 'post', 'put', 'patch', 'delete']),
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
            '/v1/deployments', '/v1/signals/@deployment', '/healthcheck',
            '/v2', '/v1/nodes/@node/states/nope', '/v1//nodes',
            '/v1/nodes/%FF', '/v1/nodes/%00', '/v1/nodes/a%2Fb',
            '/v1/nodes/..', '/v1/nodes/@node/ports', '/v1/nodes.json']),
            bodies.fuzz.TEXT.map(lambda t: '/v1/' + bodies.path_segment(t))),
        headers=bodies.EXTRA_HEADERS,
        version=st.one_of(st.none(), bodies.API_VERSIONS),
        content_type=bodies.CONTENT_TYPES, raw=bodies.RAW_BODIES,
        persona=PERSONAS)
    def test_headers_and_raw_bodies(self, method, path, headers, version,
                                    content_type, raw, persona):
        self.case()
        headers = dict(headers)
        if version is not None:
            headers['OpenStack-API-Version'] = version
        if method == 'delete' and (path.endswith('@node')
                                   or path.endswith('@strategy')):
            # Keep the fixtures of the next examples.
            method = 'get'
        self.send(method, path, persona=persona, headers=headers,
                  content_type=content_type, raw=raw)
