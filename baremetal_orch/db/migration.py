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
"""Schema migrations: alembic for our tables, taskflow's own for its own."""

import contextlib
import os

from alembic import command as alembic_command
from alembic import config as alembic_config
from alembic import migration as alembic_migration

from baremetal_orch.db.sqlalchemy import api as sqla_api

_VERSION_TABLE = 'baremetal_orch_alembic_version'
_ALEMBIC_INI = os.path.join(os.path.dirname(__file__), 'sqlalchemy',
                            'alembic.ini')


def _config(connection):
    config = alembic_config.Config(_ALEMBIC_INI)
    config.set_main_option('script_location', os.path.join(
        os.path.dirname(__file__), 'sqlalchemy', 'alembic'))
    config.attributes['connection'] = connection
    return config


def upgrade(revision='head', engine=None):
    """Create or upgrade the schema, then taskflow's persistence tables.

    The directory of a sqlite database file is created.
    """
    if engine is None:
        sqla_api.ensure_sqlite_directory()
    engine = sqla_api.check_connection(engine)
    with engine.begin() as connection:
        alembic_command.upgrade(_config(connection), revision)
    _upgrade_taskflow(engine)


def version(engine=None):
    engine = sqla_api.check_connection(engine)
    with engine.connect() as connection:
        context = alembic_migration.MigrationContext.configure(
            connection, opts={'version_table': _VERSION_TABLE})
        return context.get_current_revision()


def _upgrade_taskflow(engine):
    """taskflow's persistence tables (the conductors' flows), created and
    upgraded by taskflow's own migrations."""
    backend = sqla_api.taskflow_backend(engine)
    with contextlib.closing(backend.get_connection()) as conn:
        conn.upgrade()
