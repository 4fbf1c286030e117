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
"""The service split (API + conductor over RabbitMQ, MariaDB) and whole
(the all-in-one on sqlite), driven over real HTTP."""

import os
import subprocess
import sys
import time

from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing import services


class NodeLifecycleMixin:

    def _lifecycle(self, client):
        node = client.post('/v1/nodes', status=201, json={
            'name': 'func-node-1', 'driver': 'fake', 'rack_name': 'r1',
            'tags': ['compute'],
            'driver_info': {'ipmi_password': 'secret-pw'}}).json()
        self.assertEqual('enroll', node['provision_state'])
        self.assertEqual('***', node['driver_info']['ipmi_password'])
        node = client.patch('/v1/nodes/func-node-1', status=200, json=[
            {'op': 'replace', 'path': '/rack_name', 'value': 'r2'}]).json()
        self.assertEqual('r2', node['rack_name'])
        for target, state in (('manage', 'manageable'),
                              ('provide', 'available'),
                              ('active', 'active')):
            client.put('/v1/nodes/func-node-1/states/provision',
                       json={'target': target}, status=202)
            client.wait_for_state('func-node-1', state)
        # An active node cannot be deleted; an illegal verb is a 409.
        resp = client.delete('/v1/nodes/func-node-1', status=409)
        self.assertEqual(409, resp.json()['errors'][0]['status'])
        client.put('/v1/nodes/func-node-1/states/provision',
                   json={'target': 'manage'}, status=409)
        client.put('/v1/nodes/func-node-1/states/provision',
                   json={'target': 'deleted'}, status=202)
        client.wait_for_state('func-node-1', 'available')
        client.delete('/v1/nodes/func-node-1', status=204)
        client.get('/v1/nodes/func-node-1', status=404)


class TestSplitDeployment(NodeLifecycleMixin, base.FunctionalTestCase):
    """API and conductor as two processes, RabbitMQ and MariaDB."""

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(databases.Database('mysql'))
        self.rabbit = self.useFixture(broker.RabbitMQ())
        tmp = self.log_dir
        self.port = services.free_port()
        conf = services.write_config(
            os.path.join(tmp, 'split.conf'), services.base_sections(
                tmp, self.port, self.db.url,
                DEFAULT={'rpc_transport': 'oslo',
                         'transport_url': self.rabbit.transport_url,
                         'rpc_response_timeout': 30,
                         'host': 'conductor-1'}))
        subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                     'baremetal-orch-manage'),
                        '--config-file', conf, 'db', 'upgrade'],
                       check=True, capture_output=True, timeout=120)
        self.conductor = self.start_process(
            ['baremetal-orch-conductor', '--config-file', conf])
        self.api = self.start_process(
            ['baremetal-orch-api', '--config-file', conf])
        self.endpoint = 'http://127.0.0.1:%d' % self.port
        self.wait_for_http(self.endpoint + '/v1', status=200,
                           process=self.api, timeout=60)
        self.client = services.Client(self.endpoint)
        # The conductor has registered and heartbeats.
        self.client.wait_for(lambda: self._conductor_alive(), timeout=60)

    def _conductor_alive(self):
        if self.conductor.poll() is not None:
            raise AssertionError('conductor died:\n' +
                                 self.conductor.log.tail())
        import sqlalchemy as sa
        engine = sa.create_engine(self.db.url)
        try:
            with engine.connect() as conn:
                return conn.execute(sa.text(
                    "SELECT COUNT(*) FROM services WHERE host = "
                    "'conductor-1'")).scalar()
        finally:
            engine.dispose()

    def test_node_lifecycle_over_rabbitmq_and_mariadb(self):
        self._lifecycle(self.client)

    def test_conductor_down_is_503(self):
        node = self.client.post('/v1/nodes', status=201, json={
            'name': 'func-node-2', 'driver': 'fake'}).json()
        # Kill the only conductor; once its heartbeat is stale the API
        # answers 503 at once, never 500, and changes nothing.
        self.conductor.kill()
        self.conductor.wait(10)
        time.sleep(6)  # [conductor]heartbeat_timeout = 5
        resp = self.client.put('/v1/nodes/%s/states/provision'
                               % node['uuid'], json={'target': 'manage'})
        self.assertIn(resp.status_code, (503,), resp.text)
        self.assertEqual(resp.status_code,
                         resp.json()['errors'][0]['status'])
        # Nothing changed on the node.
        doc = self.client.get('/v1/nodes/%s' % node['uuid'],
                              status=200).json()
        self.assertEqual('enroll', doc['provision_state'])


class TestAllInOne(NodeLifecycleMixin, base.FunctionalTestCase):
    """The embedded default: one process, sqlite, no broker, noauth."""

    def test_node_lifecycle_all_in_one(self):
        tmp = self.log_dir
        port = services.free_port()
        conf = services.write_config(
            os.path.join(tmp, 'aio.conf'), services.base_sections(
                tmp, port, 'sqlite:///%s' % os.path.join(tmp, 'aio.sqlite'),
                DEFAULT={'host': 'aio'}))
        proc = self.start_process(['baremetal-orch', '--config-file', conf])
        endpoint = 'http://127.0.0.1:%d' % port
        self.wait_for_http(endpoint + '/v1', status=200, process=proc,
                           timeout=60)
        self._lifecycle(services.Client(endpoint))
