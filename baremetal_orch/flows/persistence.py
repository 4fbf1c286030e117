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
"""taskflow persistence in the service database.

The flows of an action are saved in taskflow's own tables of the service
database, so a conductor that dies mid-action is resumed by the next one
without redoing finished work.
"""

import contextlib

from taskflow.persistence.backends import impl_sqlalchemy

from baremetal_orch.db import api as dbapi


def get_backend(engine=None):
    engine = engine or dbapi.get_engine()
    return impl_sqlalchemy.SQLAlchemyBackend(
        {'connection': engine.url.render_as_string(hide_password=False)},
        engine=engine)


def upgrade(engine=None):
    """Create or upgrade taskflow's tables."""
    backend = get_backend(engine)
    with contextlib.closing(backend.get_connection()) as conn:
        conn.upgrade()
