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
"""Concurrent updates and deletes of one row on real MariaDB and
PostgreSQL: a request that loses the race gets NotFound (404), never a
StaleDataError (500), and of several deletes of one row exactly one
succeeds (found by the notification catalogue test over HTTP). Concurrent
PATCHes (read, apply, write) lose no update and their ``test`` holds.
Admissions that share a node, and a delete of a node being admitted, run
one after the other even when the first commits late."""

import copy
import threading
import time

from oslo_utils import uuidutils
import sqlalchemy as sa
import testscenarios

from baremetal_orch.api.controllers.v1 import chassis as chassis_api
from baremetal_orch.api.controllers.v1 import nodes as nodes_api
from baremetal_orch.api import utils as api_utils
from baremetal_orch.common import context
from baremetal_orch.common import exception
from baremetal_orch.conductor import admission
from baremetal_orch.db import api as dbapi
from baremetal_orch.db import migration
from baremetal_orch import objects
from baremetal_orch.objects import chassis as chassis_obj
from baremetal_orch.objects import node as node_obj
from baremetal_orch.objects import port as port_obj
from baremetal_orch.objects import service as service_obj
from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import databases

load_tests = testscenarios.load_tests_apply_scenarios

ROUNDS = 8
THREADS = 6


class ServerDatabaseTestCase(base.FunctionalTestCase):
    """On MariaDB, then on PostgreSQL: a migrated throw-away database,
    the objects registered and an admin context."""

    scenarios = [('mysql', {'backend': 'mysql'}),
                 ('postgresql', {'backend': 'postgresql'})]

    def setUp(self):
        super().setUp()
        databases.use_database(self, self.backend)
        migration.upgrade()
        objects.register_all()
        self.context = context.get_admin_context()


