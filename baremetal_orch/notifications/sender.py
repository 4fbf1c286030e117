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
"""Send versioned notifications from one thread per process, in order.

A request or a node worker hands the notification over and goes on: the
broker's latency, or its absence, never lengthens an API call or a
deployment. One sender thread keeps the order in which the process
emitted them. The queue is bounded by ``[DEFAULT]notification_queue_size``;
when it is full (the broker has been away for long) the newest
notification is dropped and logged, never the request. At exit the
queue is flushed for at most ``[DEFAULT]notification_flush_timeout``
seconds. A queue size of 0 sends in the caller's thread, as
oslo.messaging does by itself.
"""

import atexit
import os
import queue
import threading

from oslo_log import log

LOG = log.getLogger(__name__)

_STOP = object()


def log_dropped(event_type, size, dropped):
    """Log a notification dropped because ``size`` already wait."""
    LOG.error('Dropped the notification %(event)s: %(size)d are already '
              'waiting for the message bus (%(dropped)d dropped so far).',
              {'event': event_type, 'size': size, 'dropped': dropped})


class PreparedSender:
    """What :meth:`oslo_messaging.Notifier.prepare` returns, queued.

    It has the notifier's priority methods (``debug``, ``info``,
    ``warning``, ``error``, ``critical``).
    """

    def __init__(self, sender, publisher_id):
        self._sender = sender
        self._publisher_id = publisher_id

    def __getattr__(self, priority):
        if priority not in ('audit', 'debug', 'info', 'warn', 'warning',
                            'error', 'critical', 'sample'):
            raise AttributeError(priority)

        def send(ctxt, event_type, payload):
            self._sender.send(self._publisher_id, priority, ctxt,
                              event_type, payload)
        return send


class NotificationSender:
    """A bounded queue in front of an :class:`oslo_messaging.Notifier`.

    :param notifier: the oslo.messaging notifier that sends for real.
    :param max_size: the most notifications waiting; 0 sends in the
        caller's thread.
    :param serialize_context: turns a request context into what is queued
        (a copy taken now, so later changes to the context do not show).
    """

    def __init__(self, notifier, max_size, serialize_context=None):
        self._notifier = notifier
        self._max_size = max_size
        self._serialize_context = serialize_context or (lambda c: c)
        self._lock = threading.Lock()
        self._queue = None
        self._thread = None
        self._pid = None
        self.dropped = 0

    def prepare(self, publisher_id):
        return PreparedSender(self, publisher_id)

    def start(self, timeout=None):
        """Start the sender thread now. :returns: True."""
        if self._max_size:
            self._ensure_thread()
        return True

    def _send_now(self, publisher_id, priority, ctxt, event_type, payload):
        notifier = self._notifier.prepare(publisher_id=publisher_id)
        getattr(notifier, priority)(ctxt, event_type, payload)

    def _ensure_thread(self):
        # A forked child (uwsgi workers) starts its own thread and queue.
        if self._running():
            return
        with self._lock:
            if self._running():
                return
            if self._pid != os.getpid() or self._queue is None:
                self._queue = queue.Queue(maxsize=self._max_size)
            self._pid = os.getpid()
            self._thread = threading.Thread(
                target=self._run, args=(self._queue,),
                name='notification-sender', daemon=True)
            self._thread.start()

    def _running(self):
        return (self._pid == os.getpid() and self._thread is not None and
                self._thread.is_alive())

    def send(self, publisher_id, priority, ctxt, event_type, payload):
        """Queue one notification; never blocks, never raises."""
        if not self._max_size:
            self._send_now(publisher_id, priority, ctxt, event_type, payload)
            return
        item = (publisher_id, priority, self._serialize_context(ctxt),
                event_type, payload)
        self._ensure_thread()
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self.dropped += 1
            log_dropped(event_type, self._max_size, self.dropped)

    def _run(self, items):
        while True:
            item = items.get()
            try:
                if item is _STOP:
                    return
                try:
                    self._send_now(*item)
                except Exception:
                    LOG.exception('Failed to send the notification %s',
                                  item[3])
            finally:
                items.task_done()

    def flush(self, timeout=None):
        """Wait until every queued notification was handed to the bus.

        :returns: True when the queue emptied within ``timeout`` seconds.
        """
        items = self._queue
        if items is None or self._pid != os.getpid():
            return True
        with items.all_tasks_done:
            return items.all_tasks_done.wait_for(
                lambda: not items.unfinished_tasks, timeout)

    def stop(self, timeout=None):
        """Flush for at most ``timeout`` seconds, then end the thread.

        :returns: True when nothing was left unsent.
        """
        flushed = self.flush(timeout)
        if not flushed:
            LOG.error('%d notifications could not be sent before the '
                      'service stopped.', self._queue.unfinished_tasks)
        if self._running():
            try:
                self._queue.put_nowait(_STOP)
            except queue.Full:
                pass
            self._thread.join(0 if not flushed else timeout)
        self._thread = self._queue = self._pid = None
        return flushed


_SENDERS = set()


def register(sender, timeout):
    """Flush ``sender`` (at most ``timeout`` seconds) when the process
    exits."""
    _SENDERS.add((sender, timeout))


def unregister(sender):
    for entry in [e for e in _SENDERS if e[0] is sender]:
        _SENDERS.discard(entry)


@atexit.register
def _flush_at_exit():
    for sender, timeout in list(_SENDERS):
        sender.stop(timeout)
