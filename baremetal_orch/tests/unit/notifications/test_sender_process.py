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
"""Tests of the notification sender process (a real child process; what it
would publish is written to a file instead)."""

import json
import os
import signal
import time

import fixtures

from baremetal_orch.notifications import sender_process as notification_process
from baremetal_orch.tests import base


def recording_child(options, topics, items, sent, ready):
    """A child that appends what it would send to options['path']; it
    waits while options['hold'] exists."""
    ready.set()
    while True:
        item = items.get()
        if item == notification_process._STOP:
            return
        while os.path.exists(options['hold']):
            time.sleep(0.01)
        with open(options['path'], 'a') as f:
            f.write(json.dumps([os.getpid()] + list(item)) + '\n')
        with sent.get_lock():
            sent.value += 1


class TestProcessSender(base.TestCase):

    def setUp(self):
        super().setUp()
        tmp = self.useFixture(fixtures.TempDir()).path
        self.path = os.path.join(tmp, 'sent.jsonl')
        self.hold = os.path.join(tmp, 'hold')

    def make(self, size=100):
        sender = notification_process.ProcessNotificationSender(
            {'path': self.path, 'hold': self.hold}, ['t'], size,
            serialize_context=dict, target=recording_child)
        self.addCleanup(sender.stop, 10)
        return sender

    def sent(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path) as f:
            return [json.loads(line) for line in f]

    def test_in_order_from_a_child_process(self):
        sender = self.make()
        prepared = sender.prepare('baremetal-orch-conductor.h')
        for i in range(30):
            prepared.info({'request_id': 'r%d' % i}, 'e%d' % i, {'i': i})
        self.assertTrue(sender.flush(30))
        rows = self.sent()
        self.assertEqual(['e%d' % i for i in range(30)],
                         [r[4] for r in rows])
        self.assertNotEqual(os.getpid(), rows[0][0])
        self.assertEqual(['baremetal-orch-conductor.h', 'info',
                          {'request_id': 'r0'}, 'e0', {'i': 0}], rows[0][1:])

    def test_flush_waits_for_the_child(self):
        open(self.hold, 'w').close()
        sender = self.make()
        sender.prepare('p').error({}, 'held', {})
        self.assertFalse(sender.flush(0.2))
        os.unlink(self.hold)
        self.assertTrue(sender.flush(30))
        self.assertEqual(['held'], [r[4] for r in self.sent()])

    def test_full_queue_drops_and_logs(self):
        log = self.useFixture(fixtures.FakeLogger())
        open(self.hold, 'w').close()
        sender = self.make(size=2)
        prepared = sender.prepare('p')
        for i in range(10):
            prepared.info({}, 'e%d' % i, {})
        self.assertGreaterEqual(sender.dropped, 7)
        self.assertIn('Dropped the notification', log.output)
        os.unlink(self.hold)
        self.assertTrue(sender.flush(30))
        self.assertEqual(10 - sender.dropped, len(self.sent()))

    def test_a_dead_child_is_started_again(self):
        log = self.useFixture(fixtures.FakeLogger())
        sender = self.make()
        sender.prepare('p').info({}, 'first', {})
        self.assertTrue(sender.flush(30))
        first = sender._child
        first.kill()
        first.join(10)
        sender.prepare('p').info({}, 'second', {})
        self.assertTrue(sender.flush(30))
        pids = [r[0] for r in self.sent()]
        self.assertEqual(2, len(set(pids)))
        self.assertIn('notification sender process ended', log.output)

    def test_start_now(self):
        sender = self.make()
        self.assertTrue(sender.start(30))
        child = sender._child
        self.assertTrue(child.is_alive())
        sender.prepare('p').info({}, 'e', {})
        self.assertIs(child, sender._child)
        self.assertTrue(sender.flush(30))

    def test_the_child_outlives_a_signal_to_the_process_group(self):
        # systemd (KillMode=control-group) and a terminal's Ctrl-C signal
        # every process of the service: the child keeps sending what is
        # queued until its parent, stopping gracefully, stops it.
        # While it starts (its interpreter still booting), then running.
        open(self.hold, 'w').close()
        sender = self.make()
        sender.prepare('p').info({}, 'first', {})
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            os.kill(sender._child.pid, signum)
        self.assertTrue(sender.start(30))
        sender.prepare('p').info({}, 'second', {})
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            os.kill(sender._child.pid, signum)
        time.sleep(0.5)
        self.assertTrue(sender._child.is_alive())
        os.unlink(self.hold)
        self.assertTrue(sender.flush(30))
        self.assertEqual(['first', 'second'], [r[4] for r in self.sent()])

    def test_stop_ends_a_stuck_child(self):
        open(self.hold, 'w').close()
        sender = self.make()
        sender.prepare('p').info({}, 'stuck', {})
        child = sender._child
        self.assertFalse(sender.stop(0.2))
        self.assertFalse(child.is_alive())

    def test_stop_ends_the_child(self):
        sender = self.make()
        sender.prepare('p').info({}, 'e', {})
        child = sender._child
        self.assertTrue(sender.stop(30))
        self.assertFalse(child.is_alive())
        self.assertEqual(['e'], [r[4] for r in self.sent()])
        self.assertTrue(sender.flush(0))


