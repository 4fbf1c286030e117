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
"""The start of a batch of node work (``start_batch``): what it answers
of each task and node, and what it costs."""

from oslo_utils import uuidutils
import sqlalchemy as sa

from baremetal_orch.common import statuses
from baremetal_orch.db import api as dbapi
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.tests import base

HOST = 'test-conductor'


class BatchStartChecks:
    """The answers of ``start_batch``, the same on every engine (the
    functional tests run them on MariaDB and PostgreSQL)."""

    def _item(self, name, status=None, reservation=None):
        node = dbapi.create_node({'name': name, 'driver': 'fake',
                                  'provision_state': 'enroll'})
        if reservation:
            dbapi.reserve_node(node.uuid, reservation)
        task = dbapi.create_task({'action_uuid': self.action, 'kind': 'node',
                                  'name': name, 'node_uuid': node.uuid})
        if status:
            dbapi.update_task(task, {'status': status})
        return task, node.uuid

    def setUp(self):
        super().setUp()
        self.action = uuidutils.generate_uuid()

    def test_each_task_says_what_it_was(self):
        items = {name: self._item(name, status) for name, status in (
            ('fresh', None), ('again', statuses.RUNNING),
            ('done', statuses.SUCCESS), ('lost', statuses.FAILED))}
        unknown = (uuidutils.generate_uuid(), items['fresh'][1])
        previous, rows = dbapi.start_batch(
            list(items.values()) + [unknown], HOST,
            statuses.TASK_FINAL_STATUSES)
        self.assertEqual({items['fresh'][0]: statuses.PENDING,
                          items['again'][0]: statuses.RUNNING}, previous)
        # Only the nodes of tasks not ended are locked.
        self.assertEqual({items['fresh'][1], items['again'][1]},
                         {r['uuid'] for r in rows})
        for name, status in (('fresh', statuses.RUNNING),
                             ('again', statuses.RUNNING),
                             ('done', statuses.SUCCESS),
                             ('lost', statuses.FAILED)):
            task, node = items[name]
            self.assertEqual(status, dbapi.get_task(task).status, name)
            self.assertEqual(HOST if name in ('fresh', 'again') else None,
                             dbapi.get_node(node).reservation, name)
        self.assertIsNotNone(dbapi.get_task(items['fresh'][0]).started_at)

    def test_a_node_held_elsewhere_is_left_out(self):
        free = self._item('free')
        held = self._item('held', reservation='someone-else')
        previous, rows = dbapi.start_batch([free, held], HOST,
                                           statuses.TASK_FINAL_STATUSES)
        # Both tasks start; only the free node is locked (the held one
        # waits for its lock in a branch of its own).
        self.assertEqual({free[0]: statuses.PENDING,
                          held[0]: statuses.PENDING}, previous)
        self.assertEqual([free[1]], [r['uuid'] for r in rows])
        self.assertEqual('someone-else', dbapi.get_node(held[1]).reservation)

    def test_started_twice_the_second_finds_it_running(self):
        item = self._item('n1')
        first, rows = dbapi.start_batch([item], HOST,
                                        statuses.TASK_FINAL_STATUSES)
        second, again = dbapi.start_batch([item], HOST,
                                          statuses.TASK_FINAL_STATUSES)
        self.assertEqual(({item[0]: statuses.PENDING}, 1),
                         (first, len(rows)))
        # Running, and its node already locked (by this host's first
        # copy): the second copy waits for the lock, then finds it ended.
        self.assertEqual(({item[0]: statuses.RUNNING}, []), (second, again))


class TestBatchStart(BatchStartChecks, base.DbTestCase):

    def test_a_batch_of_pending_tasks_starts_in_two_statements(self):
        engine = sqla_api.get_engine()
        if not engine.dialect.update_returning:
            self.skipTest('sqlite %s has no UPDATE ... RETURNING (3.35)'
                          % engine.dialect.dbapi.sqlite_version)
        items = [self._item('n%d' % i) for i in range(20)]
        seen = []

        def count(conn, cursor, statement, params, context, many):
            seen.append(statement.split(None, 1)[0].upper())

        sa.event.listen(engine, 'before_cursor_execute', count)
        try:
            previous, _rows = dbapi.start_batch(
                items, HOST, statuses.TASK_FINAL_STATUSES)
        finally:
            sa.event.remove(engine, 'before_cursor_execute', count)
        self.assertEqual(20, len(previous))
        # The task rows' UPDATE and the locks' UPDATE say what they
        # changed (RETURNING): no SELECT before them (four statements
        # before), then the locked rows are read (nodes, tags, labels).
        self.assertEqual(['UPDATE', 'UPDATE', 'SELECT', 'SELECT', 'SELECT'],
                         [s for s in seen if s != 'BEGIN'], seen)
