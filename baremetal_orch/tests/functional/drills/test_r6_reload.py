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
"""Drill R6: SIGHUP during a running action.

One conductor and an API over RabbitMQ and MariaDB. A ``deploy_site`` of
three chained groups (g1 -> g2 -> g3, eight nodes each, every fake
provide and deploy taking ``FAKE_DURATION`` s) starts with
``[conductor]max_concurrent_nodes = 2``. Once g1's nodes are being
provided, the config file says 6 and the conductor gets SIGHUP; once g2's
are, it says 3 and gets SIGHUP again. Each phase (a group's prepare or
deploy) reads the option when it starts, so the number of driver calls
that ran at once in each phase (from the fake driver's call log) must be
the value in force when the phase began: 2 for g1's prepare, 6 for g1's
deploy and g2's prepare, 3 after. The process is the same throughout (no
restart), the action succeeds, every node is ``active`` and was provided
and deployed exactly once. Figures: the reload latencies (signal to
oslo.config's log line) and, per phase, the value in force and the
concurrency seen.
"""

import signal
import time

from baremetal_orch.tests.functional.drills import base
from baremetal_orch.tests.functional.drills import reload

HOST = 'conductor-1'
GROUPS = ('g1', 'g2', 'g3')
NODES_PER_GROUP = 8
FAKE_DURATION = 2.0
#: max_concurrent_nodes at the start, then after each SIGHUP.
LIMITS = (2, 6, 3)
ACTION_TIMEOUT = 300


def node_name(group, index):
    return 'r6-%s-n%02d' % (group, index)


class TestR6Reload(base.DrillTestCase):

    expensive = True

    def setUp(self):
        super().setUp()
        self.start_split([HOST], conductor={
            'max_concurrent_nodes': LIMITS[0]})

    def _site(self):
        names = [node_name(g, i) for g in GROUPS
                 for i in range(NODES_PER_GROUP)]
        self.create_nodes([{'name': name, 'driver': 'fake',
                            'tags': ['r6-' + name.split('-')[1]],
                            'driver_info': {'fake_duration': FAKE_DURATION}}
                           for name in names])
        deps = {'g1': (), 'g2': ('g1',), 'g3': ('g2',)}
        self.client.post('/v1/deployment_strategies', status=201,
                         json=base.strategy_doc('r6', [
                             (g, 'r6-' + g, deps[g]) for g in GROUPS]))
        return names

    def _reload_when_provided(self, proc, group, limit):
        """Once ``group``'s nodes are being provided: SIGHUP with
        ``limit``; returns (when in force, signal-to-log latency)."""
        self.client.wait_for(lambda: reload.started(
            self.call_log, 'provide', 'r6-%s-' % group), timeout=120)
        start = reload.log_size(proc)
        sent = reload.reload(proc, self.confs[HOST], 'conductor',
                             max_concurrent_nodes=limit)
        latency = time.time() - sent
        reload.wait_log(proc, 'max_concurrent_nodes=%d,' % limit, start)
        return time.time(), round(latency, 3)

    def test_r6_sighup_during_an_action(self):
        names = self._site()
        proc = self.conductors[HOST]
        began = time.time()
        action = reload.post_action(self.client, 'r6')
        # (time from which the limit is in force, limit)
        in_force = [(0.0, LIMITS[0])]
        latencies = []
        for group, limit in zip(GROUPS, LIMITS[1:]):
            when, latency = self._reload_when_provided(proc, group, limit)
            in_force.append((when, limit))
            latencies.append(latency)
        done = self.client.wait_for_action(action['uuid'],
                                           timeout=ACTION_TIMEOUT)
        duration = round(time.time() - began, 1)
        self.assertEqual(('complete', 'success'),
                         (done['state'], done['result']), done['report'])

        phases = []
        for group in GROUPS:
            for call in ('provide', 'deploy'):
                spans = reload.intervals(self.call_log, call,
                                         'r6-%s-' % group)
                self.assertEqual(NODES_PER_GROUP, len(spans),
                                 '%s %s' % (group, call))
                first = min(s for s, _e in spans.values())
                limit = [v for t, v in in_force if t <= first][-1]
                phases.append({'group': group, 'call': call,
                               'limit_in_force': limit,
                               'max_at_once': reload.max_overlap(
                                   spans.values())})
        self.record_figures({
            'nodes': len(names), 'fake_duration_s': FAKE_DURATION,
            'limits': list(LIMITS), 'reload_latency_s': latencies,
            'action_duration_s': duration, 'phases': phases,
            'same_process': proc.poll() is None,
            'nodes_not_active': sum(
                1 for s in self.node_states(names).values()
                if s != 'active')})
        # Each phase ran with the value in force when it began; the
        # reloads changed it for the phases after them.
        self.assertEqual([p['limit_in_force'] for p in phases],
                         [p['max_at_once'] for p in phases], phases)
        self.assertEqual(LIMITS, (phases[0]['max_at_once'],
                                  phases[1]['max_at_once'],
                                  phases[-1]['max_at_once']))
        # Reloaded in place: the same process, never restarted; nothing
        # lost, nothing done twice.
        self.assertIsNone(proc.poll())
        self.assertEqual({n: 'active' for n in names},
                         self.node_states(names))
        self.assertEachCalledOnce(names)
        # A last SIGTERM stops it gracefully.
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, proc.wait(60))
