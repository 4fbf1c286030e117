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
"""Tests of the per-process notification sender thread."""

import threading

import fixtures

from baremetal_orch.notifications import sender as notification_sender
from baremetal_orch.tests import base


class RecordingNotifier:
    """Stands for oslo_messaging.Notifier: records, or blocks until
    ``release`` is set."""

    def __init__(self, block=False, fail_on=()):
        self.sent = []
        self.threads = set()
        self.release = threading.Event()
        if not block:
            self.release.set()
        self.fail_on = fail_on
        self.entered = threading.Event()

    def prepare(self, publisher_id):
        notifier = self

        class Prepared:
            def __getattr__(self, priority):
                def send(ctxt, event_type, payload):
                    notifier.entered.set()
                    notifier.release.wait(30)
                    notifier.threads.add(threading.current_thread().name)
                    if event_type in notifier.fail_on:
                        raise RuntimeError('the bus said no')
                    notifier.sent.append((publisher_id, priority, ctxt,
                                          event_type, payload))
                return send
        return Prepared()


class TestNotificationSender(base.TestCase):

    def make(self, notifier, size=100, serialize=None):
        sender = notification_sender.NotificationSender(
            notifier, size, serialize_context=serialize)
        self.addCleanup(sender.stop, 5)
        return sender

    def test_sends_in_order_from_one_thread(self):
        bus = RecordingNotifier()
        sender = self.make(bus)
        prepared = sender.prepare('baremetal-orch-api.h1')
        for i in range(50):
            prepared.info({'i': i}, 'baremetal.node.create.start', {'n': i})
        self.assertTrue(sender.flush(10))
        self.assertEqual(list(range(50)), [p['n'] for *_, p in bus.sent])
        self.assertEqual({'notification-sender'}, bus.threads)
        self.assertEqual(('baremetal-orch-api.h1', 'info'), bus.sent[0][:2])

    def test_a_blocked_bus_does_not_block_the_caller(self):
        bus = RecordingNotifier(block=True)
        sender = self.make(bus)
        sender.prepare('p').info({}, 'e1', {})
        sender.prepare('p').error({}, 'e2', {})
        # Both calls returned although the bus holds the first one.
        self.assertTrue(bus.entered.wait(10))
        self.assertEqual([], bus.sent)
        self.assertFalse(sender.flush(0.05))
        bus.release.set()
        self.assertTrue(sender.flush(10))
        self.assertEqual(['e1', 'e2'], [s[3] for s in bus.sent])

    def test_full_queue_drops_the_newest_and_logs(self):
        log = self.useFixture(fixtures.FakeLogger())
        bus = RecordingNotifier(block=True)
        sender = self.make(bus, size=2)
        prepared = sender.prepare('p')
        prepared.info({}, 'first', {})
        self.assertTrue(bus.entered.wait(10))   # taken by the thread
        prepared.info({}, 'second', {})
        prepared.info({}, 'third', {})
        prepared.info({}, 'dropped', {})
        self.assertEqual(1, sender.dropped)
        self.assertIn('Dropped the notification dropped', log.output)
        bus.release.set()
        self.assertTrue(sender.flush(10))
        self.assertEqual(['first', 'second', 'third'],
                         [s[3] for s in bus.sent])

    def test_a_failed_send_is_logged_and_the_next_goes(self):
        log = self.useFixture(fixtures.FakeLogger())
        bus = RecordingNotifier(fail_on=('bad',))
        sender = self.make(bus)
        sender.prepare('p').info({}, 'bad', {})
        sender.prepare('p').info({}, 'good', {})
        self.assertTrue(sender.flush(10))
        self.assertEqual(['good'], [s[3] for s in bus.sent])
        self.assertIn('Failed to send the notification bad', log.output)

    def test_context_is_copied_when_queued(self):
        bus = RecordingNotifier(block=True)
        sender = self.make(bus, serialize=dict)
        ctxt = {'request_id': 'req-1'}
        sender.prepare('p').info(ctxt, 'e', {})
        ctxt['request_id'] = 'req-2'
        bus.release.set()
        self.assertTrue(sender.flush(10))
        self.assertEqual({'request_id': 'req-1'}, bus.sent[0][2])

    def test_size_zero_sends_in_the_callers_thread(self):
        bus = RecordingNotifier()
        sender = self.make(bus, size=0)
        sender.prepare('p').warning({}, 'e', {})
        self.assertEqual(['e'], [s[3] for s in bus.sent])
        self.assertEqual({threading.current_thread().name}, bus.threads)

    def test_stop_flushes_then_ends_the_thread(self):
        bus = RecordingNotifier()
        sender = self.make(bus)
        for i in range(10):
            sender.prepare('p').info({}, 'e%d' % i, {})
        thread = sender._thread
        self.assertTrue(sender.stop(10))
        self.assertEqual(10, len(bus.sent))
        thread.join(10)
        self.assertFalse(thread.is_alive())
        # A later notification starts a new thread.
        sender.prepare('p').info({}, 'later', {})
        self.assertTrue(sender.flush(10))
        self.assertEqual('later', bus.sent[-1][3])

    def test_stop_gives_up_on_a_bus_that_never_answers(self):
        log = self.useFixture(fixtures.FakeLogger())
        bus = RecordingNotifier(block=True)
        sender = self.make(bus)
        sender.prepare('p').info({}, 'e', {})
        self.assertTrue(bus.entered.wait(10))
        self.assertFalse(sender.stop(0.05))
        self.assertIn('1 notifications could not be sent', log.output)
        bus.release.set()

    def test_unknown_priority_is_an_attribute_error(self):
        sender = self.make(RecordingNotifier())
        self.assertRaises(AttributeError, getattr, sender.prepare('p'),
                          'shout')

    def test_flush_with_nothing_sent(self):
        self.assertTrue(self.make(RecordingNotifier()).flush(0))
