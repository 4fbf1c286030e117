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
"""Versioned notifications on a real RabbitMQ, API and conductor split:
the sample listener (baremetal-orch-listener) receives, in order, every
event of a node's life.

The API and the conductor send from two processes. What orders their
events is what the service promises: the API answers once its request's
notifications reached the bus (``[api]notification_wait``), so a request
that follows an answer of the API is notified after it. A node state that
the conductor committed is visible before that transition's ``.end`` is
on the bus (as in Ironic), so a client that watches the state and then
asks the API waits for the conductor's event first, as a consumer that
orders across services would."""

import json
import os
import subprocess
import sys

from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing import services


class TestNotificationsOnRabbitMQ(base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(databases.Database('postgresql'))
        self.rabbit = self.useFixture(broker.RabbitMQ())
        tmp = self.log_dir
        port = services.free_port()
        self.events_file = os.path.join(tmp, 'events.jsonl')
        conf = services.write_config(
            os.path.join(tmp, 'notify.conf'), services.base_sections(
                tmp, port, self.db.url,
                DEFAULT={'rpc_transport': 'oslo', 'host': 'conductor-n',
                         'transport_url': self.rabbit.transport_url,
                         'notification_level': 'info',
                         'rpc_response_timeout': 30},
                oslo_messaging_notifications={'driver': 'messagingv2'}))
        subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                     'baremetal-orch-manage'),
                        '--config-file', conf, 'db', 'upgrade'],
                       check=True, capture_output=True, timeout=120)
        self.listener = self.start_process(
            ['baremetal-orch-listener', '--config-file', conf,
             '--output', self.events_file])
        self.conductor = self.start_process(
            ['baremetal-orch-conductor', '--config-file', conf])
        api = self.start_process(['baremetal-orch-api', '--config-file',
                                  conf])
        endpoint = 'http://127.0.0.1:%d' % port
        self.wait_for_http(endpoint + '/v1', status=200, process=api,
                           timeout=60)
        self.client = services.Client(endpoint)

    def _events(self):
        if not os.path.exists(self.events_file):
            return []
        with open(self.events_file) as f:
            return [json.loads(line) for line in f if line.strip()]

    def _node_types(self, uuid):
        return [e['event_type'] for e in self._events()
                if e['payload'].get('baremetal_orch_object.data', {})
                .get('uuid') == uuid]

    def _wait_for_events(self, uuid, count):
        """The node's first ``count`` events are on the bus."""
        self.client.wait_for(
            lambda: len(self._node_types(uuid)) >= count, timeout=60)

    def test_node_life_in_order(self):
        c = self.client
        # The conductor is up before the first verb.
        c.wait_for(lambda: c.get('/v1/services').status_code != 200 or
                   any(s.get('alive') for s in
                       c.get('/v1/services').json()['services']), 60)
        node = c.post('/v1/nodes', status=201, json={
            'name': 'notify-node', 'driver': 'fake',
            'driver_info': {'ipmi_password': 'do-not-leak'}}).json()
        for target, state in (('manage', 'manageable'),
                              ('provide', 'available'),
                              ('active', 'active')):
            c.put('/v1/nodes/notify-node/states/provision',
                  json={'target': target}, status=202)
            c.wait_for_state('notify-node', state)
        # create (2) and three provision_set (6): the last .end comes from
        # the conductor; the maintenance events from the API.
        self._wait_for_events(node['uuid'], 8)
        c.put('/v1/nodes/notify-node/maintenance',
              json={'reason': 'fan'}, status=202)
        c.delete('/v1/nodes/notify-node/maintenance', status=202)
        c.put('/v1/nodes/notify-node/states/console',
              json={'enabled': True}, status=202)
        c.put('/v1/nodes/notify-node/states/provision',
              json={'target': 'deleted'}, status=202)
        c.wait_for_state('notify-node', 'available')
        # ... the console (2) and the teardown (3) from the conductor.
        self._wait_for_events(node['uuid'], 17)
        c.delete('/v1/nodes/notify-node', status=204)

        expected = [
            'baremetal.node.create.start', 'baremetal.node.create.end',
            'baremetal.node.provision_set.start',
            'baremetal.node.provision_set.end',
            'baremetal.node.provision_set.start',
            'baremetal.node.provision_set.end',
            'baremetal.node.provision_set.start',
            'baremetal.node.provision_set.end',
            'baremetal.node.maintenance_set.start',
            'baremetal.node.maintenance_set.end',
            'baremetal.node.maintenance_set.start',
            'baremetal.node.maintenance_set.end',
            'baremetal.node.console_set.start',
            'baremetal.node.console_set.end',
            # teardown: deleting, then cleaning (both working), available
            'baremetal.node.provision_set.start',
            'baremetal.node.provision_set.start',
            'baremetal.node.provision_set.end',
            'baremetal.node.delete.start', 'baremetal.node.delete.end',
        ]

        self._wait_for_events(node['uuid'], len(expected))
        events = [e for e in self._events()
                  if e['payload'].get('baremetal_orch_object.data', {})
                  .get('uuid') == node['uuid']]
        types = [e['event_type'] for e in events]
        self.assertEqual(expected, types[:len(expected)], types)
        publishers = {e['publisher_id'].split('.')[0] for e in events}
        self.assertEqual({'baremetal-orch-api', 'baremetal-orch-conductor'},
                         publishers)
        text = json.dumps(events)
        self.assertNotIn('do-not-leak', text)
