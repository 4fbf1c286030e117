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
"""oslo.messaging plumbing: transports, RPC servers, clients, notifier.

With ``[DEFAULT]rpc_transport = none`` no transport is created for RPC: the
API calls the in-process conductor directly (the all-in-one service).
"""

from oslo_config import cfg
from oslo_log import log
import oslo_messaging as messaging

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import notification_process
from baremetal_orch.common import notification_sender
from baremetal_orch.objects import base as objects_base

CONF = cfg.CONF
LOG = log.getLogger(__name__)

TOPIC = 'baremetal_orch.conductor'

#: Exceptions raised by a conductor come back to the caller as themselves
#: (with their HTTP status), not as a generic RemoteError.
ALLOWED_EXMODS = ['baremetal_orch.common.exception']

_TRANSPORT = None
_NOTIFICATION_TRANSPORT = None
_NOTIFIER = None
#: Whether this process runs a conductor (see start_notifications).
_CONDUCTOR = False

messaging.set_transport_defaults('baremetal_orch')


class ContextSerializer(messaging.Serializer):
    """Serializes the request context and versioned objects."""

    def __init__(self):
        self._base = objects_base.BaremetalOrchObjectSerializer()

    def serialize_entity(self, ctxt, entity):
        return self._base.serialize_entity(ctxt, entity)

    def deserialize_entity(self, ctxt, entity):
        return self._base.deserialize_entity(ctxt, entity)

    def serialize_context(self, ctxt):
        return ctxt.to_dict()

    def deserialize_context(self, ctxt):
        return orch_context.from_dict(ctxt)


class NotificationSerializer(ContextSerializer):
    """Notification payloads are primitives already (a payload object's
    obj_to_primitive()): sent as they are, not walked again."""

    def serialize_entity(self, ctxt, entity):
        return entity


def get_transport():
    global _TRANSPORT
    if _TRANSPORT is None:
        _TRANSPORT = messaging.get_rpc_transport(
            CONF, allowed_remote_exmods=ALLOWED_EXMODS)
    return _TRANSPORT


def get_notification_transport():
    global _NOTIFICATION_TRANSPORT
    if _NOTIFICATION_TRANSPORT is None:
        _NOTIFICATION_TRANSPORT = messaging.get_notification_transport(CONF)
    return _NOTIFICATION_TRANSPORT


def get_client(topic=TOPIC, version='1.0', timeout=None):
    target = messaging.Target(topic=topic, version=version)
    return messaging.get_rpc_client(get_transport(), target,
                                    serializer=ContextSerializer(),
                                    timeout=timeout)


def get_server(host, endpoints, topic=TOPIC):
    target = messaging.Target(topic=topic, server=host)
    return messaging.get_rpc_server(get_transport(), target, endpoints,
                                    executor='threading',
                                    serializer=ContextSerializer())


def get_versioned_notifier(publisher_id):
    """A notifier for versioned notifications; None when they are off.

    Its priority methods queue the notification for this process's sender:
    a child process (:mod:`baremetal_orch.common.notification_process`) or
    a thread (:mod:`baremetal_orch.common.notification_sender`), per
    ``[DEFAULT]notification_sender``.
    """
    global _NOTIFIER
    if not CONF.notification_level:
        return None
    if _NOTIFIER is None:
        # A level set with no [oslo_messaging_notifications]driver means
        # "send them": use the versioned-notification driver. The transport
        # is made in both modes: loading its driver registers the
        # [oslo_messaging_rabbit] options the sender process is given.
        transport = get_notification_transport()
        driver = (None if CONF.oslo_messaging_notifications.driver
                  else 'messagingv2')
        sender = CONF.notification_sender
        if sender == 'auto':
            sender = 'process' if _CONDUCTOR else 'thread'
        if sender == 'process' and CONF.notification_queue_size:
            # A dict crosses to the child (which makes it a context
            # again: oslo.messaging drops a context that is a dict).
            _NOTIFIER = notification_process.ProcessNotificationSender(
                _messaging_options(driver),
                CONF.versioned_notifications_topics,
                CONF.notification_queue_size,
                serialize_context=lambda c: c.redacted_copy().to_dict())
        else:
            notifier = messaging.Notifier(
                transport, serializer=NotificationSerializer(),
                driver=driver, topics=CONF.versioned_notifications_topics)
            # A copy: later changes to the request's context do not show.
            _NOTIFIER = notification_sender.NotificationSender(
                notifier, CONF.notification_queue_size,
                serialize_context=lambda c: c.redacted_copy())
        notification_sender.register(_NOTIFIER,
                                     CONF.notification_flush_timeout)
    return _NOTIFIER.prepare(publisher_id)


def _logging_options():
    """``{option: value}`` of the service's oslo.log options."""
    probe = cfg.ConfigOpts()
    log.register_options(probe)
    return {name: CONF[name] for name in probe if name in CONF}


def _messaging_options(driver=None):
    """The messaging and logging options the notification sender process
    needs: ``{group: {option: value}}`` (``DEFAULT`` for the default
    group)."""
    options = {'DEFAULT': dict(_logging_options(),
                               transport_url=CONF.transport_url,
                               control_exchange=CONF.control_exchange)}
    for group in ('oslo_messaging_notifications', 'oslo_messaging_rabbit',
                  'oslo_messaging_kafka'):
        if group in CONF:
            options[group] = {name: CONF[group][name]
                              for name in CONF[group]}
    if driver:
        options['oslo_messaging_notifications']['driver'] = [driver]
    return options


def start_notifications(timeout=30, conductor=False):
    """Start this process's notification sender now (services call it as
    they start), so the first notifications do not wait for it.

    :param conductor: this process runs a conductor (``auto`` then sends
        from a child process).
    :returns: False when the sender was not ready within ``timeout``.
    """
    global _CONDUCTOR
    _CONDUCTOR = conductor
    if get_versioned_notifier('-') is None:
        return True
    ready = _NOTIFIER.start(timeout)
    if not ready:
        LOG.warning('The notification sender was not ready within %s s',
                    timeout)
    return ready


def flush_notifications(timeout=None):
    """Wait until this process's notifications were handed to the bus.

    :returns: True when none is left waiting.
    """
    return True if _NOTIFIER is None else _NOTIFIER.flush(timeout)


def cleanup():
    global _TRANSPORT, _NOTIFICATION_TRANSPORT, _NOTIFIER
    if _NOTIFIER is not None:
        _NOTIFIER.stop(CONF.notification_flush_timeout)
        notification_sender.unregister(_NOTIFIER)
    for transport in (_TRANSPORT, _NOTIFICATION_TRANSPORT):
        if transport is not None:
            transport.cleanup()
    _TRANSPORT = _NOTIFICATION_TRANSPORT = _NOTIFIER = None
