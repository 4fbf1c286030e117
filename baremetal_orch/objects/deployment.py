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
"""The Deployment object: one node deployment and its signals (seed 002)."""

from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import base
from baremetal_orch.objects import fields as f

IN_PROGRESS = 'IN_PROGRESS'
COMPLETE = 'COMPLETE'
FAILED = 'FAILED'
STATUSES = (IN_PROGRESS, COMPLETE, FAILED)


@base.BaremetalOrchObjectRegistry.register
class Deployment(base.BaremetalOrchObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'id': f.IntegerField(),
        'uuid': f.UUIDField(),
        'node_uuid': f.UUIDField(),
        'action_uuid': f.UUIDField(nullable=True),
        'conductor': f.StringField(nullable=True),
        'status': f.EnumField(valid_values=STATUSES),
        'status_reason': f.StringField(nullable=True),
        'deploy_stdout': f.StringField(nullable=True),
        'deploy_stderr': f.StringField(nullable=True),
        'deploy_status_code': f.IntegerField(nullable=True),
        'signal_url': f.StringField(nullable=True),
        'token_hash': f.StringField(nullable=True),
        'final': f.BooleanField(),
        'deleted': f.BooleanField(),
    }
    fields.update(base.BaremetalOrchObject.fields)

    @classmethod
    def get(cls, context, uuid):
        return cls._from_db_object(context, cls(),
                                   dbapi.get_deployment(uuid))

    @classmethod
    def list(cls, context, filters=None, limit=None, marker=None,
             sort_key=None, sort_dir=None):
        return cls._from_db_object_list(context, dbapi.list_deployments(
            filters, limit, marker, sort_key, sort_dir))

    def create(self, context=None):
        self._from_db_object(context or self._context, self,
                             dbapi.create_deployment(self.obj_get_changes()))

    def save(self, context=None):
        values = self.obj_get_changes()
        if values:
            self._from_db_object(context or self._context, self,
                                 dbapi.update_deployment(self.uuid, values))
