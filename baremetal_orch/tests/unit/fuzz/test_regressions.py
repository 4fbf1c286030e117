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
"""The bugs the R3 fuzzers found, one fixed example each.

Every one of these was a 500 (or an exception out of ``strategy.parse``)
before its fix; they stay here so that a regression does not depend on
hypothesis drawing the same example again.
"""

import json
import os

from oslo_utils import uuidutils

from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import strategy
from baremetal_orch.objects import deployment as deployments
from baremetal_orch.tests import base

DEEP = 5000


def document(groups=None, **metadata):
    metadata.setdefault('name', 'deployment-strategy')
    return {'schema': strategy.SCHEMA_NAME, 'metadata': metadata,
            'data': {'groups': groups if groups is not None else [
                {'name': 'a', 'critical': True, 'depends_on': [],
                 'selectors': []}]}}


def nested(depth, leaf='x'):
    value = leaf
    for _i in range(depth):
        value = {'k': value}
    return value


class TestStrategyParser(base.TestCase):

    def test_huge_counts_are_counts(self):
        # float(10 ** 309) overflows: the count check raised OverflowError.
        for value in (2 ** 64, 10 ** 309):
            result = strategy.parse(document([{
                'name': 'a', 'critical': True, 'depends_on': [],
                'selectors': [], 'success_criteria': {
                    'minimum_successful_nodes': value,
                    'maximum_failed_nodes': value}}]))
            criteria = result.group('a').success_criteria
            self.assertEqual(value, criteria.minimum_successful_nodes)
            self.assertEqual(value, criteria.maximum_failed_nodes)

    def test_depth_limit(self):
        # metadata is depth 1, its key depth 2: the leaf is at depth + 2.
        limit = strategy.MAX_DEPTH
        strategy.parse(document(labels=nested(limit - 2)))
        for depth in (limit - 1, 2000, DEEP):
            e = self.assertRaises(exception.StrategySchemaError,
                                  strategy.parse,
                                  document(labels=nested(depth)))
            self.assertIn('nested deeper than %d levels' % limit,
                          e.message)
            self.assertTrue(e.kwargs['path'].startswith('metadata.labels.k'))

    def test_deep_groups_and_lists(self):
        deep_list = [[]]
        for _i in range(DEEP):
            deep_list = [deep_list]
        for doc in (document(groups=deep_list),
                    document([{'name': 'a', 'critical': True,
                               'depends_on': [], 'selectors': deep_list}])):
            self.assertRaises(exception.StrategySchemaError,
                              strategy.parse, doc)


