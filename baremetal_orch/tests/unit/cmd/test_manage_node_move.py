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
"""baremetal-orch-manage node move: the guards of the Ironic shards
specification, the one-transaction move, and an injected failure between
its two updates."""

from unittest import mock

import fixtures
from oslo_utils import uuidutils
import sqlalchemy as sa

from baremetal_orch.cmd import manage
from baremetal_orch.common import exception
from baremetal_orch.conductor import node_move
from baremetal_orch.db import api as dbapi
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.db.sqlalchemy import models
from baremetal_orch.db.sqlalchemy import services as db_services
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.cmd import cli


class NodeMoveTestCase(base.DbTestCase):
    """Two services and an Ironic node to move.

    Services old (forced down) and new (up); the node is on old, with one
    live deployment record and one deleted one.
    """

    def setUp(self):
        super().setUp()
        self.cli = self.useFixture(cli.CommandFixture(manage))
        dbapi.register_service('old', shard_key='s1')
        dbapi.update_service('old', {'forced_down': True})
        dbapi.register_service('new', shard_key='s1')
        self.node = self.create_node(name='n1', driver='ironic', shard='s1',
                                     conductor='old',
                                     ironic_uuid=uuidutils.generate_uuid())
        self.gone = dbapi.create_deployment({'node_uuid': self.node.uuid,
                                             'conductor': 'old'})
        # Creating a record deletes the node's previous ones.
        self.record = dbapi.create_deployment({'node_uuid': self.node.uuid,
                                               'conductor': 'old'})

    def move(self, node=None, service='new'):
        return self.cli.run('node', 'move', node or self.node.uuid,
                            '--service', service)

    def owners(self, node_uuid=None):
        """(node conductor, live record's conductor, deleted record's)."""
        node = dbapi.get_node(node_uuid or self.node.uuid)
        return (node.conductor, dbapi.get_deployment(self.record.uuid)
                .conductor, dbapi.get_deployment(self.gone.uuid).conductor)

    def assertRefused(self, out, exit_code, *words):
        self.assertEqual((exit_code, ''), (out.code, out.stdout), out.stderr)
        for word in words:
            self.assertIn(word, out.stderr)
        self.assertEqual(('old', 'old', 'old'), self.owners())


class TestGuards(NodeMoveTestCase):

    def test_exit_codes_are_distinct(self):
        codes = [cls.exit_code for cls in node_move.REFUSALS]
        self.assertEqual(len(codes), len(set(codes)))
        self.assertNotIn(manage.EXIT_ERROR, codes)
        self.assertNotIn(2, codes)  # argparse's usage error

    def test_unknown_node(self):
        missing = uuidutils.generate_uuid()
        self.assertRefused(self.move(missing), 3, missing,
                           'there is no such node')

    def test_node_not_ironic(self):
        fake = self.create_node(name='f1', driver='fake', conductor='old')
        out = self.move(fake.uuid)
        self.assertEqual(4, out.code)
        self.assertIn('its driver is fake', out.stderr)
        self.assertEqual('old', dbapi.get_node(fake.uuid).conductor)

    def test_source_neither_forced_down_nor_disabled(self):
        dbapi.update_service('old', {'forced_down': False})
        self.assertRefused(self.move(), 5, 'service old is neither forced '
                           'down nor disabled',
                           'baremetal-orch-manage service force-down old')

    def test_source_stale_heartbeat_alone_is_not_enough(self):
        dbapi.update_service('old', {'forced_down': False,
                                     'last_seen_at': None})
        self.assertRefused(self.move(), 5)

    def test_unknown_destination(self):
        self.assertRefused(self.move(service='nowhere'), 6,
                           'destination service nowhere does not exist')

    def test_forced_down_destination(self):
        dbapi.update_service('new', {'forced_down': True})
        self.assertRefused(self.move(), 6,
                           'destination service new is forced down')

    def test_more_than_one_live_deployment_record(self):
        dbapi.update_deployment(self.gone.uuid, {'deleted': False})
        self.assertRefused(self.move(), 7, '2 non-deleted deployment '
                           'records', self.gone.uuid, self.record.uuid)

    def test_guards_run_in_the_seeds_order(self):
        # Everything is wrong at once; each fix lets the next guard speak.
        dbapi.update_node(self.node.uuid, {'driver': 'fake'})
        dbapi.update_service('old', {'forced_down': False})
        dbapi.update_service('new', {'forced_down': True})
        dbapi.update_deployment(self.gone.uuid, {'deleted': False})
        fixes = [
            (4, lambda: dbapi.update_node(self.node.uuid,
                                          {'driver': 'ironic'})),
            (5, lambda: dbapi.update_service('old', {'disabled': True})),
            (6, lambda: dbapi.update_service('new', {'forced_down': False})),
            (7, lambda: dbapi.update_deployment(self.gone.uuid,
                                                {'deleted': True})),
        ]
        for exit_code, fix in fixes:
            self.assertEqual(exit_code, self.move().code)
            fix()
        self.assertEqual(0, self.move().code)
        self.assertEqual(('new', 'new', 'old'), self.owners())


