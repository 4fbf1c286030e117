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
"""Port and chassis payloads and notifications."""

from oslo_versionedobjects import fields as ovo_fields

from baremetal_orch.notifications import base as notification
from baremetal_orch.objects import base
from baremetal_orch.objects import fields

_CRUD = ('create', 'update', 'delete')
_START_END_ERROR = ('start', 'end', 'error')


@base.BaremetalOrchObjectRegistry.register
class PortCRUDPayload(notification.NotificationPayloadBase):
    """A port created, updated or deleted."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    SCHEMA = {name: ('port', name) for name in (
        'uuid', 'node_uuid', 'address', 'pxe_enabled',
        'local_link_connection', 'extra', 'created_at', 'updated_at')}

    fields = {
        'uuid': fields.UUIDField(),
        'node_uuid': fields.UUIDField(nullable=True),
        'address': fields.StringField(nullable=True),
        'pxe_enabled': fields.BooleanField(default=True),
        'local_link_connection': fields.FlexibleDictField(nullable=True),
        'extra': fields.FlexibleDictField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    def __init__(self, port=None, **kwargs):
        super().__init__(**kwargs)
        if port is not None:
            self.populate_schema(port=port)


@base.BaremetalOrchObjectRegistry.register
class ChassisCRUDPayload(notification.NotificationPayloadBase):
    """A chassis created, updated or deleted."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    SCHEMA = {name: ('chassis', name) for name in (
        'uuid', 'description', 'extra', 'created_at', 'updated_at')}

    fields = {
        'uuid': fields.UUIDField(),
        'description': fields.StringField(nullable=True),
        'extra': fields.FlexibleDictField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    def __init__(self, chassis=None, **kwargs):
        super().__init__(**kwargs)
        if chassis is not None:
            self.populate_schema(chassis=chassis)


@base.BaremetalOrchObjectRegistry.register
class PortCRUDNotification(notification.NotificationBase):
    """baremetal.port.{create,update,delete}.{start,end,error}."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    EVENT_TYPES = notification.event_types('port', _CRUD, _START_END_ERROR)

    fields = dict(notification.NotificationBase.fields, **{
        'payload': ovo_fields.ObjectField('PortCRUDPayload'),
    })


@base.BaremetalOrchObjectRegistry.register
class ChassisCRUDNotification(notification.NotificationBase):
    """baremetal.chassis.{create,update,delete}.{start,end,error}."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    EVENT_TYPES = notification.event_types('chassis', _CRUD,
                                           _START_END_ERROR)

    fields = dict(notification.NotificationBase.fields, **{
        'payload': ovo_fields.ObjectField('ChassisCRUDPayload'),
    })
