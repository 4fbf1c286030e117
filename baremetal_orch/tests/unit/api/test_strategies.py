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
"""/v1/deployment_strategies: JSON and YAML documents, validation."""

import copy

import yaml

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base


def group(name, depends_on=(), critical=True, **extra):
    g = {'name': name, 'critical': critical, 'depends_on': list(depends_on),
         'selectors': [{'node_tags': [name]}]}
    g.update(extra)
    return g


def document(*groups, name='deployment-strategy'):
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'schema': 'metadata/Document/v1', 'name': name},
            'data': {'groups': list(groups)}}


GOOD = document(group('ntp'), group('control', ['ntp']),
                group('compute', ['control'], critical=False,
                      success_criteria={'percent_successful_nodes': 50}),
                group('monitoring'))


def _without(d, key):
    d = copy.deepcopy(d)
    del d[key]
    return d


#: (case, document, error code, text the detail must contain)
INVALID = [
    ('missing_critical',
     document(_without(group('alpha'), 'critical')),
     'baremetal_orch.strategy.schema', "'critical'"),
    ('unknown_group_key',
     document(group('alpha', colour='blue')),
     'baremetal_orch.strategy.schema', "'colour'"),
    ('unknown_selector_key',
     document(group('alpha', selectors=[{'node_colours': ['x']}])),
     'baremetal_orch.strategy.schema', "'node_colours'"),
    ('wrong_schema',
     dict(document(group('alpha')), schema='shipyard/Other/v1'),
     'baremetal_orch.strategy.schema', 'shipyard/Other/v1'),
    ('empty_success_criteria',
     document(group('alpha', success_criteria={})),
     'baremetal_orch.strategy.schema', 'success_criteria'),
    ('duplicate_name',
     document(group('alpha'), group('beta'), group('alpha')),
     'baremetal_orch.strategy.duplicate_group', 'alpha'),
    ('unknown_depends_on',
     document(group('alpha', ['nowhere'])),
     'baremetal_orch.strategy.unknown_dependency', 'nowhere'),
    ('self_dependency',
     document(group('alpha'), group('beta', ['beta'])),
     'baremetal_orch.strategy.self_dependency', 'beta'),
    ('percent_over_100',
     document(group('alpha', success_criteria={
         'percent_successful_nodes': 101})),
     'baremetal_orch.strategy.criteria', '101'),
    ('negative_minimum',
     document(group('alpha', success_criteria={
         'minimum_successful_nodes': -1})),
     'baremetal_orch.strategy.criteria', 'minimum_successful_nodes'),
    ('negative_maximum_failed',
     document(group('alpha', success_criteria={
         'maximum_failed_nodes': -2})),
     'baremetal_orch.strategy.criteria', 'maximum_failed_nodes'),
    ('label_without_value',
     document(group('alpha', selectors=[{'node_labels': ['role:']}])),
     'baremetal_orch.strategy.selector', 'role:'),
    ('label_without_colon',
     document(group('alpha', selectors=[{'node_labels': ['role']}])),
     'baremetal_orch.strategy.selector', "'role'"),
    ('label_bad_key',
     document(group('alpha', selectors=[{'node_labels': [
         {'bad key': 'v'}]}])),
     'baremetal_orch.strategy.selector', 'bad key'),
    ('not_a_map', ['a', 'list'], 'baremetal_orch.strategy.schema',
     'must be a map'),
]


class StrategyApiTestCase(base.ApiTestCase):

    def stored(self):
        return [r.name for r in dbapi.list_strategies()]


