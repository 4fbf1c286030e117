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
"""The signals of the processes on oslo.service, on real processes:

* SIGHUP: the mutable options change in place (oslo.config's log line) and
  the next group runs with the new ``[conductor]max_concurrent_nodes``
  (how many driver calls ran at once, from the fake driver's call log);
  the process stays (same pid, no restart);
* SIGUSR2: a guru meditation report with the process's threads;
* SIGTERM during an action: the process exits 0, the node work that was
  running finished, and the action resumes at the next start with every
  node deployed once.
"""

import json
import os
import signal
import time

from baremetal_orch.tests.functional.drills import base
from baremetal_orch.tests.functional.drills import reload

#: Seconds each fake provide/deploy takes.
DURATION = 1.0
#: Seconds a graceful stop may take here.
STOP_BOUND = 60


class SignalsMixin:

    def proc(self):
        raise NotImplementedError

    def conf_path(self):
        raise NotImplementedError

    def assertResumedToTheEnd(self, action, names):
        """The action stopped by SIGTERM, resumed after the restart, ends
        with every node active and deployed once."""
        done = self.client.wait_for_action(action['uuid'], timeout=180)
        self.assertEqual(('complete', 'success'),
                         (done['state'], done['result']), done['report'])
        self.assertEqual({n: 'active' for n in names},
                         self.node_states(names))
        self.assertEachCalledOnce(names)

    def test_sighup_changes_max_concurrent_nodes(self):
        proc = self.proc()
        names, strategy = reload.one_group_action(self, 'hup', 4, DURATION)
        reload.reload(proc, self.conf_path(), 'conductor',
                      max_concurrent_nodes=2)
        reload.wait_log(proc, 'max_concurrent_nodes=2')
        action = reload.post_action(self.client, strategy)
        done = self.client.wait_for_action(action['uuid'], timeout=120)
        self.assertEqual(('complete', 'success'),
                         (done['state'], done['result']), done['report'])
        for call in ('provide', 'deploy'):
            spans = reload.intervals(self.call_log, call, 'hup-')
            self.assertEqual(4, len(spans), call)
            self.assertEqual(2, reload.max_overlap(spans.values()), call)
        # Reloaded in place: the same process, never restarted.
        self.assertIsNone(proc.poll())
        self.assertEachCalledOnce(names)

    def test_sighup_changes_the_log_level(self):
        proc = self.proc()
        start = reload.log_size(proc)
        reload.reload(proc, self.conf_path(), 'DEFAULT', debug='true')
        # DEBUG lines now: the periodic tasks' futurist submissions.
        reload.wait_log(proc, 'DEBUG futurist.periodics', start)
        self.assertIsNone(proc.poll())

    def test_sigusr2_guru_meditation_report(self):
        proc = self.proc()
        # The threads of the process, named by their stacks: the periodic
        # tasks' worker among them. A report is the threads of one
        # instant: one asked while the service still starts its periodic
        # worker (a loaded machine) cannot show it, the next ones do.
        for _attempt in range(5):
            start = reload.log_size(proc)
            proc.send_signal(signal.SIGUSR2)
            reload.wait_log(proc, 'Guru Meditation', start)
            reload.wait_log(proc, 'product = baremetal-orch', start)
            reload.wait_log(proc, '====                         Green Threads',
                            start)
            if reload.log_has(proc, 'futurist/periodics.py', start):
                break
            time.sleep(2)
        self.assertTrue(reload.log_has(proc, 'futurist/periodics.py', start),
                        'no report showed the periodic tasks\' worker')
        self.assertIsNone(proc.poll())


