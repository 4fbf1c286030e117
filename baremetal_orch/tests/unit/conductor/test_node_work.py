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
"""A group's node work costs a number of statements and transactions that
does not grow with the group; the batch keeps the one-node semantics."""

import re
import threading
from unittest import mock

from oslo_utils import uuidutils
import sqlalchemy as sa

from baremetal_orch.common import context as orch_context
from baremetal_orch.conductor import rpcapi
from baremetal_orch.db import api as dbapi
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.flows import dispatcher
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.conductor import phase_runtime

#: The node work's tables (the conductor's heartbeat and the flows'
#: own persistence are not node work).
_TABLES = re.compile(r'\b(nodes|node_tags|node_labels|tasks|deployments|'
                     r'events)\b')
#: The dispatcher's poll of its tasks' statuses: as many as the time
#: the phase takes, not the node work.
_POLL = re.compile(r'^SELECT tasks\.uuid, tasks\.status\s+FROM tasks',
                   re.IGNORECASE)


class Counter:
    """Statements and write transactions on the node work's tables."""

    def __init__(self, engine):
        self.statements = 0
        self.writes = 0
        self.transactions = 0
        self._lock = threading.Lock()
        self._dirty = set()
        sa.event.listen(engine, 'before_cursor_execute', self._execute)
        sa.event.listen(engine, 'commit', self._commit)
        self.engine = engine

    def stop(self):
        sa.event.remove(self.engine, 'before_cursor_execute', self._execute)
        sa.event.remove(self.engine, 'commit', self._commit)

    def _execute(self, conn, cursor, statement, params, context,
                 executemany):
        if not _TABLES.search(statement) or _POLL.match(statement.strip()):
            return
        with self._lock:
            self.statements += 1
            if statement.lstrip().split(None, 1)[0].upper() in (
                    'INSERT', 'UPDATE', 'DELETE'):
                self.writes += 1
                self._dirty.add(id(conn))

    def _commit(self, conn):
        with self._lock:
            if id(conn) in self._dirty:
                self._dirty.discard(id(conn))
                self.transactions += 1