class TestApi(base.ApiTestCase):

    def test_signals_without_a_uuid(self):
        # POST /v1/signals: TypeError (missing argument), a 500.
        resp = self.app.post('/v1/signals', params=b'{}',
                             content_type='application/json',
                             expect_errors=True)
        self.assertError(resp, 405)

    def test_deep_json_bodies(self):
        # RecursionError in pecan's look for arguments in the body, then in
        # our own parsing.
        node = self.create_node(name='n1')
        record, token = deployments.create(node, None, 'test-conductor')
        body = b'[' * DEEP + b']' * DEEP
        for method, path in (('post', '/v1/nodes'),
                             ('post', '/v1/deployment_strategies'),
                             ('post', '/v1/actions'),
                             ('patch', '/v1/nodes/n1')):
            resp = getattr(self, method)(path, body)
            self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                             'nested too deeply')
        resp = self.app.post('/v1/signals/%s' % record.uuid, params=body,
                             headers={'X-Signal-Token': token},
                             content_type='application/json',
                             expect_errors=True)
        self.assertError(resp, 400, detail_contains='nested too deeply')
        self.assertFalse(dbapi.get_deployment(record.uuid).final)

    def test_deep_yaml_body(self):
        # Refused before libyaml parses it (quadratic over nested flow
        # collections, and a crash of its C composer past ~10,000 levels).
        for body in (b'[' * DEEP, b'[' * DEEP + b']' * DEEP,
                     b'{a: ' * DEEP + b'}' * DEEP):
            resp = self.post('/v1/deployment_strategies/validate', body,
                             content_type='application/yaml')
            self.assertError(resp, 400, 'baremetal_orch.limit_exceeded',
                             'more than 64 levels of nesting')

    def test_multipart_without_boundary(self):
        # webob's form parser raised ValueError while pecan looked for
        # _method in the body. pecan reads no form body any more (method
        # override is off): a form is not JSON, a 415.
        for path in ('/v1/nodes', '/v1/deployment_strategies',
                     '/v1/nodes/filter'):
            # (Through the environ: webtest would give the body a
            # boundary.)
            resp = self.app.post(
                path, params=b'--x\r\n', headers=self.headers(),
                extra_environ={'CONTENT_TYPE': 'multipart/form-data'},
                expect_errors=True)
            self.assertError(resp, 415,
                             'baremetal_orch.unsupported_media_type',
                             'multipart/form-data')

    def test_yaml_values_without_a_json_form(self):
        # Dates, binary values and sets passed validation, then broke the
        # JSON column: a 500 on store.
        for text in ('metadata: {name: s1, labels: {when: 2026-11-22}}',
                     'metadata: {name: s1, labels: {blob: !!binary aGk=}}',
                     'metadata: {name: s1, labels: {set: !!set {a}}}',
                     'metadata: {name: s1, labels: {2026-11-22: a}}'):
            body = ('schema: %s\n%s\ndata: {groups: []}\n'
                    % (strategy.SCHEMA_NAME, text)).encode()
            for path in ('/v1/deployment_strategies',
                         '/v1/deployment_strategies/validate'):
                resp = self.post(path, body,
                                 content_type='application/yaml')
                self.assertError(resp, 400,
                                 'baremetal_orch.invalid_parameter',
                                 'JSON cannot represent')
        self.assertEqual([], dbapi.list_strategies())

    def test_yaml_keys_are_stored_as_json_keys(self):
        # What is validated is what is stored: YAML's int keys become
        # strings.
        body = ('schema: %s\nmetadata: {name: s1, labels: {1: a}}\n'
                'data: {groups: []}\n' % strategy.SCHEMA_NAME).encode()
        resp = self.post('/v1/deployment_strategies', body,
                         content_type='application/yaml', status=201)
        self.assertEqual({'1': 'a'},
                         resp.json['document']['metadata']['labels'])
        stored = dbapi.get_strategy('s1').document
        self.assertEqual(json.loads(json.dumps(stored)), stored)

    def test_repeated_query_parameters(self):
        # pecan hands a repeated parameter over as a list: int(list) in
        # list_params, a TypeError, was a 500.
        for path in ('nodes', 'ports', 'chassis', 'actions', 'events',
                     'deployments', 'deployment_strategies', 'services'):
            for query in ('limit=1&limit=2', 'sort_dir=asc&sort_dir=desc',
                          'fields=uuid&fields=uuid'):
                if (path == 'deployment_strategies' and 'fields' in query
                        or path == 'services' and 'fields' not in query):
                    continue  # (not parameters of these calls)
                resp = self.get('/v1/%s?%s' % (path, query))
                self.assertError(resp, 400,
                                 'baremetal_orch.invalid_parameter',
                                 'given more than once')

    def test_lone_surrogates(self):
        # JSON and YAML take a lone surrogate escape; sqlite (UTF-8) does
        # not: DBInvalidUnicodeParameter, a 500 on store.
        node = self.create_node(name='n1')
        record, token = deployments.create(node, None, 'test-conductor')
        for path, body in (
                ('/v1/nodes', b'{"driver": "fake", "rack_name": "\\ud800"}'),
                ('/v1/deployment_strategies', json.dumps(document(
                    name='\udfff')).encode()),
                ('/v1/chassis', b'{"description": "a\\udc00b"}')):
            resp = self.post(path, body)
            self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                             'not valid Unicode')
        resp = self.post('/v1/deployment_strategies',
                         b'schema: x\nmetadata: {name: "\\uD800"}\n',
                         content_type='application/yaml')
        # (libyaml refuses the escape itself.)
        self.assertError(resp, 400, detail_contains='Unicode')
        resp = self.app.post('/v1/signals/%s' % record.uuid,
                             params=b'{"deploy_stdout": "\\ud800"}',
                             headers={'X-Signal-Token': token},
                             content_type='application/json',
                             expect_errors=True)
        self.assertError(resp, 400, detail_contains='not valid Unicode')
        self.assertFalse(dbapi.get_deployment(record.uuid).final)
        # A surrogate PAIR is one character, and fine.
        resp = self.post('/v1/chassis',
                         b'{"description": "\\ud83d\\ude00"}', status=201)
        self.assertEqual('\U0001f600', resp.json['description'])

    def test_ironic_node_without_ironic_uuid(self):
        # The ironic driver's validate() read the unset field of the new
        # object: NotImplementedError, a 500.
        resp = self.post('/v1/nodes', {'driver': 'ironic', 'name': 'i1'},
                         status=201)
        self.assertIsNone(resp.json['ironic_uuid'])
        self.assertEqual('ironic', dbapi.get_node('i1').driver)

    def test_patch_errors_show_no_secret(self):
        # jsonpointer's message quotes the part of the document it walked:
        # a patch to a missing path under driver_info showed its secrets.
        self.post('/v1/nodes', {'driver': 'fake', 'name': 'n1',
                                'driver_info': {'nested': {
                                    'api_token': 'T0PS3CRET'}}},
                  status=201)
        for patch in (
                [{'op': 'add', 'path': '/driver_info/nested/x/y',
                  'value': 1}],
                [{'op': 'remove', 'path': '/driver_info/nested/x/y'}],
                # Nor the value sent, echoed with a refused operation.
                [{'op': 'add', 'path': '/driver_info/nested/api_token',
                  'value': 'N3WS3CRET', 'from': ''}],
                [{'path': '/driver_info/password', 'value': 'N3WS3CRET'}],
                # A test of a missing member: the message of jsonpointer
                # inside jsonpatch's, the whole document.
                [{'op': 'test', 'path': '/description', 'value': 1}],
                [{'op': 'test', 'path': '/name', 'value': 'x'}]):
            resp = self.patch('/v1/nodes/n1', patch)
            # A test that fails is a conflict with the node's state.
            error = self.assertError(
                resp, *((409, 'baremetal_orch.patch_test_failed')
                        if patch[0].get('op') == 'test'
                        else (400, 'baremetal_orch.invalid_patch')))
            self.assertNotIn('S3CRET', resp.text)
            self.assertIn(patch[0]['path'], error['detail'])

    def test_nul_characters(self):
        # PostgreSQL refuses NUL in text ("A string literal cannot contain
        # NUL"): a 500 wherever one reached a query. Found with
        # BAREMETAL_ORCH_FUZZ_DB=postgresql.
        for call in (
                lambda: self.post('/v1/nodes', {'driver': 'fake',
                                                'owner': 'a\x00'}),
                lambda: self.post('/v1/actions', {
                    'name': 'update_labels',
                    'parameters': {'target_nodes': ['\x00']}}),
                lambda: self.post('/v1/deployment_strategies', document(
                    name='s\x00')),
                lambda: self.get('/v1/nodes?owner=%00'),
                lambda: self.get('/v1/nodes/a%00'),
                lambda: self.get('/v1/deployment_strategies/%00')):
            resp = call()
            self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                             'NUL')
        self.assertEqual([], dbapi.list_nodes())

    def test_unknown_uuid_is_still_404(self):
        # The 405 above is for no UUID at all, not for an unknown one.
        resp = self.app.post('/v1/signals/%s' % uuidutils.generate_uuid(),
                             params=b'{}', content_type='application/json',
                             expect_errors=True)
        self.assertError(resp, 404)


