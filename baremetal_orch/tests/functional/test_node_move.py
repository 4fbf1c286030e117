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
"""The real ``baremetal-orch-manage`` console script against MariaDB.

Seed 003 asks for functional tests of the move command's safety guards:
each guard runs the installed console script as a subprocess on a
throw-away MariaDB database, and the database is read afterwards to show
that a refusal changed nothing and a move changed the node and its
deployment record together.
"""

import os
import subprocess
import sys

import fixtures
from oslo_utils import uuidutils
import sqlalchemy as sa

from baremetal_orch.db import api as dbapi
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.db.sqlalchemy import models
from baremetal_orch.db.sqlalchemy import services as db_services
from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import databases

BIN_DIR = os.path.dirname(sys.executable)
#: A deadline for a hung command, not a measurement.
COMMAND_TIMEOUT = 120


def _write_config(path, url):
    with open(path, 'w') as f:
        # One of the tests turns a node to the fake driver: enabled, as in
        # every functional test, so that the upgrade check passes.
        f.write('[DEFAULT]\nhost = manage-test\n'
                'enabled_drivers = fake,ironic\n'
                '[database]\nconnection = %s\n' % url)


def run_command(name, config_file, *argv):
    """Run a console script of the venv; (exit code, stdout, stderr)."""
    proc = subprocess.run(
        [os.path.join(BIN_DIR, name), '--config-file', config_file]
        + list(argv), capture_output=True, text=True,
        timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONWARNINGS='ignore'))
    return proc.returncode, proc.stdout, proc.stderr


