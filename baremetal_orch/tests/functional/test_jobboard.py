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
"""Actions on a taskflow jobboard ([taskflow]) between two conductor
processes over RabbitMQ and MariaDB.

* kill -9 of the conductor that took the action's job, mid-deploy, on
  the real Redis of 127.0.0.1:6379 and on ZooKeeper (127.0.0.1:2181,
  skipped when absent unless BAREMETAL_ORCH_REQUIRE_ZOOKEEPER=1): the
  job was consumed when the action was taken; the other conductor takes
  the action over once the dead one's heartbeat is stale, as without a
  jobboard, and resumes it from its persisted flow; the action completes
  and no node is provided or deployed twice;
* the coordination backend dies (a private redis-server, killed with
  SIGKILL) while an action runs and while another is admitted: the running
  action completes, the admission answers 503 naming the backend and
  leaves no action; once the backend is back, actions are admitted again.
"""

import signal
import time

from taskflow.jobs import backends as job_backends

from baremetal_orch.tests.functional.drills import base as drill_base
from baremetal_orch_testing.fixtures import jobboard
from baremetal_orch_testing import services

HOSTS = ('conductor-1', 'conductor-2')
GROUPS = (('g1', ()), ('g2', ('g1',)), ('g3', ('g2',)))
NODES_PER_GROUP = 4
FAKE_DURATION = 0.4
TIMEOUT = 120


