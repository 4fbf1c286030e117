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
"""The conductor's periodic tasks on futurist's PeriodicWorker."""

import threading
import time

from baremetal_orch.conductor import periodics
from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base


class _Manager:
    host = 'periodic-host'


class TestPeriodics(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.periodics = periodics.Periodics(_Manager())
        self.addCleanup(self.periodics.stop)

    def spacings(self):
        return {w.work.callback.__name__: w.work.callback._periodic_spacing
                for w in self.periodics._worker.iter_watchers()}

    def test_spacing_of_each_task_from_the_configuration(self):
        self.config(group='conductor', heartbeat_interval=7,
                    take_over_interval=11, console_restore_interval=13,
                    pending_action_timeout=76)
        self.periodics.extra_jobs.append(('ironic_sync', 17, lambda: None))
        self.periodics.start()
        self.assertEqual({'heartbeat': 7, 'take_over': 11,
                          'restore_consoles': 13, 'ironic_sync': 17,
                          'sweep_pending_actions': 19},
                         self.spacings())

    def test_take_over_and_consoles_default_to_the_heartbeat(self):
        self.config(group='conductor', heartbeat_interval=5)
        self.periodics.extra_jobs.append(('ironic_sync', -1, lambda: None))
        self.periodics.start()
        # A task with a spacing <= 0 is disabled.
        self.assertEqual({'heartbeat': 5, 'take_over': 5,
                          'restore_consoles': 5,
                          'sweep_pending_actions': 75}, self.spacings())

    def test_heartbeat_runs(self):
        self.config(group='conductor', heartbeat_interval=1)
        dbapi.register_service('periodic-host')
        before = dbapi.get_service('periodic-host').updated_at
        self.periodics.start()
        self.wait_for(lambda: dbapi.get_service(
            'periodic-host').updated_at != before, timeout=30)

    def test_a_task_never_overlaps_itself(self):
        # Spaced far less than it takes: futurist schedules its next run
        # only once the previous one ended.
        lock = threading.Lock()
        state = {'running': 0, 'most': 0, 'runs': 0}

        def slow():
            with lock:
                state['running'] += 1
                state['most'] = max(state['most'], state['running'])
            time.sleep(0.2)
            with lock:
                state['running'] -= 1
                state['runs'] += 1

        self.config(group='conductor', heartbeat_interval=3600,
                    periodic_max_workers=4)
        self.periodics.extra_jobs.append(('slow', 0.01, slow))
        self.periodics.start()
        self.wait_for(lambda: state['runs'] >= 4, timeout=30)
        self.periodics.stop()
        self.assertEqual(1, state['most'])

    def test_a_failing_task_runs_again(self):
        calls = []

        def failing():
            calls.append(1)
            raise RuntimeError('boom')

        self.config(group='conductor', heartbeat_interval=3600)
        self.periodics.extra_jobs.append(('failing', 0.01, failing))
        self.periodics.start()
        self.wait_for(lambda: len(calls) >= 3, timeout=30)

    def test_stop_waits_for_a_running_task(self):
        started, ended = threading.Event(), threading.Event()

        def task():
            started.set()
            time.sleep(0.3)
            ended.set()

        self.config(group='conductor', heartbeat_interval=3600)
        self.periodics.extra_jobs.append(('task', 0.01, task))
        self.periodics.start()
        self.assertTrue(started.wait(30))
        self.periodics.stop()
        self.assertTrue(ended.is_set())
