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
"""P5: a deploy_site of N fake nodes with versioned notifications sent to
RabbitMQ, against the same with notifications off. One mode per process
(``--mode on|off``); run.py compares them.

The time counted ends when the action ended *and* every notification was
handed to the broker (the sender thread's queue is empty), so sending them
later does not hide their cost.
"""

import argparse
import json
import sys
import time

from baremetal_orch.notifications import notifier
from tools.benchmarks import harness

GROUPS = 5
URL = 'rabbit://guest:guest@127.0.0.1:5672/'
KOMBU_URL = 'amqp://guest:guest@127.0.0.1:5672//'
#: Where the rabbit driver puts the info notifications (it declares the
#: queue when it first sends, so nothing is dropped without a listener).
QUEUE = 'baremetal_orch_versioned_notifications.info'


def _queue(delete=False):
    """Messages waiting in QUEUE (0 when it does not exist); ``delete``
    removes it afterwards."""
    import amqp
    import kombu
    with kombu.Connection(KOMBU_URL) as conn:
        channel = conn.channel()
        try:
            _name, count, _consumers = channel.queue_declare(
                queue=QUEUE, passive=True)
        except amqp.exceptions.NotFound:
            return 0
        if delete:
            conn.channel().queue_delete(QUEUE)
        return count


def run(size, on):
    overrides = {('conductor', 'max_concurrent_nodes'): 32}
    if on:
        _queue(delete=True)
        overrides.update({
            ('DEFAULT', 'notification_level'): 'info',
            ('DEFAULT', 'transport_url'): URL,
            ('oslo_messaging_notifications', 'driver'): ['messagingv2']})
    svc = harness.Service(overrides={
        (None if g == 'DEFAULT' else g, n): v
        for (g, n), v in overrides.items()})
    try:
        groups = ['g%d' % i for i in range(GROUPS)]
        svc.add_nodes([{'name': 'n%05d' % i, 'tags': [groups[i % GROUPS]]}
                       for i in range(size)])
        svc.add_strategy(harness.chain_strategy('p5', groups))
        action, seconds = svc.run_action('p5')
        assert action.result == 'success', action.report
        started = time.monotonic()
        if not notifier.flush(600):
            raise RuntimeError('notifications still queued after 600 s')
        flush = time.monotonic() - started
        seconds += flush
    finally:
        svc.stop()
    delivered = _queue(delete=True) if on else 0
    if on and delivered < size:
        raise RuntimeError('only %d notifications reached RabbitMQ for %d '
                           'nodes' % (delivered, size))
    return seconds, delivered, flush


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--mode', choices=['on', 'off'], required=True)
    parser.add_argument('--nodes', type=int, default=1000)
    args = parser.parse_args(argv)
    seconds, delivered, flush = run(args.nodes, args.mode == 'on')
    print(json.dumps({'mode': args.mode, 'nodes': args.nodes,
                      'seconds': round(seconds, 3),
                      'delivered': delivered,
                      # Of the seconds: waiting for the queue to empty once
                      # the action ended.
                      'flush_seconds': round(flush, 3)}))


if __name__ == '__main__':
    sys.exit(main())
