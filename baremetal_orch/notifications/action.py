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
"""Payloads and notifications of actions, deployment groups and signals.

These event types are baremetal_orch's own
(doc/source/admin/notifications.rst): an action run, the prepare and
deploy phases of a deployment group, and the signals a node sends about
its deployment.
"""

from oslo_versionedobjects import fields as ovo_fields

from baremetal_orch.notifications import base as notification
from baremetal_orch.objects import base
from baremetal_orch.objects import fields

_START_END_ERROR = ('start', 'end', 'error')

#: Signal status to notification status: an IN_PROGRESS signal
#: is a change that does not end the deployment (like provision_set's
#: success), COMPLETE ends it, FAILED is an error.
SIGNAL_STATUSES = {
    'IN_PROGRESS': 'success',
    'COMPLETE': 'end',
    'FAILED': 'error',
}


class ListOfDicts(ovo_fields.List):
    def __init__(self):
        super().__init__(fields.FlexibleDict())


class ListOfDictsField(ovo_fields.AutoTypedField):
    AUTO_TYPE = ListOfDicts()


@base.BaremetalOrchObjectRegistry.register
class ActionPayload(notification.NotificationPayloadBase):
    """An action (deploy_site, update_site, update_labels) and its state."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    SCHEMA = {name: ('action', name) for name in (
        'uuid', 'name', 'parameters', 'state', 'result', 'task_uuid',
        'conductor', 'created_at', 'updated_at', 'started_at',
        'finished_at')}
    MASKED = ('parameters',)

    fields = {
        'uuid': fields.UUIDField(),
        'name': fields.StringField(nullable=True),
        'parameters': fields.FlexibleDictField(nullable=True),
        'state': fields.StringField(nullable=True),
        'result': fields.StringField(nullable=True),
        'task_uuid': fields.UUIDField(nullable=True),
        'conductor': fields.StringField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
        'started_at': fields.DateTimeField(nullable=True),
        'finished_at': fields.DateTimeField(nullable=True),
    }

    def __init__(self, action=None, **kwargs):
        super().__init__(**kwargs)
        if action is not None:
            self.populate_schema(action=action)


@base.BaremetalOrchObjectRegistry.register
class ActionControlPayload(ActionPayload):
    """A control of a running action (pause, resume, abort): the action,
    the verb, its reason and who asked."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    SCHEMA = dict(ActionPayload.SCHEMA,
                  state_reason=('action', 'state_reason'))

    fields = dict(ActionPayload.fields, **{
        'state_reason': fields.StringField(nullable=True),
        'verb': fields.StringField(),
        'reason': fields.StringField(nullable=True),
        'requester': fields.StringField(nullable=True),
    })

    def __init__(self, action=None, verb=None, reason=None, requester=None,
                 **kwargs):
        super().__init__(action=action, **kwargs)
        if action is not None:
            self.verb = verb
            self.reason = reason
            self.requester = requester


def _count(value):
    if value is None:
        return None
    if isinstance(value, int):
        return value
    return len(value)


@base.BaremetalOrchObjectRegistry.register
class DeploymentGroupPayload(notification.NotificationPayloadBase):
    """One phase (prepare or deploy) of a deployment group.

    ``report`` is the group's status: ``status``, ``reason``, ``critical``,
    ``misses`` and the ``nodes``, ``succeeded_nodes`` and ``failed_nodes``
    of the group (lists or counts); the payload carries the counts.
    """

    # Version 1.0: Initial version
    VERSION = '1.0'

    SCHEMA = {
        'action_uuid': ('action', 'uuid'),
        'action_name': ('action', 'name'),
        'status': ('report', 'status'),
        'reason': ('report', 'reason'),
        'critical': ('report', 'critical'),
    }

    fields = {
        'action_uuid': fields.UUIDField(),
        'action_name': fields.StringField(nullable=True),
        'group': fields.StringField(),
        'phase': fields.StringField(),
        'status': fields.StringField(nullable=True),
        'reason': fields.StringField(nullable=True),
        'critical': fields.BooleanField(nullable=True),
        'nodes': fields.IntegerField(nullable=True),
        'succeeded_nodes': fields.IntegerField(nullable=True),
        'failed_nodes': fields.IntegerField(nullable=True),
        'misses': ListOfDictsField(default=[]),
    }

    def __init__(self, action=None, group=None, phase=None, report=None,
                 **kwargs):
        super().__init__(**kwargs)
        if action is None:
            return
        report = dict(report or {})
        self.group = group
        self.phase = phase
        for name in ('nodes', 'succeeded_nodes', 'failed_nodes'):
            setattr(self, name, _count(report.get(name)))
        self.misses = [dict(m) for m in report.get('misses') or ()]
        self.populate_schema(action=action, report=report)


