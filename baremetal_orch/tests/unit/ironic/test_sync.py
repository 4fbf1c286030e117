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
"""Tests of the Ironic node sync: fake Ironic over HTTP, a real sqlite DB."""

import logging
import threading
import time

import fixtures
from oslo_utils import uuidutils
import sqlalchemy as sa

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.ironic import client as ironic_client
from baremetal_orch.ironic import peers as ironic_peers
from baremetal_orch.ironic import sync
from baremetal_orch.tests import base as tests_base
from baremetal_orch.tests.unit.ironic import base
from baremetal_orch.tests.unit.ironic import fake_ironic

HOST = 'test-conductor'


class SyncTestCase(base.IronicTestCase, tests_base.DbTestCase):
    """A fake Ironic, a migrated sqlite database, this service registered."""

    shard_key = 'a'

    def setUp(self):
        super().setUp()
        self.config(group='ironic', shard_key=self.shard_key)
        dbapi.register_service(HOST, shard_key=self.shard_key)
        self.log = self.useFixture(fixtures.FakeLogger(
            name=sync.__name__, level=logging.INFO))
        self.ctx = orch_context.get_admin_context()

    def sync(self, host=HOST):
        return sync.sync(self.ctx, host, ironic_client.IronicClient())

    def records(self):
        return {n.ironic_uuid: n for n in dbapi.list_nodes()}

    def own_record(self, inode, conductor=HOST, **values):
        values = dict({'driver': 'ironic', 'provision_state': 'enroll',
                       'ironic_uuid': inode['uuid'], 'shard': inode['shard'],
                       'name': inode['name'], 'conductor': conductor},
                      **values)
        return dbapi.create_node(values)

    def assertCounts(self, expected, counts):
        self.assertEqual(expected, {k: v for k, v in counts.items() if v})


class TestCreate(SyncTestCase):

    def test_creates_the_records_of_its_shard_only(self):
        mine = [self.ironic.add_node('a-%d' % i, shard='a',
                                     provision_state='available')
                for i in range(3)]
        self.ironic.add_node('b-0', shard='b')
        self.ironic.add_node('none-0', shard=None)
        counts = self.sync()
        self.assertCounts({'listed': 3, 'created': 3}, counts)
        records = self.records()
        self.assertEqual(sorted(n['uuid'] for n in mine), sorted(records))
        for inode in mine:
            node = records[inode['uuid']]
            self.assertEqual(
                ('ironic', inode['uuid'], inode['name'], 'a', HOST,
                 'available', None, False),
                (node.driver, node.uuid, node.name, node.shard,
                 node.conductor, node.provision_state,
                 node.target_provision_state, node.maintenance))
        # Every listing sent carried the shard.
        listings = self.ironic.listings()
        self.assertTrue(listings)
        self.assertEqual({'a'}, {q.get('shard') for _m, _p, q, _h
                                 in listings})

    def test_fields_copied_from_ironic(self):
        inode = self.ironic.add_node(
            None, shard='a', provision_state='wait call-back',
            power_state='power on', maintenance=True,
            maintenance_reason='broken fan', last_error='it failed',
            conductor_group='g1')
        self.sync()
        node = self.records()[inode['uuid']]
        # No Ironic name: the record is named after the Ironic uuid.
        self.assertEqual(
            (inode['uuid'], 'deploying', 'active', 'power on', True,
             'broken fan', 'it failed', 'g1'),
            (node.name, node.provision_state, node.target_provision_state,
             node.power_state, node.maintenance, node.maintenance_reason,
             node.last_error, node.conductor_group))

    def test_a_taken_name_is_not_reused(self):
        other = dbapi.create_node({'name': 'n1', 'driver': 'fake',
                                   'provision_state': 'enroll'})
        inode = self.ironic.add_node('n1', shard='a')
        counts = self.sync()
        self.assertEqual(1, counts['created'])
        self.assertEqual(inode['uuid'], self.records()[inode['uuid']].name)
        self.assertEqual('n1', dbapi.get_node(other.uuid).name)
        self.assertIn('is named n1, a name another node record already has',
                      self.log.output)


