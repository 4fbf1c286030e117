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
"""Migrations on real MariaDB and PostgreSQL servers.

Each test gets a throw-away database, upgrades it from nothing through the
service's own engine ([database]connection), checks that the schema equals
the models (alembic autogenerate finds no difference) and that taskflow's
tables sit next to ours with their own version table; then it checks that
the backend's unique-constraint errors map to our exceptions and that the
selector query gives the reference answer on that backend too.
"""

import testscenarios

from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.db import migration
from baremetal_orch.deployment import selectors
from baremetal_orch.tests.functional import base
from baremetal_orch.tests.unit.db import test_migrations
from baremetal_orch.tests.unit.db import test_selectors_sql
from baremetal_orch_testing.fixtures import databases

load_tests = testscenarios.load_tests_apply_scenarios


class TestMigrations(base.FunctionalTestCase,
                     test_migrations.MigrationChecks):

    scenarios = [('mysql', {'backend': 'mysql'}),
                 ('postgresql', {'backend': 'postgresql'})]

    def setUp(self):
        super().setUp()
        databases.use_database(self, self.backend)
        self.engine = dbapi.get_engine()
        self.assertEqual(self.backend, self.engine.dialect.name)

    def test_upgrade_from_nothing(self):
        self.assertIsNone(migration.version())
        migration.upgrade()
        self.check_upgraded(self.engine)
        self.check_indexes(self.engine)
        # A second upgrade changes nothing.
        migration.upgrade()
        self.check_upgraded(self.engine)

    def test_documents_over_64_kib(self):
        # An action over 1,000 nodes: its progress (every node's status),
        # report and strategy exceed MariaDB's TEXT (64 KiB); they used to
        # fail with DataError 1406 at admission.
        migration.upgrade()
        names = ['node-%05d' % i for i in range(5000)]
        document = {'data': {'groups': [{'name': 'g', 'selectors': [
            {'node_names': names}]}]}}
        dbapi.create_strategy('big', document)
        self.assertEqual(document, dbapi.get_strategy('big').document)
        big = {'held_nodes': names, 'site': {n: 'success' for n in names}}
        action = dbapi.create_action({
            'name': 'deploy_site', 'parameters': {'strategy': document},
            'progress': big})
        dbapi.update_action(action.uuid, {'report': {'nodes': big['site']},
                                          'progress': big})
        row = dbapi.get_action(action.uuid)
        self.assertEqual((document, big, {'nodes': big['site']}),
                         (row.parameters['strategy'], row.progress,
                          row.report))

    def test_unique_errors_are_mapped(self):
        migration.upgrade()
        node = dbapi.create_node({'name': 'n1', 'driver': 'fake',
                                  'provision_state': 'enroll'})
        self.assertRaises(exception.DuplicateName, dbapi.create_node,
                          {'name': 'n1', 'driver': 'fake',
                           'provision_state': 'enroll'})
        e = self.assertRaises(exception.Conflict, dbapi.create_node,
                              {'name': 'n2', 'uuid': node.uuid,
                               'driver': 'fake', 'provision_state': 'enroll'})
        self.assertNotIsInstance(e, exception.DuplicateName)
        port = dbapi.create_port({'node_id': node.id,
                                  'address': '52:54:00:00:00:01'})
        e = self.assertRaises(exception.Conflict, dbapi.create_port,
                              {'node_id': node.id,
                               'address': '52:54:00:00:00:01'})
        self.assertIn('52:54:00:00:00:01', str(e))
        e = self.assertRaises(exception.Conflict, dbapi.create_port,
                              {'node_id': node.id, 'uuid': port.uuid,
                               'address': '52:54:00:00:00:02'})
        self.assertIn(port.uuid, str(e))
        dbapi.create_strategy('s', {'a': 1})
        self.assertRaises(exception.DuplicateName, dbapi.create_strategy,
                          's', {'a': 2})
        self.assertRaises(exception.NodeHasPorts, dbapi.destroy_node, 'n1')
        dbapi.reserve_node('n1', 'h1')
        self.assertRaises(exception.NodeLocked, dbapi.reserve_node, 'n1',
                          'h2')

    def test_selectors_on_this_backend(self):
        migration.upgrade()
        site = test_selectors_sql.SITE
        for node in site:
            dbapi.create_node(dict(node, driver='fake',
                                   provision_state='enroll'))
        for name, sels, expected in test_selectors_sql.CASES:
            sels = selectors.coerce(sels)
            self.assertEqual(expected, dbapi.resolve_selectors(sels), name)
