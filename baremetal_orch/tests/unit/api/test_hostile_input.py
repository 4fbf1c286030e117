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
"""Hostile input through the whole WSGI stack (doc/source/admin/limits.rst).

One test per defect an attack on the all-in-one found, each written as the
attacker sent it; they failed before their fixes. A request that could
hang runs in a thread with a bound: past it the test fails (a hang), it
is not a measure of speed.
"""

import json
import threading

import fixtures

from baremetal_orch.common import limits
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import strategy
from baremetal_orch.notifications import notifier
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.objects import utils

#: Seconds a request may take before it counts as a hang.
HANG = 60

MARKS = ('X-pem-MARK', 'Y-api-MARK', 'Z-current-MARK', 'W-deep-MARK',
         '4242424242')
NESTED_SECRETS = {
    'private_key': {'pem': MARKS[0]},
    'api_keys': [MARKS[1]],
    'password': {'current': MARKS[2]},
    'nested': [{'auth': {'client_secret': {'v': [MARKS[3]]}}}],
    'pin_token': int(MARKS[4]),
    'ipmi_address': '10.0.0.1',
}


def document(name='s1', groups=None):
    return {'schema': strategy.SCHEMA_NAME, 'metadata': {'name': name},
            'data': {'groups': groups if groups is not None else [
                {'name': 'a', 'critical': True, 'depends_on': [],
                 'selectors': []}]}}


class HostileTestCase(base.ApiTestCase):

    def bounded(self, call, *args, **kwargs):
        """``call(...)``, failing the test when it does not return."""
        result = {}

        def run():
            try:
                result['value'] = call(*args, **kwargs)
            except BaseException as e:  # reported below
                result['error'] = e

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(HANG)
        if thread.is_alive():
            self.fail('%s did not return within %s s (a hang)'
                      % (getattr(call, '__name__', call), HANG))
        if 'error' in result:
            raise result['error']
        return result['value']

    def no_mark(self, text, marks=MARKS):
        for mark in marks:
            self.assertNotIn(mark, text)


class TestNestedSecrets(HostileTestCase):
    """A value under a secret key is masked whole, at any depth."""

    def setUp(self):
        super().setUp()
        self.bus = self.useFixture(utils.NotificationsFixture('debug'))

    def test_every_answer_and_notification(self):
        body = {'driver': 'fake', 'name': 'n1', 'driver_info': NESTED_SECRETS,
                'instance_info': {'image_source': 'http://x/i',
                                  'configdrive': {'user_data': MARKS[3]}}}
        created = self.post('/v1/nodes', body, status=201)
        texts = [created.text]
        for path in ('/v1/nodes/n1', '/v1/nodes/n1?fields=driver_info',
                     '/v1/nodes?detail=true',
                     '/v1/nodes?fields=driver_info,instance_info'):
            texts.append(self.get(path, status=200).text)
        texts.append(self.patch('/v1/nodes/n1', [
            {'op': 'add', 'path': '/driver_info/tokens',
             'value': {'list': ['T-patch-MARK']}}], status=200).text)
        texts.append(self.put('/v1/nodes/n1/maintenance', {'reason': 'r'},
                              status=202).text)
        texts.append(self.delete('/v1/nodes/n1/maintenance',
                                 status=202).text)
        self.assertTrue(notifier.flush(30))
        self.assertTrue(self.bus.messages)
        texts.extend(json.dumps(m) for m in self.bus.messages)
        for text in texts:
            self.no_mark(text, MARKS + ('T-patch-MARK',))
        info = created.json['driver_info']
        self.assertEqual({'private_key': '***', 'api_keys': '***',
                          'password': '***', 'pin_token': '***',
                          'nested': [{'auth': {'client_secret': '***'}}],
                          'ipmi_address': '10.0.0.1'}, info)
        self.assertEqual('***', created.json['instance_info']['configdrive'])
        # Stored as sent: masking is on the way out only.
        stored = dbapi.get_node('n1').driver_info
        self.assertEqual(NESTED_SECRETS['private_key'],
                         stored['private_key'])
        self.assertEqual({'list': ['T-patch-MARK']}, stored['tokens'])


