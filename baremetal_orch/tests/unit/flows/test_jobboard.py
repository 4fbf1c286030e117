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
"""Actions on a taskflow jobboard ([taskflow]), on the real Redis of
127.0.0.1:6379 (each test on a namespace of its own). Skipped when Redis
does not answer, unless BAREMETAL_ORCH_REQUIRE_REDIS is set."""

import contextlib
import datetime
import os
import socket

from oslo_config import cfg
import oslo_messaging as messaging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.conductor import admission
from baremetal_orch.conductor import manager
from baremetal_orch.conductor import rpcapi
from baremetal_orch.conf import taskflow as taskflow_conf
from baremetal_orch.db import api as dbapi
from baremetal_orch.flows import jobboard
from baremetal_orch.objects import event as event_obj
from baremetal_orch.tests import base

REDIS = ('127.0.0.1', 6379)


def redis_answers():
    with contextlib.suppress(OSError), socket.create_connection(
            REDIS, timeout=1) as s:
        s.sendall(b'PING\r\n')
        return s.recv(16).startswith(b'+PONG')
    return False


def strategy():
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 'jb'},
            'data': {'groups': [
                {'name': 'g1', 'critical': True, 'depends_on': [],
                 'selectors': [{'node_tags': ['g1']}]},
                {'name': 'g2', 'critical': True, 'depends_on': ['g1'],
                 'selectors': [{'node_tags': ['g2']}]}]}}


class TestOptions(base.TestCase):

    def test_defaults_keep_the_database_claim(self):
        self.assertFalse(cfg.CONF.taskflow.jobboard_enabled)
        self.assertFalse(jobboard.enabled())
        self.assertEqual('redis_taskflow_driver',
                         cfg.CONF.taskflow.jobboard_backend_driver)

    def test_unknown_driver_refused(self):
        self.assertRaises(ValueError, self.config, group='taskflow',
                          jobboard_backend_driver='etcd')

    def test_expiration_time_bounded(self):
        self.assertRaises(ValueError, self.config, group='taskflow',
                          jobboard_expiration_time=1)

    def test_password_is_secret(self):
        opt, = [o for o in taskflow_conf.opts
                if o.name == 'jobboard_backend_password']
        self.assertTrue(opt.secret)

    def test_redis_board_conf(self):
        self.config(group='taskflow', jobboard_backend_hosts=['10.0.0.1'],
                    jobboard_backend_port=6380,
                    jobboard_backend_password='pw',
                    jobboard_backend_namespace='site-a')
        conf = jobboard.board_conf()
        self.assertEqual(('redis', '10.0.0.1', 6380, 'pw', 'site-a'),
                         (conf['board'], conf['host'], conf['port'],
                          conf['password'], conf['namespace']))
        self.assertEqual('redis://10.0.0.1:6380', jobboard.backend_name())

    def test_zookeeper_board_conf(self):
        self.config(group='taskflow',
                    jobboard_backend_driver='zookeeper_taskflow_driver',
                    jobboard_backend_hosts=['zk1', 'zk2'],
                    jobboard_backend_port=2181,
                    jobboard_backend_namespace='site-a',
                    jobboard_expiration_time=20)
        conf = jobboard.board_conf()
        self.assertEqual(('zookeeper', ['zk1:2181', 'zk2:2181'], '/site-a',
                          20.0),
                         (conf['board'], conf['hosts'], conf['path'],
                          conf['timeout']))


class JobboardTestCase(base.DbTestCase):
    """A conductor with the Redis jobboard enabled."""

    def setUp(self):
        super().setUp()
        if not redis_answers():
            if os.environ.get('BAREMETAL_ORCH_REQUIRE_REDIS'):
                self.fail('Redis does not answer on %s:%s' % REDIS)
            self.skipTest('Redis does not answer on %s:%s' % REDIS)
        self.namespace = 'test-%s' % uuidutils.generate_uuid()
        self.config(group='taskflow', jobboard_enabled=True,
                    jobboard_backend_namespace=self.namespace,
                    jobboard_name=self.namespace,
                    jobboard_expiration_time=4,
                    jobboard_wait_timeout=0.1)
        self.config(group='conductor', heartbeat_timeout=3)
        self.ctx = orch_context.get_admin_context()
        self.addCleanup(self._clean_redis)

    def _clean_redis(self):
        import redis
        client = redis.Redis(*REDIS)
        keys = list(client.scan_iter(match=self.namespace + '*'))
        if keys:
            client.delete(*keys)
        client.close()

    def start_manager(self, host='test-conductor'):
        m = manager.ConductorManager(host)
        m.init_host()
        rpcapi.set_local_manager(m)
        self.addCleanup(rpcapi.set_local_manager, None)
        self.addCleanup(m.del_host, False)
        return m

    def nodes(self):
        for group in ('g1', 'g2'):
            for i in range(2):
                self.create_node(name='%s-%d' % (group, i), tags=[group],
                                 provision_state='enroll')
        dbapi.create_strategy('jb', strategy())

    def board(self):
        board = jobboard.Board(dbapi.taskflow_backend())
        board.connect()
        self.addCleanup(board.close)
        return board

    def finished(self, uuid):
        def check():
            action = dbapi.get_action(uuid)
            return action if action.state in ('complete', 'failed') \
                else None
        return check


