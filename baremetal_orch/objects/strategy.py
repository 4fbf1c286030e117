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
"""The Strategy object: a stored DeploymentStrategy document.

The document's rules are :mod:`baremetal_orch.deployment.strategy`; it is
stored as the operator sent it, under its ``metadata.name``.
"""

from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import base
from baremetal_orch.objects import fields as f


@base.BaremetalOrchObjectRegistry.register
class Strategy(base.BaremetalOrchObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'id': f.IntegerField(),
        'name': f.StringField(),
        'document': f.FlexibleDictField(),
    }
    fields.update(base.BaremetalOrchObject.fields)

    @classmethod
    def get(cls, context, name):
        return cls._from_db_object(context, cls(), dbapi.get_strategy(name))

    @classmethod
    def list(cls, context, limit=None, marker=None, sort_key=None,
             sort_dir=None):
        return cls._from_db_object_list(context, dbapi.list_strategies(
            limit, marker, sort_key, sort_dir))

    def create(self, context=None):
        """Store the document; DuplicateName when its name is taken."""
        self._from_db_object(context or self._context, self,
                             dbapi.create_strategy(self.name, self.document))

    def destroy(self, context=None):
        """Remove the strategy, unless an active action uses it
        (StrategyInUse)."""
        for action in dbapi.list_active_actions():
            if (action.parameters or {}).get(
                    'deployment_strategy') == self.name:
                raise exception.StrategyInUse(name=self.name,
                                              action=action.uuid)
        dbapi.destroy_strategy(self.name)

    @classmethod
    def destroy_by_name(cls, context, name):
        cls.get(context, name).destroy(context)
