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
"""Shard-aware conductors over a real Ironic.

A real standalone Ironic (one per class) holds nodes in three shards; two
``baremetal-orch-conductor`` processes serve shards a and b over RabbitMQ
and MariaDB, behind a ``baremetal-orch-api`` process. Each test has its own
database, its own host and shard names, and proves from Ironic's own
request log that no conductor ever listed nodes without ``shard=``:

* each conductor imports exactly its shard's nodes, nothing of shard c;
  a node deleted in Ironic loses its record, a node moved to shard c in
  Ironic keeps it;
* ``deploy_site`` over Ironic-backed nodes: each node is deployed by the
  conductor of its shard, Ironic's nodes end ``active``, and a deploy that
  really fails in Ironic is reported with Ironic's reason;
* ``baremetal-orch-manage node move``: after the source service is forced
  down, the destination owns and acts on the node, and the old service's
  sync leaves the node alone with a warning.
"""

import os
import signal
import subprocess
import sys
import time

from oslo_utils import uuidutils

from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing.fixtures import ironic as ironic_fixture
from baremetal_orch_testing import services

BIN_DIR = os.path.dirname(sys.executable)
#: Seconds between two syncs of a conductor (the smallest allowed).
SYNC_INTERVAL = 1
#: Bounds on waits (a hang fails; nothing is timed).
WAIT = 90


