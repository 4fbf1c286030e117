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
from alembic import context

from baremetal_orch.db.sqlalchemy import models

target_metadata = models.Base.metadata

# taskflow keeps its own tables in the same database with its own alembic
# history in the default "alembic_version" table: ours must not share it.
VERSION_TABLE = 'baremetal_orch_alembic_version'


def run_migrations_online():
    """Run migrations on the connection handed over by migration.py."""
    connection = context.config.attributes.get('connection')
    context.configure(connection=connection,
                      target_metadata=target_metadata,
                      version_table=VERSION_TABLE,
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