class TestHostileDocuments(HostileTestCase):
    """Documents that never finish or grow without bound."""

    def validate(self, body, content_type='application/yaml'):
        return self.bounded(self.post, '/v1/deployment_strategies/validate',
                            body, content_type=content_type)

    def test_self_referencing_alias(self):
        resp = self.validate(b'a: &x [*x]')
        self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                         'aliases are not accepted')
        # The service still answers.
        self.get('/v1/nodes', status=200)

    def test_alias_bomb(self):
        lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]']
        for i in range(1, 10):
            lines.append('a%d: &a%d [%s]' % (i, i, ', '.join(
                ['*a%d' % (i - 1)] * 10)))
        body = ('\n'.join(lines) + '\n').encode()
        self.assertLess(len(body), 600)
        resp = self.validate(body)
        self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                         'aliases are not accepted')

    def test_alias_of_a_scalar_is_fine(self):
        doc = ('schema: %s\nmetadata: {name: &n s1}\ndata:\n  groups:\n'
               '  - {name: *n, critical: true, depends_on: [], '
               'selectors: []}\n' % strategy.SCHEMA_NAME)
        resp = self.validate(doc.encode())
        self.assertEqual(200, resp.status_int, resp.text)

    def test_group_chain_past_the_limit(self):
        groups = [{'name': 'g%d' % i, 'critical': True,
                   'depends_on': ['g%d' % (i - 1)] if i else [],
                   'selectors': []} for i in range(8000)]
        resp = self.validate(json.dumps(document(groups=groups)).encode(),
                             'application/json')
        self.assertError(resp, 400, 'baremetal_orch.limit_exceeded',
                         'data.groups: more than %d groups'
                         % limits.MAX_GROUPS)

    def test_group_chain_at_the_limit(self):
        groups = [{'name': 'g%d' % i, 'critical': True,
                   'depends_on': ['g%d' % (i - 1)] if i else [],
                   'selectors': []} for i in range(limits.MAX_GROUPS)]
        resp = self.validate(json.dumps(document(groups=groups)).encode(),
                             'application/json')
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual(['g%d' % i for i in range(limits.MAX_GROUPS)],
                         resp.json['order'])

    def test_mixed_list_with_unique_items(self):
        # jsonschema compared every pair of items of different types.
        tags = [i if i % 2 else str(i) for i in range(60000)]
        resp = self.bounded(self.post, '/v1/nodes',
                            {'driver': 'fake', 'tags': tags})
        self.assertError(resp, 400, 'baremetal_orch.schema_validation',
                         'tags')
        self.assertLess(len(resp.text), 2000)

    def test_patch_copies_cannot_grow_the_document(self):
        self.post('/v1/nodes', {'driver': 'fake', 'name': 'n1',
                                'extra': {'a': list(range(100))}},
                  status=201)
        patch = [{'op': 'copy', 'from': '/extra', 'path': '/extra/c%d' % i}
                 for i in range(40)]
        resp = self.bounded(self.patch, '/v1/nodes/n1', patch)
        self.assertError(resp, 400, 'baremetal_orch.limit_exceeded',
                         'values in the patched document')
        self.assertEqual({'a': list(range(100))},
                         dbapi.get_node('n1').extra)