class TestIronicShards(base.FunctionalTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ironic = cls.use_class_fixture(ironic_fixture.IronicFixture())
        cls.rabbit = cls.use_class_fixture(broker.RabbitMQ())

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(databases.Database('mysql'))
        suffix = uuidutils.generate_uuid(dashed=False)[:8]
        self.suffix = suffix
        self.shards = {k: '%s-%s' % (k, suffix) for k in 'abc'}
        self.hosts = {k: 'cond-%s-%s' % (k, suffix) for k in 'ab'}
        self.mark = self.ironic.log_mark()
        self.addCleanup(self.assert_every_listing_sharded)

    # --- deployment ----------------------------------------------------------

    def _config(self, name, port, shard_key=None, **defaults):
        sections = services.base_sections(
            self.log_dir, port, self.db.url,
            DEFAULT=dict({'rpc_transport': 'oslo',
                          'transport_url': self.rabbit.transport_url,
                          'rpc_response_timeout': 30}, **defaults),
            conductor={'heartbeat_interval': 1, 'heartbeat_timeout': 5,
                       'sync_interval': SYNC_INTERVAL},
            ironic=dict(self.ironic.ironic_options(), poll_interval=0.1,
                        api_retry_interval=1))
        if shard_key:
            sections['ironic']['shard_key'] = shard_key
        return services.write_config(
            os.path.join(self.log_dir, '%s.conf' % name), sections)

    def start_site(self):
        """MariaDB schema, two conductors (shards a, b) and the API."""
        port = services.free_port()
        self.api_conf = self._config('api', port, host='api-' + self.suffix)
        subprocess.run([os.path.join(BIN_DIR, 'baremetal-orch-manage'),
                        '--config-file', self.api_conf, 'db', 'upgrade'],
                       check=True, capture_output=True, timeout=120)
        self.conductors = {}
        for key, host in self.hosts.items():
            conf = self._config(host, port, shard_key=self.shards[key],
                                host=host)
            self.conductors[key] = self.start_process(
                ['baremetal-orch-conductor', '--config-file', conf],
                log_name=host)
        api = self.start_process(['baremetal-orch-api', '--config-file',
                                  self.api_conf])
        # Runs before the one-by-one stops of start_process: all at once.
        self.addCleanup(self._stop_all, [api] + list(
            self.conductors.values()))
        endpoint = 'http://127.0.0.1:%d' % port
        self.wait_for_http(endpoint + '/v1', status=200, process=api,
                           timeout=60)
        self.client = services.Client(endpoint)
        self.client.wait_for(self._both_alive, timeout=WAIT)

    @staticmethod
    def _stop_all(procs, timeout=10):
        for proc in procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + timeout
        for proc in procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass  # start_process's own cleanup kills it

    def _both_alive(self):
        for key, proc in self.conductors.items():
            if proc.poll() is not None:
                raise AssertionError('%s died:\n%s' % (self.hosts[key],
                                                       proc.log.tail()))
        resp = self.client.get('/v1/services')
        alive = {s['host'] for s in resp.json().get('services', [])
                 if s.get('alive')} if resp.status_code == 200 else set()
        return set(self.hosts.values()) <= alive

    # --- helpers -------------------------------------------------------------

    def make(self, key, name, **fields):
        """An Ironic node in shard ``key``, named for this test."""
        return self.ironic.create_node('%s-%s' % (name, self.suffix),
                                       shard=self.shards[key], **fields)

    def records(self):
        nodes = self.client.get('/v1/nodes?detail=true&limit=1000',
                                status=200).json()['nodes']
        return {n['ironic_uuid']: n for n in nodes}

    def log(self, key):
        with open(self.conductors[key].log_path, errors='replace') as f:
            return f.read()

    def wait_for_log(self, key, text):
        self.client.wait_for(lambda: text in self.log(key), timeout=WAIT)

    def syncs(self, key):
        return self.log(key).count('Ironic sync of service %s '
                                   % self.hosts[key])

    def wait_for_syncs(self, count=2):
        """Every conductor has synced ``count`` more times from now."""
        start = {k: self.syncs(k) for k in self.conductors}
        self.client.wait_for(lambda: all(
            self.syncs(k) >= start[k] + count for k in self.conductors),
            timeout=WAIT)

    def assert_every_listing_sharded(self):
        listings = self.ironic.node_listings(self.mark)
        unsharded = [r for r in listings if not r.query.get('shard')]
        self.assertEqual([], unsharded)

    def shard_listings(self):
        return {r.query['shard'] for r in self.ironic.node_listings(
            self.mark)}

    # --- (a) and (c): import, deletion, shard change -------------------------

    def test_each_conductor_imports_its_shard_then_tracks_ironic(self):
        made = {key: [self.make(key, '%s%d' % (key, i))
                      for i in range(count)]
                for key, count in (('a', 3), ('b', 2), ('c', 2))}
        self.start_site()
        self.client.wait_for(lambda: len(self.records()) == 5,
                             timeout=WAIT)
        self.wait_for_syncs()
        records = self.records()
        for key in 'ab':
            for inode in made[key]:
                node = records.pop(inode['uuid'])
                self.assertEqual(
                    ('ironic', inode['uuid'], inode['name'],
                     self.shards[key], self.hosts[key], 'enroll'),
                    (node['driver'], node['uuid'], node['name'],
                     node['shard'], node['conductor'],
                     node['provision_state']))
        self.assertEqual({}, records)  # nothing of shard c
        self.assertEqual(
            {self.shards['a']: 3, self.shards['b']: 2},
            {s['name']: s['count'] for s in self.client.get(
                '/v1/shards', status=200).json()['shards']})
        self.assertEqual({self.shards['a'], self.shards['b']},
                         self.shard_listings())

        # (c) A node deleted in Ironic loses its record; a node moved to
        # shard c in Ironic keeps it (Ironic still has it).
        gone, moved = made['a'][0], made['a'][1]
        self.ironic.delete_node(gone['uuid'])
        self.ironic.set_shard(moved['uuid'], self.shards['c'])
        self.client.wait_for(lambda: gone['uuid'] not in self.records(),
                             timeout=WAIT)
        self.wait_for_log('a', 'Ironic node %s (record %s) left shard %s'
                          % (moved['uuid'], moved['uuid'], self.shards['a']))
        self.wait_for_syncs()
        records = self.records()
        self.assertNotIn(gone['uuid'], records)
        self.assertEqual((self.hosts['a'], self.shards['a']),
                         (records[moved['uuid']]['conductor'],
                          records[moved['uuid']]['shard']))
        # The deletion was confirmed by a GET of the node itself.
        self.assertIn(('GET', '/v1/nodes/%s' % gone['uuid'], '404'),
                      {(r.method, r.path, r.status)
                       for r in self.ironic.request_log(self.mark)})

    # --- (b): deploy_site over Ironic-backed nodes ---------------------------

    def test_deploy_site_over_ironic_nodes(self):
        a_nodes = [self.make('a', 'a%d' % i) for i in range(2)]
        b_good = self.make('b', 'b0')
        b_fail = self.make('b', 'bfail', **ironic_fixture.FAILING_DEPLOY)
        self.make('c', 'c0')
        self.start_site()
        self.client.wait_for(lambda: len(self.records()) == 4,
                             timeout=WAIT)
        name = 'shards-' + self.suffix
        self.client.post('/v1/deployment_strategies', status=201, json={
            'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': name},
            'data': {'groups': [
                {'name': 'shard-a', 'critical': True, 'depends_on': [],
                 'selectors': [{'node_names': [n['name']
                                               for n in a_nodes]}],
                 'success_criteria': {'percent_successful_nodes': 100}},
                {'name': 'shard-b', 'critical': True,
                 'depends_on': ['shard-a'],
                 'selectors': [{'node_names': [b_good['name'],
                                               b_fail['name']]}],
                 'success_criteria': {'maximum_failed_nodes': 1}},
            ]}})
        action = self.client.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': name}}).json()
        final = self.client.wait_for_action(action['uuid'], timeout=180)

        self.assertEqual(('complete', 'success_with_failures'),
                         (final['state'], final['result']), final['report'])
        report = final['report']
        self.assertEqual(['shard-a', 'shard-b'], report['order'])
        self.assertEqual(
            {n['name']: 'success' for n in a_nodes + [b_good]}
            | {b_fail['name']: 'failure'}, report['nodes'])
        self.assertEqual([b_fail['name']],
                         report['groups']['shard-b']['failed_nodes'])
        # Ironic's own states.
        for inode in a_nodes + [b_good]:
            self.assertEqual('active', self.ironic.get_node(
                inode['uuid'])['provision_state'])
        ironic_fail = self.ironic.get_node(b_fail['uuid'])
        self.assertEqual('deploy failed', ironic_fail['provision_state'])
        reason = ironic_fail['last_error']
        self.assertIn('Timeout reached while waiting for callback', reason)
        # Ironic's reason is the node's reason in the task tree.
        tree = self.client.get('/v1/tasks/%s?tree=true' % final['task_uuid'],
                               status=200).json()
        node_tasks = {}

        def walk(task):
            if task['kind'] == 'node':
                node_tasks.setdefault(task['name'], []).append(task)
            for sub in task.get('subtasks', []):
                walk(sub)

        walk(tree)
        failed = [t for t in node_tasks[b_fail['name']]
                  if t['status'] == 'failed']
        self.assertEqual(1, len(failed), node_tasks[b_fail['name']])
        self.assertIn(reason, failed[0]['reason'])
        # Each node was driven by the conductor of its shard only.
        for key, inodes in (('a', a_nodes), ('b', [b_good, b_fail])):
            other = 'b' if key == 'a' else 'a'
            for inode in inodes:
                line = 'Ironic node %s -> active' % inode['uuid']
                self.assertIn(line, self.log(key))
                self.assertNotIn(line, self.log(other))

    # --- (d): node move ------------------------------------------------------

    def test_node_move_to_another_service(self):
        inode = self.make('a', 'moving')
        self.start_site()
        self.client.wait_for(lambda: inode['uuid'] in self.records(),
                             timeout=WAIT)
        uuid = inode['uuid']
        source, dest = self.hosts['a'], self.hosts['b']
        # A live source refuses the move (exit 5) and nothing changes.
        refused = self.manage('node', 'move', uuid, '--service', dest)
        self.assertEqual(5, refused.returncode, refused.stderr)
        self.client.patch('/v1/services/%s' % source, status=200, json=[
            {'op': 'replace', 'path': '/forced_down', 'value': True}])
        moved = self.manage('node', 'move', uuid, '--service', dest)
        self.assertEqual(0, moved.returncode, moved.stderr)
        self.assertEqual(dest, self.records()[uuid]['conductor'])

        # The old service (still running) no longer syncs the node: it
        # warns, naming the command that would give it back.
        self.wait_for_log('a', 'record %s is owned by service %s: left '
                               'alone' % (uuid, dest))
        self.assertIn('"baremetal-orch-manage node move %s --service %s"'
                      % (uuid, source), self.log('a'))
        self.assertEqual(dest, self.records()[uuid]['conductor'])

        # As the seed's procedure has it, the node's shard changes in
        # Ironic too; then the new owner syncs it and acts on it.
        self.ironic.set_shard(uuid, self.shards['b'])
        self.client.wait_for(
            lambda: self.records()[uuid]['shard'] == self.shards['b'],
            timeout=WAIT)
        self.client.put('/v1/nodes/%s/states/provision' % uuid,
                        json={'target': 'manage'}, status=202)
        self.client.wait_for_state(uuid, 'manageable', timeout=WAIT)
        self.assertEqual('manageable',
                         self.ironic.get_node(uuid)['provision_state'])
        line = 'Ironic node %s -> manage' % uuid
        self.assertIn(line, self.log('b'))
        self.assertNotIn(line, self.log('a'))
        self.assertEqual(dest, self.records()[uuid]['conductor'])

    def manage(self, *argv):
        return subprocess.run(
            [os.path.join(BIN_DIR, 'baremetal-orch-manage'),
             '--config-file', self.api_conf] + list(argv),
            capture_output=True, text=True, timeout=120,
            stdin=subprocess.DEVNULL)
