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
"""Deployment strategies: JSON and YAML documents, validation."""

from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from baremetal_orch_tempest_plugin.tests import base

YAML = '''\
schema: shipyard/DeploymentStrategy/v1
metadata:
  schema: metadata/Document/v1
  name: {name}
data:
  groups:
    - name: control
      critical: true
      depends_on: []
      selectors:
        - node_tags: [{tag}]
      success_criteria:
        percent_successful_nodes: 100
    - name: compute
      critical: false
      depends_on: [control]
      selectors:
        - node_labels: ["role:compute"]
'''


class TestStrategies(base.BaremetalOrchTest):

    @decorators.idempotent_id('c1f3a2b4-8e6d-4b1a-9c0e-7a5d3f2e1b01')
    def test_json_create_show_list_delete(self):
        name = self.name('strategy')
        strategy = self.create_strategy(name, [
            {'name': 'first', 'selectors': [{'node_tags': ['a']}]},
            {'name': 'second', 'depends_on': ['first'], 'critical': False,
             'selectors': [{'rack_names': ['r1']}]}])
        self.assertEqual(name, strategy['name'])
        _, shown = self.admin.show('deployment_strategies', name)
        groups = shown['document']['data']['groups']
        self.assertEqual(['first', 'second'], [g['name'] for g in groups])
        _, body = self.admin.list('deployment_strategies')
        self.assertIn(name, [s['name'] for s in
                             body['deployment_strategies']])
        # One name, one strategy.
        exc = self.assertRaises(
            lib_exc.Conflict, self.admin.create_strategy,
            base.strategy_document(name, [{'name': 'x', 'selectors': []}]))
        self.assertErrorDocument(409, exc.resp_body, name)
        self.admin.delete('deployment_strategies', name)
        self.assertRaises(lib_exc.NotFound, self.admin.show,
                          'deployment_strategies', name)

    @decorators.idempotent_id('c1f3a2b4-8e6d-4b1a-9c0e-7a5d3f2e1b02')
    def test_yaml_document(self):
        name = self.name('yaml')
        _, strategy = self.admin.create_strategy_yaml(
            YAML.format(name=name, tag=self.name('tag')))
        self.addCleanup(self.admin.delete, 'deployment_strategies', name)
        self.assertEqual(name, strategy['name'])
        groups = strategy['document']['data']['groups']
        self.assertEqual(['control', 'compute'], [g['name'] for g in groups])
        self.assertEqual(['control'], groups[1]['depends_on'])

    @decorators.idempotent_id('c1f3a2b4-8e6d-4b1a-9c0e-7a5d3f2e1b03')
    def test_validate_stores_nothing(self):
        name = self.name('valid')
        _, result = self.admin.validate_strategy(base.strategy_document(
            name, [{'name': 'b', 'depends_on': ['a'], 'selectors': []},
                   {'name': 'a', 'selectors': []}]))
        self.assertEqual({'valid': True, 'name': name, 'order': ['a', 'b']},
                         result)
        self.assertRaises(lib_exc.NotFound, self.admin.show,
                          'deployment_strategies', name)

    @decorators.idempotent_id('c1f3a2b4-8e6d-4b1a-9c0e-7a5d3f2e1b04')
    def test_validate_names_the_offender(self):
        def document(groups):
            return base.strategy_document(self.name('bad'), groups)

        cases = [
            # A cycle names the groups on it, not those hanging off it.
            (document([{'name': 'a', 'depends_on': ['c'], 'selectors': []},
                       {'name': 'b', 'depends_on': ['a'], 'selectors': []},
                       {'name': 'c', 'depends_on': ['b'], 'selectors': []},
                       {'name': 'tail', 'depends_on': ['a'],
                        'selectors': []}]),
             ['a, b, c'], ['tail']),
            (document([{'name': 'a', 'depends_on': ['ghost'],
                        'selectors': []}]), ['ghost'], []),
            (document([{'name': 'a', 'selectors': []},
                       {'name': 'a', 'selectors': []}]), ['a'], []),
            (document([{'name': 'a', 'selectors': [],
                        'success_criteria': {
                            'percent_successful_nodes': 101}}]),
             ['percent_successful_nodes'], []),
        ]
        for body, named, not_named in cases:
            exc = self.assertRaises(lib_exc.BadRequest,
                                    self.admin.validate_strategy, body)
            error = self.assertErrorDocument(400, exc.resp_body, *named)
            for name in not_named:
                self.assertNotIn(name, error['detail'])
