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
"""Steering on the all-in-one ``baremetal-orch`` process (sqlite, no
broker, noauth, fake driver): a paused action stays paused through kill -9
and a restart of the process, and a resume completes it with no node
prepared or deployed twice; pause, resume and abort through the real
``openstack`` CLI."""

import json
import os
import signal
import subprocess
import sys
import time

from baremetal_orch.tests.functional import aio
from baremetal_orch.tests.functional import base
from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing import helpers
from baremetal_orch_testing import services

NODES = 8


class TestSteeringAllInOne(base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        self.call_log = os.path.join(self.log_dir, 'calls.jsonl')
        self.aio = self.useFixture(aio.AllInOne(sections={
            'conductor': {'max_concurrent_nodes': 2},
            'fake_driver': {'call_log': self.call_log}}))
        self.client = services.Client(self.aio.url)

    def make_site(self, duration):
        for i in range(NODES):
            self.client.post('/v1/nodes', status=201, json={
                'name': 'n%d' % i, 'driver': 'fake', 'tags': ['wave'],
                'driver_info': {'fake_duration': duration}})
        self.client.post('/v1/deployment_strategies', status=201, json={
            'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 'deployment-strategy'},
            'data': {'groups': [{
                'name': 'wave', 'critical': True, 'depends_on': [],
                'selectors': [{'node_tags': ['wave']}],
                'success_criteria': {'percent_successful_nodes': 100}}]}})

    def _calls(self):
        return helpers.completed_calls(self.call_log)

    def _state(self, uuid):
        return self.client.get('/v1/actions/%s' % uuid, status=200).json()

    def _restart(self):
        """kill -9 the process, then start it again on the same files."""
        self.aio.process.send_signal(signal.SIGKILL)
        self.aio.process.wait(10)
        exe = os.path.join(os.path.dirname(sys.executable), 'baremetal-orch')
        with open(self.aio.output_path, 'ab') as out:
            self.aio.process = subprocess.Popen(
                [exe, '--config-file', self.aio.config_path],
                stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, cwd=self.aio.dir,
                start_new_session=True)
        self.addCleanup(func_fixtures.stop_process, self.aio.process, 5)
        self.aio.wait_until_answering()

    def test_paused_through_kill_9_and_restart(self):
        self.make_site(0.4)
        uuid = self.client.post('/v1/actions', status=201, json={
            'name': 'deploy_site'}).json()['uuid']
        self.client.wait_for(
            lambda: sum(self._calls().values()) >= 2, timeout=60)
        self.client.post('/v1/actions/%s/control' % uuid, status=202,
                         json={'verb': 'pause', 'reason': 'drill'})
        self.client.wait_for(
            lambda: self._state(uuid)['state'] == 'paused', timeout=60)
        self._restart()
        before = self._calls()
        time.sleep(3)
        action = self._state(uuid)
        self.assertEqual(('paused', 'drill'),
                         (action['state'], action['state_reason']))
        self.assertEqual(before, self._calls())
        self.client.post('/v1/actions/%s/control' % uuid, status=202,
                         json={'verb': 'resume'})
        final = self.client.wait_for_action(uuid, timeout=120)
        self.assertEqual(('complete', 'success'),
                         (final['state'], final['result']))
        calls = self._calls()
        for i in range(NODES):
            self.assertEqual(1, calls[('n%d' % i, 'deploy')], calls)
        self.assertEqual({1}, set(calls.values()), calls)

    def _openstack(self, *args):
        exe = os.path.join(os.path.dirname(sys.executable), 'openstack')
        env = {k: v for k, v in os.environ.items()
               if not k.startswith('OS_')}
        return subprocess.run(
            [exe, '--os-auth-type', 'none', '--os-endpoint', self.aio.url,
             'baremetal', 'orch', 'action'] + list(args),
            capture_output=True, text=True, env=env, timeout=120)

    def test_the_cli_pauses_aborts_and_refuses(self):
        # Long enough for the CLI's start-up, a few seconds a command.
        self.make_site(5)
        uuid = self.client.post('/v1/actions', status=201, json={
            'name': 'deploy_site'}).json()['uuid']
        done = self._openstack('pause', uuid, '--reason', 'look first',
                               '-f', 'json')
        self.assertEqual(0, done.returncode, done.stderr)
        self.assertIn(json.loads(done.stdout)['state'],
                      ('pausing', 'paused'))
        refused = self._openstack('pause', uuid)
        self.assertEqual(1, refused.returncode)
        self.assertIn('paus', refused.stderr)
        done = self._openstack('abort', uuid, '--reason', 'enough')
        self.assertEqual(0, done.returncode, done.stderr)
        final = self.client.wait_for_action(uuid, timeout=120)
        self.assertEqual(('cancelled', 'failed', 'enough'),
                         (final['state'], final['result'],
                          final['state_reason']))
        refused = self._openstack('resume', uuid)
        self.assertEqual(1, refused.returncode)
        self.assertIn('it is cancelled', refused.stderr)
        shown = self._openstack('show', uuid, '-f', 'json')
        self.assertEqual(0, shown.returncode, shown.stderr)
        self.assertEqual('enough', json.loads(shown.stdout)['state_reason'])