class TestConductorSignals(SignalsMixin, base.DrillTestCase):
    """baremetal-orch-conductor over RabbitMQ and MariaDB, its versioned
    notifications on the bus (baremetal-orch-listener writes them)."""

    def setUp(self):
        super().setUp()
        self.start_split(
            ['c1'], DEFAULT={'notification_level': 'info'},
            oslo_messaging_notifications={'driver': 'messagingv2'})
        self.events_file = os.path.join(self.log_dir, 'events.jsonl')
        self.start_process(['baremetal-orch-listener', '--config-file',
                            self.confs['api'], '--output',
                            self.events_file])

    def provided_events(self):
        """uuids of the nodes whose provision_set.end (to available) the
        conductor published."""
        found = set()
        if os.path.exists(self.events_file):
            with open(self.events_file) as f:
                for line in f:
                    event = json.loads(line)
                    data = event['payload'].get(
                        'baremetal_orch_object.data', {})
                    if (event['event_type'] ==
                            'baremetal.node.provision_set.end'
                            and data.get('provision_state') == 'available'):
                        found.add(data.get('uuid'))
        return found

    def proc(self):
        return self.conductors['c1']

    def conf_path(self):
        return self.confs['c1']

    def test_sigterm_during_an_action(self):
        names, strategy = reload.one_group_action(self, 'term', 6, 3.0)
        reload.set_options(self.confs['c1'], 'conductor',
                           max_concurrent_nodes=3)
        proc = self.proc()
        proc.send_signal(signal.SIGHUP)
        reload.wait_log(proc, 'max_concurrent_nodes=3')
        action = reload.post_action(self.client, strategy)
        # Stop while the first nodes are being provided.
        self.client.wait_for(lambda: reload.started(
            self.call_log, 'provide', 'term-'), timeout=60)
        # To every process of the service, as systemd stops a unit
        # (KillMode=control-group): the notification sender child too.
        os.killpg(proc.pid, signal.SIGTERM)
        self.assertEqual(0, proc.wait(STOP_BOUND))
        reload.wait_log(proc, 'Conductor c1 stopping: no new work')
        reload.wait_log(proc, 'Conductor c1: notifications flushed')
        # The sender child outlived the signal: nothing was lost with it.
        self.assertFalse(reload.log_has(proc, 'sender process ended'))
        # The node work that was running when the signal came finished.
        begun = reload.started(self.call_log, 'provide', 'term-')
        ended = reload.intervals(self.call_log, 'provide', 'term-')
        self.assertEqual(begun, set(ended))
        self.assertGreater(len(ended), 0)
        # Their notifications were flushed to the bus before the exit.
        uuids = {self.client.get('/v1/nodes/%s' % name, status=200).json()[
            'uuid'] for name in ended}
        self.client.wait_for(lambda: uuids <= self.provided_events(),
                             timeout=30)
        # The action is left running, and resumes at the next start.
        doc = self.client.get('/v1/actions/%s' % action['uuid'],
                              status=200).json()
        self.assertEqual('running', doc['state'])
        self.start_conductor('c1')
        self.assertResumedToTheEnd(action, names)

    def test_api_process_signals(self):
        # baremetal-orch-api: the same report, reload and graceful stop.
        start = reload.log_size(self.api)
        self.api.send_signal(signal.SIGUSR2)
        reload.wait_log(self.api, 'Guru Meditation', start)
        reload.wait_log(self.api, 'waitress', start)
        reload.reload(self.api, self.confs['api'], 'DEFAULT', debug='true')
        self.client.get('/v1', status=200)
        self.api.send_signal(signal.SIGTERM)
        self.assertEqual(0, self.api.wait(STOP_BOUND))
        reload.wait_log(self.api, 'Caught SIGTERM: stopping gracefully')


class TestAllInOneSignals(SignalsMixin, base.DrillTestCase):
    """The all-in-one ``baremetal-orch``."""

    def setUp(self):
        super().setUp()
        self.start_aio()

    def proc(self):
        return self.aio

    def conf_path(self):
        return self.aio.args[-1]

    def test_sigterm_during_an_action(self):
        names, strategy = reload.one_group_action(self, 'aterm', 6, 3.0)
        reload.reload(self.aio, self.conf_path(), 'conductor',
                      max_concurrent_nodes=3)
        action = reload.post_action(self.client, strategy)
        self.client.wait_for(lambda: reload.started(
            self.call_log, 'provide', 'aterm-'), timeout=60)
        os.killpg(self.aio.pid, signal.SIGTERM)
        self.assertEqual(0, self.aio.wait(STOP_BOUND))
        reload.wait_log(self.aio, 'Caught SIGTERM: stopping gracefully')
        reload.wait_log(self.aio, 'Conductor aio stopped')
        reload.wait_log(self.aio, 'Conductor aio: notifications flushed')
        self.assertFalse(reload.log_has(self.aio, 'sender process ended'))
        # The node work that was running finished before the exit.
        begun = reload.started(self.call_log, 'provide', 'aterm-')
        self.assertEqual(begun, set(reload.intervals(
            self.call_log, 'provide', 'aterm-')))
        # Started again on the same database: the action resumes and
        # ends, every node deployed once.
        self.aio = self.start_process(list(self.aio.args),
                                      log_name='baremetal-orch.2')
        self.wait_for_http(self.endpoint + '/v1', status=200,
                           process=self.aio, timeout=60)
        self.assertResumedToTheEnd(action, names)
