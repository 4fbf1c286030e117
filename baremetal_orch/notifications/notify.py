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
"""Where the service emits its versioned notifications.

Call sites in the API and the conductor call these functions; they build
the payloads of this package (:mod:`.node`, :mod:`.inventory`,
:mod:`.action`) and send them. They
never raise: a notification that cannot be sent is logged. When
``[DEFAULT]notification_level`` filters a notification out, no payload is
built at all.

The publisher id is ``<component>.<host>``, as Ironic's: the component
that emits the notification, ``baremetal-orch-api`` (CRUD, maintenance, a
received signal) or ``baremetal-orch-conductor`` (provisioning, consoles,
actions, groups, labels, a signal timing out), whatever the process; the
all-in-one names both. The host is the one the service gave
:func:`set_publisher` at start-up, else ``[DEFAULT]host``.
"""

import contextlib

from oslo_config import cfg
from oslo_log import log
from oslo_utils import excutils

from baremetal_orch.notifications import action as action_payloads
from baremetal_orch.notifications import base as notification
from baremetal_orch.notifications import inventory as inventory_payloads
from baremetal_orch.notifications import node as node_payloads

CONF = cfg.CONF
LOG = log.getLogger(__name__)

API_SERVICE = 'baremetal-orch-api'
CONDUCTOR_SERVICE = 'baremetal-orch-conductor'

_PUBLISHER = {'service': None, 'host': None}

#: resource -> (notification class, payload class).
_CRUD = {
    'node': (node_payloads.NodeCRUDNotification,
             node_payloads.NodeCRUDPayload),
    'port': (inventory_payloads.PortCRUDNotification,
             inventory_payloads.PortCRUDPayload),
    'chassis': (inventory_payloads.ChassisCRUDNotification,
                inventory_payloads.ChassisCRUDPayload),
}


def set_publisher(service_binary, host=None):
    """Record the process that publishes and its host.

    The publisher id names the component that emits, not the process: the
    binary is kept for the logs only.

    :param service_binary: the console script of the process.
    :param host: defaults to ``[DEFAULT]host`` when notifications are sent.
    """
    _PUBLISHER['service'] = service_binary
    _PUBLISHER['host'] = host


def get_publisher(component=CONDUCTOR_SERVICE):
    """The :class:`NotificationPublisher` of ``component`` here."""
    return notification.NotificationPublisher(
        service=component, host=_PUBLISHER['host'] or CONF.host)


def _publisher_id(component=CONDUCTOR_SERVICE):
    """``get_publisher(component).publisher_id``, without an object."""
    return notification.publisher_id(component,
                                     _PUBLISHER['host'] or CONF.host)


def _safe(func):
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except Exception:
            LOG.exception('Failed to send the notification of %s',
                          func.__name__)
    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


def _emit(context, component, cls, obj, action, status, make_payload):
    """Build and send one notification, unless its level is filtered out.

    :param component: ``API_SERVICE`` or ``CONDUCTOR_SERVICE``, the one
        that emits.

    :param make_payload: a callable returning the payload, called only when
        the notification will be sent.
    :returns: True when the notification was handed to the notifier.
    """
    level = notification.level_for(status)
    # The event type is checked even when nothing is sent, so a wrong call
    # site shows in the logs of every deployment.
    event_type = notification.EventType(object=obj, action=action,
                                        status=status)
    if not notification.should_send(level):
        return False
    return cls(level=level, event_type=event_type,
               publisher=get_publisher(component),
               payload=make_payload()).emit(context)


def _reason(exc):
    return None if exc is None else str(exc) or type(exc).__name__


@_safe
def crud(context, resource, action, status, obj, exc=None):
    """baremetal.<node|port|chassis>.<create|update|delete>.<status>."""
    cls, payload_cls = _CRUD[resource]
    return _emit(context, API_SERVICE, cls, resource, action, status,
                 lambda: payload_cls(obj))


@contextlib.contextmanager
def crud_scope(context, resource, action, obj):
    """Wrap a create, update or delete: start before, end after, error
    (then the original exception) when it raises."""
    crud(context, resource, action, 'start', obj)
    try:
        yield
    except Exception as e:
        with excutils.save_and_reraise_exception():
            crud(context, resource, action, 'error', obj, exc=e)
    crud(context, resource, action, 'end', obj)


def provision_sent(status):
    """Whether :func:`provision` notifications ending ``status`` pass
    ``[DEFAULT]notification_level``: a group's state change asks once,
    not once a node. An unknown status raises, sent or not."""
    node_payloads.NodeSetProvisionStateNotification.check_event_type(
        notification.event_type_name('node', 'provision_set', status))
    return notification.should_send(notification.level_for(status))


