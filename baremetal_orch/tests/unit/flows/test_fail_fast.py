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
"""A ``fail_fast`` group stops starting nodes once its phase's criteria
are out of reach; without it, every node of the phase is tried."""

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base

NODES = ['ff-%d' % i for i in range(5)]


def strategy(fail_fast):
    group = {'name': 'wave', 'critical': True, 'depends_on': [],
             'selectors': [{'node_tags': ['wave']}],
             'success_criteria': {'percent_successful_nodes': 100}}
    if fail_fast is not None:
        group['fail_fast'] = fail_fast
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 'deployment-strategy'},
            'data': {'groups': [group]}}


class TestFailFast(base.ApiTestCase):

    def setUp(self):
        super().setUp()
        # One node at a time: the first failure is known before the
        # second node would start.
        self.config(group='conductor', max_concurrent_nodes=1)

    def deploy(self, fail_fast):
        for name in NODES:
            self.post('/v1/nodes', {
                'driver': 'fake', 'name': name, 'tags': ['wave'],
                'driver_info': {'fake_fail_phase': 'prepare'}}, status=201)
        self.post('/v1/deployment_strategies', strategy(fail_fast),
                  status=201)
        uuid = self.post('/v1/actions', {'name': 'deploy_site'},
                         status=201).json['uuid']

        def check():
            action = self.get('/v1/actions/' + uuid, status=200).json
            if action['state'] not in ('pending', 'running'):
                return action
        return self.wait_for(check)

    def test_the_rest_of_the_wave_is_not_started(self):
        action = self.deploy(fail_fast=True)
        self.assertEqual(('failed', 'failed'),
                         (action['state'], action['result']))
        nodes = action['report']['nodes']
        self.assertEqual(1, list(nodes.values()).count('failure'), nodes)
        self.assertEqual(4, list(nodes.values()).count('not_started'),
                         nodes)
        wave = action['report']['groups']['wave']
        self.assertEqual(('failed', 'prepare_criteria_not_met'),
                         (wave['status'], wave['reason']))
        # Only the node that was tried reached its driver.
        states = sorted(n.provision_state for n in dbapi.list_nodes())
        self.assertEqual(['clean failed'] + ['enroll'] * 4, states)
        failed_events = self.get(
            '/v1/events?action_uuid=%s' % action['uuid'],
            status=200).json['events']
        self.assertEqual(1, sum(1 for e in failed_events
                                if e['event_type'] == 'node.failed'))

    def assertEveryNodeTried(self, action):
        self.assertEqual(['failure'] * len(NODES),
                         list(action['report']['nodes'].values()))
        self.assertEqual(['clean failed'] * len(NODES),
                         [n.provision_state for n in dbapi.list_nodes()])

    def test_without_fail_fast_every_node_is_tried(self):
        self.assertEveryNodeTried(self.deploy(fail_fast=None))

    def test_fail_fast_false_is_the_default(self):
        self.assertEveryNodeTried(self.deploy(fail_fast=False))