class TestStateMap(SyncTestCase):
    """Ironic's provision states on this service's state machine."""

    TABLE = [
        ('enroll', 'enroll', None),
        ('verifying', 'verifying', 'manageable'),
        ('manageable', 'manageable', None),
        ('inspect wait', 'verifying', 'manageable'),
        ('inspect failed', 'enroll', None),
        ('clean wait', 'cleaning', 'available'),
        ('clean failed', 'clean failed', None),
        ('available', 'available', None),
        ('deploying', 'deploying', 'active'),
        ('wait call-back', 'deploying', 'active'),
        ('deploy failed', 'deploy failed', None),
        ('active', 'active', None),
        ('rescue', 'active', None),
        ('service wait', 'active', None),
        ('deleting', 'deleting', 'available'),
        ('error', 'error', None),
    ]

    def test_table(self):
        made = {self.ironic.add_node(None, shard='a',
                                     provision_state=ironic_state)['uuid']:
                (ironic_state, state, target)
                for ironic_state, state, target in self.TABLE}
        self.sync()
        seen = {made[u][0]: (n.provision_state, n.target_provision_state)
                for u, n in self.records().items()}
        self.assertEqual({i: (s, t) for i, s, t in self.TABLE}, seen)

    def test_unknown_state_keeps_the_record_state(self):
        inode = self.ironic.add_node('n', shard='a',
                                     provision_state='manageable')
        self.sync()
        inode['provision_state'] = 'some future state'
        self.sync()
        self.assertEqual('manageable',
                         self.records()[inode['uuid']].provision_state)


class TestUpdate(SyncTestCase):

    def test_changes_in_ironic_reach_the_record(self):
        changed = self.ironic.add_node('n1', shard='a')
        same = self.ironic.add_node('n2', shard='a')
        self.sync()
        before = self.records()[same['uuid']].updated_at
        changed.update(provision_state='active', maintenance=True,
                       maintenance_reason='r', name='renamed',
                       power_state='power on')
        counts = self.sync()
        self.assertCounts({'listed': 2, 'updated': 1, 'unchanged': 1},
                          counts)
        node = self.records()[changed['uuid']]
        self.assertEqual(('renamed', 'active', True, 'r', 'power on'),
                         (node.name, node.provision_state, node.maintenance,
                          node.maintenance_reason, node.power_state))
        # An unchanged record is not written.
        self.assertEqual(before, self.records()[same['uuid']].updated_at)

    def test_a_locked_record_is_not_touched(self):
        inode = self.ironic.add_node('n1', shard='a')
        self.sync()
        dbapi.reserve_node(inode['uuid'], HOST)
        inode['provision_state'] = 'active'
        counts = self.sync()
        self.assertCounts({'listed': 1, 'skipped_locked': 1}, counts)
        self.assertEqual('enroll',
                         self.records()[inode['uuid']].provision_state)

    def test_a_state_change_during_the_sync_wins(self):
        # The conductor moves the record after the sync read it and while
        # Ironic is listed: the older Ironic data must not overwrite it.
        inode = self.ironic.add_node('n1', shard='a')
        self.sync()
        inode['provision_state'] = 'manageable'
        client = ironic_client.IronicClient()
        real = client.list_nodes

        def list_nodes(**kwargs):
            nodes = real(**kwargs)
            dbapi.update_node(inode['uuid'], {'provision_state': 'verifying'})
            return nodes

        self.useFixture(fixtures.MockPatchObject(client, 'list_nodes',
                                                 list_nodes))
        counts = sync.sync(self.ctx, HOST, client)
        self.assertCounts({'listed': 1, 'skipped_changed': 1}, counts)
        self.assertEqual('verifying',
                         self.records()[inode['uuid']].provision_state)
        # The next sync brings it in line.
        self.sync()
        self.assertEqual('manageable',
                         self.records()[inode['uuid']].provision_state)