class TestServerErrorsOnBadInput(HostileTestCase):
    """Each was a 500; each is now a 400 naming the limit."""

    def test_yaml_integer_of_5000_digits(self):
        body = ('schema: %s\nmetadata: {name: s1}\ndata: {groups: []}\n'
                'x: %s\n' % (strategy.SCHEMA_NAME, '9' * 5000)).encode()
        for path in ('/v1/deployment_strategies',
                     '/v1/deployment_strategies/validate'):
            resp = self.post(path, body, content_type='application/yaml')
            self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                             'more than 4300 digits')

    def test_1200_selectors_or_label_values(self):
        self.create_node(name='n1', tags=['t'])
        many_selectors = [{'node_names': ['n%d' % i]} for i in range(1200)]
        many_labels = [{'node_labels': ['k:v%d' % i
                                        for i in range(1200)]}]
        for selectors, where, limit in (
                (many_selectors, 'selectors: more than %d selectors',
                 limits.MAX_SELECTORS),
                (many_labels, 'selectors[0].node_labels: more than %d label',
                 limits.MAX_LABEL_PAIRS)):
            resp = self.post('/v1/nodes/filter', {'selectors': selectors})
            self.assertError(resp, 400, 'baremetal_orch.limit_exceeded',
                             where % limit)
            groups = [{'name': 'a', 'critical': True, 'depends_on': [],
                       'selectors': selectors}]
            where = 'data.groups[0].' + where
            for path in ('/v1/deployment_strategies/validate',
                         '/v1/deployment_strategies'):
                resp = self.post(path, document(groups=groups))
                self.assertError(resp, 400, 'baremetal_orch.limit_exceeded',
                                 where % limit)
            # A strategy stored before the limits existed: dry run and
            # actions refuse it too.
            dbapi.create_strategy('old', document('old', groups))
            for dry_run in (True, False):
                resp = self.post('/v1/actions', {
                    'name': 'deploy_site', 'dry_run': dry_run,
                    'parameters': {'deployment_strategy': 'old'}})
                self.assertError(resp, 400, 'baremetal_orch.limit_exceeded',
                                 where % limit)
            dbapi.destroy_strategy('old')
        self.assertEqual([], dbapi.list_actions())

    def test_selectors_at_the_limits(self):
        # As many selectors and label pairs as allowed: one SQL statement
        # SQLite takes (expression depth, number of parameters).
        self.create_node(name='n1', tags=['t'])
        labels = [{'node_labels': ['k:v%d' % i for i in range(
            limits.MAX_LABEL_PAIRS)]}] * (
            limits.MAX_SELECTOR_LABEL_PAIRS // limits.MAX_LABEL_PAIRS)
        labels += [{'node_tags': ['t']}] * (
            limits.MAX_SELECTORS - len(labels))
        names = [{'node_names': ['n%d' % i for i in range(
            limits.MAX_VALUES)]}] * (
            limits.MAX_SELECTOR_VALUES // limits.MAX_VALUES)
        for selectors in (labels, names):
            resp = self.post('/v1/nodes/filter', {'selectors': selectors})
            self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual(['n1'], resp.json['node_names'])
        resp = self.post('/v1/nodes/filter', {'selectors': names + [
            {'node_tags': ['t']}]})
        self.assertError(resp, 400, 'baremetal_orch.limit_exceeded',
                         'selectors: more than %d values in all selectors'
                         % limits.MAX_SELECTOR_VALUES)
        resp = self.post('/v1/nodes/filter', {'selectors': labels[:-1] + [
            {'node_labels': ['k:v']}]})
        self.assertError(resp, 400, 'baremetal_orch.limit_exceeded',
                         'selectors: more than %d label pairs in all '
                         'selectors' % limits.MAX_SELECTOR_LABEL_PAIRS)
        resp = self.post('/v1/nodes/filter', {'selectors': [
            {'node_tags': ['t%d' % i for i in range(
                limits.MAX_VALUES + 1)]}]})
        self.assertError(resp, 400, 'baremetal_orch.limit_exceeded',
                         'selectors[0].node_tags: more than %d values in '
                         'one criterion' % limits.MAX_VALUES)

    def test_patch_value_nested_500_deep(self):
        self.post('/v1/nodes', {'driver': 'fake', 'name': 'n1'}, status=201)
        value = 'x'
        for _i in range(500):
            value = {'a': value}
        resp = self.patch('/v1/nodes/n1', [
            {'op': 'add', 'path': '/extra/deep', 'value': value}])
        self.assertError(resp, 400, 'baremetal_orch.limit_exceeded',
                         'more than %d levels of nesting' % limits.MAX_DEPTH)
        # Nested a little at a time: the result is bounded too.
        value = 'x'
        for _i in range(limits.MAX_DEPTH - 3):
            value = {'a': value}
        path = '/extra/d'
        resp = self.patch('/v1/nodes/n1', [
            {'op': 'add', 'path': path, 'value': value}])
        self.assertEqual(200, resp.status_int, resp.text)
        resp = self.patch('/v1/nodes/n1', [
            {'op': 'add', 'path': path + '/a/a/a/a', 'value': value}])
        self.assertError(resp, 400, 'baremetal_orch.limit_exceeded',
                         'levels of nesting')


class TestNotJson(HostileTestCase):

    def test_nan_and_infinity_are_refused(self):
        for raw in (b'NaN', b'Infinity', b'-Infinity', b'1e999', b'-1e400'):
            body = b'{"driver": "fake", "extra": {"a": %s}}' % raw
            resp = self.post('/v1/nodes', body)
            self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                             'JSON cannot represent')
        for raw in (b'.nan', b'.inf', b'-.Inf', b'1.0e+999'):
            body = (b'schema: %s\nmetadata: {name: s1, labels: {a: %s}}\n'
                    b'data: {groups: []}\n'
                    % (strategy.SCHEMA_NAME.encode(), raw))
            resp = self.post('/v1/deployment_strategies', body,
                             content_type='application/yaml')
            self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                             'not a JSON number')
        self.assertEqual([], dbapi.list_node_dicts({}))
        self.assertEqual([], dbapi.list_strategies())
        # What is listed is JSON.
        json.loads(self.get('/v1/nodes?detail=true', status=200).text,
                   parse_constant=self.fail)


