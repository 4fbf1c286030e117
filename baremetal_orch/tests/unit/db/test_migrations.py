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
"""Migrations from nothing on sqlite; the schema matches the models.

:class:`MigrationChecks` is shared with the functional tests, which run the
same checks on MariaDB and PostgreSQL.
"""

import os
import pprint

from alembic import autogenerate
from alembic import migration as alembic_migration
from alembic import script as alembic_script
import fixtures
import sqlalchemy as sa
from taskflow.persistence.backends.sqlalchemy import migration as tf_migration

from baremetal_orch.db import migration
from baremetal_orch.db.sqlalchemy import models
from baremetal_orch.tests import base

OUR_TABLES = frozenset(models.Base.metadata.tables)
OUR_VERSION_TABLE = 'baremetal_orch_alembic_version'
TASKFLOW_VERSION_TABLE = 'alembic_version'
TASKFLOW_TABLES = frozenset(['logbooks', 'flowdetails', 'atomdetails'])


def taskflow_head():
    """The head revision of taskflow's own alembic history."""
    path = os.path.join(os.path.dirname(tf_migration.__file__), 'alembic')
    return alembic_script.ScriptDirectory(path).get_current_head()


def schema_diff(engine):
    """What alembic autogenerate would change to match the models."""

    def include_object(obj, name, type_, reflected, compare_to):
        if type_ == 'table':
            return name in OUR_TABLES
        table = getattr(obj, 'table', None)
        return table is None or table.name in OUR_TABLES

    with engine.connect() as conn:
        context = alembic_migration.MigrationContext.configure(
            conn, opts={'compare_type': True,
                        'compare_server_default': True,
                        'include_object': include_object})
        return autogenerate.compare_metadata(context, models.Base.metadata)


class MigrationChecks:
    """Checks of a database just upgraded from nothing (a test mixin)."""

    def check_upgraded(self, engine):
        inspector = sa.inspect(engine)
        tables = set(inspector.get_table_names())
        self.assertEqual(set(), OUR_TABLES - tables)
        # taskflow's persistence lives next to ours...
        self.assertEqual(set(), TASKFLOW_TABLES - tables)
        # ... with its own alembic history, apart from ours.
        self.assertIn(OUR_VERSION_TABLE, tables)
        with engine.connect() as conn:
            ours = list(conn.execute(sa.text(
                'SELECT version_num FROM %s' % OUR_VERSION_TABLE)).scalars())
        self.assertEqual(['0003_action_steering'], ours)
        self.assertEqual('0003_action_steering', migration.version(engine))
        if engine.dialect.name == 'sqlite':
            # taskflow creates its tables directly on sqlite, no history.
            self.assertNotIn(TASKFLOW_VERSION_TABLE, tables)
        else:
            self.assertIn(TASKFLOW_VERSION_TABLE, tables)
            with engine.connect() as conn:
                theirs = list(conn.execute(sa.text(
                    'SELECT version_num FROM %s' % TASKFLOW_VERSION_TABLE))
                    .scalars())
            self.assertEqual([taskflow_head()], theirs)
        diff = schema_diff(engine)
        self.assertEqual([], diff, pprint.pformat(diff))

    def check_indexes(self, engine):
        """The indexes that make selectors indexed queries exist."""
        inspector = sa.inspect(engine)
        indexes = {ix['name']: ix['column_names']
                   for ix in inspector.get_indexes('node_tags')}
        self.assertEqual(['tag', 'node_id'], indexes['node_tags_tag_idx'])
        indexes = {ix['name']: ix['column_names']
                   for ix in inspector.get_indexes('node_labels')}
        self.assertEqual(['key', 'value', 'node_id'],
                         indexes['node_labels_kv_idx'])


class TestSqliteMigrations(base.TestCase, MigrationChecks):

    def setUp(self):
        super().setUp()
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'empty.sqlite')
        self.engine = sa.create_engine('sqlite:///%s' % path)
        self.addCleanup(self.engine.dispose)

    def test_upgrade_from_nothing(self):
        self.assertEqual([], sa.inspect(self.engine).get_table_names())
        self.assertIsNone(migration.version(self.engine))
        migration.upgrade(engine=self.engine)
        self.check_upgraded(self.engine)
        self.check_indexes(self.engine)

    def test_upgrade_twice_is_a_no_op(self):
        migration.upgrade(engine=self.engine)
        migration.upgrade(engine=self.engine)
        self.check_upgraded(self.engine)

    def test_diff_sees_a_difference(self):
        # The comparison is not vacuous: a missing index shows.
        migration.upgrade(engine=self.engine)
        with self.engine.begin() as conn:
            conn.execute(sa.text('DROP INDEX nodes_rack_idx'))
        diff = schema_diff(self.engine)
        self.assertEqual([('add_index', 'nodes_rack_idx')],
                         [(d[0], d[1].name) for d in diff])