class TestOwnership(SyncTestCase):

    def test_a_record_of_another_service_is_left_alone(self):
        dbapi.register_service('conductor-old', shard_key='a')
        inode = self.ironic.add_node('n1', shard='a',
                                     provision_state='active')
        record = self.own_record(inode, conductor='conductor-old')
        counts = self.sync()
        self.assertCounts({'listed': 1, 'skipped_foreign': 1}, counts)
        node = dbapi.get_node(record.uuid)
        self.assertEqual(('conductor-old', 'enroll'),
                         (node.conductor, node.provision_state))
        self.assertIn('owned by service conductor-old: left alone',
                      self.log.output)
        self.assertIn('"baremetal-orch-manage node move %s --service %s"'
                      % (record.uuid, HOST), self.log.output)

    def test_records_without_a_live_owner_record_are_adopted(self):
        free = self.ironic.add_node('free', shard='a')
        orphan = self.ironic.add_node('orphan', shard='a')
        self.own_record(free, conductor=None)
        self.own_record(orphan, conductor='deleted-service')
        counts = self.sync()
        self.assertCounts({'listed': 2, 'adopted': 2}, counts)
        self.assertEqual({HOST}, {n.conductor
                                  for n in self.records().values()})

    def test_several_records_of_one_ironic_node_are_not_synced(self):
        inode = self.ironic.add_node('n1', shard='a',
                                     provision_state='active')
        self.own_record(inode, name='copy-1')
        self.own_record(inode, name='copy-2')
        counts = self.sync()
        self.assertCounts({'listed': 1, 'failed': 1}, counts)
        self.assertEqual({'enroll'}, {n.provision_state
                                      for n in dbapi.list_nodes()})


class TestDelete(SyncTestCase):

    def test_deleted_only_once_ironic_confirms(self):
        inode = self.ironic.add_node('n1', shard='a')
        self.sync()
        del self.ironic.nodes[inode['uuid']]
        counts = self.sync()
        self.assertCounts({'deleted': 1}, counts)
        self.assertEqual({}, self.records())
        # The confirmation asked for the node itself, not a listing.
        self.assertEqual(
            1, len(self.ironic.requests('GET', '/v1/nodes/' + inode['uuid'])))

    def test_a_node_that_changed_shard_is_kept(self):
        inode = self.ironic.add_node('n1', shard='a')
        self.sync()
        inode['shard'] = 'c'
        counts = self.sync()
        self.assertCounts({'kept_moved': 1}, counts)
        self.assertEqual([inode['uuid']], list(self.records()))
        self.assertIn('left shard a / conductor group None of service %s '
                      'but still exists in Ironic: record kept' % HOST,
                      self.log.output)

    def test_kept_when_ironic_cannot_confirm(self):
        inode = self.ironic.add_node('n1', shard='a')
        self.sync()
        del self.ironic.nodes[inode['uuid']]
        self.ironic.mock.register_uri(
            'GET', '%s/v1/nodes/%s' % (fake_ironic.ENDPOINT, inode['uuid']),
            status_code=500, json={'error_message': 'boom'})
        counts = self.sync()
        self.assertCounts({'failed': 1}, counts)
        self.assertEqual([inode['uuid']], list(self.records()))

    def test_locked_or_foreign_records_are_not_deleted(self):
        dbapi.register_service('conductor-old', shard_key='a')
        locked = self.ironic.add_node('locked', shard='a')
        self.sync()
        foreign = self.own_record(
            {'uuid': uuidutils.generate_uuid(), 'shard': 'a',
             'name': 'foreign'}, conductor='conductor-old')
        dbapi.reserve_node(locked['uuid'], HOST)
        self.ironic.nodes.clear()
        counts = self.sync()
        self.assertCounts({'skipped_locked': 1}, counts)
        self.assertEqual({locked['uuid'], foreign.ironic_uuid},
                         set(self.records()))