@base.BaremetalOrchObjectRegistry.register
class DeploymentSignalPayload(notification.NotificationPayloadBase):
    """A signal received from a node about its deployment.

    Never the token nor its hash.
    """

    # Version 1.0: Initial version
    VERSION = '1.0'

    SCHEMA = {
        'uuid': ('deployment', 'uuid'),
        'node_uuid': ('deployment', 'node_uuid'),
        'action_uuid': ('deployment', 'action_uuid'),
        'conductor': ('deployment', 'conductor'),
        'status': ('deployment', 'status'),
        'status_reason': ('deployment', 'status_reason'),
        'deploy_status_code': ('deployment', 'deploy_status_code'),
        'created_at': ('deployment', 'created_at'),
        'updated_at': ('deployment', 'updated_at'),
    }

    fields = {
        'uuid': fields.UUIDField(),
        'node_uuid': fields.UUIDField(nullable=True),
        'action_uuid': fields.UUIDField(nullable=True),
        'conductor': fields.StringField(nullable=True),
        'status': fields.StringField(nullable=True),
        'status_reason': fields.StringField(nullable=True),
        'deploy_status_code': fields.IntegerField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    def __init__(self, deployment=None, **kwargs):
        super().__init__(**kwargs)
        if deployment is not None:
            self.populate_schema(deployment=deployment)


@base.BaremetalOrchObjectRegistry.register
class ActionNotification(notification.NotificationBase):
    """baremetal.action.run.{start,end,error}."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    EVENT_TYPES = notification.event_types('action', ('run',),
                                           _START_END_ERROR)

    fields = dict(notification.NotificationBase.fields, **{
        'payload': ovo_fields.ObjectField('ActionPayload'),
    })


#: The event types of a control, under the service's own prefix
#: (doc/source/admin/steering.rst, "What is recorded").
CONTROL_EVENT_TYPES = frozenset(
    'baremetal_orch.action.control.%s' % status for status in
    ('start', 'end'))


@base.BaremetalOrchObjectRegistry.register
class ActionControlNotification(notification.NotificationBase):
    """baremetal_orch.action.control.{start,end}: ``start`` when a control
    is taken, ``end`` when the flow carried it out (paused, resumed,
    cancelled)."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    EVENT_TYPES = CONTROL_EVENT_TYPES

    fields = dict(notification.NotificationBase.fields, **{
        'payload': ovo_fields.ObjectField('ActionControlPayload'),
    })


@base.BaremetalOrchObjectRegistry.register
class DeploymentGroupNotification(notification.NotificationBase):
    """baremetal.deployment_group.{prepare,deploy}.{start,end,error}."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    EVENT_TYPES = notification.event_types(
        'deployment_group', ('prepare', 'deploy'), _START_END_ERROR)

    fields = dict(notification.NotificationBase.fields, **{
        'payload': ovo_fields.ObjectField('DeploymentGroupPayload'),
    })


@base.BaremetalOrchObjectRegistry.register
class DeploymentSignalNotification(notification.NotificationBase):
    """baremetal.deployment.signal.{success,end,error}."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    EVENT_TYPES = notification.event_types(
        'deployment', ('signal',), sorted(set(SIGNAL_STATUSES.values())))

    fields = dict(notification.NotificationBase.fields, **{
        'payload': ovo_fields.ObjectField('DeploymentSignalPayload'),
    })