class TestMySQLText(base.ApiTestCase):
    """4-byte UTF-8 on MariaDB: oslo.db connects with charset=utf8 (3
    bytes) unless told otherwise, and the server refused the text (1366
    Incorrect string value, 1267 Illegal mix of collations): 500s. Runs
    with BAREMETAL_ORCH_FUZZ_DB=mysql (a real server)."""

    #: The charset in the connection URL (None: ours, utf8mb4).
    charset = None

    def config(self, group=None, **kw):
        if group == 'database' and 'connection' in kw:
            if os.environ.get('BAREMETAL_ORCH_FUZZ_DB') != 'mysql':
                self.skipTest('BAREMETAL_ORCH_FUZZ_DB is not mysql')
            from baremetal_orch_testing.fixtures import databases
            url = self.useFixture(databases.Database('mysql')).url
            kw['connection'] = url + (
                '?charset=%s' % self.charset if self.charset else '')
        super().config(group=group, **kw)

    def test_four_byte_text(self):
        resp = self.post('/v1/nodes', {'driver': 'fake', 'name': 'n1',
                                       'rack_name': '\U00010000'})
        if self.charset == 'utf8':
            self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                             'characters its character set lacks')
        else:
            self.assertEqual(201, resp.status_int, resp.text)
            self.assertEqual('\U00010000',
                             self.get('/v1/nodes/n1', status=200).json[
                                 'rack_name'])
        resp = self.get('/v1/nodes/%F0%90%80%80')
        self.assertIn(resp.status_int, (400, 404), resp.text)
        self.assertError(resp, resp.status_int)

    def test_json_field_over_64_kib(self):
        # MySQL's TEXT holds 64 KiB; a body may be 1 MiB: 1406 Data too
        # long, a 500.
        resp = self.post('/v1/nodes', {'driver': 'fake',
                                       'extra': {'x': 'y' * 70000}})
        self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                         'too long or out of range')
        self.assertEqual([], dbapi.list_nodes())


class TestMySQLTextUtf8(TestMySQLText):
    """The operator's URL says charset=utf8: a 400, not a 500."""

    charset = 'utf8'
