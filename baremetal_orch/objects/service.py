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
"""The Service object: one conductor service and its heartbeat."""


from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import base
from baremetal_orch.objects import fields as f


@base.BaremetalOrchObjectRegistry.register
class Service(base.BaremetalOrchObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'id': f.IntegerField(),
        'host': f.StringField(),
        'binary': f.StringField(),
        'shard_key': f.StringField(nullable=True),
        'conductor_group': f.StringField(nullable=True),
        'forced_down': f.BooleanField(),
        'disabled': f.BooleanField(),
        'disabled_reason': f.StringField(nullable=True),
        'last_seen_at': f.DateTimeField(nullable=True),
    }
    fields.update(base.BaremetalOrchObject.fields)

    _row_lock = 'locked_service'

    @classmethod
    def get(cls, context, host):
        return cls._from_db_object(context, cls(), dbapi.get_service(host))

    @classmethod
    def list(cls, context):
        return cls._from_db_object_list(context, dbapi.list_services())

    @classmethod
    def register(cls, context, host, shard_key=None, conductor_group=None):
        return cls._from_db_object(context, cls(), dbapi.register_service(
            host, shard_key=shard_key, conductor_group=conductor_group))

    def save(self, context=None):
        values = self.obj_get_changes()
        if values:
            self._from_db_object(context or self._context, self,
                                 dbapi.update_service(self.host, values))

    def is_alive(self, timeout):
        return dbapi.is_alive(self, timeout)
