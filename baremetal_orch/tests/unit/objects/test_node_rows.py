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
"""The batch path's Node objects (rows stored without coercion, values
coerced once for many nodes) are the objects the one-node path makes, and
no node object is kept alive by a reference cycle."""

import datetime
import gc
import weakref

from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import node as node_obj
from baremetal_orch.tests import base


class TestNodeRows(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.rows = [dbapi.create_node({
            'name': 'n%d' % i, 'driver': 'fake', 'provision_state': 'enroll',
            'tags': ['b', 'a'],
            'labels': {'rack': 'r1'}, 'driver_info': {'fake_duration': 1},
            'instance_info': {'image': 'x'}, 'deployed_groups': ['g0'],
            'maintenance': bool(i), 'last_error': None})
            for i in range(2)]
        self.uuids = sorted(r.uuid for r in self.rows)

    def test_from_rows_is_the_object_get_makes(self):
        nodes = node_obj.Node.from_rows(
            None, dbapi.list_node_dicts({'uuids': self.uuids}))
        self.assertEqual(self.uuids, sorted(nodes))
        for uuid, node in nodes.items():
            one = node_obj.Node.get(None, uuid)
            self.assertEqual(one.as_dict(), node.as_dict())
            self.assertEqual(
                {k: type(v) for k, v in one.as_dict().items()},
                {k: type(v) for k, v in node.as_dict().items()})
            self.assertEqual(datetime.timezone.utc, node.created_at.tzinfo)
            self.assertEqual(set(), node.obj_what_changed())
            self.assertEqual(one.obj_to_primitive(),
                             node.obj_to_primitive())

    def test_save_many_coerces_the_values_once_for_all(self):
        nodes = list(node_obj.Node.reserve_many(None, self.uuids,
                                                'host-1').values())
        node_obj.Node.save_many(nodes, 'host-1', {
            'provision_state': 'manageable', 'last_error': None})
        for node in nodes:
            stored = node_obj.Node.get(None, node.uuid)
            self.assertEqual('manageable', node.provision_state)
            self.assertEqual(stored.as_dict(), node.as_dict())
            self.assertEqual(set(), node.obj_what_changed())
        # A list written to many nodes is each node's own.
        node_obj.Node.save_many(nodes, 'host-1',
                                {'deployed_groups': ['g0', 'g1']})
        self.assertEqual(['g0', 'g1'], nodes[1].deployed_groups)
        self.assertIsNot(nodes[0].deployed_groups, nodes[1].deployed_groups)
        nodes[0].deployed_groups.append('g2')
        self.assertEqual(['g0', 'g1'], nodes[1].deployed_groups)
        # A value its field refuses is refused before any node changes.
        self.assertRaises(ValueError, node_obj.Node.save_many, nodes,
                          'host-1', {'id': 'not a number'})
        self.assertEqual('manageable', node_obj.Node.get(
            None, self.uuids[0]).provision_state)


class TestNoCycles(base.DbTestCase):
    """A node object read from the database is freed once nothing uses
    it, by reference counting: no reference cycle waits for a full pass
    of the garbage collector (oslo.versionedobjects' coerced lists and
    dicts refer to the object they were coerced for)."""

    def setUp(self):
        super().setUp()
        self.uuid = dbapi.create_node({
            'name': 'n0', 'driver': 'fake', 'provision_state': 'enroll',
            'tags': ['a'], 'labels': {'rack': 'r1'},
            'deployed_groups': ['g0']}).uuid
        # Only reference counting frees what this test drops.
        enabled = gc.isenabled()
        gc.disable()
        if enabled:
            self.addCleanup(gc.enable)

    def assertFreed(self, make):
        node = make()
        # The node's collections are the coerced ones, still coercing.
        node.tags.append('b')
        self.assertEqual(['a', 'b'], node.tags)
        self.assertRaises(ValueError, node.tags.append, object())
        ref = weakref.ref(node)
        del node
        self.assertIsNone(ref(), 'a reference cycle keeps the node alive')

    def test_from_rows(self):
        self.assertFreed(lambda: node_obj.Node.from_rows(
            None, dbapi.list_node_dicts({'uuids': [self.uuid]}))[self.uuid])

    def test_get(self):
        self.assertFreed(lambda: node_obj.Node.get(None, self.uuid))

    def test_set(self):
        def make():
            node = node_obj.Node.get(None, self.uuid)
            node.tags = ['a']
            node.labels = {'rack': 'r2'}
            return node
        self.assertFreed(make)

    def test_save_many(self):
        def make():
            node = node_obj.Node.reserve_many(None, [self.uuid],
                                              'host-1')[self.uuid]
            node_obj.Node.save_many([node], 'host-1',
                                    {'deployed_groups': ['g0', 'g1']})
            return node
        self.assertFreed(make)
