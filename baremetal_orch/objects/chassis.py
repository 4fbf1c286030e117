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
"""The Chassis object."""


from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import base
from baremetal_orch.objects import fields as f


@base.BaremetalOrchObjectRegistry.register
class Chassis(base.BaremetalOrchObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'id': f.IntegerField(),
        'uuid': f.UUIDField(),
        'description': f.StringField(nullable=True),
        'extra': f.FlexibleDictField(nullable=True),
    }
    fields.update(base.BaremetalOrchObject.fields)

    _row_lock = 'locked_chassis'

    @classmethod
    def get(cls, context, uuid):
        return cls._from_db_object(context, cls(), dbapi.get_chassis(uuid))

    @classmethod
    def list(cls, context, limit=None, marker=None, sort_key=None,
             sort_dir=None):
        return cls._from_db_object_list(context, dbapi.list_chassis(
            limit, marker, sort_key, sort_dir))

    def create(self, context=None):
        self._from_db_object(context or self._context, self,
                             dbapi.create_chassis(self.obj_get_changes()))

    def save(self, context=None):
        values = self.obj_get_changes()
        if values:
            self._from_db_object(context or self._context, self,
                                 dbapi.update_chassis(self.uuid, values))

    def destroy(self, context=None):
        dbapi.destroy_chassis(self.uuid)