class TestUnsharded(SyncTestCase):
    """A service without a shard key (Ironic's base microversion)."""

    shard_key = None

    def test_no_shard_field_asked_and_the_record_shard_kept(self):
        inode = self.ironic.add_node('n1', shard='x')
        record = self.own_record(inode, shard='x')
        inode['provision_state'] = 'manageable'
        self.sync()
        (listing,) = self.ironic.listings()
        self.assertNotIn('shard', listing[2])
        self.assertNotIn('shard', listing[2]['fields'].split(','))
        node = dbapi.get_node(record.uuid)
        self.assertEqual(('x', 'manageable'),
                         (node.shard, node.provision_state))


class TestPeerList(SyncTestCase):
    """The deprecated hash ring of [ironic]peer_list."""

    shard_key = None

    def setUp(self):
        super().setUp()
        self.config(group='ironic', peer_list=[HOST, 'peer-2'])
        dbapi.register_service('peer-2')
        self.inodes = [self.ironic.add_node('n%d' % i) for i in range(24)]
        self.ring = ironic_peers.PeerRing([HOST, 'peer-2'])

    def owners(self):
        return {n.ironic_uuid: n.conductor for n in dbapi.list_nodes()}

    def test_nodes_spread_on_the_ring(self):
        counts = self.sync()
        mine = {n['uuid'] for n in self.inodes
                if self.ring.owner(n['uuid']) == HOST}
        self.assertTrue(0 < len(mine) < len(self.inodes))
        self.assertEqual((len(mine), len(self.inodes) - len(mine)),
                         (counts['created'], counts['skipped_ring']))
        self.sync('peer-2')
        self.assertEqual({n['uuid']: self.ring.owner(n['uuid'])
                          for n in self.inodes}, self.owners())

    def test_only_unassigned_nodes_move_when_a_peer_is_down(self):
        self.sync()
        self.sync('peer-2')
        theirs = {u for u, h in self.owners().items() if h == 'peer-2'}
        # peer-2 stops; one of its records loses its owner.
        dbapi.update_service('peer-2', {'forced_down': True})
        freed = sorted(theirs)[0]
        dbapi.update_node(self.records()[freed].uuid, {'conductor': None})
        extra = self.ironic.add_node('new-node')
        counts = self.sync()
        owners = self.owners()
        self.assertEqual(HOST, owners[freed])
        self.assertEqual(HOST, owners[extra['uuid']])
        self.assertEqual({'peer-2'}, {owners[u] for u in theirs - {freed}})
        self.assertEqual(
            (1, 1, len(theirs) - 1, 0),
            (counts['created'], counts['adopted'], counts['skipped_foreign'],
             counts['skipped_ring']))


class TestBatching(SyncTestCase):
    """The number of SQL statements does not grow with the nodes."""

    def statements(self, func):
        seen = []

        def count(conn, cursor, statement, params, context, executemany):
            seen.append(statement)

        engine = sqla_api.get_engine()
        sa.event.listen(engine, 'before_cursor_execute', count)
        try:
            func()
        finally:
            sa.event.remove(engine, 'before_cursor_execute', count)
        return [s for s in seen if s.split()[0] in (
            'SELECT', 'INSERT', 'UPDATE', 'DELETE')]

    def run_with(self, count, prefix):
        inodes = [self.ironic.add_node('%s-%d' % (prefix, i), shard='a')
                  for i in range(count)]
        created = self.statements(self.sync)
        for inode in inodes:
            inode['provision_state'] = 'manageable'
        updated = self.statements(self.sync)
        return len(created), len(updated)

    def test_statements_independent_of_node_count(self):
        few = self.run_with(3, 'few')
        self.ironic.nodes.clear()
        self.sync()  # not measured: deletes one by one (Ironic confirms)
        many = self.run_with(60, 'many')
        self.assertEqual(few, many)


