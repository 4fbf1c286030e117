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
"""Signals and update_labels on the split deployment: API and conductor
processes over RabbitMQ, PostgreSQL; the test plays the nodes' agents."""

import os
import subprocess
import sys

from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing import services

STRATEGY = {
    'schema': 'shipyard/DeploymentStrategy/v1',
    'metadata': {'name': 'signals'},
    'data': {'groups': [{
        'name': 'agents', 'critical': False, 'depends_on': [],
        'selectors': [{'node_tags': ['agent']}],
        'wait_for_signal': True}]},
}


class TestSplitLabelsAndSignals(base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        db = self.useFixture(databases.Database('postgresql'))
        rabbit = self.useFixture(broker.RabbitMQ())
        tmp = self.log_dir
        self.drive = os.path.join(tmp, 'configdrive')
        port = services.free_port()
        conf = services.write_config(
            os.path.join(tmp, 'split.conf'), services.base_sections(
                tmp, port, db.url,
                DEFAULT={'rpc_transport': 'oslo', 'host': 'conductor-s',
                         'transport_url': rabbit.transport_url,
                         'rpc_response_timeout': 30},
                api={'public_endpoint': 'http://127.0.0.1:%d' % port},
                conductor={'signal_timeout': 120},
                fake_driver={'configdrive_dir': self.drive},
                labels={'driver': 'noop', 'noop_fail_nodes': 'agent-2'}))
        subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                     'baremetal-orch-manage'),
                        '--config-file', conf, 'db', 'upgrade'],
                       check=True, capture_output=True, timeout=120)
        self.conductor = self.start_process(
            ['baremetal-orch-conductor', '--config-file', conf])
        api = self.start_process(['baremetal-orch-api', '--config-file',
                                  conf])
        self.endpoint = 'http://127.0.0.1:%d' % port
        self.wait_for_http(self.endpoint + '/v1', status=200, process=api,
                           timeout=60)
        self.client = services.Client(self.endpoint)
        services.wait_for_live_conductor(self.client)

    def _agent(self, node_uuid):
        return services.agent_info(self.drive, node_uuid)

    def test_signals_then_labels(self):
        c = self.client
        nodes = [c.post('/v1/nodes', status=201, json={
            'name': 'agent-%d' % i, 'driver': 'fake', 'tags': ['agent'],
            'rack_name': 'rack-s', 'labels': {'team': 'blue'}}).json()
            for i in range(3)]
        c.post('/v1/deployment_strategies', json=STRATEGY, status=201)
        action = c.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'signals'}}).json()
        infos = {n['uuid']: c.wait_for(lambda n=n: self._agent(n['uuid']),
                                       timeout=120) for n in nodes}
        for info in infos.values():
            self.assertEqual('true', info['deploy_status_aware'])
        # A forged token is refused; the real one is accepted.
        some = next(iter(infos.values()))
        c.post('/v1/signals/%s' % some['deployment_uuid'],
               json={'deploy_status': 'IN_PROGRESS'},
               headers={'X-Signal-Token': 'forged'}, status=401)
        for info in infos.values():
            c.post('/v1/signals/%s' % info['deployment_uuid'],
                   headers={'X-Signal-Token': services.signal_token(info)},
                   json={'deploy_status': 'IN_PROGRESS',
                         'deploy_status_reason': 'configuring'},
                   status=200)
        events = c.get('/v1/events?action_uuid=%s' % action['uuid'],
                       status=200).json()['events']
        self.assertEqual(3, len([e for e in events if e['event_type'] ==
                                 'deployment.signal.in_progress']))
        self.assertEqual('running', c.get('/v1/actions/%s' % action['uuid'],
                                          status=200).json()['state'])
        for info in infos.values():
            # A stock heat-config agent: one final signal, status code 0.
            c.post('/v1/signals/%s' % info['deployment_uuid'],
                   headers={'X-Signal-Token': services.signal_token(info)},
                   json={'deploy_stdout': 'ok', 'deploy_status_code': 0},
                   status=200)
        final = c.wait_for_action(action['uuid'], timeout=180)
        self.assertEqual(('complete', 'success'),
                         (final['state'], final['result']))
        records = c.get('/v1/deployments?action_uuid=%s' % action['uuid'],
                        status=200).json()['deployments']
        self.assertEqual({'COMPLETE'}, {r['status'] for r in records})

        relabel = c.post('/v1/actions', status=201, json={
            'name': 'update_labels',
            'parameters': {'target_nodes': ['agent-0', 'agent-2']}}).json()
        relabel = c.wait_for_action(relabel['uuid'], timeout=120)
        self.assertEqual('failed', relabel['state'])
        self.assertEqual(['agent-0'], relabel['report']['relabeled'])
        self.assertEqual(['agent-2'], relabel['report']['not_relabeled'])
        applied = c.get('/v1/nodes/agent-0', status=200).json()[
            'applied_labels']
        self.assertEqual('blue', applied['team'])
        self.assertEqual('rack-s',
                         applied['baremetal-orch.openstack.org/rack'])
        self.assertEqual('true', applied[
            'baremetal-orch.openstack.org/group.agents'])
        self.assertFalse(c.get('/v1/nodes/agent-1', status=200).json()[
            'applied_labels'])
