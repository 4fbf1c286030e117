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
"""Steering survives kill -9 of the conductor that runs the action (split
service: API and two conductors over RabbitMQ and MariaDB):

* a paused action is still paused once the other conductor took it over,
  and a resume completes it without any node prepared or deployed twice;
* an abort sent while the owner is dead is carried out by the conductor
  that takes the action over.
"""

import signal
import time

from baremetal_orch.tests.functional import test_crash_resume

GROUPS = test_crash_resume.GROUPS
NODES_PER_GROUP = test_crash_resume.NODES_PER_GROUP


class TestSteeringCrash(test_crash_resume.SplitServiceTestCase):

    def _start(self):
        c = self.client
        for group in GROUPS:
            for i in range(NODES_PER_GROUP):
                c.post('/v1/nodes', status=201, json={
                    'name': '%s-n%d' % (group, i), 'driver': 'fake',
                    'tags': [group],
                    'driver_info': {'fake_duration': 0.4}})
        c.post('/v1/deployment_strategies',
               json=test_crash_resume.strategy(), status=201)
        c.wait_for(lambda: len([s for s in c.get(
            '/v1/services').json().get('services', [])
            if s.get('alive')]) == 2, timeout=60)
        action = c.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'crash-strategy'}}).json()

        def g2_started():
            report = c.get('/v1/actions/%s' % action['uuid']).json()[
                'report'] or {}
            return 'g2' in report.get('order', [])
        c.wait_for(g2_started, timeout=120)
        return action

    def _state(self, uuid):
        return self.client.get('/v1/actions/%s' % uuid).json()

    def _kill(self, owner):
        self.conductors[owner].send_signal(signal.SIGKILL)
        self.conductors[owner].wait(10)
        # Until its heartbeat is stale the dead one still looks alive.
        self.client.wait_for(lambda: [
            s['host'] for s in self.client.get(
                '/v1/services').json()['services'] if s['alive']] == [
            h for h in self.conductors if h != owner], timeout=60)

    def _no_node_twice(self):
        calls = self._calls()
        for (name, call), count in calls.items():
            self.assertEqual(1, count, (name, call))

    def test_paused_action_stays_paused_through_take_over(self):
        action = self._start()
        uuid = action['uuid']
        owner = action['conductor']
        self.client.post('/v1/actions/%s/control' % uuid, status=202,
                         json={'verb': 'pause', 'reason': 'drill'})
        self.client.wait_for(
            lambda: self._state(uuid)['state'] == 'paused', timeout=60)
        self._kill(owner)
        survivor = [h for h in self.conductors if h != owner][0]
        self.client.wait_for(
            lambda: self._state(uuid)['conductor'] == survivor,
            timeout=60)
        # Taken over, and still paused: nothing new starts.
        calls = self._calls()
        time.sleep(3)
        current = self._state(uuid)
        self.assertEqual(('paused', 'drill'),
                         (current['state'], current['state_reason']))
        self.assertEqual(calls, self._calls())
        self.client.post('/v1/actions/%s/control' % uuid, status=202,
                         json={'verb': 'resume'})
        final = self.client.wait_for_action(uuid, timeout=240)
        self.assertEqual(('complete', 'success'),
                         (final['state'], final['result']))
        self._no_node_twice()
        names = ['%s-n%d' % (g, i) for g in GROUPS
                 for i in range(NODES_PER_GROUP)]
        calls = self._calls()
        for name in names:
            self.assertEqual(1, calls[(name, 'deploy')], name)

    def test_abort_while_the_owner_is_dead(self):
        action = self._start()
        uuid = action['uuid']
        owner = action['conductor']
        self._kill(owner)
        self.client.post('/v1/actions/%s/control' % uuid, status=202,
                         json={'verb': 'abort', 'reason': 'owner down'})
        final = self.client.wait_for_action(uuid, timeout=240)
        self.assertEqual(('cancelled', 'failed', 'owner down'),
                         (final['state'], final['result'],
                          final['state_reason']))
        survivor = [h for h in self.conductors if h != owner][0]
        self.assertEqual(survivor, final['conductor'])
        g3 = final['report']['groups']['g3']
        self.assertEqual(('failed', 'aborted'),
                         (g3['status'], g3['reason']))
        for i in range(NODES_PER_GROUP):
            self.assertEqual('not_started',
                             final['report']['nodes']['g3-n%d' % i])
        self._no_node_twice()
