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
"""The database API: the only way the rest of the service reaches the DB.

Each table family lives in its own module under db/sqlalchemy/ (inventory:
nodes, ports, chassis; services; operations: strategies, actions, tasks,
events, deployment records). This module gathers their public functions so
callers write ``dbapi.get_node(...)``.
"""

from baremetal_orch.db.sqlalchemy import api as _base
from baremetal_orch.db.sqlalchemy import inventory as _inventory
from baremetal_orch.db.sqlalchemy import operations as _operations
from baremetal_orch.db.sqlalchemy import services as _services

_MODULES = (_inventory, _operations, _services)

get_engine = _base.get_engine
reset_engine = _base.reset_engine


def __getattr__(name):
    if not name.startswith('_'):
        for module in _MODULES:
            func = getattr(module, name, None)
            if (callable(func) and
                    getattr(func, '__module__', None) == module.__name__):
                return func
    raise AttributeError('baremetal_orch.db.api has no %s' % name)