class TestStatementsPerGroup(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.config(group='conductor', max_concurrent_nodes=100)
        self.dispatcher = dispatcher.NodeDispatcher(rpcapi.ConductorAPI())

    def _group(self, size, **node_values):
        """{uuid: name} of ``size`` new nodes."""
        names = {}
        for i in range(size):
            name = 'g%d-n%02d-%s' % (size, i, uuidutils.generate_uuid()[:6])
            names[self.create_node(name=name, **node_values).uuid] = name
        return names

    def _phases(self, names, group='g'):
        """prepare then deploy, as the flow runs them; returns the
        counts of each."""
        runtime = phase_runtime.phase_runtime(0.01, names)
        counts = []
        for phase in ('prepare', 'deploy'):
            parent = dbapi.create_task({'action_uuid': runtime.action_uuid,
                                        'kind': 'phase', 'name': phase})
            counter = Counter(sqla_api.get_engine())
            try:
                result = self.dispatcher.run(runtime, parent, phase,
                                             list(names), 60,
                                             {'group': group})
            finally:
                counter.stop()
            self.assertFalse(result.timed_out)
            self.assertEqual({n: True for n in names}, result.done)
            counts.append((counter.statements, counter.writes,
                           counter.transactions))
        return counts

    def test_counts_do_not_grow_with_the_group(self):
        small = self._phases(self._group(2))
        large = self._phases(self._group(12))
        # Before the batches: 17 transactions and 43 statements per node
        # (prepare and deploy), so 12 nodes cost six times 2 nodes.
        self.assertEqual(small, large)
        statements = sum(c[0] for c in large)
        transactions = sum(c[2] for c in large)
        self.assertLess(statements, 40, large)
        # A phase's task rows are started and its nodes locked in one
        # transaction (8 a phase before); its nodes' last state change is
        # written with their release (13 in all before).
        self.assertLessEqual(transactions, 11, large)
        for node in dbapi.list_nodes({'names': None}):
            self.assertEqual(('active', None, ['g']),
                             (node.provision_state, node.reservation,
                              node.deployed_groups))


class TestBatchSemantics(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.action = self.running_action()
        self.ctx = orch_context.get_admin_context()

    def _tasks(self, nodes):
        return [(dbapi.create_task({'action_uuid': self.action,
                                    'kind': 'node', 'name': n.name,
                                    'node_uuid': n.uuid}), n.uuid)
                for n in nodes]

    def test_a_failing_node_fails_alone(self):
        good = self.create_node(name='good')
        bad = self.create_node(name='bad',
                               driver_info={'fake_fail_phase': 'prepare'})
        items = self._tasks([good, bad])
        self.manager.node_work.run(self.ctx, self.action, items, 'prepare',
                                   {})
        statuses = {dbapi.get_task(t).name: dbapi.get_task(t).status
                    for t, _n in items}
        self.assertEqual({'good': 'success', 'bad': 'failed'}, statuses)
        self.assertIn('fake failure', dbapi.get_task(items[1][0]).reason)
        self.assertEqual(('available', None),
                         (dbapi.get_node('good').provision_state,
                          dbapi.get_node('good').reservation))
        self.assertEqual(('clean failed', None),
                         (dbapi.get_node('bad').provision_state,
                          dbapi.get_node('bad').reservation))

    def test_ended_tasks_and_deployed_nodes_are_left_alone(self):
        from baremetal_orch.drivers.provisioning import fake

        active = self.create_node(name='active', provision_state='active')
        fresh = self.create_node(name='fresh', provision_state='available')
        done = self.create_node(name='done', provision_state='available')
        items = self._tasks([active, fresh, done])
        dbapi.update_task(items[2][0], {'status': 'success'})
        with mock.patch.object(fake.FakeDriver, 'call_many', autospec=True,
                               wraps=fake.FakeDriver.call_many) as calls:
            self.manager.node_work.run(self.ctx, self.action, items,
                                       'deploy', {'group': 'g1'})
            # Sent twice: every task has ended, nothing is done again.
            self.manager.node_work.run(self.ctx, self.action, items,
                                       'deploy', {'group': 'g1'})
        self.assertEqual([('deploy', ['fresh'])],
                         [(c.args[1], [n.name for n in c.args[2]])
                          for c in calls.call_args_list])
        self.assertEqual('available', dbapi.get_node('done').provision_state)
        self.assertEqual(['g1'], dbapi.get_node('active').deployed_groups)
        self.assertEqual(1, len(dbapi.list_deployments(
            {'node_uuid': fresh.uuid})))

    def test_work_that_arrives_once_paused_is_given_back(self):
        # Sent before the pause, received after it (a message that waited
        # in a queue): the work this send would start goes back pending,
        # unlocked and untouched; work already running (sent twice or
        # resumed) goes on, paused or not.
        fresh = self.create_node(name='fresh', provision_state='available')
        resumed = self.create_node(name='resumed',
                                   provision_state='available')
        items = self._tasks([fresh, resumed])
        dbapi.update_task(items[1][0], {'status': 'running'})
        dbapi.update_action(self.action, {'state': 'paused',
                                          'control': 'pause'})
        wakeup, inbox = threading.Event(), {}
        dispatcher.ENDED.watch([t for t, _n in items], wakeup, inbox)
        self.addCleanup(dispatcher.ENDED.forget, [t for t, _n in items])
        self.manager.node_work.run(self.ctx, self.action, items, 'deploy',
                                   {'group': 'g1'})
        given_back = dbapi.get_task(items[0][0])
        self.assertEqual(('pending', None),
                         (given_back.status, given_back.started_at))
        self.assertEqual(('available', None),
                         (dbapi.get_node('fresh').provision_state,
                          dbapi.get_node('fresh').reservation))
        self.assertEqual('success', dbapi.get_task(items[1][0]).status)
        self.assertEqual('active', dbapi.get_node('resumed').provision_state)
        self.assertEqual({items[0][0]: 'pending', items[1][0]: 'success'},
                         dispatcher.ENDED.take(inbox))

    def test_a_node_locked_elsewhere_waits_for_its_lock(self):
        free = self.create_node(name='free', provision_state='available')
        held = self.create_node(name='held', provision_state='available')
        dbapi.reserve_node(held.uuid, 'someone-else')
        items = self._tasks([free, held])
        self.manager.node_work.run(self.ctx, self.action, items, 'deploy',
                                   {'deadline': 30})
        self.assertEqual('active', dbapi.get_node('free').provision_state)
        self.assertEqual('running', dbapi.get_task(items[1][0]).status)
        self.assertEqual('available',
                         dbapi.get_node('held').provision_state)
        dbapi.release_node(held.uuid, 'someone-else')
        self.wait_for(lambda: dbapi.get_task(items[1][0]).status ==
                      'success')
        self.assertEqual('active', dbapi.get_node('held').provision_state)


class TestPhaseDeadline(base.ConductorTestCase):
    """The phase's timeout bounds a stall, not the phase's length: a group
    larger than what runs at once keeps going while its nodes end."""

    def test_waves_longer_than_the_timeout_succeed(self):
        # Four waves of one node, each 1.5 s: 6 s in all, past the 3 s
        # timeout; a node ends every 1.5 s. (The old deadline, counted
        # from the phase's start, timed out the third wave.)
        self.config(group='conductor', max_concurrent_nodes=1)
        names = []
        for i in range(4):
            names.append(self.create_node(
                name='wave-%d' % i, driver_info={'fake_duration': 1.5}).uuid)
        runtime = phase_runtime.phase_runtime(0.05)
        parent = dbapi.create_task({'action_uuid': runtime.action_uuid,
                                    'kind': 'phase', 'name': 'prepare'})
        dispatch = dispatcher.NodeDispatcher(rpcapi.ConductorAPI())
        result = dispatch.run(runtime, parent, 'prepare', names, 3, {})
        self.assertFalse(result.timed_out)
        self.assertEqual({n: True for n in names}, result.done)
