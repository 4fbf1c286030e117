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
"""Node payloads and notifications.

``NodePayload`` carries the public fields of a node; the CRUD payload adds
``chassis_uuid``, ``instance_info`` and ``driver_info``, the provision
payload ``instance_info``, the previous states and the FSM event. Secrets
in ``driver_info`` and ``instance_info`` are masked.
"""

from oslo_versionedobjects import fields as ovo_fields

from baremetal_orch.notifications import base as notification
from baremetal_orch.objects import base
from baremetal_orch.objects import fields

_CRUD = ('create', 'update', 'delete')
_START_END_ERROR = ('start', 'end', 'error')


def _node_schema(*names):
    return {name: ('node', name) for name in names}


@base.BaremetalOrchObjectRegistry.register
class NodePayload(notification.NotificationPayloadBase):
    """The public fields of a node."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    SCHEMA = _node_schema(
        'uuid', 'name', 'driver', 'ironic_uuid', 'rack_name', 'tags',
        'labels', 'shard', 'conductor_group', 'provision_state',
        'target_provision_state', 'power_state', 'maintenance',
        'maintenance_reason', 'console_enabled', 'conductor', 'owner',
        'last_error', 'extra', 'created_at', 'updated_at')

    fields = {
        'uuid': fields.UUIDField(),
        'name': fields.StringField(nullable=True),
        'driver': fields.StringField(nullable=True),
        'ironic_uuid': fields.UUIDField(nullable=True),
        'rack_name': fields.StringField(nullable=True),
        'tags': fields.ListOfStringsField(default=[]),
        'labels': fields.DictOfStringsField(default={}),
        'shard': fields.StringField(nullable=True),
        'conductor_group': fields.StringField(nullable=True),
        'provision_state': fields.StringField(nullable=True),
        'target_provision_state': fields.StringField(nullable=True),
        'power_state': fields.StringField(nullable=True),
        'maintenance': fields.BooleanField(default=False),
        'maintenance_reason': fields.StringField(nullable=True),
        'console_enabled': fields.BooleanField(default=False),
        'conductor': fields.StringField(nullable=True),
        'owner': fields.StringField(nullable=True),
        'last_error': fields.StringField(nullable=True),
        'extra': fields.FlexibleDictField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    def __init__(self, node=None, **kwargs):
        super().__init__(**kwargs)
        if node is not None:
            self.populate_schema(node=node)


@base.BaremetalOrchObjectRegistry.register
class NodeCRUDPayload(NodePayload):
    """A node created, updated or deleted through the API."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    SCHEMA = dict(NodePayload.SCHEMA, **_node_schema(
        'chassis_uuid', 'instance_info', 'driver_info'))
    MASKED = ('instance_info', 'driver_info')

    fields = dict(NodePayload.fields, **{
        'chassis_uuid': fields.UUIDField(nullable=True),
        'instance_info': fields.FlexibleDictField(nullable=True),
        'driver_info': fields.FlexibleDictField(nullable=True),
    })


@base.BaremetalOrchObjectRegistry.register
class NodeSetProvisionStatePayload(NodePayload):
    """A provision state transition of a node."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    SCHEMA = dict(NodePayload.SCHEMA, **_node_schema('instance_info'))
    MASKED = ('instance_info',)

    fields = dict(NodePayload.fields, **{
        'instance_info': fields.FlexibleDictField(nullable=True),
        'previous_provision_state': fields.StringField(nullable=True),
        'previous_target_provision_state': fields.StringField(nullable=True),
        'event': fields.StringField(nullable=True),
    })

    def __init__(self, node=None, prev_state=None, prev_target=None,
                 event=None, **kwargs):
        if node is not None:
            kwargs.update(previous_provision_state=prev_state,
                          previous_target_provision_state=prev_target,
                          event=event)
        super().__init__(node, **kwargs)


@base.BaremetalOrchObjectRegistry.register
class NodeLabelsPayload(notification.NotificationPayloadBase):
    """The Kubernetes labels of a node changed by an update_labels action."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    SCHEMA = {
        'node_uuid': ('node', 'uuid'),
        'node_name': ('node', 'name'),
        'action_uuid': ('action', 'uuid'),
    }

    fields = {
        'node_uuid': fields.UUIDField(),
        'node_name': fields.StringField(nullable=True),
        'action_uuid': fields.UUIDField(nullable=True),
        'to_set': fields.DictOfNullableStringsField(),
        'to_remove': fields.ListOfStringsField(),
        'error': fields.StringField(nullable=True),
    }

    def __init__(self, node=None, action=None, diff=None, error=None,
                 **kwargs):
        super().__init__(**kwargs)
        if node is not None:
            self.to_set = dict(getattr(diff, 'to_set', None) or {})
            self.to_remove = list(getattr(diff, 'to_remove', None) or ())
            self.error = error
            self.populate_schema(node=node, action=action)


@base.BaremetalOrchObjectRegistry.register
class NodeCRUDNotification(notification.NotificationBase):
    """baremetal.node.{create,update,delete}.{start,end,error}."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    EVENT_TYPES = notification.event_types('node', _CRUD, _START_END_ERROR)

    fields = dict(notification.NotificationBase.fields, **{
        'payload': ovo_fields.ObjectField('NodeCRUDPayload'),
    })


@base.BaremetalOrchObjectRegistry.register
class NodeSetProvisionStateNotification(notification.NotificationBase):
    """baremetal.node.provision_set.{start,end,error,success}."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    EVENT_TYPES = notification.event_types(
        'node', ('provision_set',), ('start', 'end', 'error', 'success'))

    fields = dict(notification.NotificationBase.fields, **{
        'payload': ovo_fields.ObjectField('NodeSetProvisionStatePayload'),
    })


@base.BaremetalOrchObjectRegistry.register
class NodeMaintenanceNotification(notification.NotificationBase):
    """baremetal.node.maintenance_set.{start,end,error}."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    EVENT_TYPES = notification.event_types(
        'node', ('maintenance_set',), _START_END_ERROR)

    fields = dict(notification.NotificationBase.fields, **{
        'payload': ovo_fields.ObjectField('NodePayload'),
    })


@base.BaremetalOrchObjectRegistry.register
class NodeConsoleNotification(notification.NotificationBase):
    """baremetal.node.console_{set,restore}.{start,end,error}."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    EVENT_TYPES = notification.event_types(
        'node', ('console_set', 'console_restore'), _START_END_ERROR)

    fields = dict(notification.NotificationBase.fields, **{
        'payload': ovo_fields.ObjectField('NodePayload'),
    })


@base.BaremetalOrchObjectRegistry.register
class NodeLabelsNotification(notification.NotificationBase):
    """baremetal.node.labels_set.{start,end,error}."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    EVENT_TYPES = notification.event_types(
        'node', ('labels_set',), _START_END_ERROR)

    fields = dict(notification.NotificationBase.fields, **{
        'payload': ovo_fields.ObjectField('NodeLabelsPayload'),
    })