class TestSyncJob(SyncTestCase):

    def test_enabled_table(self):
        for ironic, interval, expected in (
                ({'endpoint_override': None, 'auth_type': None}, 60, False),
                ({'endpoint_override': 'http://x', 'auth_type': None}, 60,
                 True),
                ({'endpoint_override': None, 'auth_type': 'password'}, 60,
                 True),
                ({'endpoint_override': 'http://x'}, 0, False),
                ({'endpoint_override': 'http://x'}, -1, False)):
            self.config(group='ironic', **ironic)
            self.config(group='conductor', sync_interval=interval)
            self.assertEqual(expected, sync.enabled(), (ironic, interval))

    def test_one_run_at_a_time_and_failures_logged(self):
        job = sync.SyncJob(HOST, self.ctx)
        self.ironic.add_node('n1', shard='a')
        started, release = threading.Event(), threading.Event()
        real = job.client.list_nodes

        def slow(**kwargs):
            started.set()
            release.wait(30)
            return real(**kwargs)

        with fixtures.MockPatchObject(job.client, 'list_nodes', slow):
            first = threading.Thread(target=job)
            first.start()
            started.wait(30)
            self.assertIsNone(job())  # skipped: the first is running
            release.set()
            first.join(30)
        self.assertEqual(1, job.last['created'])
        self.ironic.mock.register_uri(
            'GET', fake_ironic.ENDPOINT + '/v1/nodes', status_code=500,
            json={'error_message': 'boom'})
        self.assertIsNone(job())
        self.assertIn('Ironic sync of service %s failed' % HOST,
                      self.log.output)


class TestConductorStartup(SyncTestCase):
    """init_host: the peer_list warning, the sync job, a start-up sync."""

    def start(self):
        from baremetal_orch.conductor import manager
        mgr = manager.ConductorManager(HOST)
        mgr.init_host()
        self.addCleanup(mgr.del_host, False)
        return mgr

    def test_sync_job_and_start_up_sync(self):
        self.config(group='conductor', sync_interval=3600)
        inode = self.ironic.add_node('n1', shard='a')
        mgr = self.start()
        self.assertIn(('ironic_sync', 3600, mgr.ironic_sync),
                      mgr.periodics.extra_jobs)
        # The start-up sync runs in the background: poll (bounded).
        deadline = time.monotonic() + 30
        while (inode['uuid'] not in self.records()
               and time.monotonic() < deadline):
            time.sleep(0.05)
        self.assertEqual(HOST, self.records()[inode['uuid']].conductor)

    def test_no_job_when_disabled_and_peer_list_warns(self):
        self.config(group='conductor', sync_interval=-1)
        self.config(group='ironic', peer_list=['h1', 'h2'])
        peers_log = self.useFixture(fixtures.FakeLogger(
            name=ironic_peers.__name__, level=logging.WARNING))
        mgr = self.start()
        self.assertIsNone(mgr.ironic_sync)
        self.assertNotIn('ironic_sync',
                         [name for name, _i, _f in mgr.periodics.extra_jobs])
        self.assertIn('[ironic]peer_list is deprecated', peers_log.output)


class TestRefusedInsert(SyncTestCase):

    def test_a_raced_insert_does_not_lose_the_others(self):
        inodes = [self.ironic.add_node('n%d' % i, shard='a')
                  for i in range(3)]
        # Another writer took the uuid of the second node after the sync
        # checked: that row fails alone.
        real = dbapi.node_ids_by

        def taken(column, values):
            found = real(column, values)
            if column == 'uuid':
                dbapi.create_node({'uuid': inodes[1]['uuid'],
                                   'driver': 'fake',
                                   'provision_state': 'enroll'})
            return found

        self.useFixture(fixtures.MockPatchObject(dbapi, 'node_ids_by', taken))
        counts = self.sync()
        self.assertCounts({'listed': 3, 'created': 2, 'failed': 1}, counts)
        self.assertRaises(exception.NodeNotFound, dbapi.get_node, 'n1')
