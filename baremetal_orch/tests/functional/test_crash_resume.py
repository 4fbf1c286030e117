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
"""kill -9 of the conductor running a deploy_site: the action is taken
over by the other conductor and ends with the report of an uninterrupted
run, without preparing or deploying any node twice (MariaDB, RabbitMQ)."""

import json
import os
import signal
import subprocess
import sys

from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing import helpers
from baremetal_orch_testing import services

GROUPS = ('g1', 'g2', 'g3')
NODES_PER_GROUP = 4


def strategy():
    groups = []
    previous = []
    for name in GROUPS:
        groups.append({'name': name, 'critical': True,
                       'depends_on': previous,
                       'selectors': [{'node_tags': [name]}],
                       'success_criteria': {'percent_successful_nodes': 100}})
        previous = [name]
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 'crash-strategy'},
            'data': {'groups': groups}}


class SplitServiceTestCase(base.FunctionalTestCase):
    """An API and two conductors, over MariaDB and RabbitMQ, with the
    fake driver's call log."""

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(databases.Database('mysql'))
        self.rabbit = self.useFixture(broker.RabbitMQ())
        tmp = self.log_dir
        self.call_log = os.path.join(tmp, 'calls.jsonl')
        port = services.free_port()
        self.confs = {}
        for host in ('conductor-1', 'conductor-2', 'api'):
            self.confs[host] = services.write_config(
                os.path.join(tmp, '%s.conf' % host),
                services.base_sections(
                    tmp, port, self.db.url,
                    DEFAULT={'rpc_transport': 'oslo', 'host': host,
                             'transport_url': self.rabbit.transport_url,
                             'rpc_response_timeout': 30},
                    conductor={'max_concurrent_nodes': 2,
                               'heartbeat_interval': 1,
                               'heartbeat_timeout': 4},
                    fake_driver={'call_log': self.call_log}))
        subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                     'baremetal-orch-manage'),
                        '--config-file', self.confs['api'], 'db',
                        'upgrade'], check=True, capture_output=True,
                       timeout=120)
        self.conductors = {
            host: self.start_process(
                ['baremetal-orch-conductor', '--config-file',
                 self.confs[host]], log_name=host)
            for host in ('conductor-1', 'conductor-2')}
        api = self.start_process(['baremetal-orch-api', '--config-file',
                                  self.confs['api']])
        endpoint = 'http://127.0.0.1:%d' % port
        self.wait_for_http(endpoint + '/v1', status=200, process=api,
                           timeout=60)
        self.client = services.Client(endpoint)

    def _calls(self):
        return helpers.completed_calls(self.call_log)


class TestCrashResume(SplitServiceTestCase):

    def test_kill_9_during_deploy_site(self):
        c = self.client
        for group in GROUPS:
            for i in range(NODES_PER_GROUP):
                c.post('/v1/nodes', status=201, json={
                    'name': '%s-n%d' % (group, i), 'driver': 'fake',
                    'tags': [group],
                    'driver_info': {'fake_duration': 0.4}})
        c.post('/v1/deployment_strategies', json=strategy(), status=201)
        # Both conductors must be up before the action starts.
        c.wait_for(lambda: len([s for s in c.get(
            '/v1/services').json().get('services', [])
            if s.get('alive')]) == 2 if c.get(
            '/v1/services').status_code == 200 else True, timeout=60)
        action = c.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'crash-strategy'}}).json()
        owner = action['conductor']
        self.assertIn(owner, self.conductors)

        # Kill the action's conductor once g1 is deployed and g2 started.
        def g2_started():
            report = c.get('/v1/actions/%s' % action['uuid']).json()[
                'report'] or {}
            return 'g2' in report.get('order', [])
        c.wait_for(g2_started, timeout=120)
        self.conductors[owner].send_signal(signal.SIGKILL)
        self.conductors[owner].wait(10)

        final = c.wait_for_action(action['uuid'], timeout=240)
        self.assertEqual(('complete', 'success'),
                         (final['state'], final['result']),
                         json.dumps(final['report'], indent=1))
        survivor = [h for h in self.conductors if h != owner][0]
        self.assertEqual(survivor, final['conductor'])
        report = final['report']
        self.assertEqual(list(GROUPS), report['order'])
        for group in GROUPS:
            self.assertEqual('success', report['groups'][group]['status'])
        names = ['%s-n%d' % (g, i) for g in GROUPS
                 for i in range(NODES_PER_GROUP)]
        self.assertEqual({n: 'success' for n in names}, report['nodes'])
        # No node was prepared or deployed twice (completed driver calls).
        calls = self._calls()
        for name in names:
            self.assertEqual(1, calls[(name, 'provide')], name)
            self.assertEqual(1, calls[(name, 'deploy')], name)
        nodes = c.get('/v1/nodes?detail=true', status=200).json()['nodes']
        self.assertEqual({'active'}, {n['provision_state'] for n in nodes})