@_safe
def provision(context, node, status, prev_state, prev_target, event):
    """baremetal.node.provision_set.<start|end|success|error>."""
    # The hot path of the conductor (six a node and deploy): the payload's
    # primitive is built without a versioned object (the object stays the
    # schema: NodeSetProvisionStatePayload.primitive_of).
    return notification.emit_primitive(
        context, node_payloads.NodeSetProvisionStateNotification,
        notification.event_type_name('node', 'provision_set', status),
        notification.level_for(status), _publisher_id(CONDUCTOR_SERVICE),
        lambda: node_payloads.NodeSetProvisionStatePayload.primitive_of(
            {'node': node}, {'previous_provision_state': prev_state,
                             'previous_target_provision_state': prev_target,
                             'event': event}))


@_safe
def maintenance(context, node, status, exc=None):
    """baremetal.node.maintenance_set.<start|end|error>."""
    return _emit(context, API_SERVICE,
                 node_payloads.NodeMaintenanceNotification,
                 'node', 'maintenance_set', status,
                 lambda: node_payloads.NodePayload(node))


@_safe
def console(context, node, action, status, exc=None):
    """baremetal.node.console_<set|restore>.<start|end|error>."""
    return _emit(context, CONDUCTOR_SERVICE,
                 node_payloads.NodeConsoleNotification,
                 'node', 'console_%s' % action, status,
                 lambda: node_payloads.NodePayload(node))


@_safe
def action(context, action, status, exc=None):
    """baremetal.action.run.<start|end|error>."""
    return _emit(context, CONDUCTOR_SERVICE,
                 action_payloads.ActionNotification,
                 'action', 'run', status,
                 lambda: action_payloads.ActionPayload(action))


@_safe
def action_control(context, action, verb, status, reason=None,
                   requester=None):
    """baremetal_orch.action.control.<start|end>."""
    return notification.emit_primitive(
        context, action_payloads.ActionControlNotification,
        'baremetal_orch.action.control.%s' % status,
        notification.level_for(status), _publisher_id(CONDUCTOR_SERVICE),
        lambda: action_payloads.ActionControlPayload.primitive_of(
            {'action': action},
            {'verb': verb, 'reason': reason, 'requester': requester}))


def _group_report(status, report):
    # A phase that starts has no outcome yet: its group runs, with its
    # nodes and criticality.
    if status == 'start':
        report = report or {}
        return {'status': 'running', 'nodes': report.get('nodes'),
                'critical': report.get('critical')}
    return report


def group_sent(phase, status):
    """Whether :func:`group` notifications of ``phase`` ending ``status``
    pass ``[DEFAULT]notification_level``: the group's report is built only
    then. An unknown phase or status raises, sent or not."""
    action_payloads.DeploymentGroupNotification.check_event_type(
        notification.event_type_name('deployment_group', phase, status))
    return notification.should_send(notification.level_for(status))


@_safe
def group(context, action, group, phase, status, report=None):
    """baremetal.deployment_group.<prepare|deploy>.<start|end|error>.

    :param report: the group's entry of the action's report
        (``status``, ``reason``, ``misses``, ``critical``, ``nodes``,
        ``succeeded_nodes``, ``failed_nodes``: lists or counts); of a
        phase's ``start``, only ``nodes`` and ``critical`` are sent.
    """
    return _emit(context, CONDUCTOR_SERVICE,
                 action_payloads.DeploymentGroupNotification,
                 'deployment_group', phase, status,
                 lambda: action_payloads.DeploymentGroupPayload(
                     action, group, phase,
                     _group_report(status, report)))


@_safe
def signal(context, deployment, status, component=API_SERVICE):
    """baremetal.deployment.signal.<success|end|error>.

    :param status: the signal's status, ``IN_PROGRESS`` (success),
        ``COMPLETE`` (end) or ``FAILED`` (error).
    :param component: the API for a signal received, the conductor for
        one that timed out.
    """
    status = action_payloads.SIGNAL_STATUSES.get(str(status).upper(),
                                                 status)
    return _emit(context, component,
                 action_payloads.DeploymentSignalNotification,
                 'deployment', 'signal', status,
                 lambda: action_payloads.DeploymentSignalPayload(deployment))


@_safe
def labels(context, action, node, status, diff=None, exc=None):
    """baremetal.node.labels_set.<start|end|error>."""
    return _emit(context, CONDUCTOR_SERVICE,
                 node_payloads.NodeLabelsNotification,
                 'node', 'labels_set', status,
                 lambda: node_payloads.NodeLabelsPayload(
                     node, action, diff, _reason(exc)))