class TestRowRaces(ServerDatabaseTestCase):

    def race(self, calls):
        """Run the calls at once; the outcome of each: 'ok', the name of
        the exception class."""
        barrier = threading.Barrier(len(calls))
        outcomes = [None] * len(calls)

        def run(i, call):
            barrier.wait(30)
            try:
                call()
                outcomes[i] = 'ok'
            except Exception as e:
                outcomes[i] = type(e).__name__
        threads = [threading.Thread(target=run, args=(i, c))
                   for i, c in enumerate(calls)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        return outcomes

    def check(self, outcomes, deletes, not_found):
        self.assertEqual(1, outcomes[:deletes].count('ok'), outcomes)
        self.assertEqual(set(), set(outcomes) - {'ok', not_found},
                         outcomes)

    def node(self, name, **values):
        return dbapi.create_node(dict({'name': name, 'driver': 'fake',
                                       'provision_state': 'enroll'},
                                      **values))

    def test_port(self):
        node = self.node('n')
        for r in range(ROUNDS):
            port = dbapi.create_port({'node_id': node.id,
                                      'address': '52:54:00:00:00:%02x' % r})
            deletes = THREADS // 2
            calls = [lambda: dbapi.destroy_port(port.uuid)] * deletes + [
                (lambda i=i: dbapi.update_port(port.uuid, {'extra': {
                    'i': i}})) for i in range(THREADS - deletes)]
            self.check(self.race(calls), deletes, 'PortNotFound')
            self.assertRaises(exception.PortNotFound, dbapi.get_port,
                              port.uuid)

    def test_chassis(self):
        for r in range(ROUNDS):
            chassis = dbapi.create_chassis({'description': 'c%d' % r})
            calls = [lambda: dbapi.destroy_chassis(chassis.uuid)] + [
                (lambda i=i: dbapi.update_chassis(
                    chassis.uuid, {'description': 'd%d' % i}))
                for i in range(THREADS - 1)]
            self.check(self.race(calls), 1, 'ChassisNotFound')

    def test_node_with_tags_and_labels(self):
        for r in range(ROUNDS):
            node = self.node('race-%d' % r, tags=['a'], labels={'k': 'v'})
            deletes = 2
            calls = [lambda: dbapi.destroy_node(node.uuid)] * deletes + [
                (lambda i=i: dbapi.update_node(node.uuid, {
                    'tags': ['t%d' % i], 'labels': {'k': str(i)},
                    'name': 'race-%d-%d' % (r, i)}))
                for i in range(THREADS - deletes)]
            self.check(self.race(calls), deletes, 'NodeNotFound')
            self.assertEqual([], dbapi.list_nodes(
                {'names': ['race-%d' % r] + ['race-%d-%d' % (r, i)
                                             for i in range(THREADS)]}))


class TestPatchRaces(ServerDatabaseTestCase):
    """Concurrent read-modify-writes (what a PATCH does) of one row: no
    update is lost, and of concurrent [test, replace] exactly one wins."""

    WRITERS = 16
    RACERS = 8

    def patch(self, updating, patch, fields):
        """Apply a JSON patch to ``fields`` of the object that
        ``updating()`` (``Node.updating(...)``...) yields, as the API's
        PATCH does."""
        def change(obj):
            doc = {f: copy.deepcopy(obj[f]) for f in fields}
            new = api_utils.apply_patch(doc, patch)
            for field in fields:
                if new[field] != doc[field]:
                    obj[field] = new[field]
        with updating() as found:
            # What the request found (then the patch applies to what is).
            pass
        api_utils.update_atomically(self.context, None, found, updating(),
                                    change)

    def race(self, calls):
        return TestRowRaces.race(self, calls)

    def rows(self):
        node = dbapi.create_node({'name': 'n', 'driver': 'fake',
                                  'provision_state': 'enroll',
                                  'extra': {'v': 0}})
        chassis = dbapi.create_chassis({'extra': {'v': 0}})
        port = dbapi.create_port({'node_id': node.id, 'extra': {'v': 0},
                                  'address': '52:54:00:00:00:01'})
        ctx = self.context
        return [
            (lambda: node_obj.Node.updating(ctx, node.uuid),
             lambda: dbapi.get_node(node.uuid)),
            (lambda: chassis_obj.Chassis.updating(ctx, chassis.uuid),
             lambda: dbapi.get_chassis(chassis.uuid)),
            (lambda: port_obj.Port.updating(ctx, port.uuid),
             lambda: dbapi.get_port(port.uuid))]

    def test_no_update_lost(self):
        node = dbapi.create_node({'name': 't', 'driver': 'fake',
                                  'provision_state': 'enroll'})
        outcomes = self.race([
            (lambda i=i: self.patch(
                lambda: node_obj.Node.updating(self.context, node.uuid),
                [{'op': 'add', 'path': '/tags/-', 'value': 't%02d' % i},
                 {'op': 'add', 'path': '/extra/k%d' % i, 'value': i}],
                ('tags', 'extra')))
            for i in range(self.WRITERS)])
        self.assertEqual(['ok'] * self.WRITERS, outcomes)
        row = dbapi.get_node(node.uuid)
        self.assertEqual(['t%02d' % i for i in range(self.WRITERS)],
                         sorted(t.tag for t in row.tags))
        self.assertEqual({'k%d' % i: i for i in range(self.WRITERS)},
                         row.extra)
        for updating, read in self.rows():
            outcomes = self.race([
                (lambda i=i, updating=updating: self.patch(
                    updating, [{'op': 'add', 'path': '/extra/k%d' % i,
                                'value': i}], ('extra',)))
                for i in range(self.WRITERS)])
            self.assertEqual(['ok'] * self.WRITERS, outcomes)
            self.assertEqual(dict({'k%d' % i: i
                                   for i in range(self.WRITERS)}, v=0),
                             read().extra)

    def test_test_op_holds(self):
        for updating, read in self.rows():
            for value in range(1, 4):
                outcomes = self.race([
                    (lambda updating=updating, value=value: self.patch(
                        updating,
                        [{'op': 'test', 'path': '/extra/v',
                          'value': value - 1},
                         {'op': 'replace', 'path': '/extra/v',
                          'value': value}], ('extra',)))
                    for _i in range(self.RACERS)])
                self.assertEqual(1, outcomes.count('ok'), outcomes)
                self.assertEqual(self.RACERS - 1,
                                 outcomes.count('PatchTestFailed'),
                                 outcomes)
                self.assertEqual(value, read().extra['v'])
        dbapi.register_service('cond-a')
        outcomes = self.race([
            (lambda i=i: self.patch(
                lambda: service_obj.Service.updating(self.context, 'cond-a'),
                [{'op': 'test', 'path': '/disabled', 'value': False},
                 {'op': 'replace', 'path': '/disabled', 'value': True},
                 {'op': 'replace', 'path': '/disabled_reason',
                  'value': 'r%d' % i}], ('disabled', 'disabled_reason')))
            for i in range(self.RACERS)])
        self.assertEqual(1, outcomes.count('ok'), outcomes)
        self.assertEqual('r%d' % outcomes.index('ok'),
                         dbapi.get_service('cond-a').disabled_reason)


class TestAdmissionRaces(ServerDatabaseTestCase):
    """An admission whose commit comes late (it has inserted its action,
    not yet committed it) while a second request on one of its nodes runs:
    the second sees the action and is refused, whatever the actions' ids
    (on a server database a lower id may commit after a higher one)."""

    #: How long the first admission's commit waits.
    DELAY = 1.5

    def setUp(self):
        super().setUp()
        self.nodes = [dbapi.create_node({
            'name': 'n%d' % i, 'driver': 'fake',
            'provision_state': 'active'}) for i in range(3)]
        self.inserted = threading.Event()
        engine = dbapi.get_engine()
        sa.event.listen(engine, 'after_cursor_execute', self._seen)
        sa.event.listen(engine, 'commit', self._late_commit)
        self.addCleanup(sa.event.remove, engine, 'after_cursor_execute',
                        self._seen)
        self.addCleanup(sa.event.remove, engine, 'commit',
                        self._late_commit)

    def _seen(self, conn, cursor, statement, *args):
        if (threading.current_thread().name == 'late'
                and statement.lstrip().upper().startswith(
                    'INSERT INTO ACTIONS')):
            conn.info['action_inserted'] = True

    def _late_commit(self, conn):
        if conn.info.pop('action_inserted', False):
            self.inserted.set()
            time.sleep(self.DELAY)

    def admit(self, *names):
        return admission.admit(
            self.context, uuidutils.generate_uuid(), 'update_labels',
            {'target_nodes': list(names)}, 'cond-a')

    def race(self, second):
        """Admit an action on n0 and n1 that commits late and, once its
        row is inserted, run ``second``; the outcome of each."""
        outcomes = {}

        def run(key, call):
            try:
                call()
                outcomes[key] = 'ok'
            except Exception as e:
                outcomes[key] = type(e).__name__
        late = threading.Thread(target=run, name='late',
                                args=('late', lambda: self.admit('n0', 'n1')))
        late.start()
        self.assertTrue(self.inserted.wait(30))
        run('second', second)
        late.join(60)
        return outcomes

    def test_overlapping_admission_is_refused(self):
        outcomes = self.race(lambda: self.admit('n1', 'n2'))
        self.assertEqual({'late': 'ok', 'second': 'NodesBusy'}, outcomes)
        self.assertEqual(1, len(dbapi.list_active_actions()))

    def test_apart_admissions_do_not_wait(self):
        started = time.monotonic()
        outcomes = self.race(lambda: self.admit('n2'))
        # The second ran while the first waited to commit.
        self.assertEqual({'late': 'ok', 'second': 'ok'}, outcomes)
        self.assertEqual(2, len(dbapi.list_active_actions()))
        self.assertLess(time.monotonic() - started, self.DELAY * 2)

    def test_node_being_admitted_is_not_deleted(self):
        def delete():
            with node_obj.Node.updating(self.context, 'n1') as node:
                nodes_api._refuse_if_held(node, 'deleted')
                node.destroy()
        outcomes = self.race(delete)
        self.assertEqual({'late': 'ok', 'second': 'NodeHeldByAction'},
                         outcomes)
        self.assertEqual('n1', dbapi.get_node('n1').name)


class TestTotalPaging(ServerDatabaseTestCase):
    """Paging over rows whose sort value is null or equal (or equal but
    for case: MariaDB's collation) on real MariaDB and PostgreSQL, whose
    defaults order nulls differently: every row exactly once, both ways.
    """

    def walk_both_ways(self, list_rows, sort_keys):
        """Every row exactly once with each sort key, both ways, pages of
        2; ascending is descending reversed."""
        expected = sorted(r.uuid for r in list_rows())
        for sort_key in sort_keys:
            walks = {}
            for sort_dir in ('asc', 'desc'):
                seen, marker = [], None
                while True:
                    page = list_rows(limit=2, marker=marker,
                                     sort_key=sort_key, sort_dir=sort_dir)
                    seen.extend(r.uuid for r in page)
                    if len(page) < 2:
                        break
                    marker = page[-1].uuid
                self.assertEqual(expected, sorted(seen),
                                 '%s %s' % (sort_key, sort_dir))
                walks[sort_dir] = seen
            self.assertEqual(walks['asc'], walks['desc'][::-1], sort_key)

    def test_nodes(self):
        racks = [None, 'r1', 'R1', None, 'r0', 'r2', 'r1', None, 'a', None]
        for i, rack in enumerate(racks):
            node = dbapi.create_node({
                'name': None if i % 3 == 0 else 'n%d' % i, 'driver': 'fake',
                'provision_state': ('enroll', 'manageable')[i % 2],
                'rack_name': rack, 'shard': racks[-1 - i],
                'conductor_group': rack and rack.upper()})
            if i % 2:
                dbapi.update_node(node.uuid, {'extra': {'i': i}})
        # Every documented sort_key of GET /v1/nodes.
        self.walk_both_ways(dbapi.list_nodes, nodes_api.SORT_KEYS)

    def test_chassis(self):
        # Half of them updated: updated_at null for the others (chassis by
        # updated_at showed 5 of 7).
        for i in range(7):
            row = dbapi.create_chassis({'description': None})
            if i % 2:
                dbapi.update_chassis(row.uuid, {'description': 'd'})
        self.walk_both_ways(dbapi.list_chassis, chassis_api.SORT_KEYS)
