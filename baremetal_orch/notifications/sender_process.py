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
"""Send versioned notifications from a child process, in order.

Publishing one notification through oslo.messaging's rabbit driver costs
about a millisecond of Python: in a conductor deploying a thousand nodes
that is seconds taken from the node workers under one interpreter lock.
With ``[DEFAULT]notification_sender = process`` the service hands each
notification (an already serialized context and payload) to one child
process of its own, which runs the oslo.messaging notifier with the
service's messaging options and sends them in the order they came.

The same interface as :class:`.sender.NotificationSender`:
``prepare(publisher_id).<priority>(ctxt, event_type, payload)``,
``flush(timeout)``, ``stop(timeout)``; bounded by
``[DEFAULT]notification_queue_size``, dropping (and logging) the newest when
full. A child that dies is started again on the next notification.
"""

import multiprocessing
import os
import queue
import signal
import threading
import time

from oslo_log import log

from baremetal_orch.notifications import sender as sender_mod

LOG = log.getLogger(__name__)

_STOP = 'stop'


def make_conf(options):
    """A configuration holding the messaging and logging ``options``
    (``{group: {option: value}}``, ``DEFAULT`` for the default group)."""
    from oslo_config import cfg
    from oslo_messaging import opts as messaging_opts

    conf = cfg.ConfigOpts()
    for group, opts in messaging_opts.list_opts():
        conf.register_opts(opts, group=group)
    # The service's own logging options: log_file, debug, levels...
    log.register_options(conf)
    conf([], project='baremetal_orch', default_config_files=[])
    for group, values in options.items():
        for name, value in values.items():
            try:
                conf.set_override(name, value, group=None
                                  if group == 'DEFAULT' else group)
            except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
                LOG.debug('No option %s in [%s] here', name, group)
    return conf


#: Signals the child ignores: those sent to every process of the service
#: (systemd's KillMode=control-group, a terminal's Ctrl-C, a reload). Its
#: parent stops it once the queue is flushed; a parent killed with SIGKILL
#: is noticed within a second (see :func:`_child_main`).
IGNORED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _run_child(target, *args):
    """The child process's entry point: ignore :data:`IGNORED_SIGNALS`,
    then run ``target(*args)``.

    The child starts with them blocked (:meth:`ProcessNotificationSender.
    _start_child`): one sent while the interpreter starts is discarded here,
    not fatal."""
    for signum in IGNORED_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, IGNORED_SIGNALS)
    target(*args)


def _child_main(options, topics, items, sent, ready):
    """The child: a notifier built from ``options``; send what comes."""
    # Imported here: the parent needs none of it to start the child.
    from baremetal_orch.common import backend  # noqa: F401  (first)
    import oslo_messaging as messaging

    from baremetal_orch.common import context as orch_context
    from baremetal_orch.notifications import serializer

    conf = make_conf(options)
    # Logging as the service's: with [oslo_messaging_notifications]driver
    # = log the notifications land in the service's log_file.
    log.setup(conf, 'baremetal-orch')
    transport = messaging.get_notification_transport(conf)
    notifier = messaging.Notifier(
        transport, serializer=serializer.NotificationSerializer(),
        topics=topics)
    ready.set()
    parent = os.getppid()
    try:
        while True:
            try:
                item = items.get(timeout=1)
            except queue.Empty:
                # A service killed with SIGKILL leaves no one to stop us.
                if os.getppid() != parent:
                    return
                continue
            if item == _STOP:
                return
            publisher_id, priority, ctxt, event_type, payload = item
            try:
                ctxt = orch_context.from_dict(ctxt)
                getattr(notifier.prepare(publisher_id=publisher_id),
                        priority)(ctxt, event_type, payload)
            except Exception:
                LOG.exception('Failed to send the notification %s',
                              event_type)
            with sent.get_lock():
                sent.value += 1
    finally:
        transport.cleanup()


