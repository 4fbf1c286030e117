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
"""taskflow's backend writes a flow's atoms together, and only those that
changed; what it saved reads back the same through taskflow's own
connection."""

import contextlib
import threading

import sqlalchemy as sa
from taskflow import engines
from taskflow.patterns import linear_flow
from taskflow.persistence.backends import impl_sqlalchemy
from taskflow.persistence import models as tf_models
from taskflow import states
from taskflow import task

from baremetal_orch.db import api as dbapi
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.tests import base

ATOMS = 40


class Double(task.Task):

    def execute(self, value):
        return value * 2


def flow():
    return linear_flow.Flow('f').add(*[
        Double('double-%02d' % i, inject={'value': i})
        for i in range(ATOMS)])


class TestTaskflowStore(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.backend = dbapi.taskflow_backend()
        self.statements = []
        engine = sqla_api.get_engine()

        def seen(conn, cursor, statement, parameters, context, many):
            self.statements.append((statement.split()[0].upper(),
                                    'atomdetails' in statement, many))

        sa.event.listen(engine, 'before_cursor_execute', seen)
        self.addCleanup(sa.event.remove, engine, 'before_cursor_execute',
                        seen)
        self.book = tf_models.LogBook('book')
        self.engine = engines.load(flow(), backend=self.backend,
                                   book=self.book)

    def atom_writes(self, verb):
        return [s for s in self.statements if s[0] == verb and s[1]]

    def read_back(self):
        """The flow's atoms as taskflow's own connection reads them."""
        stock = impl_sqlalchemy.Connection(
            self.backend, upgrade_lock=threading.Lock())
        with contextlib.closing(stock):
            book = stock.get_logbook(self.book.uuid)
        detail = next(iter(book))
        return detail, {ad.name: ad for ad in detail}

    def test_new_atoms_are_inserted_together(self):
        self.engine.compile()
        self.engine.prepare()
        inserts = self.atom_writes('INSERT')
        self.assertEqual(1, len(inserts), inserts)
        self.assertTrue(inserts[0][2], 'one executemany')
        _detail, atoms = self.read_back()
        self.assertEqual(ATOMS, len(atoms))
        self.assertEqual({states.PENDING},
                         {ad.state for ad in atoms.values()})

    def test_a_flow_state_save_writes_no_unchanged_atom(self):
        self.engine.compile()
        self.engine.prepare()
        del self.statements[:]
        self.engine.storage.set_flow_state(states.RUNNING)
        self.assertEqual([], self.atom_writes('UPDATE'))
        detail, _atoms = self.read_back()
        self.assertEqual(states.RUNNING, detail.state)

    def test_a_run_saves_every_change(self):
        self.engine.run()
        detail, atoms = self.read_back()
        self.assertEqual(states.SUCCESS, detail.state)
        self.assertEqual(
            {'double-%02d' % i: (states.SUCCESS, i * 2)
             for i in range(ATOMS)},
            {name: (ad.state, ad.results) for name, ad in atoms.items()})
        # Each atom's running and success (with its result) are written;
        # its progress (0.0, then 1.0) apart from them is not (taskflow
        # saves each: 4 writes an atom before), nor the flow's states.
        self.assertEqual(2 * ATOMS, len(self.atom_writes('UPDATE')))

    def test_a_progress_goes_with_the_next_state(self):
        self.engine.compile()
        self.engine.prepare()
        storage = self.engine.storage
        storage.set_atom_state('double-00', states.RUNNING)
        del self.statements[:]
        storage.set_task_progress('double-00', 0.5, {'step': 'half'})
        storage.set_task_progress('double-00', 0.7)
        self.assertEqual([], self.atom_writes('UPDATE'))
        self.assertEqual(0.7, storage.get_task_progress('double-00'))
        # The next save of more than the progress writes it too.
        storage.save('double-00', 7, states.SUCCESS)
        self.assertEqual(1, len(self.atom_writes('UPDATE')))
        _detail, atoms = self.read_back()
        self.assertEqual((states.SUCCESS, 7, 0.7),
                         (atoms['double-00'].state, atoms['double-00'].results,
                          atoms['double-00'].meta['progress']))


class TestForeignTransactions(base.DbTestCase):
    """A transaction begun outside the database API on the sqlite file
    (taskflow's persistence begins its own) holds the process's write
    lock from its BEGIN to its end, as the API's writes do: writers queue
    on it, none sleeps in sqlite's busy handler."""

    def run_in_thread(self, body):
        """``body(connection)`` in a transaction of another thread, up to
        where it waits; returns (resume, thread)."""
        inside, resume = threading.Event(), threading.Event()

        def run():
            try:
                with sqla_api.get_engine().begin() as conn:
                    conn.exec_driver_sql('SELECT 1')
                    inside.set()
                    resume.wait(30)
                    body(conn)
            except RuntimeError:
                pass

        thread = threading.Thread(target=run)
        thread.start()
        self.assertTrue(inside.wait(30))
        return resume, thread

    def lock_is_free(self):
        lock = sqla_api._SQLITE_WRITE_LOCK
        if lock.acquire(blocking=False):
            lock.release()
            return True
        return False

    def test_held_until_commit(self):
        resume, thread = self.run_in_thread(lambda conn: None)
        self.assertFalse(self.lock_is_free())
        resume.set()
        thread.join(30)
        self.assertTrue(self.lock_is_free())

    def test_released_at_rollback(self):
        def fail(conn):
            raise RuntimeError('rolled back')

        resume, thread = self.run_in_thread(fail)
        self.assertFalse(self.lock_is_free())
        resume.set()
        thread.join(30)
        self.assertTrue(self.lock_is_free())