class TestJobboard(JobboardTestCase):

    def test_admitted_action_is_posted_claimed_run_and_consumed(self):
        self.nodes()
        m = self.start_manager()
        action = m.admit_action(self.ctx, uuidutils.generate_uuid(),
                                'deploy_site',
                                {'deployment_strategy': 'jb'})
        # No conductor until a conductor claims its job; the nodes
        # admission resolved (by UUID, with their names) go with it.
        self.assertIsNone(action.conductor)
        snapshot = dbapi.get_action(action.uuid).parameters['snapshot']
        self.assertEqual(
            {'g1': ['g1-0', 'g1-1'], 'g2': ['g2-0', 'g2-1']},
            {g: sorted(snapshot['nodes'][u] for u in n)
             for g, n in snapshot['group_nodes'].items()})
        done = self.wait_for(self.finished(action.uuid))
        self.assertEqual(('complete', 'success', 'test-conductor'),
                         (done.state, done.result, done.conductor))
        self.assertEqual(['g1', 'g2'], done.report['order'])
        # The job was consumed when the action was taken; the logbook
        # goes once the action ended.
        self.assertEqual([], self.jobs())

        def logbooks():
            with contextlib.closing(
                    dbapi.taskflow_backend().get_connection()) as conn:
                return [b.uuid for b in conn.get_logbooks()]
        self.wait_for(lambda: action.uuid not in logbooks(), timeout=10)

    def test_backend_down_refuses_the_action_and_leaves_nothing(self):
        self.nodes()
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            closed_port = s.getsockname()[1]
        self.config(group='taskflow', jobboard_backend_port=closed_port)
        m = self.start_manager()
        # An error the endpoint declares expected (the RPC server sends
        # it back as itself).
        expected = self.assertRaises(
            messaging.ExpectedException, m.admit_action, self.ctx,
            uuidutils.generate_uuid(), 'deploy_site',
            {'deployment_strategy': 'jb'})
        error = expected.exc_info[1]
        self.assertIsInstance(error, exception.CoordinationUnavailable)
        self.assertEqual(503, error.status)
        self.assertIn('redis://127.0.0.1:%d' % closed_port, str(error))
        self.assertEqual([], dbapi.list_actions())

    def jobs(self):
        """The uuids of the actions whose jobs are on the board."""
        board = self.board()
        return [jobboard.action_of(job)
                for job in board.board.iterjobs(ensure_fresh=True)]

    def _pending_action(self, conductor):
        """A pending action of ``conductor`` as its admission left it."""
        return admission.admit(self.ctx, uuidutils.generate_uuid(),
                               'deploy_site', {'deployment_strategy': 'jb'},
                               conductor).action

    def _posted_long_ago(self, uuid):
        """As if the pending action ``uuid`` had been posted (left with no
        conductor) five minutes ago."""
        timeutils.set_time_override(
            timeutils.utcnow() - datetime.timedelta(minutes=5))
        try:
            self.assertTrue(dbapi.claim_action(uuid, None, None))
        finally:
            timeutils.clear_time_override()

    def test_job_of_an_action_a_conductor_holds_is_consumed_and_left(self):
        # The database's claim decides: a job whose action a live
        # conductor holds is done with, the action left to its conductor.
        self.nodes()
        dbapi.register_service('other')
        action = self._pending_action('other')
        m = self.start_manager()
        m.actions.stop()
        board = self.board()
        board.post(action.uuid)
        taken = []

        def take(uuid):
            taken.append(uuid)
            m.actions.take_job(uuid)
        self.assertEqual(1, board.take('test-conductor', take,
                                       lambda: True))
        self.assertEqual([action.uuid], taken)
        self.assertEqual([], self.jobs())
        self.assertEqual(('other', 'pending'),
                         (dbapi.get_action(action.uuid).conductor,
                          dbapi.get_action(action.uuid).state))
        self.assertEqual(set(), m.actions.running())

    def test_job_of_an_ended_action_is_consumed(self):
        action = dbapi.create_action({
            'name': 'deploy_site', 'state': 'complete',
            'parameters': {}})
        m = self.start_manager()
        m.actions.stop()
        board = self.board()
        board.post(action.uuid)
        self.assertEqual(1, board.take('test-conductor', m.actions.take_job,
                                       lambda: True))
        self.assertEqual([], self.jobs())
        self.assertIsNone(dbapi.get_action(action.uuid).conductor)

    def test_no_job_is_taken_past_the_limit(self):
        action = dbapi.create_action({
            'name': 'deploy_site', 'state': 'complete',
            'parameters': {}})
        board = self.board()
        board.post(action.uuid)
        self.assertEqual(0, board.take('test-conductor', self.fail,
                                       lambda: False))
        self.assertEqual([action.uuid], self.jobs())

    def test_action_of_a_dead_conductor_is_taken_over_in_the_database(self):
        self.nodes()
        dbapi.register_service('dead')
        dbapi.update_service('dead', {
            'last_seen_at': timeutils.utcnow() - datetime.timedelta(
                minutes=5)})
        action = self._pending_action('dead')
        m = self.start_manager()
        m.actions.stop()
        m.actions.take_over(self.ctx, {'dead'})
        done = self.wait_for(self.finished(action.uuid))
        self.assertEqual(('complete', 'test-conductor'),
                         (done.state, done.conductor))
        events = [e.event_type for e in dbapi.list_events(
            {'action_uuid': action.uuid})]
        self.assertIn(event_obj.ACTION_TAKEN_OVER, events)
        # Not through the board: nothing was posted.
        self.assertEqual([], self.jobs())

    def test_action_of_a_live_conductor_is_left_to_it(self):
        self.nodes()
        dbapi.register_service('other')
        action = self._pending_action('other')
        m = self.start_manager()
        m.actions.stop()
        m.actions.take_over(self.ctx, {'other'})
        self.assertEqual('other', dbapi.get_action(action.uuid).conductor)
        self.assertEqual(set(), m.actions.running())

    def test_action_nobody_took_is_taken_after_the_heartbeat_timeout(self):
        # A backend that lost its data (Redis restarted without
        # persistence) lost the job of an action no conductor took yet.
        self.nodes()
        action = self._pending_action(None)
        m = self.start_manager()
        m.actions.stop()
        # Just posted: its job may be on its way.
        m.actions.take_over(self.ctx, set())
        self.assertIsNone(dbapi.get_action(action.uuid).conductor)
        self._posted_long_ago(action.uuid)
        m.actions.take_over(self.ctx, set())
        done = self.wait_for(self.finished(action.uuid))
        self.assertEqual(('complete', 'test-conductor'),
                         (done.state, done.conductor))

    def test_action_nobody_took_waits_for_room(self):
        # At its limit of running actions ([conductor]workers), a
        # conductor leaves an unheld action to one that has room, as it
        # leaves its job on the board.
        self.config(group='conductor', workers=1)
        self.nodes()
        self.create_node(name='slow', tags=['slow'],
                         provision_state='enroll',
                         driver_info={'fake_duration': 1.0})
        dbapi.create_strategy('slow', {
            'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 'slow'},
            'data': {'groups': [{'name': 'slow', 'critical': True,
                                 'depends_on': [],
                                 'selectors': [{'node_tags': ['slow']}]}]}})
        m = self.start_manager()
        m.actions.stop()
        busy = admission.admit(self.ctx, uuidutils.generate_uuid(),
                               'deploy_site', {'deployment_strategy': 'slow'},
                               'test-conductor').action
        m.actions._start(self.ctx, busy)
        action = self._pending_action(None)
        self._posted_long_ago(action.uuid)
        m.actions.take_over(self.ctx, set())
        self.assertIsNone(dbapi.get_action(action.uuid).conductor)
        self.wait_for(self.finished(busy.uuid))
        self.wait_for(lambda: not m.actions.running())
        m.actions.take_over(self.ctx, set())
        done = self.wait_for(self.finished(action.uuid))
        self.assertEqual(('complete', 'test-conductor'),
                         (done.state, done.conductor))