class TestNodeMoveOnMariaDB(base.FunctionalTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.db = cls.use_class_fixture(databases.Database('mysql'))
        cls.tmp = cls.use_class_fixture(fixtures.TempDir()).path
        cls.config_file = os.path.join(cls.tmp, 'manage.conf')
        _write_config(cls.config_file, cls.db.url)
        # The schema is made by the real command, as an operator would.
        code, out, err = run_command('baremetal-orch-manage',
                                     cls.config_file, 'db', 'upgrade')
        if code != 0:
            raise AssertionError('db upgrade failed (%s): %s%s'
                                 % (code, out, err))

    def setUp(self):
        super().setUp()
        self.config(group='database', connection=self.db.url)
        sqla_api.reset_engine()
        self.addCleanup(sqla_api.reset_engine)
        # Every test has its own services and node in the shared database.
        suffix = uuidutils.generate_uuid(dashed=False)[:8]
        self.old, self.new = 'old-' + suffix, 'new-' + suffix
        dbapi.register_service(self.old, shard_key='s-' + suffix)
        dbapi.update_service(self.old, {'forced_down': True})
        dbapi.register_service(self.new, shard_key='s-' + suffix)
        self.node = dbapi.create_node({
            'name': 'node-' + suffix, 'driver': 'ironic',
            'provision_state': 'active', 'shard': 's-' + suffix,
            'conductor': self.old,
            'ironic_uuid': uuidutils.generate_uuid()})
        self.gone = dbapi.create_deployment({'node_uuid': self.node.uuid,
                                             'conductor': self.old})
        self.record = dbapi.create_deployment({'node_uuid': self.node.uuid,
                                               'conductor': self.old})
        dbapi.reserve_node(self.node.uuid, self.old)

    def manage(self, *argv):
        return run_command('baremetal-orch-manage', self.config_file,
                           *argv)

    def move(self, node=None, service=None):
        return self.manage('node', 'move', node or self.node.uuid,
                           '--service', service or self.new)

    def state(self):
        """What the database says, read with a fresh engine."""
        sqla_api.reset_engine()
        node = dbapi.get_node(self.node.uuid)
        return {'node': node.conductor, 'lock': node.reservation,
                'record': dbapi.get_deployment(self.record.uuid).conductor,
                'deleted_record': dbapi.get_deployment(
                    self.gone.uuid).conductor}

    def assertRefused(self, result, exit_code, text):
        code, out, err = result
        self.assertEqual((exit_code, ''), (code, out), err)
        self.assertIn(text, err)
        self.assertEqual({'node': self.old, 'lock': self.old,
                          'record': self.old, 'deleted_record': self.old},
                         self.state())

    def test_schema_made_by_the_command(self):
        code, out, _ = self.manage('db', 'version')
        self.assertEqual((0, '0003_action_steering\n'), (code, out))

    def test_refuses_an_unknown_node(self):
        missing = uuidutils.generate_uuid()
        self.assertRefused(self.move(node=missing), 3,
                           'Node %s cannot be moved: there is no such node'
                           % missing)

    def test_refuses_a_node_that_is_not_ironic_backed(self):
        dbapi.update_node(self.node.uuid, {'driver': 'fake'})
        self.assertRefused(self.move(), 4, 'its driver is fake')

    def test_refuses_while_the_source_service_is_up(self):
        dbapi.update_service(self.old, {'forced_down': False})
        self.assertRefused(self.move(), 5, 'its service %s is neither '
                           'forced down nor disabled' % self.old)

    def test_refuses_an_unknown_destination(self):
        self.assertRefused(self.move(service='nowhere-' + self.new), 6,
                           'destination service nowhere-%s does not exist'
                           % self.new)

    def test_refuses_a_forced_down_destination(self):
        dbapi.update_service(self.new, {'forced_down': True})
        self.assertRefused(self.move(), 6, 'destination service %s is '
                           'forced down' % self.new)

    def test_refuses_two_live_deployment_records(self):
        dbapi.update_deployment(self.gone.uuid, {'deleted': False})
        self.assertRefused(self.move(), 7, 'it has 2 non-deleted deployment '
                           'records')

    def test_moves_node_and_record_in_one_go(self):
        code, out, err = self.move()
        self.assertEqual(0, code, err)
        self.assertEqual('Node %s moved from service %s to service %s with '
                         'deployment record %s.\n'
                         % (self.node.uuid, self.old, self.new,
                            self.record.uuid), out)
        self.assertEqual({'node': self.new, 'lock': None,
                          'record': self.new, 'deleted_record': self.old},
                         self.state())

    def test_from_a_disabled_service_via_the_command(self):
        dbapi.update_service(self.old, {'forced_down': False})
        code, out, err = self.manage('service', 'disable', self.old,
                                     '--reason', 'moving nodes')
        self.assertEqual((0, 'Service %s is disabled.\n' % self.old),
                         (code, out), err)
        code, _, err = self.move()
        self.assertEqual(0, code, err)
        # The disabled service may still run: its lock is left alone.
        self.assertEqual({'node': self.new, 'lock': self.old,
                          'record': self.new, 'deleted_record': self.old},
                         self.state())

    def test_injected_failure_leaves_nothing_half_moved(self):
        seen = []

        def boom(session, node_uuid, destination):
            seen.append(session.execute(
                sa.select(models.Node.conductor)
                .where(models.Node.uuid == node_uuid)).scalar_one())
            raise RuntimeError('injected')

        self.useFixture(fixtures.MockPatchObject(
            db_services, '_move_deployment_rows', boom))
        self.assertRaises(RuntimeError, dbapi.move_node_to_service,
                          self.node.uuid, self.old, self.new,
                          release_source_lock=True)
        self.assertEqual([self.new], seen)  # the node's UPDATE had run
        self.assertEqual({'node': self.old, 'lock': self.old,
                          'record': self.old, 'deleted_record': self.old},
                         self.state())

    def test_status_check_passes(self):
        code, out, err = run_command('baremetal-orch-status',
                                     self.config_file, 'upgrade', 'check')
        self.assertEqual(0, code, out + err)
        self.assertIn('Check: Database schema', out)
        self.assertNotIn('Failure', out)