class TestStrategies(StrategyApiTestCase):

    def test_json_create_show_list_delete(self):
        resp = self.post('/v1/deployment_strategies', GOOD, status=201)
        doc = resp.json
        self.assertEqual(('deployment-strategy', GOOD),
                         (doc['name'], doc['document']))
        self.assertEqual(doc, self.get(
            '/v1/deployment_strategies/deployment-strategy',
            status=200).json)
        listed = self.get('/v1/deployment_strategies',
                          status=200).json['deployment_strategies']
        self.assertEqual([doc], listed)
        resp = self.delete('/v1/deployment_strategies/deployment-strategy',
                           status=204)
        self.assertEqual(b'', resp.body)
        self.assertError(
            self.get('/v1/deployment_strategies/deployment-strategy'), 404,
            'baremetal_orch.strategy.not_found', 'deployment-strategy')
        self.assertError(
            self.delete('/v1/deployment_strategies/deployment-strategy'),
            404)

    def test_yaml_create(self):
        body = yaml.safe_dump(GOOD).encode()
        for ctype in ('application/yaml', 'application/x-yaml',
                      'text/yaml'):
            doc = self.post('/v1/deployment_strategies', body, status=201,
                            content_type=ctype).json
            self.assertEqual(GOOD, doc['document'])
            self.delete('/v1/deployment_strategies/deployment-strategy',
                        status=204)

    def test_yaml_of_the_example_site(self):
        import os
        path = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                            '..', 'etc', 'baremetal-orch', 'examples',
                            'deployment-strategy.yaml')
        with open(path, 'rb') as f:
            body = f.read()
        resp = self.post('/v1/deployment_strategies/validate', body,
                         status=200, content_type='application/yaml')
        self.assertEqual(['monitoring-nodes', 'ntp-node', 'control-nodes',
                          'compute-nodes-1', 'compute-nodes-2'],
                         resp.json['order'])

    def test_duplicate_name(self):
        self.post('/v1/deployment_strategies', GOOD, status=201)
        other = copy.deepcopy(GOOD)
        other['data']['groups'] = other['data']['groups'][:1]
        resp = self.post('/v1/deployment_strategies', other)
        self.assertError(resp, 409, 'baremetal_orch.duplicate_name',
                         'deployment-strategy')
        self.assertEqual(GOOD, dbapi.get_strategy(
            'deployment-strategy').document)

    def test_validate_stores_nothing(self):
        resp = self.post('/v1/deployment_strategies/validate', GOOD,
                         status=200)
        self.assertEqual({'valid': True, 'name': 'deployment-strategy',
                          'order': ['ntp', 'control', 'compute',
                                    'monitoring']}, resp.json)
        self.assertEqual([], self.stored())

    def test_cycle_names_exactly_the_groups_on_it(self):
        doc = document(group('alpha', ['gamma']), group('beta', ['alpha']),
                       group('gamma', ['beta']), group('hanger', ['alpha']),
                       group('free'))
        for url in ('/v1/deployment_strategies',
                    '/v1/deployment_strategies/validate'):
            error = self.assertError(self.post(url, doc), 400,
                                     'baremetal_orch.strategy.cycle')
            named = error['detail'].split('groups', 1)[1]
            self.assertEqual({'alpha', 'beta', 'gamma'},
                             {n.strip(' ;,.') for n in
                              named.replace(';', ',').split(',')})
        self.assertEqual([], self.stored())

    def test_two_cycles(self):
        doc = document(group('a1', ['a2']), group('a2', ['a1']),
                       group('b1', ['b2']), group('b2', ['b1']))
        error = self.assertError(
            self.post('/v1/deployment_strategies/validate', doc), 400,
            'baremetal_orch.strategy.cycle')
        self.assertIn('a1, a2', error['detail'])
        self.assertIn('b1, b2', error['detail'])

    def test_invalid_documents(self):
        for case, doc, code, offender in INVALID:
            for url in ('/v1/deployment_strategies',
                        '/v1/deployment_strategies/validate'):
                resp = self.post(url, doc)
                self.assertEqual(400, resp.status_int, case)
                error = resp.json['errors'][0]
                self.assertEqual(code, error['code'], case)
                self.assertIn(offender, error['detail'], case)
            # YAML says the same.
            resp = self.post('/v1/deployment_strategies/validate',
                             yaml.safe_dump(doc).encode(),
                             content_type='application/yaml')
            self.assertEqual(code, resp.json['errors'][0]['code'], case)
        self.assertEqual([], self.stored())

    def test_bad_bodies(self):
        cases = [
            (b'groups: [unclosed', 'application/yaml', 400,
             'baremetal_orch.invalid_parameter'),
            (b'{"schema": ', 'application/json', 400,
             'baremetal_orch.invalid_parameter'),
            (b'', 'application/json', 400,
             'baremetal_orch.invalid_parameter'),
            (b'', 'application/yaml', 400,
             'baremetal_orch.invalid_parameter'),
            (yaml.safe_dump(GOOD).encode(), 'text/plain', 415,
             'baremetal_orch.unsupported_media_type'),
        ]
        for body, ctype, status, code in cases:
            for url in ('/v1/deployment_strategies',
                        '/v1/deployment_strategies/validate'):
                resp = self.post(url, body, content_type=ctype)
                self.assertError(resp, status, code)
        self.assertEqual([], self.stored())

    def test_too_large(self):
        self.config(group='api', max_request_body_size=1024)
        doc = copy.deepcopy(GOOD)
        doc['metadata']['labels'] = {'padding': 'x' * 2048}
        for body, ctype in ((doc, None),
                            (yaml.safe_dump(doc).encode(),
                             'application/yaml')):
            resp = self.post('/v1/deployment_strategies', body,
                             content_type=ctype)
            self.assertError(resp, 413,
                             'baremetal_orch.request_too_large', '1024')
        self.assertEqual([], self.stored())

    def test_paging(self):
        for name in ('c', 'a', 'b'):
            self.post('/v1/deployment_strategies', document(
                group('g'), name=name), status=201)
        page = self.get('/v1/deployment_strategies?limit=2',
                        status=200).json
        self.assertEqual(['a', 'b'], [s['name'] for s in
                                      page['deployment_strategies']])
        page = self.get(page['next'], status=200).json
        self.assertEqual(['c'], [s['name'] for s in
                                 page['deployment_strategies']])
        self.assertError(self.get('/v1/deployment_strategies?fields=name'),
                         400, detail_contains='fields')

    def test_in_use_by_a_running_action(self):
        self.post('/v1/deployment_strategies', GOOD, status=201)
        action = dbapi.create_action({
            'name': 'deploy_site', 'state': 'running',
            'parameters': {'deployment_strategy': 'deployment-strategy'}})
        resp = self.delete('/v1/deployment_strategies/deployment-strategy')
        self.assertError(resp, 409, 'baremetal_orch.strategy.in_use',
                         action.uuid)
        dbapi.update_action(action.uuid, {'state': 'complete'})
        self.delete('/v1/deployment_strategies/deployment-strategy',
                    status=204)
