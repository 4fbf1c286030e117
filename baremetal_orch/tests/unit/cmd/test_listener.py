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
"""Tests of the sample notification listener."""

import io
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import fixtures
from oslo_config import cfg

from baremetal_orch.cmd import listener
from baremetal_orch.notifications import notifier
from baremetal_orch.notifications import notify
from baremetal_orch.objects import action as action_obj
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.notifications import test_payloads
from baremetal_orch.tests.unit.objects import utils

CONF = cfg.CONF

#: Upper bound to wait for something that should happen at once; a
#: deadline for a hung test, not a measurement.
DEADLINE = 30


def _wait_for(predicate, what):
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError('%s did not happen within %ss' % (what, DEADLINE))


class TestPrintingEndpoint(base.TestCase):

    def test_one_json_line_per_notification(self):
        stream = io.StringIO()
        endpoint = listener.PrintingEndpoint(stream)
        endpoint.info({}, 'baremetal-orch-api.h', 'baremetal.node.create.end',
                      {'a': 1}, {'timestamp': 't1', 'message_id': 'm1'})
        endpoint.error({}, 'baremetal-orch-conductor.c',
                       'baremetal.action.run.error', {'b': 2},
                       {'timestamp': 't2', 'message_id': 'm2'})
        lines = [json.loads(line) for line in stream.getvalue().splitlines()]
        self.assertEqual([
            {'event_type': 'baremetal.node.create.end',
             'publisher_id': 'baremetal-orch-api.h', 'priority': 'INFO',
             'payload': {'a': 1}, 'timestamp': 't1', 'message_id': 'm1'},
            {'event_type': 'baremetal.action.run.error',
             'publisher_id': 'baremetal-orch-conductor.c',
             'priority': 'ERROR', 'payload': {'b': 2}, 'timestamp': 't2',
             'message_id': 'm2'}], lines)

    def test_every_priority_is_handled(self):
        endpoint = listener.PrintingEndpoint(io.StringIO())
        for priority in ('audit', 'debug', 'info', 'warn', 'error',
                         'critical', 'sample'):
            self.assertTrue(callable(getattr(endpoint, priority)))


class TestServe(base.TestCase):
    """The listener on the fake transport, fed by notify.*."""

    def setUp(self):
        super().setUp()
        self.useFixture(utils.NotificationsFixture(level='info',
                                                   driver='messagingv2'))
        notify.set_publisher('baremetal-orch-conductor', 'c1')

    def _serve(self, **kw):
        stream = io.StringIO()
        stop = threading.Event()
        thread = threading.Thread(
            target=listener.serve,
            args=(notifier.get_transport(),
                  CONF.versioned_notifications_topics, stop, stream),
            kwargs=kw, daemon=True)
        thread.start()
        self.addCleanup(thread.join, DEADLINE)
        self.addCleanup(stop.set)
        return stream

    def _lines(self, stream):
        return [json.loads(line) for line in stream.getvalue().splitlines()]

    def test_prints_what_notify_sends(self):
        stream = self._serve()
        node = test_payloads.make_node()
        notify.provision(None, node, 'start', 'available', None, 'deploy')
        notify.provision(None, node, 'error', 'deploying', 'active', 'fail')
        _wait_for(lambda: len(self._lines(stream)) == 2, 'two lines')
        # One queue per priority: no order between INFO and ERROR.
        by_type = {m['event_type']: m for m in self._lines(stream)}
        self.assertEqual({'baremetal.node.provision_set.start',
                          'baremetal.node.provision_set.error'},
                         set(by_type))
        start = by_type['baremetal.node.provision_set.start']
        error = by_type['baremetal.node.provision_set.error']
        self.assertEqual('INFO', start['priority'])
        self.assertEqual('baremetal-orch-conductor.c1', start['publisher_id'])
        self.assertEqual('NodeSetProvisionStatePayload',
                         start['payload']['baremetal_orch_object.name'])
        self.assertEqual('ERROR', error['priority'])
        self.assertNotIn('s3cr3t-pass', stream.getvalue())

    def test_event_type_filter(self):
        stream = self._serve(event_type=r'^baremetal\.action\.')
        notify.maintenance(None, test_payloads.make_node(), 'start')
        notify.action(None, action_obj.Action(
            uuid=test_payloads.ACTION_UUID, name='deploy_site',
            state='running'), 'start')
        _wait_for(lambda: self._lines(stream), 'a line')
        # The maintenance notification, sent first, was dropped.
        self.assertEqual(['baremetal.action.run.start'],
                         [m['event_type'] for m in self._lines(stream)])


class TestMain(base.TestCase):
    """The console script's main() in a process of its own."""

    def test_runs_until_sigterm(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        output = os.path.join(tmp, 'out.jsonl')
        conf = os.path.join(tmp, 'listener.conf')
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nversioned_notifications_topics = a,b\n'
                    'use_stderr = true\n')
        proc = subprocess.Popen(
            [sys.executable, '-m', 'baremetal_orch.cmd.listener',
             '--config-file', conf, '--transport-url', 'fake:/',
             '--output', output],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        lines = queue.Queue()

        def read():
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        seen = []
        end = time.monotonic() + DEADLINE
        while not any('Listening for notifications on a, b' in line
                      for line in seen):
            try:
                line = lines.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                self.fail('the listener did not start: %s' % ''.join(seen))
            seen.append(line)
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, proc.wait(DEADLINE))
        self.assertTrue(os.path.exists(output))
