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
"""The launcher loop on oslo.service's Launcher, with a real config file.

The signals are queued as the handlers queue them (the real signals are
sent to real processes in tests/functional/test_process_signals.py).
"""

import gc
import os
import signal
import socket
import threading
import time
from unittest import mock

import fixtures
from oslo_config import cfg

from baremetal_orch.common import launcher
from baremetal_orch.tests import base


class Recorder(launcher.ProcessService):

    def __init__(self, conf, fail=False):
        super().__init__()
        self.conf = conf
        self.fail = fail
        self.events = []
        self.seen = []

    def _start(self):
        if self.fail:
            raise RuntimeError('cannot start')
        self.events.append('start')

    def reset(self):
        self.events.append('reset')
        self.seen.append(self.conf.limit)

    def _stop(self):
        self.events.append('stop')


class TestSignalLauncher(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = cfg.ConfigOpts()
        self.conf.register_opt(cfg.IntOpt('limit', default=1, mutable=True))
        self.path = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'test.conf')
        self.write(2)
        self.conf(['--config-file', self.path], default_config_files=[])
        self.launcher = launcher.SignalLauncher(self.conf)

    def write(self, limit):
        with open(self.path, 'w') as f:
            f.write('[DEFAULT]\nlimit = %d\n' % limit)

    def send(self, signo):
        self.launcher._on_signal(signo, None)

    def run_in_thread(self):
        result = {}
        thread = threading.Thread(
            target=lambda: result.setdefault('status', self.launcher.run()))
        thread.start()
        self.addCleanup(thread.join, 30)
        return thread, result

    def test_sighup_mutates_then_resets_and_sigterm_stops(self):
        svc = Recorder(self.conf)
        self.launcher.launch(svc)
        self.assertTrue(svc.started.wait(30))
        thread, result = self.run_in_thread()
        self.write(5)
        self.send(signal.SIGHUP)
        self.wait(lambda: 'reset' in svc.events)
        self.assertEqual([5], svc.seen)
        self.assertEqual(5, self.conf.limit)
        self.send(signal.SIGTERM)
        thread.join(30)
        self.assertEqual(0, result['status'])
        self.assertEqual(['start', 'reset', 'stop'], svc.events)

    def test_systemd_hears_ready_once_started(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'notify')
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(sock.close)
        sock.bind(path)
        sock.settimeout(30)
        self.useFixture(fixtures.EnvironmentVariable('NOTIFY_SOCKET', path))
        svc = Recorder(self.conf)
        self.launcher.launch(svc)
        thread, result = self.run_in_thread()
        self.assertEqual(b'READY=1', sock.recv(64))
        self.assertTrue(svc.started.is_set())
        self.send(signal.SIGTERM)
        thread.join(30)
        self.assertEqual(0, result['status'])

    def test_a_finished_service_ends_the_loop_with_its_status(self):
        svc = Recorder(self.conf)
        self.launcher.launch(svc)
        self.assertTrue(svc.started.wait(30))
        svc.finish(3)
        self.assertEqual(3, self.launcher.run())
        self.assertEqual(['start', 'stop'], svc.events)

    def test_a_failed_start_ends_the_loop_with_1(self):
        svc = Recorder(self.conf, fail=True)
        self.launcher.launch(svc)
        self.assertEqual(1, self.launcher.run())

    def test_the_heap_is_frozen_once_every_service_started(self):
        gc.unfreeze()
        services = [Recorder(self.conf), Recorder(self.conf)]
        with mock.patch.object(launcher.gc, 'freeze',
                               wraps=gc.freeze) as freeze:
            for svc in services:
                self.launcher.launch(svc)
            thread, result = self.run_in_thread()
            # What the starts built is out of the collector's passes.
            self.wait(lambda: gc.get_freeze_count() > 0)
            self.send(signal.SIGTERM)
            thread.join(30)
        self.assertEqual(0, result['status'])
        self.assertEqual(1, freeze.call_count)

    def test_a_failed_start_freezes_nothing(self):
        gc.unfreeze()
        self.launcher.launch(Recorder(self.conf, fail=True))
        self.assertEqual(1, self.launcher.run())
        self.assertEqual(0, gc.get_freeze_count())

    def wait(self, predicate, timeout=30):
        deadline = time.monotonic() + timeout
        while not predicate():
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.02)