class TestMove(NodeMoveTestCase):

    def test_moves_node_and_live_record_together(self):
        out = self.move()
        self.assertEqual(0, out.code, out.stderr)
        self.assertEqual('Node %s moved from service old to service new '
                         'with deployment record %s.\n'
                         % (self.node.uuid, self.record.uuid), out.stdout)
        # The deleted record is history: it stays where it was.
        self.assertEqual(('new', 'new', 'old'), self.owners())

    def test_by_name(self):
        self.assertEqual(0, self.move('n1').code)
        self.assertEqual('new', dbapi.get_node(self.node.uuid).conductor)

    def test_without_deployment_record(self):
        other = self.create_node(name='n2', driver='ironic', conductor='old')
        out = self.move(other.uuid)
        self.assertEqual(0, out.code, out.stderr)
        self.assertTrue(out.stdout.endswith('to service new.\n'))
        self.assertEqual('new', dbapi.get_node(other.uuid).conductor)
        self.assertEqual(('old', 'old', 'old'), self.owners())

    def test_from_a_disabled_service(self):
        # The seed: moving a subset of the nodes of a service that still
        # runs; disabled is enough, forced down is not required.
        dbapi.update_service('old', {'forced_down': False, 'disabled': True})
        self.assertEqual(0, self.move().code)
        self.assertEqual(('new', 'new', 'old'), self.owners())

    def test_to_a_disabled_destination(self):
        dbapi.update_service('new', {'disabled': True})
        self.assertEqual(0, self.move().code)

    def test_node_without_owner_or_with_a_vanished_one(self):
        for owner in (None, 'vanished'):
            node = self.create_node(name='o-%s' % owner, driver='ironic',
                                    conductor=owner)
            self.assertEqual(0, self.move(node.uuid).code, owner)
            self.assertEqual('new', dbapi.get_node(node.uuid).conductor)

    def test_lock_of_a_forced_down_source_is_released(self):
        dbapi.reserve_node(self.node.uuid, 'old')
        self.assertEqual(0, self.move().code)
        self.assertIsNone(dbapi.get_node(self.node.uuid).reservation)

    def test_lock_of_a_running_disabled_source_stays(self):
        dbapi.update_service('old', {'forced_down': False, 'disabled': True})
        dbapi.reserve_node(self.node.uuid, 'old')
        self.assertEqual(0, self.move().code)
        node = dbapi.get_node(self.node.uuid)
        self.assertEqual(('new', 'old'), (node.conductor, node.reservation))

    def test_lock_of_another_host_stays(self):
        dbapi.reserve_node(self.node.uuid, 'someone-else')
        self.assertEqual(0, self.move().code)
        self.assertEqual('someone-else',
                         dbapi.get_node(self.node.uuid).reservation)

    def test_warns_when_the_destination_serves_another_shard(self):
        dbapi.register_service('other', shard_key='s2',
                               conductor_group='g9')
        out = self.move(service='other')
        self.assertEqual(0, out.code)
        self.assertIn('Warning: node %s is in shard s1 but service other '
                      'serves shard s2' % self.node.uuid, out.stderr)
        self.assertIn('conductor group g9', out.stderr)
        self.assertEqual('other', dbapi.get_node(self.node.uuid).conductor)

    def test_no_warning_when_shards_match(self):
        out = self.move()
        self.assertNotIn('Warning', out.stderr)

    def test_move_result(self):
        result = node_move.move_node(self.node.uuid, 'new')
        self.assertEqual(node_move.MoveResult(
            node_uuid=self.node.uuid, source='old', destination='new',
            deployment_uuid=self.record.uuid, warnings=()), result)


