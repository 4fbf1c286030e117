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
"""Drill R2: RabbitMQ goes away during an action and comes back.

A conductor and an API over MariaDB and a RabbitMQ node of the drill's
own (:mod:`.rabbit_node`: stopping the shared broker would break every
other test using it), versioned notifications on. While a ``deploy_site``
runs, the broker application is stopped (``rabbitmqctl stop_app``;
``start_app`` is registered as a cleanup first, so the broker comes back
whatever happens). While it is down:

* reads (``GET``) answer 200;
* a call that needs a conductor (``PUT states/provision``) answers 503,
  not 500, and does not hang;
* creating a node answers 201 and the node exists: its notification
  cannot be sent, and that must not break the request.

After ``start_app`` the action completes with success, every node is
``active`` and none was provided or deployed twice; ``PUT
states/provision`` works again.

A private broker node and a deploy take about a minute: the drill runs only
with ``BAREMETAL_ORCH_DRILLS=1`` (``tox -e drills``).
"""

import time

import requests

from baremetal_orch.tests.functional.drills import base
from baremetal_orch.tests.functional.drills import rabbit_node

GROUPS = (('g1', ()), ('g2', ('g1',)), ('g3', ('g2',)), ('g4', ('g3',)))
NODES_PER_GROUP = 10
FAKE_DURATION = 0.3
#: How long the broker stays down at least (the checks take longer).
OUTAGE = 5
#: A request answering slower than this during the outage hangs.
REQUEST_TIMEOUT = 60
ACTION_TIMEOUT = 300


class TestR2Broker(base.DrillTestCase):

    expensive = True

    def setUp(self):
        super().setUp()
        self.node = self.useFixture(rabbit_node.RabbitMQNode())
        self.start_split(['conductor-1'], rabbit=self.node,
                         conductor={'max_concurrent_nodes': 8},
                         DEFAULT={'notification_level': 'info'})

    def _timed(self, method, path, **kwargs):
        """(response, seconds) of one request, with a deadline."""
        start = time.monotonic()
        try:
            resp = requests.request(method, self.endpoint + path,
                                    timeout=REQUEST_TIMEOUT, **kwargs)
        except requests.Timeout:
            self.fail('%s %s hung for %ss while the broker was down'
                      % (method, path, REQUEST_TIMEOUT))
        return resp, round(time.monotonic() - start, 2)

    def test_broker_lost_during_action(self):
        c = self.client
        names = ['%s-n%d' % (g, i) for g, _deps in GROUPS
                 for i in range(NODES_PER_GROUP)]
        self.create_nodes([
            {'name': name, 'driver': 'fake', 'tags': [name.split('-')[0]],
             'driver_info': {'fake_duration': FAKE_DURATION}}
            for name in names])
        c.post('/v1/nodes', status=201, json={
            'name': 'spare', 'driver': 'fake'})
        c.post('/v1/deployment_strategies', status=201,
               json=base.strategy_doc('r2', [(g, g, deps)
                                             for g, deps in GROUPS]))
        action = c.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'r2'}}).json()
        started = time.monotonic()
        c.wait_for(lambda: 'g2' in (c.get(
            '/v1/actions/%s' % action['uuid']).json()['report'] or {})
            .get('order', ()), timeout=ACTION_TIMEOUT)

        figures = {}
        self.addCleanup(self.node.start_app)
        t0 = time.monotonic()
        self.node.stop_app()
        self.assertFalse(self.node.answers())
        down = time.monotonic()
        figures['stop_app_s'] = round(down - t0, 2)

        # Reads work without the broker.
        resp, figures['get_nodes_s'] = self._timed('GET', '/v1/nodes')
        self.assertEqual(200, resp.status_code, resp.text)
        resp, figures['get_action_s'] = self._timed(
            'GET', '/v1/actions/%s' % action['uuid'])
        self.assertEqual(200, resp.status_code, resp.text)
        self.assertEqual('running', resp.json()['state'])
        # A call that needs a conductor: 503, not 500, not a hang.
        resp, figures['provision_503_s'] = self._timed(
            'PUT', '/v1/nodes/spare/states/provision',
            json={'target': 'manage'})
        self.assertEqual(503, resp.status_code, resp.text)
        self.assertEqual('baremetal_orch.service_unavailable',
                         resp.json()['errors'][0]['code'])
        # Its notification cannot be sent: the node is created all the same.
        resp, figures['create_node_s'] = self._timed(
            'POST', '/v1/nodes', json={'name': 'made-offline',
                                       'driver': 'fake'})
        self.assertEqual(201, resp.status_code, resp.text)
        resp, _ = self._timed('GET', '/v1/nodes/made-offline')
        self.assertEqual(200, resp.status_code, resp.text)

        time.sleep(max(0.0, down + OUTAGE - time.monotonic()))
        t1 = time.monotonic()
        self.node.start_app()
        up = time.monotonic()
        figures['outage_s'] = round(up - down, 2)
        figures['start_app_s'] = round(up - t1, 2)

        final = c.wait_for_action(action['uuid'], timeout=ACTION_TIMEOUT)
        figures['action_s'] = round(time.monotonic() - started, 2)
        figures['action_after_broker_back_s'] = round(
            time.monotonic() - up, 2)
        self.record_figures(figures)
        self.assertEqual(('complete', 'success'),
                         (final['state'], final['result']), final['report'])
        self.assertEqual({n: 'success' for n in names},
                         final['report']['nodes'])
        self.assertEachCalledOnce(names)
        self.assertEqual({n: 'active' for n in names},
                         self.node_states(names))
        # RPC works again once the broker is back.
        c.wait_for(lambda: c.put('/v1/nodes/spare/states/provision',
                                 json={'target': 'manage'}).status_code
                   == 202, timeout=60, interval=1)
        c.wait_for_state('spare', 'manageable', timeout=60)
