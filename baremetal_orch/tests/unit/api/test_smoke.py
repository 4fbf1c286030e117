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

"""End to end through the API on the in-process conductor."""

import os

import yaml

from baremetal_orch.tests import base

EXAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..',
                        'etc', 'baremetal-orch', 'examples')


class TestSiteDeployThroughApi(base.ApiTestCase):

    def _load_site(self, failing=None):
        with open(os.path.join(EXAMPLES, 'site.yaml')) as f:
            site = yaml.safe_load(f)
        for node in site['nodes']:
            if failing and node['name'] in failing:
                node['driver_info'] = {'fake_fail_phase': failing[
                    node['name']]}
            self.post('/v1/nodes', node, status=201)
        with open(os.path.join(EXAMPLES, 'deployment-strategy.yaml'),
                  'rb') as f:
            self.post('/v1/deployment_strategies', f.read(), status=201,
                      content_type='application/yaml')

    def _deploy(self):
        action = self.post('/v1/actions', {'name': 'deploy_site'},
                           status=201).json
        return self.wait_for(lambda: (lambda a: a if a['state'] not in (
            'pending', 'running') else None)(
            self.get('/v1/actions/%s' % action['uuid'], status=200).json))

    def test_all_succeed(self):
        self._load_site()
        action = self._deploy()
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']))
        report = action['report']
        self.assertEqual({'success'}, set(report['nodes'].values()))
        self.assertEqual(5, len(report['order']))
        self.assertLess(report['order'].index('ntp-node'),
                        report['order'].index('control-nodes'))
        nodes = self.get('/v1/nodes?detail=true', status=200).json['nodes']
        self.assertEqual({'active'}, {n['provision_state'] for n in nodes})

    def test_ntp_prepare_fails(self):
        self._load_site({'ntp01': 'prepare'})
        action = self._deploy()
        self.assertEqual(('failed', 'failed'),
                         (action['state'], action['result']))
        groups = action['report']['groups']
        self.assertEqual('prepare_criteria_not_met',
                         groups['ntp-node']['reason'])
        for name in ('control-nodes', 'compute-nodes-1', 'compute-nodes-2'):
            self.assertEqual(('failed', 'dependency_failed'),
                             (groups[name]['status'], groups[name]['reason']))
        self.assertEqual('success', groups['monitoring-nodes']['status'])
        tree = self.get('/v1/tasks/%s?tree=true' % action['task_uuid'],
                        status=200).json
        self.assertEqual('action', tree['kind'])
        self.assertEqual(5, len(tree['subtasks']))
