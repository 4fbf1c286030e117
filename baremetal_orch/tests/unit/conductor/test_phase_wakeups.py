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
"""A phase ends when its nodes do: node work of this process wakes the
phase that waits for it; work cast to this conductor's own host is handed
to its manager, not sent through the broker and back."""

import threading
from unittest import mock

import fixtures

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import rpc
from baremetal_orch.conductor import node_work
from baremetal_orch.conductor import rpcapi
from baremetal_orch.db import api as dbapi
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.flows import dispatcher
from baremetal_orch.flows import engine
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.conductor import phase_runtime

#: Longer than any test may take: a phase that waits for its poll instead
#: of being woken never ends (the thread-join bound below fails it).
NEVER = 3600


class TestEndedTasks(base.TestCase):

    def test_wakes_the_watcher_of_an_ended_task_only(self):
        ended = dispatcher.EndedTasks()
        first, second = threading.Event(), threading.Event()
        ended.watch(['a', 'b'], first, {})
        ended.watch(['c'], second, {})
        ended.ended({'x': 'success', 'b': None})
        self.assertEqual((True, False), (first.is_set(), second.is_set()))
        ended.forget(['c'])
        ended.ended({'c': 'success'})
        self.assertFalse(second.is_set())

    def test_hands_the_outcomes_to_the_watchers_inbox(self):
        ended = dispatcher.EndedTasks()
        event, inbox = threading.Event(), {}
        ended.watch(['a', 'b', 'c'], event, inbox)
        ended.ended({'a': 'success', 'b': 'failed', 'x': 'success'})
        ended.ended({'c': None})
        self.assertTrue(event.is_set())
        self.assertEqual({'a': 'success', 'b': 'failed', 'c': None},
                         ended.take(inbox))
        self.assertEqual({}, ended.take(inbox))


