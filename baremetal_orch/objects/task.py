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
"""The Task object: one step of an action's task tree (action, group,
phase, node)."""

from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import base
from baremetal_orch.objects import fields as f

#: The kinds of task, from the root of a tree to its leaves.
KINDS = ('action', 'group', 'phase', 'node')


@base.BaremetalOrchObjectRegistry.register
class Task(base.BaremetalOrchObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'id': f.IntegerField(),
        'uuid': f.UUIDField(),
        'parent_uuid': f.UUIDField(nullable=True),
        'action_uuid': f.UUIDField(),
        'kind': f.StringField(),
        'name': f.StringField(),
        'node_uuid': f.UUIDField(nullable=True),
        'status': f.StringField(),
        'reason': f.StringField(nullable=True),
        'started_at': f.DateTimeField(nullable=True),
        'finished_at': f.DateTimeField(nullable=True),
    }
    fields.update(base.BaremetalOrchObject.fields)

    @classmethod
    def get(cls, context, uuid):
        return cls._from_db_object(context, cls(), dbapi.get_task(uuid))

    @classmethod
    def list(cls, context, action_uuid=None, parent_uuid=None, kind=None):
        """Tasks in the order they were created."""
        return cls._from_db_object_list(context, dbapi.list_tasks(
            action_uuid=action_uuid, parent_uuid=parent_uuid, kind=kind))