class TestMethodOverride(HostileTestCase):

    def test_method_override_is_off(self):
        self.post('/v1/nodes', {'driver': 'fake', 'name': 'n1'}, status=201)
        for how in ({'path': '/v1/nodes/n1?_method=delete'},
                    {'path': '/v1/nodes/n1', 'form': b'_method=delete'},
                    {'path': '/v1/nodes/n1?_method=DELETE'}):
            if 'form' in how:
                resp = self.post(how['path'], how['form'], content_type=(
                    'application/x-www-form-urlencoded'))
            else:
                resp = self.post(how['path'], {})
            self.assertIn(resp.status_int, (404, 405), resp.text)
            self.get('/v1/nodes/n1', status=200)
        resp = self.get('/v1/nodes/n1?_method=delete')
        self.assertEqual(200, resp.status_int)
        self.get('/v1/nodes/n1', status=200)

    def test_query_cannot_name_the_resource(self):
        chassis = self.post('/v1/chassis', {}, status=201).json
        node = self.post('/v1/nodes', {'driver': 'fake', 'name': 'n1'},
                         status=201).json
        for path in ('/v1/chassis?uuid=%s' % chassis['uuid'],
                     '/v1/nodes?node_ident=n1',
                     '/v1/deployment_strategies?name=s1'):
            resp = self.delete(path)
            self.assertError(resp, 405)
        self.get('/v1/chassis/%s' % chassis['uuid'], status=200)
        self.get('/v1/nodes/%s' % node['uuid'], status=200)
        # Nor a body key (pecan offered its keys as arguments).
        resp = self.patch('/v1/nodes', {'node_ident': 'n1'})
        self.assertError(resp, 405)


class TestNames(HostileTestCase):

    def test_one_rule_for_strategy_names(self):
        for name in ('a/b', 'a b', 'x' * 256, '-a', 'a\n', '%2F'):
            for path in ('/v1/deployment_strategies',
                         '/v1/deployment_strategies/validate'):
                resp = self.post(path, document(name))
                self.assertError(resp, 400, 'baremetal_orch.invalid_name',
                                 'a name is 1 to 255 letters')
            resp = self.post('/v1/actions', {
                'name': 'deploy_site', 'dry_run': True,
                'parameters': {'deployment_strategy': name}})
            self.assertError(resp, 400)
        self.assertEqual([], dbapi.list_strategies())
        # A name that is stored can be used everywhere.
        name = 'x' * 255
        self.post('/v1/deployment_strategies', document(name), status=201)
        self.get('/v1/deployment_strategies/%s' % name, status=200)
        self.post('/v1/actions', {
            'name': 'deploy_site', 'dry_run': True,
            'parameters': {'deployment_strategy': name}}, status=200)
        self.delete('/v1/deployment_strategies/%s' % name, status=204)

    def test_one_rule_for_node_names(self):
        resp = self.post('/v1/nodes', {'driver': 'fake', 'name': 'n' * 256})
        self.assertError(resp, 400, 'baremetal_orch.schema_validation',
                         'name: longer than 255 characters (the limit)')
        for name in ('a b', 'a/b', 'a\n'):
            resp = self.post('/v1/nodes', {'driver': 'fake', 'name': name})
            self.assertError(resp, 400, 'baremetal_orch.schema_validation',
                             'is not a name: 1 to 255 letters')
        self.post('/v1/nodes', {'driver': 'fake', 'name': 'n' * 255},
                  status=201)
        self.get('/v1/nodes/%s' % ('n' * 255), status=200)


class TestErrorDocuments(HostileTestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level='DEBUG'))

    def test_413_detail(self):
        self.config(group='api', max_request_body_size=2048)
        import webtest

        from baremetal_orch.api import app
        self.app = webtest.TestApp(app.setup_app())
        for accept in ('application/json', '*/*', 'text/html'):
            resp = self.post('/v1/nodes', b'x' * 4096,
                             headers={'Accept': accept})
            error = self.assertError(resp, 413,
                                     'baremetal_orch.request_too_large')
            self.assertEqual('The request body is larger than 2048 bytes '
                             '([api]max_request_body_size).',
                             error['detail'])

    def test_client_mistakes_log_no_traceback(self):
        resp = self.get('/v1/nodes/%ff')
        self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                         'path')
        resp = self.get('/v1/nodes?name=%ff')
        self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                         'query')
        for charset in ('utf-16', 'x-unknown', 'latin-1'):
            resp = self.post('/v1/nodes', '{"driver": "fake", "name": '
                             '"\u00e9\u00e9"}'.encode('utf-16'),
                             content_type='application/json; charset=%s'
                             % charset)
            self.assertEqual(400, resp.status_int, resp.text)
            self.assertEqual(400, resp.json['errors'][0]['status'])
        self.assertNotIn('Traceback', self.log.output)
        self.assertNotIn('ERROR', self.log.output)
