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
"""Nodes, ports, chassis and services in the database."""

import datetime

from oslo_utils import timeutils
from oslo_utils import uuidutils
from sqlalchemy.orm import exc as orm_exc

from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.tests import base


class TestNodes(base.DbTestCase):

    def test_create_get_by_uuid_and_name(self):
        node = self.create_node(name='n1', tags=['b', 'a', 'a'],
                                labels={'k': 'v'}, rack_name='r1',
                                driver_info={'x': 1})
        self.assertTrue(uuidutils.is_uuid_like(node.uuid))
        for ident in (node.uuid, 'n1'):
            got = dbapi.get_node(ident)
            self.assertEqual(node.id, got.id)
        self.assertEqual(['a', 'b'], sorted(t.tag for t in got.tags))
        self.assertEqual({'k': 'v'}, {lb.key: lb.value for lb in got.labels})
        self.assertEqual({'x': 1}, got.driver_info)
        self.assertEqual('r1', got.rack_name)
        self.assertIsNotNone(got.created_at)

    def test_get_unknown(self):
        self.assertRaises(exception.NodeNotFound, dbapi.get_node, 'nope')
        self.assertRaises(exception.NodeNotFound, dbapi.get_node,
                          uuidutils.generate_uuid())

    def test_duplicate_name(self):
        self.create_node(name='n1')
        e = self.assertRaises(exception.DuplicateName, self.create_node,
                              name='n1')
        self.assertIn('n1', str(e))
        self.assertEqual(1, len(dbapi.list_nodes()))

    def test_duplicate_uuid(self):
        node = self.create_node(name='n1')
        e = self.assertRaises(exception.Conflict, self.create_node,
                              name='n2', uuid=node.uuid)
        self.assertNotIsInstance(e, exception.DuplicateName)
        self.assertIn(node.uuid, str(e))

    def test_update_replaces_tags_and_labels(self):
        node = self.create_node(name='n1', tags=['a'], labels={'k': 'v'})
        got = dbapi.update_node(node.uuid, {'tags': ['x', 'y'],
                                            'labels': {'k2': 'v2'},
                                            'rack_name': 'r9'})
        self.assertEqual({'x', 'y'}, {t.tag for t in got.tags})
        self.assertEqual({'k2': 'v2'},
                         {lb.key: lb.value for lb in got.labels})
        self.assertEqual('r9', got.rack_name)
        self.assertIsNotNone(got.updated_at)
        # Not given: kept.
        got = dbapi.update_node('n1', {'shard': 's1'})
        self.assertEqual({'x', 'y'}, {t.tag for t in got.tags})

    def test_update_duplicate_name(self):
        self.create_node(name='n1')
        node = self.create_node(name='n2')
        self.assertRaises(exception.DuplicateName, dbapi.update_node,
                          node.uuid, {'name': 'n1'})
        self.assertEqual('n2', dbapi.get_node(node.uuid).name)

    def test_destroy(self):
        node = self.create_node(name='n1', tags=['a'], labels={'k': 'v'})
        dbapi.destroy_node('n1')
        self.assertRaises(exception.NodeNotFound, dbapi.get_node, node.uuid)
        # Tags and labels went with it: a new node may reuse them freely.
        self.create_node(name='n1', tags=['a'], labels={'k': 'v'})
        self.assertEqual(['n1'], dbapi.resolve_selectors([]))

    def test_destroy_with_ports_refused(self):
        node = self.create_node(name='n1')
        dbapi.create_port({'node_id': node.id,
                           'address': '52:54:00:00:00:01'})
        self.assertRaises(exception.NodeHasPorts, dbapi.destroy_node, 'n1')
        self.assertEqual(node.id, dbapi.get_node('n1').id)

    def test_destroy_locked_refused(self):
        self.create_node(name='n1')
        dbapi.reserve_node('n1', 'host-a')
        e = self.assertRaises(exception.NodeLocked, dbapi.destroy_node, 'n1')
        self.assertIn('host-a', str(e))
        dbapi.get_node('n1')

    def test_list_filters(self):
        self.create_node(name='a', shard='s1', rack_name='r1', tags=['t1'],
                         owner='p1', maintenance=True)
        self.create_node(name='b', shard='s2', rack_name='r1',
                         tags=['t2'], provision_state='active')
        self.create_node(name='c', rack_name='r2', tags=['t1', 't2'],
                         console_enabled=True)

        def names(**filters):
            return [n.name for n in dbapi.list_nodes(filters,
                                                     sort_key='name')]
        self.assertEqual(['a', 'b', 'c'], names())
        self.assertEqual(['a'], names(shard='s1'))
        self.assertEqual(['a', 'b'], names(shard=['s1', 's2']))
        self.assertEqual(['a', 'b'], names(sharded=True))
        self.assertEqual(['c'], names(sharded=False))
        self.assertEqual(['a', 'b'], names(rack_name='r1'))
        self.assertEqual(['a', 'c'], names(tags=['t1']))
        self.assertEqual(['a', 'b', 'c'], names(tags=['t1', 't2']))
        self.assertEqual(['a'], names(owner='p1'))
        self.assertEqual(['a'], names(maintenance=True))
        self.assertEqual(['b', 'c'], names(maintenance=False))
        self.assertEqual(['b'], names(provision_state='active'))
        # What a conductor's start looks for (restore_consoles).
        self.assertEqual(['c'], names(console_enabled=True))
        self.assertEqual(['b', 'c'], names(names=['b', 'c', 'zz']))

    def test_list_paging_and_sorting(self):
        for name in ('c', 'a', 'b', 'd'):
            self.create_node(name=name)
        page = dbapi.list_nodes(limit=2, sort_key='name')
        self.assertEqual(['a', 'b'], [n.name for n in page])
        page = dbapi.list_nodes(limit=2, marker=page[-1].uuid,
                                sort_key='name')
        self.assertEqual(['c', 'd'], [n.name for n in page])
        page = dbapi.list_nodes(sort_key='name', sort_dir='desc')
        self.assertEqual(['d', 'c', 'b', 'a'], [n.name for n in page])
        self.assertRaises(exception.InvalidParameterValue, dbapi.list_nodes,
                          marker=uuidutils.generate_uuid())
        self.assertRaises(exception.InvalidParameterValue, dbapi.list_nodes,
                          sort_key='no_such_column')

    def test_reserve_release(self):
        self.create_node(name='n1')
        node = dbapi.reserve_node('n1', 'host-a')
        self.assertEqual('host-a', node.reservation)
        e = self.assertRaises(exception.NodeLocked, dbapi.reserve_node,
                              'n1', 'host-b')
        self.assertIn('host-a', str(e))
        # Even the holder cannot take it twice.
        self.assertRaises(exception.NodeLocked, dbapi.reserve_node, 'n1',
                          'host-a')
        # Releasing as someone else does nothing.
        dbapi.release_node('n1', 'host-b')
        self.assertEqual('host-a', dbapi.get_node('n1').reservation)
        dbapi.release_node('n1', 'host-a')
        self.assertIsNone(dbapi.get_node('n1').reservation)
        self.assertEqual('host-b',
                         dbapi.reserve_node('n1', 'host-b').reservation)

    def test_clear_reservations(self):
        self.create_node(name='n1')
        self.create_node(name='n2')
        dbapi.reserve_node('n1', 'host-a')
        dbapi.reserve_node('n2', 'host-b')
        dbapi.clear_reservations('host-a')
        self.assertIsNone(dbapi.get_node('n1').reservation)
        self.assertEqual('host-b', dbapi.get_node('n2').reservation)

    def test_count_nodes_by_shard(self):
        self.create_node(name='a', shard='s1')
        self.create_node(name='b', shard='s1')
        self.create_node(name='c')
        self.assertEqual([(None, 1), ('s1', 2)],
                         sorted(dbapi.count_nodes_by_shard(),
                                key=lambda x: (x[0] is not None, x[0])))


