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
"""baremetal-orch-listener: print the versioned notifications.

A sample consumer of the versioned notifications: it listens on
``[DEFAULT]versioned_notifications_topics`` (or ``--topics``) of the
notification transport and writes one JSON line per notification with its
``event_type``, ``publisher_id``, ``priority``, ``payload``, ``timestamp``
and ``message_id``, to stdout or appended to ``--output FILE``. It runs
until SIGINT or SIGTERM.

Give it a ``--pool`` name to receive a copy of every notification without
taking them from other consumers of the same topics.
"""

import json
import signal
import sys
import threading

from oslo_config import cfg
from oslo_log import log
import oslo_messaging as messaging

from baremetal_orch.common import profiler
from baremetal_orch import service

CONF = cfg.CONF
LOG = log.getLogger(__name__)

cli_opts = [
    cfg.StrOpt('output', short='o', metavar='FILE',
               help='Append the notifications to FILE instead of writing '
                    'them to stdout.'),
    cfg.StrOpt('transport-url', dest='listener_transport_url',
               metavar='URL', secret=True,
               help='Listen on this transport instead of the notification '
                    'transport of the configuration files.'),
    cfg.ListOpt('topics', metavar='TOPIC[,TOPIC]',
                help='Topics to listen on; default '
                     '[DEFAULT]versioned_notifications_topics.'),
    cfg.StrOpt('pool', metavar='NAME',
               help='Listener pool: every pool gets its own copy of each '
                    'notification.'),
    cfg.StrOpt('event-type', dest='event_type_filter', metavar='REGEX',
               help='Only the notifications whose event type matches.'),
]

#: The priorities oslo.messaging dispatches (endpoint method names).
PRIORITIES = ('audit', 'debug', 'info', 'warn', 'error', 'critical',
              'sample')


class PrintingEndpoint:
    """Writes one JSON line per notification to a text stream."""

    def __init__(self, stream, event_type=None):
        self._stream = stream
        self._lock = threading.Lock()
        if event_type:
            self.filter_rule = messaging.NotificationFilter(
                event_type=event_type)

    def _record(self, priority, ctxt, publisher_id, event_type, payload,
                metadata):
        line = json.dumps({
            'event_type': event_type,
            'publisher_id': publisher_id,
            'priority': priority.upper(),
            'payload': payload,
            'timestamp': (metadata or {}).get('timestamp'),
            'message_id': (metadata or {}).get('message_id'),
        }, sort_keys=True, default=str)
        with self._lock:
            self._stream.write(line + '\n')
            self._stream.flush()
        return messaging.NotificationResult.HANDLED


def _method(priority):
    def handle(self, ctxt, publisher_id, event_type, payload, metadata):
        return self._record(priority, ctxt, publisher_id, event_type,
                            payload, metadata)
    handle.__name__ = priority
    return handle


for _priority in PRIORITIES:
    setattr(PrintingEndpoint, _priority, _method(_priority))


def get_listener(transport, topics, endpoint, pool=None):
    """A notification listener on ``topics``, threading executor."""
    targets = [messaging.Target(topic=topic) for topic in topics]
    return messaging.get_notification_listener(
        transport, targets, [endpoint], executor='threading', pool=pool)


def serve(transport, topics, stop, stream, pool=None, event_type=None):
    """Listen and write to ``stream`` until ``stop`` (an Event) is set."""
    endpoint = PrintingEndpoint(stream, event_type)
    listener = get_listener(transport, topics, endpoint, pool=pool)
    listener.start()
    LOG.info('Listening for notifications on %s', ', '.join(topics))
    try:
        stop.wait()
    finally:
        listener.stop()
        listener.wait()
    LOG.info('Stopped listening')


def main(argv=None):
    CONF.register_cli_opts(cli_opts)
    service.prepare_service(argv, binary='baremetal-orch-listener')
    profiler.setup_reports('baremetal-orch-listener')
    transport = messaging.get_notification_transport(
        CONF, url=CONF.listener_transport_url)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stream = (open(CONF.output, 'a', encoding='utf-8') if CONF.output
              else sys.stdout)
    try:
        serve(transport,
              CONF.topics or CONF.versioned_notifications_topics,
              stop, stream, pool=CONF.pool,
              event_type=CONF.event_type_filter)
    finally:
        if stream is not sys.stdout:
            stream.close()
        transport.cleanup()
    return 0


if __name__ == '__main__':
    sys.exit(main())