class TestPhaseWakeups(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.config(group='conductor', max_concurrent_nodes=100)
        self.dispatcher = dispatcher.NodeDispatcher(rpcapi.ConductorAPI())
        self.useFixture(fixtures.MockPatchObject(
            dispatcher.NodeDispatcher, 'LOCAL_POLL', NEVER))

    def _run_phase(self, nodes, phase='prepare'):
        """Run ``phase`` on ``nodes``; its results are by node UUID."""
        uuids = [node.uuid for node in nodes]
        runtime = phase_runtime.phase_runtime(
            NEVER, {node.uuid: node.name for node in nodes})
        parent = dbapi.create_task({'action_uuid': runtime.action_uuid,
                                    'kind': 'phase', 'name': phase})
        results = []
        thread = threading.Thread(target=lambda: results.append(
            self.dispatcher.run(runtime, parent, phase, uuids, 60, {})),
            daemon=True)
        thread.start()
        # A bound on a hang, not a timing: without the wake-up the phase
        # sleeps for an hour.
        thread.join(60)
        self.assertFalse(thread.is_alive(), 'the phase was not woken')
        return results[0]

    def test_node_work_wakes_its_phase(self):
        nodes = [self.create_node(name='wake-%d' % i) for i in range(5)]
        result = self._run_phase(nodes)
        self.assertEqual({n.uuid: True for n in nodes}, result.done)

    def test_outcomes_come_home_in_memory(self):
        # Node work of this process hands the phase its outcomes: the
        # phase reads no task row to learn them.
        nodes = [self.create_node(name='home-%d' % i) for i in range(3)]
        nodes.append(self.create_node(
            name='home-bad', driver_info={'fake_fail_phase': 'prepare'}))
        with mock.patch.object(dbapi, 'ended_tasks', autospec=True,
                               wraps=dbapi.ended_tasks) as reads:
            result = self._run_phase(nodes)
        self.assertEqual(dict({n.uuid: True for n in nodes[:3]},
                              **{nodes[3].uuid: False}), result.done)
        self.assertEqual(0, reads.call_count)

    def test_a_node_that_waited_for_its_lock_wakes_its_phase(self):
        node = self.create_node(name='alone')
        dbapi.reserve_node(node.uuid, 'someone-else')
        releaser = threading.Timer(
            0.5, dbapi.release_node, (node.uuid, 'someone-else'))
        releaser.start()
        self.addCleanup(releaser.cancel)
        result = self._run_phase([node])
        self.assertEqual({node.uuid: True}, result.done)

    def test_a_failing_node_wakes_its_phase(self):
        node = self.create_node(name='doomed',
                                driver_info={'fake_fail_phase': 'prepare'})
        result = self._run_phase([node])
        self.assertEqual({node.uuid: False}, result.done)


class TestPollInterval(base.TestCase):
    """While a node in flight works in another process, the phase polls at
    its runtime's interval; otherwise its nodes' ends wake it."""

    def _timeout(self, hosts, runs_here):
        api = mock.Mock(spec=['runs_here'])
        api.runs_here.side_effect = runs_here
        wakeup = mock.Mock(spec=threading.Event)
        dispatcher.NodeDispatcher(api)._wait(
            mock.Mock(poll_interval=0.05), wakeup,
            {i: ('n', None, host) for i, host in enumerate(hosts)})
        wakeup.clear.assert_called_once_with()
        return wakeup.wait.call_args.args[0]

    def test_table(self):
        here = {'c1'}.__contains__
        local = dispatcher.NodeDispatcher.LOCAL_POLL
        for hosts, expected in (
                (['c1'], local),
                (['c1', 'c1'], local),
                (['c1', 'c2'], 0.05),
                # Not sent (no conductor): the phase looks again soon.
                (['c1', None], 0.05),
                ([], local)):
            self.assertEqual(expected, self._timeout(hosts, here), hosts)


class TestOwnHost(base.DbTestCase):
    """Split mode: what a conductor casts to its own host runs here."""

    def setUp(self):
        super().setUp()
        self.config(rpc_transport='oslo')
        self.ctx = orch_context.get_admin_context()
        self.client = mock.Mock()
        self.own = mock.Mock(host='c1')
        with mock.patch.object(rpc, 'get_client', autospec=True,
                               return_value=self.client):
            self.api = rpcapi.ConductorAPI(own=self.own)
            self.plain = rpcapi.ConductorAPI()

    def test_a_cast_to_its_own_host_is_handed_to_the_manager(self):
        self.api.run_nodes_phase(self.ctx, 'c1', 'a', [('t', 'n')],
                                 'prepare', {'group': 'g'})
        self.own.run_nodes_phase.assert_called_once_with(
            self.ctx, action_uuid='a', items=[['t', 'n']], phase='prepare',
            params={'group': 'g'})
        self.client.prepare.assert_not_called()

    def test_a_cast_to_another_host_goes_through_the_broker(self):
        self.api.run_nodes_phase(self.ctx, 'c2', 'a', [('t', 'n')],
                                 'deploy')
        self.client.prepare.assert_called_once_with(server='c2')
        self.own.run_nodes_phase.assert_not_called()

    def test_runs_here(self):
        self.assertEqual((True, False, False),
                         (self.api.runs_here('c1'), self.api.runs_here('c2'),
                          self.plain.runs_here('c1')))

    def test_all_in_one_runs_everything_here(self):
        self.config(rpc_transport='none')
        api = rpcapi.ConductorAPI()
        self.assertFalse(api.runs_here('anything'))
        rpcapi.set_local_manager(self.own)
        self.addCleanup(rpcapi.set_local_manager, None)
        self.assertTrue(api.runs_here('anything'))

    def test_the_conductor_dispatches_with_its_own_handle(self):
        from baremetal_orch.conductor import manager

        conductor = manager.ConductorManager('c1')
        with mock.patch.object(rpc, 'get_client', autospec=True,
                               return_value=self.client):
            conductor.prepare_host()
        self.addCleanup(conductor.del_host, False)
        self.assertTrue(conductor.actions.dispatcher.rpcapi.runs_here('c1'))


class TestPoolFollowsTheLimits(base.TestCase):
    """A reload (SIGHUP) that raises the limits gets as many threads for
    the batches' driver calls."""

    def test_table(self):
        work = node_work.NodeWork('c1', None)
        self.addCleanup(work.stop)
        self.config(group='conductor', max_concurrent_nodes=4,
                    max_concurrent_groups=2)
        first = work.pool()
        self.assertIs(first, work.pool())
        # Lowered: the larger pool serves.
        self.config(group='conductor', max_concurrent_nodes=2)
        self.assertIs(first, work.pool())
        # Raised: a larger one, which 16 calls at once all run on.
        self.config(group='conductor', max_concurrent_nodes=8)
        larger = work.pool()
        self.assertIsNot(first, larger)
        barrier = threading.Barrier(16, timeout=30)
        calls = [larger.submit(barrier.wait) for _ in range(16)]
        for call in calls:
            call.result(timeout=60)


class TestWarmUp(base.DbTestCase):

    def test_the_backend_is_made_once_per_engine(self):
        engine.warm_up()
        backend = dbapi.taskflow_backend()
        self.assertIs(backend, dbapi.taskflow_backend())
        self.assertIs(sqla_api.get_engine(), backend._engine)