class TestConcurrentChanges(base.DbTestCase):
    """Races need MariaDB or PostgreSQL (functional test_db_races); here
    the safety net: a row changed under the transaction is a 409."""

    def test_stale_data_is_a_conflict(self):
        def change():
            with sqla_api.writer():
                raise orm_exc.StaleDataError('0 rows matched')
        e = self.assertRaises(exception.Conflict, change)
        self.assertEqual(409, e.status)
        self.assertIn('at the same time', str(e))


class TestPorts(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.node = self.create_node(name='n1', owner='p1')
        self.other = self.create_node(name='n2', owner='p2')

    def _port(self, address, node=None, **kw):
        values = {'node_id': (node or self.node).id, 'address': address}
        values.update(kw)
        return dbapi.create_port(values)

    def test_crud(self):
        port = self._port('52:54:00:00:00:01', extra={'a': 1})
        got = dbapi.get_port(port.uuid)
        self.assertEqual('52:54:00:00:00:01', got.address)
        self.assertTrue(got.pxe_enabled)
        self.assertEqual(self.node.uuid, got.node.uuid)
        got = dbapi.update_port(port.uuid, {'pxe_enabled': False,
                                            'address': '52:54:00:00:00:02'})
        self.assertFalse(got.pxe_enabled)
        self.assertEqual('52:54:00:00:00:02', got.address)
        dbapi.destroy_port(port.uuid)
        self.assertRaises(exception.PortNotFound, dbapi.get_port, port.uuid)
        self.assertRaises(exception.PortNotFound, dbapi.destroy_port,
                          port.uuid)

    def test_duplicate_address(self):
        self._port('52:54:00:00:00:01')
        e = self.assertRaises(exception.Conflict, self._port,
                              '52:54:00:00:00:01', node=self.other)
        self.assertIn('52:54:00:00:00:01', str(e))
        port = self._port('52:54:00:00:00:02')
        self.assertRaises(exception.Conflict, dbapi.update_port, port.uuid,
                          {'address': '52:54:00:00:00:01'})
        self.assertEqual('52:54:00:00:00:02',
                         dbapi.get_port(port.uuid).address)

    def test_duplicate_uuid(self):
        port = self._port('52:54:00:00:00:01')
        e = self.assertRaises(exception.Conflict, self._port,
                              '52:54:00:00:00:02', uuid=port.uuid)
        self.assertIn(port.uuid, str(e))

    def test_list_filters(self):
        p1 = self._port('52:54:00:00:00:01')
        p2 = self._port('52:54:00:00:00:02', node=self.other)
        uuids = lambda **f: {p.uuid for p in dbapi.list_ports(f)}  # noqa
        self.assertEqual({p1.uuid, p2.uuid}, uuids())
        self.assertEqual({p2.uuid}, uuids(node_id=self.other.id))
        self.assertEqual({p1.uuid}, uuids(address='52:54:00:00:00:01'))
        self.assertEqual({p1.uuid}, uuids(owner='p1'))
        self.assertEqual(set(), uuids(owner='p3'))
        page = dbapi.list_ports(limit=1, sort_key='address')
        self.assertEqual([p1.uuid], [p.uuid for p in page])
        page = dbapi.list_ports(limit=1, marker=p1.uuid, sort_key='address')
        self.assertEqual([p2.uuid], [p.uuid for p in page])


class TestChassis(base.DbTestCase):

    def test_crud(self):
        chassis = dbapi.create_chassis({'description': 'c1'})
        self.assertEqual('c1', dbapi.get_chassis(chassis.uuid).description)
        got = dbapi.update_chassis(chassis.uuid, {'description': 'c2',
                                                  'extra': {'a': 'b'}})
        self.assertEqual(('c2', {'a': 'b'}), (got.description, got.extra))
        self.assertEqual([chassis.uuid],
                         [c.uuid for c in dbapi.list_chassis()])
        dbapi.destroy_chassis(chassis.uuid)
        self.assertRaises(exception.ChassisNotFound, dbapi.get_chassis,
                          chassis.uuid)
        self.assertRaises(exception.ChassisNotFound, dbapi.update_chassis,
                          chassis.uuid, {'description': 'x'})

    def test_duplicate_uuid(self):
        chassis = dbapi.create_chassis({'description': 'c1'})
        e = self.assertRaises(exception.Conflict, dbapi.create_chassis,
                              {'uuid': chassis.uuid})
        self.assertIn(chassis.uuid, str(e))
        self.assertEqual(1, len(dbapi.list_chassis()))

    def test_destroy_not_empty(self):
        chassis = dbapi.create_chassis({})
        node = self.create_node(name='n1', chassis_id=chassis.id)
        self.assertEqual(chassis.uuid, dbapi.get_node('n1').chassis_uuid)
        self.assertRaises(exception.ChassisNotEmpty, dbapi.destroy_chassis,
                          chassis.uuid)
        dbapi.update_node(node.uuid, {'chassis_id': None})
        dbapi.destroy_chassis(chassis.uuid)
        self.assertIsNone(dbapi.get_node('n1').chassis_uuid)


class TestServices(base.DbTestCase):

    def test_register_heartbeat_update(self):
        svc = dbapi.register_service('h1', shard_key='s1',
                                     conductor_group='g')
        self.assertEqual(('s1', 'g', False, False),
                         (svc.shard_key, svc.conductor_group,
                          svc.forced_down, svc.disabled))
        first = svc.last_seen_at
        # Registering again refreshes, never duplicates.
        svc = dbapi.register_service('h1', shard_key='s2')
        self.assertEqual('s2', svc.shard_key)
        self.assertEqual(['h1'], [s.host for s in dbapi.list_services()])
        dbapi.heartbeat('h1')
        self.assertGreaterEqual(dbapi.get_service('h1').last_seen_at, first)
        self.assertRaises(exception.ServiceNotFound, dbapi.heartbeat, 'h2')
        svc = dbapi.update_service('h1', {'disabled': True})
        self.assertTrue(svc.disabled)
        self.assertRaises(exception.ServiceNotFound, dbapi.update_service,
                          'h2', {'disabled': True})

    def test_liveness(self):
        dbapi.register_service('alive')
        dbapi.register_service('stale')
        dbapi.register_service('down')
        dbapi.register_service('off')
        old = timeutils.utcnow() - datetime.timedelta(seconds=120)
        dbapi.update_service('stale', {'last_seen_at': old})
        dbapi.update_service('down', {'forced_down': True})
        dbapi.update_service('off', {'disabled': True})
        self.assertEqual(['alive'],
                         [s.host for s in dbapi.live_services(60)])
        stale = dbapi.get_service('stale')
        self.assertFalse(dbapi.is_alive(stale, 60))
        self.assertTrue(dbapi.is_alive(stale, 600))
