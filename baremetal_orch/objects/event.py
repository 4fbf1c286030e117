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
"""The Event object: one line of the history shown by ``GET /v1/events``.

Events are written by the conductor as an action runs (its lifecycle, its
groups, its failed nodes, take-overs) and as nodes signal their
deployments. Each names what it is about (``resource_uuid``: the action,
the group's task, or the node) and the action it belongs to
(``action_uuid``), so both filters find it.
"""

from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import base
from baremetal_orch.objects import fields as f

#: An action started running (resource: the action).
ACTION_STARTED = 'action.started'
#: An action ended: ``details.state`` and ``details.result`` (resource: the
#: action).
ACTION_FINISHED = 'action.finished'
#: A conductor took over the action of a dead one (resource: the action).
ACTION_TAKEN_OVER = 'action.taken_over'
#: An action was paused (a control, or its maintenance windows closed):
#: ``details.reason`` and ``details.requester`` (resource: the action).
ACTION_PAUSED = 'action.paused'
#: A paused action was resumed (a control, or a window opened).
ACTION_RESUMED = 'action.resumed'
#: An abort of the action was asked for; it ends ``cancelled``.
ACTION_ABORTED = 'action.aborted'
#: A group of a site action started (resource: the group's task).
GROUP_STARTED = 'group.started'
#: A group ended, with its status, reason and counts (resource: the
#: group's task).
GROUP_FINISHED = 'group.finished'
#: The work of an action on one node failed (resource: the node).
NODE_FAILED = 'node.failed'
#: An Ironic endpoint stopped answering while the action had nodes in
#: flight there in this process: ``details.endpoint``, ``error``,
#: ``nodes`` (in flight), ``started_at`` (resource: the action).
IRONIC_OUTAGE_STARTED = 'ironic.outage.started'
#: That Ironic endpoint answers again: ``details.endpoint``,
#: ``started_at``, ``ended_at``, ``duration`` (seconds), ``nodes``
#: (resource: the action).
IRONIC_OUTAGE_ENDED = 'ironic.outage.ended'

ACTION_EVENT_TYPES = (ACTION_STARTED, ACTION_FINISHED, ACTION_TAKEN_OVER,
                      ACTION_PAUSED, ACTION_RESUMED, ACTION_ABORTED,
                      GROUP_STARTED, GROUP_FINISHED, NODE_FAILED,
                      IRONIC_OUTAGE_STARTED, IRONIC_OUTAGE_ENDED)


@base.BaremetalOrchObjectRegistry.register
class Event(base.BaremetalOrchObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'id': f.IntegerField(),
        'uuid': f.UUIDField(),
        'event_type': f.StringField(),
        'resource_uuid': f.UUIDField(nullable=True),
        'action_uuid': f.UUIDField(nullable=True),
        'message': f.StringField(nullable=True),
        'details': f.FlexibleDictField(nullable=True),
    }
    fields.update(base.BaremetalOrchObject.fields)

    @classmethod
    def list(cls, context, filters=None, limit=None, marker=None,
             sort_key=None, sort_dir=None):
        return cls._from_db_object_list(context, dbapi.list_events(
            filters, limit, marker, sort_key, sort_dir))

    @staticmethod
    def record(event_type, resource_uuid=None, action_uuid=None,
               message=None, details=None):
        """Write one event now."""
        dbapi.create_event(event_type, resource_uuid=resource_uuid,
                           action_uuid=action_uuid, message=message,
                           details=details)

    @staticmethod
    def record_many(events):
        """Write many events in one transaction: dicts with the arguments
        of :meth:`record`."""
        dbapi.create_events(list(events))


def action_started(action, **counts):
    """Record that ``action`` started on its conductor."""
    Event.record(
        ACTION_STARTED, resource_uuid=action.uuid, action_uuid=action.uuid,
        message='%s started on %s' % (action.name, action.conductor),
        details=dict(counts, name=action.name, conductor=action.conductor))


def action_finished(action, error=None):
    """Save the ended ``action`` (its state, result, report) with its
    ``action.finished`` event, in one transaction: a client that sees the
    action ended finds the event in its history."""
    with dbapi.transaction():
        action.save()
        Event.record(
            ACTION_FINISHED, resource_uuid=action.uuid,
            action_uuid=action.uuid,
            message='%s ended %s (%s)%s' % (
                action.name, action.state, action.result,
                ': %s' % error if error else ''),
            details={'name': action.name, 'state': action.state,
                     'result': action.result,
                     'error': str(error) if error else None})


def action_steered(action, event_type, reason=None, requester=None):
    """Record a control of ``action`` (paused, resumed, aborted); the
    message names the requester when there is one (none without
    authentication)."""
    Event.record(
        event_type, resource_uuid=action.uuid, action_uuid=action.uuid,
        message='%s %s%s%s' % (
            action.name, event_type.split('.', 1)[1],
            ' by %s' % requester if requester else '',
            ': %s' % reason if reason else ''),
        details={'name': action.name, 'state': action.state,
                 'reason': reason, 'requester': requester})


def ironic_outage(action_uuid, kind, details):
    """Record that an Ironic endpoint the action has nodes in flight on
    stopped answering (``kind`` ``started``) or answers again
    (``ended``): the ``tell`` of
    :meth:`baremetal_orch.ironic.outage.Outage.watch`."""
    event_type, message = _OUTAGE_EVENTS[kind]
    Event.record(event_type, resource_uuid=action_uuid,
                 action_uuid=action_uuid, message=message % details,
                 details=details)


#: ``{kind: (event type, message)}`` of :func:`ironic_outage`.
_OUTAGE_EVENTS = {
    'started': (IRONIC_OUTAGE_STARTED,
                'Ironic at %(endpoint)s does not answer (%(error)s)'),
    'ended': (IRONIC_OUTAGE_ENDED,
              'Ironic at %(endpoint)s answers again after %(duration).1f s'),
}
