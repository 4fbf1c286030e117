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
"""Taking a control of a running action: ``POST /v1/actions/{uuid}/control``.

The control is stored in the action's row (compare-and-swap against the
steering read, so two controls or a control and the flow's own move never
overwrite each other), recorded as an event and a notification, and the
flow of the action is woken when it runs in this process; a flow that runs
elsewhere reads it within :attr:`ActionSteering.REFRESH` seconds, and a
conductor that resumes or takes the action over reads it from the row.
"""

from oslo_log import log

from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import control
from baremetal_orch.flows import steering
from baremetal_orch.notifications import notify
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import event as event_obj

LOG = log.getLogger(__name__)

#: The actions whose flow carries out controls.
STEERABLE = (action_obj.DEPLOY_SITE, action_obj.UPDATE_SITE, action_obj.RETRY)

_EVENTS = {control.PAUSE: event_obj.ACTION_PAUSED,
           control.RESUME: event_obj.ACTION_RESUMED,
           control.ABORT: event_obj.ACTION_ABORTED}

#: Attempts when the steering changed between the read and the write.
_ATTEMPTS = 5


def requester_of(context):
    return (getattr(context, 'user_id', None) or
            getattr(context, 'project_id', None))


def take(context, uuid, verb, reason=None):
    """Apply ``verb`` to the action ``uuid``; returns the action.

    :raises: Conflict naming the state when the verb does not apply.
    """
    if verb not in control.VERBS:
        raise exception.InvalidParameterValue(
            reason='verb must be one of %s, not %r'
            % (', '.join(control.VERBS), verb))
    for _attempt in range(_ATTEMPTS):
        action = action_obj.Action.get(context, uuid)
        if action.name not in STEERABLE:
            raise exception.Conflict(
                reason='cannot %s action %s: an %s action cannot be '
                       'steered' % (verb, uuid, action.name))
        current = control.Steering(action.state, action.control,
                                   action.state_reason)
        try:
            new = control.apply(current, verb, reason)
        except exception.Conflict:
            raise exception.Conflict(
                reason='cannot %s action %s: %s' % (
                    verb, uuid, control.describe(current)))
        if dbapi.steer_action(uuid, (current.state, current.control),
                              new._asdict()):
            break
    else:
        raise exception.Conflict(
            reason='action %s changed while the %s was taken; send it '
                   'again' % (uuid, verb))
    action = action_obj.Action.get(context, uuid)
    requester = requester_of(context)
    LOG.info('Action %s: %s%s%s', uuid, verb,
             ' by %s' % requester if requester else '',
             ': %s' % reason if reason else '')
    event_obj.action_steered(action, _EVENTS[verb], reason=reason,
                             requester=requester)
    notify.action_control(context, action, verb, 'start', reason=reason,
                          requester=requester)
    if verb == control.RESUME or new.state == action_obj.PAUSED:
        # Nothing to wait for: the flow starts work again at once, or
        # nothing was in flight (a pause of an action its windows hold).
        notify.action_control(context, action, verb, 'end', reason=reason,
                              requester=requester)
    steering.wake(uuid)
    return action