class TestOneTransaction(NodeMoveTestCase):
    """A failure between the two updates of the move.

    It is injected after the node's UPDATE ran in the transaction and
    before the deployment record's.
    """

    def _break_second_update(self):
        calls = []

        def boom(session, node_uuid, destination):
            # The node row is already updated inside this transaction.
            calls.append(session.execute(
                sa.select(models.Node.conductor)
                .where(models.Node.uuid == node_uuid)).scalar_one())
            raise RuntimeError('injected failure between the two updates')

        self.useFixture(fixtures.MockPatchObject(
            db_services, '_move_deployment_rows', boom))
        return calls

    def test_db_function_rolls_back_the_node(self):
        calls = self._break_second_update()
        self.assertRaises(RuntimeError, dbapi.move_node_to_service,
                          self.node.uuid, 'old', 'new')
        self.assertEqual(['new'], calls)  # the first update did happen
        self.assertEqual(('old', 'old', 'old'), self.owners())

    def test_command_leaves_nothing_half_moved(self):
        calls = self._break_second_update()
        out = self.move()
        self.assertEqual((1, ''), (out.code, out.stdout))
        self.assertIn('injected failure', out.stderr)
        self.assertEqual(['new'], calls)
        self.assertEqual(('old', 'old', 'old'), self.owners())
        # Seen from a brand-new connection, too.
        sqla_api.reset_engine()
        self.assertEqual(('old', 'old', 'old'), self.owners())

    def test_lock_release_rolls_back_too(self):
        dbapi.reserve_node(self.node.uuid, 'old')
        self._break_second_update()
        self.assertEqual(1, self.move().code)
        self.assertEqual('old', dbapi.get_node(self.node.uuid).reservation)


class TestRaces(NodeMoveTestCase):
    """Changes between the guards and the transaction.

    The transaction itself catches them (exit 8, nothing moved).
    """

    def test_owner_changed_meanwhile(self):
        real_get_node = dbapi.get_node

        def get_node_then_steal(ident):
            node = real_get_node(ident)
            dbapi.update_node(node.uuid, {'conductor': 'thief'})
            return node

        with mock.patch.object(node_move.dbapi, 'get_node',
                               get_node_then_steal):
            out = self.move()
        self.assertEqual(8, out.code, out.stderr)
        self.assertIn('owning service changed from old', out.stderr)
        node = dbapi.get_node(self.node.uuid)
        self.assertEqual('thief', node.conductor)
        self.assertEqual('old', dbapi.get_deployment(
            self.record.uuid).conductor)

    def test_second_record_appeared_meanwhile(self):
        real_list = dbapi.list_deployments

        def list_then_add(filters):
            records = real_list(filters)
            dbapi.update_deployment(self.gone.uuid, {'deleted': False})
            return records

        with mock.patch.object(node_move.dbapi, 'list_deployments',
                               list_then_add):
            out = self.move()
        self.assertEqual(8, out.code, out.stderr)
        self.assertIn('2 non-deleted deployment records', out.stderr)
        self.assertEqual(('old', 'old', 'old'), self.owners())

    def test_db_function_checks_the_owner(self):
        self.assertRaises(exception.NodeMoveRefused,
                          dbapi.move_node_to_service, self.node.uuid,
                          'not-the-owner', 'new')
        self.assertEqual(('old', 'old', 'old'), self.owners())