class JobboardTestCase(drill_base.DrillTestCase):

    def deploy(self, prefix, groups=GROUPS, nodes=NODES_PER_GROUP):
        """Nodes and a strategy of their own; the action's uuid."""
        names = ['%s-%s-n%d' % (prefix, g, i) for g, _d in groups
                 for i in range(nodes)]
        self.create_nodes([
            {'name': name, 'driver': 'fake',
             'tags': [name.rsplit('-', 1)[0]],
             'driver_info': {'fake_duration': FAKE_DURATION}}
            for name in names])
        self.client.post('/v1/deployment_strategies', status=201,
                         json=drill_base.strategy_doc(prefix, [
                             (g, '%s-%s' % (prefix, g),
                              ['%s' % d for d in deps])
                             for g, deps in groups]))
        return names

    def admit(self, prefix, status=201):
        return self.client.post('/v1/actions', status=status, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': prefix}})

    def claimed(self, uuid):
        """The conductor that claimed the action (waits for it)."""
        return self.client.wait_for(lambda: self.client.get(
            '/v1/actions/%s' % uuid, status=200).json()['conductor'],
            timeout=TIMEOUT)

    def report(self, uuid):
        return self.client.get('/v1/actions/%s' % uuid,
                               status=200).json()['report'] or {}


class _KillTheOwner:
    """kill -9 of the action's conductor; the other one resumes it."""

    kind = None

    def setUp(self):
        super().setUp()
        self.board = self.useFixture(jobboard.Jobboard(self.kind))
        self.start_split(HOSTS, conductor={'max_concurrent_nodes': 2},
                         taskflow=self.board.options)

    def job_count(self):
        if self.kind == 'redis':
            conf = {'board': 'redis', 'host': jobboard.HOST,
                    'port': jobboard.PORTS['redis'],
                    'namespace': self.board.name}
        else:
            conf = {'board': 'zookeeper',
                    'hosts': '%s:%d' % (jobboard.HOST,
                                        jobboard.PORTS['zookeeper']),
                    'path': '/' + self.board.name}
        board = job_backends.fetch(self.board.name, conf)
        board.connect()
        try:
            return board.job_count
        finally:
            board.close()

    def test_kill_9_of_the_claiming_conductor(self):
        names = self.deploy('jb')
        doc = self.admit('jb').json()
        # Posted: no conductor runs it until one takes its job.
        self.assertIsNone(doc['conductor'])
        owner = self.claimed(doc['uuid'])
        self.assertIn(owner, HOSTS)
        survivor = [h for h in HOSTS if h != owner][0]
        self.client.wait_for(lambda: 'g2' in self.report(doc['uuid']).get(
            'order', ()), timeout=TIMEOUT, interval=0.05)
        self.conductors[owner].send_signal(signal.SIGKILL)
        killed_at = time.time()
        self.conductors[owner].wait(10)
        snapshot = self.node_rows('jb-')

        final = self.client.wait_for_action(doc['uuid'], timeout=TIMEOUT)
        self.assertEqual(('complete', 'success', survivor),
                         (final['state'], final['result'],
                          final['conductor']), final['report'])
        self.assertEqual(['g1', 'g2', 'g3'], final['report']['order'])
        self.assertEqual({n: 'success' for n in names},
                         final['report']['nodes'])
        # No node was provided or deployed twice (completed driver calls;
        # a call the killed conductor completed without recording it may
        # be redone, as in drill R1).
        self.assertEachCalledOnce(names, unrecorded=self.unrecorded_calls(
            snapshot, owner, killed_at))
        self.assertEqual({n: 'active' for n in names},
                         self.node_states(names))
        events = self.client.get('/v1/events?action_uuid=%s' % doc['uuid'],
                                 status=200).json()['events']
        taken = [e for e in events if e['event_type'] == 'action.taken_over']
        self.assertEqual([{'from': owner, 'to': survivor}],
                         [e['details'] for e in taken])
        # One resumption, by the survivor (the database's claim).
        resumes = self.log_lines('Resuming action %s' % doc['uuid'])
        self.assertEqual(1, len(resumes), resumes)
        self.assertIn('on %s' % survivor, resumes[0][1])
        # The job was consumed when the action was taken.
        self.assertEqual(0, self.job_count())


class TestRedisJobboard(_KillTheOwner, JobboardTestCase):
    kind = 'redis'


class TestZooKeeperJobboard(_KillTheOwner, JobboardTestCase):
    kind = 'zookeeper'


class TestRedisDies(JobboardTestCase):
    """A private redis-server, killed while actions run or are admitted."""

    def setUp(self):
        super().setUp()
        self.port = services.free_port()
        self.redis = self.start_redis()
        self.board = self.useFixture(jobboard.Jobboard('redis'))
        options = dict(self.board.options, jobboard_backend_port=self.port)
        self.start_split(HOSTS[:1], conductor={'max_concurrent_nodes': 4},
                         taskflow=options)

    def start_redis(self):
        proc = self.start_process(
            ['redis-server', '--port', str(self.port), '--bind', '127.0.0.1',
             '--save', '', '--appendonly', 'no'],
            log_name='redis-%d' % self.port)
        deadline = time.monotonic() + 30
        while not jobboard.answers('redis', port=self.port):
            self.assertLess(time.monotonic(), deadline, 'redis-server')
            time.sleep(0.1)
        return proc

    def test_backend_dies_and_comes_back(self):
        running = self.deploy('run', groups=GROUPS[:2])
        refused = self.deploy('ref', groups=GROUPS[:1])
        doc = self.admit('run').json()
        self.claimed(doc['uuid'])
        self.client.wait_for(lambda: self.report(doc['uuid']).get('order'),
                             timeout=TIMEOUT, interval=0.05)
        self.redis.send_signal(signal.SIGKILL)
        self.redis.wait(10)

        # Admission: 503 naming the backend, and no action left behind.
        resp = self.admit('ref', status=503)
        error = resp.json()['errors'][0]
        self.assertEqual('baremetal_orch.coordination_unavailable',
                         error['code'])
        self.assertIn('redis://127.0.0.1:%d' % self.port, error['detail'])
        actions = self.client.get('/v1/actions', status=200).json()[
            'actions']
        self.assertEqual([doc['uuid']], [a['uuid'] for a in actions])

        # The running action does not need the backend to finish.
        final = self.client.wait_for_action(doc['uuid'], timeout=TIMEOUT)
        self.assertEqual(('complete', 'success'),
                         (final['state'], final['result']), final['report'])
        self.assertEachCalledOnce(running)

        # The backend is back (empty): actions are admitted and run again.
        self.redis = self.start_redis()
        again = self.client.wait_for(
            lambda: self.admit('ref', status=None), timeout=TIMEOUT,
            interval=1)
        self.assertEqual(201, again.status_code, again.text)
        final = self.client.wait_for_action(again.json()['uuid'],
                                            timeout=TIMEOUT)
        self.assertEqual(('complete', 'success'),
                         (final['state'], final['result']), final['report'])
        self.assertEachCalledOnce(refused)
