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
"""A listener on a REAL RabbitMQ receives every event type of the
notification catalogue.

baremetal-orch-api and baremetal-orch-conductor run as separate processes
over RabbitMQ and PostgreSQL with ``notification_level = debug``; the sample
listener (baremetal-orch-listener) writes what it receives to a file. The
test drives the service only as its clients do: the REST API (as an
operator, and as the nodes' agents for the deployment signals) and a
conductor restart; it never calls ``notify.*``. The set of event types
received must be the catalogue computed from the code
(``notification.all_event_types()``), all of it, and no secret may appear
in any message.

The ``*.error`` events come from real failures:

* CRUD (API, inside ``notify.crud_scope``): database conflicts (a duplicate
  chassis UUID, node name or port MAC, a node with ports, a chassis with
  nodes) and, where no request alone can fail inside the change, requests
  racing: a PATCH of a chassis that a DELETE removes after the PATCH found
  it (``chassis.update.error``), two DELETEs of one port
  (``port.delete.error``);
* maintenance and console: ``driver_info.fake_fail_phase`` of the fake
  driver (the API answers 502);
* provisioning and deployment groups: a node failing its prepare phase, a
  node whose agent signals FAILED, in groups requiring every node;
* labels: the kubernetes label driver against a small real Kubernetes API
  server (fake_kubernetes) that does not know one of the nodes (404);
* actions: an update_labels action with that node fails.

``provision_set.success`` comes from ``manage`` of an available node (a
stable transition), ``console_restore.*`` from restarting the conductor
with two consoles enabled, one of whose driver fails.
"""

import hashlib
import json
import os
import subprocess
import sys
import threading
import time

import requests

from baremetal_orch import notifications
from baremetal_orch.notifications import base as notification
from baremetal_orch import objects
from baremetal_orch.tests.functional import base
from baremetal_orch.tests.unit.drivers.labels import fake_kubernetes
from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing import services

#: Secret values handed to the service; none may reach the bus.
SECRET = 'catalogue-s3cr3t'
K8S_TOKEN = 'catalogue-k8s-t0ken'

STRATEGY = {
    'schema': 'shipyard/DeploymentStrategy/v1',
    'metadata': {'schema': 'metadata/Document/v1', 'name': 'catalogue'},
    'data': {'groups': [
        # prepare.error: its only node fails cleaning.
        {'name': 'doomed', 'critical': False, 'depends_on': [],
         'selectors': [{'node_tags': ['doomed']}],
         'success_criteria': {'percent_successful_nodes': 100}},
        # deploy.error: one of its two nodes' agent signals FAILED.
        {'name': 'signalled', 'critical': False, 'depends_on': [],
         'selectors': [{'node_tags': ['signalled']}],
         'success_criteria': {'percent_successful_nodes': 100},
         'wait_for_signal': True},
        # prepare.end and deploy.end.
        {'name': 'plain', 'critical': False, 'depends_on': [],
         'selectors': [{'node_tags': ['plain']}]},
    ]},
}

#: Concurrent requests on one resource per round, and rounds at most.
RACERS = 6
RACE_ROUNDS = 60
#: Seconds between the racers' starts: a loser must find the resource
#: before the winning DELETE commits, and look again after.
RACE_STAGGER = 0.0005

NS = 'baremetal_orch_object.'


def _uuid_of(event):
    return event['payload'].get(NS + 'data', {}).get('uuid')


