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
"""Drill R7: Ironic's API is down for 60 s in the middle of an action.

A real Ironic (fake hardware, a deploy lasting about 20 s) behind a TCP
relay (:mod:`..fixtures.tcp_relay`), as behind a load balancer; the
all-in-one service deploys a group of 100 ``ironic`` nodes through the
relay. Once Ironic shows the nodes deploying, the relay refuses new
connections and resets the open ones for 60 s while Ironic goes on
deploying: every node becomes ``active`` in Ironic during the outage.

Nothing may be reported wrongly: the action ends ``success``, every node
of the report is ``success`` and ``active``, no ``node.failed`` event is
recorded, and no provision request was sent to a node twice (Ironic's
own request log).

It takes about two minutes: the drill runs only with
``BAREMETAL_ORCH_DRILLS=1`` (``tox -e drills``).
"""

import time

from baremetal_orch.tests.functional.drills import base
from baremetal_orch_testing.fixtures import ironic as ironic_fixture
from baremetal_orch_testing.fixtures import tcp_relay

NODES = 100
OUTAGE = 60
ACTION_TIMEOUT = 600


class TestR7IronicOutage(base.DrillTestCase):

    expensive = True

    def setUp(self):
        super().setUp()
        self.ironic = self.useFixture(ironic_fixture.IronicFixture(
            fake_delays={'deploy_delay': '10'}))
        self.relay = self.useFixture(tcp_relay.TcpRelay(self.ironic.port))
        self.start_aio(
            ironic={'auth_type': 'none',
                    'endpoint_override': self.relay.endpoint,
                    'poll_interval': 1},
            conductor={'max_concurrent_nodes': NODES, 'sync_interval': -1})

    def ironic_states(self, uuids):
        states = {}
        for node in self.ironic._call(
                'GET', '/nodes?fields=uuid,provision_state&limit=1000'
        ).json()['nodes']:
            if node['uuid'] in uuids:
                states[node['uuid']] = node['provision_state']
        return states

    def test_ironic_api_down_mid_action(self):
        c = self.client
        inodes = [self.ironic.create_node('r7-%d' % i)
                  for i in range(NODES)]
        uuids = {n['uuid'] for n in inodes}
        names = ['r7-n%d' % i for i in range(NODES)]
        self.create_nodes([
            {'name': name, 'driver': 'ironic', 'tags': ['r7'],
             'ironic_uuid': inode['uuid']}
            for name, inode in zip(names, inodes)])
        c.post('/v1/deployment_strategies', status=201,
               json=base.strategy_doc('r7', [('g1', 'r7', ())]))
        mark = self.ironic.log_mark()
        action = c.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'r7'}}).json()
        started = time.monotonic()
        c.wait_for(lambda: list(self.ironic_states(uuids).values()).count(
            'deploying') >= NODES // 2, timeout=ACTION_TIMEOUT, interval=0.5)

        figures = {'nodes': NODES}
        down = time.monotonic()
        self.relay.refuse()
        time.sleep(OUTAGE)
        at_end = self.ironic_states(uuids)
        self.relay.resume()
        up = time.monotonic()
        figures['outage_s'] = round(up - down, 2)
        figures['ironic_active_at_end_of_outage'] = list(
            at_end.values()).count('active')

        final = c.wait_for_action(action['uuid'], timeout=ACTION_TIMEOUT)
        figures['action_s'] = round(time.monotonic() - started, 2)
        figures['after_outage_s'] = round(time.monotonic() - up, 2)
        figures['connections_reset'] = self.relay.reset
        self.record_figures(figures)

        self.assertEqual(('complete', 'success'),
                         (final['state'], final['result']), final['report'])
        self.assertEqual({n: 'success' for n in names},
                         final['report']['nodes'])
        self.assertEqual({n: 'active' for n in names},
                         self.node_states(names))
        self.assertEqual({'active'}, set(self.ironic_states(uuids).values()))
        events = c.get('/v1/events?action_uuid=%s&limit=1000'
                       % action['uuid'], status=200).json()['events']
        self.assertEqual([], [e for e in events
                              if e['event_type'] == 'node.failed'])
        # Never sent blind twice: one request per node and target.
        puts = [(r.path, r.status) for r in self.ironic.request_log(mark)
                if r.method == 'PUT' and r.path.endswith('/provision')]
        self.assertEqual(3 * NODES, len(puts), puts)
        self.assertGreater(self.relay.reset, 0)