class ProcessNotificationSender:
    """A bounded queue to a child process that sends the notifications.

    :param options: ``{group: {option: value}}``: the messaging options of
        the service (transport URL, ``[oslo_messaging_*]``), applied in the
        child.
    :param topics: the notification topics.
    :param max_size: the most notifications waiting.
    :param serialize_context: turns a request context into what is queued.
    :param target: what the child runs (tests replace it).
    """

    def __init__(self, options, topics, max_size, serialize_context,
                 target=_child_main):
        self._target = target
        self._options = options
        self._topics = list(topics)
        self._max_size = max_size
        self._serialize_context = serialize_context
        self._ctx = multiprocessing.get_context('spawn')
        self._lock = threading.Lock()
        self._child = None
        self._pid = None
        self._items = None
        self._sent = None
        self._ready = None
        self._queued = 0
        self.dropped = 0

    def prepare(self, publisher_id):
        return sender_mod.PreparedSender(self, publisher_id)

    def _running(self):
        return (self._pid == os.getpid() and self._child is not None and
                self._child.is_alive())

    def _ensure_child(self):
        if self._running():
            return
        with self._lock:
            if self._running():
                return
            if self._child is not None and self._pid == os.getpid():
                lost = self._queued - self._sent.value
                LOG.error('The notification sender process ended (exit '
                          'code %s); %d notifications may be lost; '
                          'starting it again.', self._child.exitcode,
                          max(lost, 0))
            self._items = self._ctx.Queue(maxsize=self._max_size)
            self._sent = self._ctx.Value('Q', 0)
            self._ready = self._ctx.Event()
            self._queued = 0
            self._child = self._ctx.Process(
                target=_run_child, name='notification-sender',
                args=(self._target, self._options, self._topics,
                      self._items, self._sent, self._ready),
                daemon=True)
            self._start_child()
            self._pid = os.getpid()

    def _start_child(self):
        # Blocked in this thread while the child is spawned: the child
        # inherits the mask and ignores them once it runs (_run_child).
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, IGNORED_SIGNALS)
        try:
            self._child.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def start(self, timeout=None):
        """Start the child now (a service starting) rather than with the
        first notification, and wait until it can send.

        :returns: True when it is ready within ``timeout`` seconds.
        """
        self._ensure_child()
        return self._ready.wait(timeout)

    def send(self, publisher_id, priority, ctxt, event_type, payload):
        """Queue one notification; never blocks, never raises."""
        item = (publisher_id, priority, self._serialize_context(ctxt),
                event_type, payload)
        try:
            self._ensure_child()
            with self._lock:
                self._items.put_nowait(item)
                self._queued += 1
        except queue.Full:
            self.dropped += 1
            sender_mod.log_dropped(event_type, self._max_size,
                                   self.dropped)
        except Exception:
            LOG.exception('Could not hand the notification %s to the '
                          'sender process', event_type)

    def flush(self, timeout=None):
        """Wait until the child handed every queued notification to the
        bus. :returns: True when none is left waiting."""
        if self._child is None or self._pid != os.getpid():
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._sent.value < self._queued:
            if not self._child.is_alive():
                return False
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def stop(self, timeout=None):
        """Flush for at most ``timeout`` seconds, then end the child.

        :returns: True when nothing was left unsent.
        """
        if self._child is None or self._pid != os.getpid():
            self._child = self._pid = None
            return True
        flushed = self.flush(timeout)
        if not flushed:
            LOG.error('%d notifications could not be sent before the '
                      'service stopped.',
                      max(self._queued - self._sent.value, 0))
        try:
            self._items.put(_STOP, timeout=1)
        except Exception:
            pass
        self._child.join(timeout if flushed else 0)
        if self._child.is_alive():
            self._child.kill()  # it ignores SIGTERM
            self._child.join(5)
        self._items.close()
        self._items.cancel_join_thread()
        self._child = self._pid = None
        return flushed