class TestNotificationCatalogue(base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        objects.register_all()
        notifications.register_all()
        self.catalogue = set(notification.all_event_types())
        db = self.useFixture(databases.Database('postgresql'))
        rabbit = self.useFixture(broker.RabbitMQ())
        self.k8s = self.useFixture(
            fake_kubernetes.FakeKubernetesAPI(token=K8S_TOKEN))
        self.k8s.add_node('plain-1', {'existing': 'label'})
        tmp = self.log_dir
        kubeconfig = fake_kubernetes.write_kubeconfig(
            os.path.join(tmp, 'kubeconfig'), {'fake-k8s': self.k8s.url},
            'fake-k8s', K8S_TOKEN)
        self.drive = os.path.join(tmp, 'configdrive')
        self.events_file = os.path.join(tmp, 'events.jsonl')
        port = services.free_port()
        self.endpoint = 'http://127.0.0.1:%d' % port
        self.conf = services.write_config(
            os.path.join(tmp, 'catalogue.conf'), services.base_sections(
                tmp, port, db.url,
                DEFAULT={'rpc_transport': 'oslo', 'host': 'conductor-cat',
                         'transport_url': rabbit.transport_url,
                         'notification_level': 'debug',
                         'rpc_response_timeout': 30},
                oslo_messaging_notifications={'driver': 'messagingv2'},
                api={'public_endpoint': self.endpoint,
                     'workers': RACERS + 2},
                conductor={'signal_timeout': 120,
                           'max_concurrent_groups': 3},
                fake_driver={'configdrive_dir': self.drive},
                labels={'driver': 'kubernetes', 'kubeconfig': kubeconfig,
                        'context': 'fake-k8s'}))
        subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                     'baremetal-orch-manage'),
                        '--config-file', self.conf, 'db', 'upgrade'],
                       check=True, capture_output=True, timeout=120)
        self.start_process(['baremetal-orch-listener', '--config-file',
                            self.conf, '--output', self.events_file])
        self.conductor = self._start_conductor('baremetal-orch-conductor')
        api = self.start_process(['baremetal-orch-api', '--config-file',
                                  self.conf])
        self.wait_for_http(self.endpoint + '/v1', status=200, process=api,
                           timeout=60)
        self.client = services.Client(self.endpoint)
        # Nodes are bound to a live conductor when they are created.
        services.wait_for_live_conductor(self.client)

    def _start_conductor(self, log_name):
        proc = self.start_process(
            ['baremetal-orch-conductor', '--config-file', self.conf],
            log_name=log_name)
        # Serving once init_host() is done (a restarted conductor
        # restores its consoles from there).
        self._wait_for_log(proc, b'serving RPC on topic')
        return proc

    def _wait_for_log(self, proc, needle, timeout=60):
        deadline = time.monotonic() + timeout
        while needle not in proc.log.read():
            if proc.poll() is not None:
                self.fail('%s exited with %s:\n%s' % (
                    proc.args[0], proc.returncode, proc.log.tail()))
            if time.monotonic() > deadline:
                self.fail('%r not in the log of %s within %s s:\n%s' % (
                    needle, proc.args[0], timeout, proc.log.tail()))
            time.sleep(0.1)

    # --- what the listener received ------------------------------------------

    def _events(self):
        if not os.path.exists(self.events_file):
            return []
        with open(self.events_file, encoding='utf-8') as f:
            text = f.read()
        # A line being written has no newline yet.
        return [json.loads(line) for line in text.split('\n')[:-1] if line]

    def _types_of(self, uuid, prefix=''):
        return [e['event_type'] for e in self._events()
                if _uuid_of(e) == uuid and e['event_type'].startswith(prefix)]

    # --- the nodes' side -----------------------------------------------------

    def _agent(self, node_uuid):
        return services.agent_info(self.drive, node_uuid)

    @staticmethod
    def _signal(info, body):
        """POST a signal as the node's agent: its pre-signed URL, no
        Keystone."""
        resp = requests.post(info['deploy_signal_id'], json=body,
                             timeout=services.HTTP_TIMEOUT)
        if resp.status_code != 200:
            raise AssertionError('signal %s: %s %s' % (
                body, resp.status_code, resp.text))
        return resp.json()

    # --- the scenario --------------------------------------------------------

    def _node(self, name, **values):
        values.setdefault('driver_info', {})
        values['driver_info'].setdefault('ipmi_password', SECRET)
        return self.client.post('/v1/nodes', status=201, json=dict(
            values, name=name, driver='fake')).json()

    def _inventory(self):
        """chassis, node and port: create, update, delete; end and error."""
        c = self.client
        chassis = c.post('/v1/chassis', status=201, json={
            'description': 'rack 1', 'extra': {}}).json()
        # create.error: the UUID exists.
        c.post('/v1/chassis', status=409, json={'uuid': chassis['uuid']})
        path = '/v1/chassis/%s' % chassis['uuid']
        c.patch(path, status=200, json=[
            {'op': 'replace', 'path': '/description', 'value': 'rack 2'}])

        inv = self._node('inv-1', chassis_uuid=chassis['uuid'],
                         instance_info={'image_token': SECRET})
        racer = self._node('inv-2')
        # create.error: the name exists.
        c.post('/v1/nodes', status=409, json={
            'name': 'inv-2', 'driver': 'fake',
            'driver_info': {'ipmi_password': SECRET}})
        c.patch('/v1/nodes/inv-1', status=200, json=[
            {'op': 'add', 'path': '/extra/asset', 'value': 'A-1'}])
        # update.error: renamed to an existing name.
        c.patch('/v1/nodes/inv-1', status=409, json=[
            {'op': 'replace', 'path': '/name', 'value': 'inv-2'}])

        port = c.post('/v1/ports', status=201, json={
            'node_uuid': inv['uuid'], 'address': '52:54:00:00:00:01'}).json()
        other = c.post('/v1/ports', status=201, json={
            'node_uuid': inv['uuid'], 'address': '52:54:00:00:00:02'}).json()
        # create.error: the MAC address exists.
        c.post('/v1/ports', status=409, json={
            'node_uuid': inv['uuid'], 'address': '52:54:00:00:00:01'})
        c.patch('/v1/ports/%s' % port['uuid'], status=200, json=[
            {'op': 'replace', 'path': '/pxe_enabled', 'value': False}])
        # update.error: the MAC address of another port.
        c.patch('/v1/ports/%s' % other['uuid'], status=409, json=[
            {'op': 'replace', 'path': '/address',
             'value': '52:54:00:00:00:01'}])

        # delete.error: the node has ports, the chassis has a node.
        c.delete('/v1/nodes/inv-1', status=409)
        c.delete(path, status=409)
        c.delete('/v1/ports/%s' % port['uuid'], status=204)
        c.delete('/v1/ports/%s' % other['uuid'], status=204)
        c.delete('/v1/nodes/inv-1', status=204)
        c.delete(path, status=204)

        # The API answers 400 to what the database would refuse (a NUL
        # character, an unpaired surrogate): the errors inside an update
        # of a chassis and a deletion of a port are concurrent requests.
        # update.error: the chassis was deleted after the PATCH found it.
        self._race(
            lambda i: c.post('/v1/chassis', status=201, json={
                'description': 'race %d' % i, 'extra': {}}).json()['uuid'],
            lambda uuid: [('DELETE', '/v1/chassis/%s' % uuid, None)] + [
                ('PATCH', '/v1/chassis/%s' % uuid,
                 [{'op': 'add', 'path': '/extra/n', 'value': n}])
                for n in range(RACERS - 1)],
            'baremetal.chassis.update.error')
        # delete.error: another DELETE deleted the port after this one
        # found it.
        self._race(
            lambda i: c.post('/v1/ports', status=201, json={
                'node_uuid': racer['uuid'],
                'address': '52:54:00:aa:00:%02x' % i}).json()['uuid'],
            lambda uuid: [('DELETE', '/v1/ports/%s' % uuid, None)] * RACERS,
            'baremetal.port.delete.error')

    def _race(self, create, calls, event_type):
        """Race requests on a new resource each round until one of them
        fails inside its change, which the listener shows as ``event_type``.

        :param create: ``create(round)`` makes the resource; returns its
            UUID.
        :param calls: ``calls(uuid)``: the ``(method, path, body)`` of the
            requests, started in this order, RACE_STAGGER apart.
        :returns: the number of rounds it took.
        """
        prefix = event_type.rsplit('.', 2)[0] + '.'
        for attempt in range(RACE_ROUNDS):
            uuid = create(attempt)
            requests_ = calls(uuid)
            barrier = threading.Barrier(len(requests_))
            statuses = []

            def send(i, method, path, body):
                barrier.wait()
                time.sleep(i * RACE_STAGGER)
                statuses.append(requests.request(
                    method, self.endpoint + path, json=body,
                    timeout=services.HTTP_TIMEOUT).status_code)

            threads = [threading.Thread(target=send, args=(i,) + call)
                       for i, call in enumerate(requests_)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            # One DELETE wins; a request losing to it answers 404 (it
            # waits for the row's lock, then finds it gone), never 5xx.
            self.assertEqual(1, statuses.count(204), statuses)
            self.assertEqual([], [st for st in statuses if st >= 500])

            # Every request that found the resource sent start, then end
            # or error; the API answers once they reached the bus.
            def settled():
                types = self._types_of(uuid, prefix)
                if prefix + 'delete.end' not in types:
                    return None
                for action in ('update', 'delete'):
                    starts = types.count('%s%s.start' % (prefix, action))
                    if starts != sum(types.count('%s%s.%s' % (
                            prefix, action, status))
                            for status in ('end', 'error')):
                        return None
                return types
            if event_type in self.client.wait_for(settled, 60):
                return attempt + 1
        self.fail('no request lost the race in %d rounds' % RACE_ROUNDS)

    def _maintenance_and_consoles(self):
        c = self.client
        c.put('/v1/nodes/inv-2/maintenance', status=202,
              json={'reason': 'fan'})
        c.wait_for(lambda: c.get('/v1/nodes/inv-2', status=200).json()[
            'maintenance'], 60)
        c.delete('/v1/nodes/inv-2/maintenance', status=202)
        self._node('maint-bad',
                   driver_info={'fake_fail_phase': 'maintenance'})
        c.put('/v1/nodes/maint-bad/maintenance', status=502,
              json={'reason': 'fan'})

        self._node('console-ok')
        self._node('console-bad')
        for name in ('console-ok', 'console-bad'):
            c.put('/v1/nodes/%s/states/console' % name, status=202,
                  json={'enabled': True})
            c.wait_for(lambda n=name: c.get('/v1/nodes/%s' % n, status=200)
                       .json()['console_enabled'], 60)
        # Its console is on; from now on its driver fails consoles.
        c.patch('/v1/nodes/console-bad', status=200, json=[
            {'op': 'add', 'path': '/driver_info/fake_fail_phase',
             'value': 'console'}])
        c.put('/v1/nodes/console-bad/states/console', status=502,
              json={'enabled': True})
        for name in ('console-ok', 'console-bad'):
            self.assertTrue(c.get('/v1/nodes/%s' % name, status=200).json()[
                'console_enabled'])

    def _stable_transition(self):
        """provision_set.success: manage of an available node goes back to
        manageable without a working state (as in Ironic)."""
        c = self.client
        self._node('stable-1')
        for target, state in (('manage', 'manageable'),
                              ('provide', 'available'),
                              ('manage', 'manageable')):
            c.put('/v1/nodes/stable-1/states/provision', status=202,
                  json={'target': target})
            c.wait_for_state('stable-1', state)

    def _deploy_site(self):
        """action.run start/end, the groups' phases, provision_set, the
        signals."""
        c = self.client
        self._node('prep-fail', tags=['doomed'],
                   driver_info={'fake_fail_phase': 'prepare'})
        nodes = {name: self._node(name, tags=['signalled'])['uuid']
                 for name in ('sig-ok', 'sig-fail')}
        self._node('plain-1', tags=['plain'],
                   instance_info={'image_token': SECRET})
        c.post('/v1/deployment_strategies', status=201, json=STRATEGY)
        action = c.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'catalogue'}}).json()
        # action.control.start (pause, resume) and .end (resume).
        for verb in ('pause', 'resume'):
            c.post('/v1/actions/%s/control' % action['uuid'], status=202,
                   json={'verb': verb, 'reason': 'catalogue'})
        infos = {name: c.wait_for(lambda u=uuid: self._agent(u), 120)
                 for name, uuid in nodes.items()}
        self.assertEqual('IN_PROGRESS', self._signal(infos['sig-ok'], {
            'deploy_status': 'IN_PROGRESS',
            'deploy_status_reason': 'configuring'})['status'])
        self._signal(infos['sig-ok'], {'deploy_status': 'COMPLETE',
                                       'deploy_status_code': 0})
        self._signal(infos['sig-fail'], {'deploy_status': 'FAILED',
                                         'deploy_status_code': 2})
        final = c.wait_for_action(action['uuid'], timeout=180)
        self.assertEqual(('complete', 'success_with_failures'),
                         (final['state'], final['result']), final)
        self.assertEqual({'prep-fail': 'failure', 'sig-ok': 'success',
                          'sig-fail': 'failure', 'plain-1': 'success'},
                         final['report']['nodes'])
        return list(infos.values())

    def _update_labels(self):
        """labels_set start/end/error, action.run.error: sig-fail is no
        Kubernetes node."""
        c = self.client
        action = c.post('/v1/actions', status=201, json={
            'name': 'update_labels',
            'parameters': {'target_nodes': ['plain-1', 'sig-fail']}}).json()
        final = c.wait_for_action(action['uuid'], timeout=120)
        self.assertEqual('failed', final['state'], final)
        self.assertEqual(['plain-1'], final['report']['relabeled'])
        self.assertEqual(['sig-fail'], final['report']['not_relabeled'])
        self.assertEqual('true', self.k8s.labels('plain-1').get(
            'baremetal-orch.openstack.org/group.plain'))

    def _restart_conductor(self):
        """console_restore.*: a conductor starting with consoles enabled
        (console-bad's driver fails them)."""
        func_fixtures.stop_process(self.conductor)
        self.conductor = self._start_conductor('baremetal-orch-conductor-2')
        # Through the new conductor: its notifications come after anything
        # its start-up sent.
        node = self.client.get('/v1/nodes/console-ok', status=200).json()
        self.client.put('/v1/nodes/console-ok/states/console', status=202,
                        json={'enabled': True})
        self.client.wait_for(lambda: self._types_of(
            node['uuid'], 'baremetal.node.console_set.end').count(
                'baremetal.node.console_set.end') == 2, 60)

    def test_every_event_type_reaches_the_listener(self):
        self._inventory()
        self._maintenance_and_consoles()
        self._stable_transition()
        agents = self._deploy_site()
        self._update_labels()
        self._restart_conductor()

        expected = self.catalogue
        try:
            self.client.wait_for(lambda: expected <= {
                e['event_type'] for e in self._events()}, 120)
        except AssertionError:
            pass  # the comparison below shows what is missing
        events = self._events()
        received = {e['event_type'] for e in events}
        self.assertEqual([], sorted(expected - received), 'missing')
        self.assertEqual([], sorted(received - expected), 'unexpected')
        self.assertEqual(
            {'baremetal-orch-api.conductor-cat',
             'baremetal-orch-conductor.conductor-cat'},
            {e['publisher_id'] for e in events})

        for event in events:
            self.assertEqual(
                'ERROR' if event['event_type'].endswith('.error')
                else 'INFO', event['priority'], event['event_type'])

        text = json.dumps(events)
        secrets = [SECRET, K8S_TOKEN]
        for info in agents:
            token = services.signal_token(info)
            secrets += [token, hashlib.sha256(token.encode()).hexdigest(),
                        info['deploy_signal_id'],
                        info['deploy_signal_id'].split('?')[0]]
        for secret in secrets:
            self.assertNotIn(secret, text)
        # Masked, not left out.
        self.assertIn('ipmi_password', text)
        self.assertIn('image_token', text)
