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
"""The notifier of a process: what sends its versioned notifications.

:func:`get_versioned_notifier` gives the notifier the notifications'
``emit`` uses: its priority methods queue the notification for this
process's one ordered sender, a child process (:mod:`.sender_process`) or a
thread (:mod:`.sender`), per ``[DEFAULT]notification_sender``. Services
start it with :func:`start`, flush it with :func:`flush` and end it with
:func:`cleanup`.
"""

from oslo_config import cfg
from oslo_log import log
import oslo_messaging as messaging

from baremetal_orch.notifications import sender as sender_mod
from baremetal_orch.notifications import sender_process
from baremetal_orch.notifications import serializer

CONF = cfg.CONF
LOG = log.getLogger(__name__)

_TRANSPORT = None
_NOTIFIER = None
#: Whether this process runs a conductor (see start).
_CONDUCTOR = False


def get_transport():
    global _TRANSPORT
    if _TRANSPORT is None:
        _TRANSPORT = messaging.get_notification_transport(CONF)
    return _TRANSPORT


def get_versioned_notifier(publisher_id):
    """A notifier for versioned notifications; None when they are off."""
    global _NOTIFIER
    if not CONF.notification_level:
        return None
    if _NOTIFIER is None:
        # A level set with no [oslo_messaging_notifications]driver means
        # "send them": use the versioned-notification driver. The transport
        # is made in both modes: loading its driver registers the
        # [oslo_messaging_rabbit] options the sender process is given.
        transport = get_transport()
        driver = (None if CONF.oslo_messaging_notifications.driver
                  else 'messagingv2')
        kind = CONF.notification_sender
        if kind == 'auto':
            kind = 'process' if _CONDUCTOR else 'thread'
        if kind == 'process' and CONF.notification_queue_size:
            # A dict crosses to the child (which makes it a context
            # again: oslo.messaging drops a context that is a dict).
            _NOTIFIER = sender_process.ProcessNotificationSender(
                _child_options(driver),
                CONF.versioned_notifications_topics,
                CONF.notification_queue_size,
                serialize_context=lambda c: c.redacted_copy().to_dict())
        else:
            notifier = messaging.Notifier(
                transport, serializer=serializer.NotificationSerializer(),
                driver=driver, topics=CONF.versioned_notifications_topics)
            # A copy: later changes to the request's context do not show.
            _NOTIFIER = sender_mod.NotificationSender(
                notifier, CONF.notification_queue_size,
                serialize_context=lambda c: c.redacted_copy())
        sender_mod.register(_NOTIFIER, CONF.notification_flush_timeout)
    return _NOTIFIER.prepare(publisher_id)


def _logging_options():
    """``{option: value}`` of the service's oslo.log options."""
    probe = cfg.ConfigOpts()
    log.register_options(probe)
    return {name: CONF[name] for name in probe if name in CONF}


def _child_options(driver=None):
    """The messaging and logging options the sender process needs:
    ``{group: {option: value}}`` (``DEFAULT`` for the default group)."""
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


def start(timeout=30, conductor=False):
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


def flush(timeout=None):
    """Wait until this process's notifications were handed to the bus.

    :returns: True when none is left waiting.
    """
    return True if _NOTIFIER is None else _NOTIFIER.flush(timeout)


def flush_at_stop(who):
    """A service stopping: flush for at most
    ``[DEFAULT]notification_flush_timeout`` seconds and log the outcome
    (``"<who>: notifications flushed"``, or ``not all flushed``).

    :returns: True when none is left waiting.
    """
    flushed = flush(CONF.notification_flush_timeout)
    LOG.info('%s: notifications %s', who,
             'flushed' if flushed else 'not all flushed')
    return flushed


def cleanup():
    """Flush and stop the sender, release the transport."""
    global _TRANSPORT, _NOTIFIER
    if _NOTIFIER is not None:
        _NOTIFIER.stop(CONF.notification_flush_timeout)
        sender_mod.unregister(_NOTIFIER)
    if _TRANSPORT is not None:
        _TRANSPORT.cleanup()
    _TRANSPORT = _NOTIFIER = None