class TestChoice(base.TestCase):
    """Which sender notifier.get_versioned_notifier() builds."""

    def setUp(self):
        super().setUp()
        from oslo_messaging import conffixture

        from baremetal_orch.notifications import notifier
        self.rpc = notifier
        messaging = self.useFixture(conffixture.ConfFixture(base.CONF))
        messaging.transport_url = 'fake:/'
        self.config(notification_level='info')
        notifier.cleanup()
        self.addCleanup(notifier.cleanup)

    def sender(self):
        return self.rpc.get_versioned_notifier('p')._sender

    def conductor_sender(self):
        self.useFixture(fixtures.MockPatchObject(self.rpc, '_CONDUCTOR',
                                                 True))
        return self.sender()

    def test_auto(self):
        from baremetal_orch.notifications import sender as notification_sender
        self.assertIsInstance(self.sender(),
                              notification_sender.NotificationSender)
        self.rpc.cleanup()
        self.assertIsInstance(self.conductor_sender(),
                              notification_process.ProcessNotificationSender)

    def test_process_in_a_conductor_with_the_messaging_options(self):
        sender = self.conductor_sender()
        self.assertIsInstance(sender,
                              notification_process.ProcessNotificationSender)
        options = sender._options
        self.assertEqual('fake:/', options['DEFAULT']['transport_url'])
        # A level and no driver: the versioned-notification driver.
        self.assertEqual(['messagingv2'], options[
            'oslo_messaging_notifications']['driver'])
        self.assertEqual(['baremetal_orch_versioned_notifications'],
                         sender._topics)

    def test_the_child_configuration_holds_the_options(self):
        self.config(control_exchange='orch-x')
        options = self.conductor_sender()._options
        conf = notification_process.make_conf(options)
        self.assertEqual('fake:/', conf.transport_url)
        self.assertEqual('orch-x', conf.control_exchange)
        self.assertEqual(['messagingv2'],
                         conf.oslo_messaging_notifications.driver)
        for name in ('ssl', 'heartbeat_timeout_threshold'):
            self.assertEqual(base.CONF.oslo_messaging_rabbit[name],
                             conf.oslo_messaging_rabbit[name])

    def test_thread_when_asked_or_unqueued(self):
        from baremetal_orch.notifications import sender as notification_sender
        for sender, size in (('thread', 10), ('process', 0)):
            self.rpc.cleanup()
            self.config(notification_sender=sender,
                        notification_queue_size=size)
            self.assertIsInstance(self.conductor_sender(),
                                  notification_sender.NotificationSender)


class TestChildMain(base.TestCase):
    """What the child runs, run here on the fake transport."""

    def test_sends_with_the_request_context(self):
        import multiprocessing
        import queue
        import threading

        from oslo_messaging.notify import _impl_test

        from baremetal_orch.common import context as orch_context

        _impl_test.reset()
        self.addCleanup(_impl_test.reset)
        ctxt = orch_context.RequestContext(
            user_id='u-1', project_id='p-1', auth_token='s3cr3t-token',
            roles=['member'])
        items = queue.Queue()
        items.put(('pub.h', 'info', ctxt.redacted_copy().to_dict(),
                   'baremetal.node.update.end', {'a': 1}))
        items.put(notification_process._STOP)
        sent = multiprocessing.Value('Q', 0)
        ready = threading.Event()
        notification_process._child_main(
            {'DEFAULT': {'transport_url': 'fake:/'},
             'oslo_messaging_notifications': {'driver': ['test']}},
            ['t'], items, sent, ready)
        self.assertTrue(ready.is_set())
        self.assertEqual(1, sent.value)
        [(sent_ctxt, message, priority, _retry)] = _impl_test.NOTIFICATIONS
        self.assertEqual(('u-1', 'p-1'), (sent_ctxt['user'],
                                          sent_ctxt['project_id']))
        self.assertNotIn('s3cr3t-token', json.dumps(sent_ctxt))
        self.assertEqual(('pub.h', 'baremetal.node.update.end', 'INFO'),
                         (message['publisher_id'], message['event_type'],
                          priority))

    def test_ends_when_its_parent_is_gone(self):
        import multiprocessing
        import queue
        import threading
        from unittest import mock

        items = queue.Queue()
        parents = iter([1234, 1234, 1])   # then re-parented to init
        with mock.patch.object(notification_process.os, 'getppid',
                               autospec=True,
                               side_effect=lambda: next(parents)):
            thread = threading.Thread(
                target=notification_process._child_main,
                args=({'DEFAULT': {'transport_url': 'fake:/'},
                       'oslo_messaging_notifications': {
                           'driver': ['test']}},
                      ['t'], items, multiprocessing.Value('Q', 0),
                      threading.Event()))
            thread.start()
            thread.join(30)
        self.assertFalse(thread.is_alive())
