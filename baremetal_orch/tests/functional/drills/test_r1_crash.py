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
"""Drill R1: kill -9 of the action's conductor at a random point, ten times.

Two conductors and an API over RabbitMQ and MariaDB. A reference
``deploy_site`` of 200 nodes (five groups of 40 on a small DAG) runs
undisturbed first; then each trial deploys 200 fresh nodes with the same
strategy and kills the action's conductor with SIGKILL at a random point:
a random delay after the action starts, or a group or phase boundary plus a
random delay (the seed is attached to the result; set
``BAREMETAL_ORCH_DRILL_SEED`` to replay it). Most trials let the survivor
take the action over; some restart the killed conductor at once under the
same host name, which then resumes its own work (or loses the race to the
survivor: both paths are valid). Each trial must end with the reference's
report, no node provided or deployed twice (completed driver calls), every
node ``active``. Figures: per-trial take-over times and durations.
With ``BAREMETAL_ORCH_DRILL_JOBBOARD=redis`` (or ``zookeeper``) the
actions are handed out through a taskflow jobboard; the take-over is the
database's in every mode (the survivor claims the action once the dead
conductor's heartbeat is stale).
"""

import os
import signal
import time

from baremetal_orch.tests.functional.drills import base

HOSTS = ('conductor-1', 'conductor-2')
#: BAREMETAL_ORCH_DRILL_TRIALS changes the number of trials (a replay).
TRIALS = int(os.environ.get('BAREMETAL_ORCH_DRILL_TRIALS') or 10)
NODES_PER_GROUP = 40
FAKE_DURATION = 0.1
#: group -> the groups it depends on: a small DAG (g2 and g3 side by side).
DAG = (('g1', ()), ('g2', ('g1',)), ('g3', ('g1',)), ('g4', ('g2', 'g3')),
       ('g5', ('g4',)))
GROUPS = tuple(g for g, _deps in DAG)
#: Share of the trials that restart the killed conductor at once.
RESTART_SHARE = 0.3
ACTION_TIMEOUT = 300


def node_name(prefix, group, index):
    return '%s-%s-n%02d' % (prefix, group, index)


def strip(prefix, name):
    return name[len(prefix) + 1:]


def normalized(prefix, report):
    """The report with the run's prefix taken off every node name."""
    groups = {}
    for name, entry in report['groups'].items():
        entry = dict(entry)
        for key in ('nodes', 'succeeded_nodes', 'failed_nodes'):
            if key in entry:
                entry[key] = sorted(strip(prefix, n) for n in entry[key])
        groups[name] = entry
    return {'groups': groups,
            'nodes': {strip(prefix, n): s
                      for n, s in report['nodes'].items()}}


def is_topological(order):
    seen = set()
    deps = dict(DAG)
    for group in order:
        if not set(deps[group]) <= seen:
            return False
        seen.add(group)
    return True


class TestR1Crash(base.DrillTestCase):

    expensive = True

    def setUp(self):
        super().setUp()
        self.start_split(HOSTS, conductor={'max_concurrent_nodes': 16})

    def _deploy(self, prefix):
        """Create the run's nodes and strategy; start the action."""
        self.create_nodes([
            {'name': node_name(prefix, group, i), 'driver': 'fake',
             'tags': ['%s-%s' % (prefix, group)],
             'driver_info': {'fake_duration': FAKE_DURATION}}
            for group in GROUPS for i in range(NODES_PER_GROUP)])
        name = 'drill-%s' % prefix
        self.client.post('/v1/deployment_strategies', status=201,
                         json=base.strategy_doc(name, [
                             (g, '%s-%s' % (prefix, g), deps)
                             for g, deps in DAG]))
        started = time.monotonic()
        action = self.client.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': name}}).json()
        return action, started

    def _action(self, uuid):
        return self.client.get('/v1/actions/%s' % uuid, status=200).json()

    def _check_run(self, prefix, final, reference, context,
                   unrecorded=None):
        names = [node_name(prefix, g, i) for g in GROUPS
                 for i in range(NODES_PER_GROUP)]
        self.assertEqual(('complete', 'success'),
                         (final['state'], final['result']),
                         '%s: %s' % (context, final['report']))
        report = final['report']
        self.assertTrue(is_topological(report['order'])
                        and sorted(report['order']) == sorted(GROUPS),
                        '%s: order %s' % (context, report['order']))
        if reference is not None:
            self.assertEqual(reference, normalized(prefix, report), context)
        self.assertEachCalledOnce(names, context, unrecorded)
        states = self.node_states(names)
        self.assertEqual({n: 'active' for n in names}, states, context)

    # Kill points -----------------------------------------------------------

    def _kill_point(self, rng, reference_duration):
        """A random kill point: (kind, group, extra delay)."""
        kind = rng.choice(('delay', 'group_start', 'deploy_start',
                           'group_end'))
        if kind == 'delay':
            return kind, None, rng.uniform(0.05, 0.8) * reference_duration
        groups = GROUPS[:-1] if kind == 'group_end' else GROUPS
        return kind, rng.choice(groups), rng.uniform(0, 0.3)

    def _reached(self, kind, group, prefix, report):
        if kind == 'group_start':
            return group in report.get('order', ())
        if kind == 'group_end':
            return (report.get('groups', {}).get(group, {})
                    .get('status') == 'success')
        nodes = [node_name(prefix, group, i)
                 for i in range(NODES_PER_GROUP)]
        statuses = report.get('nodes', {})
        return all(statuses.get(n) in ('prepared', 'success') for n in nodes)

    def _wait_kill_point(self, action, started, prefix, point):
        kind, group, delay = point
        if kind != 'delay':
            self.client.wait_for(lambda: self._reached(
                kind, group, prefix,
                self._action(action['uuid'])['report'] or {}),
                timeout=ACTION_TIMEOUT, interval=0.02)
            started = time.monotonic()
        time.sleep(max(0.0, started + delay - time.monotonic()))

    # The drill -------------------------------------------------------------

    def test_kill_9_ten_trials(self):
        rng = self.make_random()
        action, started = self._deploy('ref')
        final = self.client.wait_for_action(action['uuid'],
                                            timeout=ACTION_TIMEOUT)
        reference_duration = time.monotonic() - started
        self._check_run('ref', final, None, 'reference run')
        reference = normalized('ref', final['report'])
        figures = {'seed': self.seed, 'nodes': len(GROUPS) * NODES_PER_GROUP,
                   'reference_duration_s': round(reference_duration, 2),
                   'trials': []}
        try:
            for trial in range(1, TRIALS + 1):
                figures['trials'].append(self._trial(
                    rng, trial, reference, reference_duration))
        finally:
            self.record_figures(figures)
        takeovers = [t['takeover_s'] for t in figures['trials']
                     if t['takeover_s'] is not None]
        self.assertEqual(TRIALS, len(figures['trials']))
        # At least one trial went through the survivor's take-over.
        self.assertNotEqual([], takeovers, figures)

    def _trial(self, rng, trial, reference, reference_duration):
        prefix = 't%02d' % trial
        point = self._kill_point(rng, reference_duration)
        restart = rng.random() < RESTART_SHARE
        context = ('trial %d (seed %d, kill at %s, %s)' % (
            trial, self.seed, point,
            'restart at once' if restart else 'survivor takes over'))
        action, started = self._deploy(prefix)
        owner = self.owner(action)
        self.assertIn(owner, HOSTS, context)
        survivor = [h for h in HOSTS if h != owner][0]
        self._wait_kill_point(action, started, prefix, point)
        before = self._action(action['uuid'])
        self.conductors[owner].send_signal(signal.SIGKILL)
        killed = time.monotonic()
        killed_at = time.time()
        self.conductors[owner].wait(10)
        # What the dead conductor left: nothing moves its nodes until the
        # survivor (or its next start) recovers them.
        snapshot = self.node_rows(prefix)
        self.assertEqual(('running', owner),
                         (before['state'], before['conductor']),
                         'the kill came too late: %s' % context)
        done_at_kill = [g for g in GROUPS
                        if (before['report'] or {}).get('groups', {})
                        .get(g, {}).get('status') == 'success']
        restarted = None
        if restart:
            self.start_conductor(owner)
            self.wait_serving(owner)
            restarted = time.monotonic() - killed
        final = self.client.wait_for_action(action['uuid'],
                                            timeout=ACTION_TIMEOUT)
        ended = time.monotonic()
        if not restart:
            self.assertEqual(survivor, final['conductor'], context)
        unrecorded = self.unrecorded_calls(snapshot, owner, killed_at)
        self._check_run(prefix, final, reference, context, unrecorded)
        # One kill, one resumption: never two conductors running the flow.
        resumes = self.log_lines('Resuming action %s' % action['uuid'])
        self.assertEqual(1, len(resumes), '%s: %s' % (context, resumes))
        resumed_at, line = resumes[0]
        takeovers = self.log_lines('Taking over action %s' % action['uuid'])
        # Completed calls the dead conductor never recorded, done again,
        # with how long before the kill their first completion ended.
        redone = sorted('%s %s (%.3f s before the kill)' % (
            key[0], key[1], killed_at - ends[0])
            for key, ends in self.completion_times().items()
            if key[0].startswith(prefix + '-') and len(ends) > 1)
        if not restart:
            # The next trial has two conductors again.
            self.start_conductor(owner)
        self.wait_serving(owner)
        self.wait_alive(HOSTS)
        return {'trial': trial,
                'kill_point': [point[0], point[1], round(point[2], 3)],
                'restart_at_once': restart, 'killed': owner,
                'resumed_by': line.rsplit(' on ', 1)[-1],
                'finished_by': final['conductor'],
                'groups_done_at_kill': done_at_kill,
                'in_flight_on_killed': len(
                    [n for n, (_s, holder) in snapshot.items()
                     if holder == owner]),
                'unrecorded_completions_redone': redone,
                # From the conductors' log lines, not from polling.
                'takeover_s': round(takeovers[0][0] - killed_at, 2)
                if takeovers else None,
                'resume_s': round(resumed_at - killed_at, 2),
                'restart_serving_s': None if restarted is None
                else round(restarted, 2),
                'kill_to_end_s': round(ended - killed, 2),
                'duration_s': round(ended - started, 2),
                'overhead_vs_reference_s': round(
                    ended - started - reference_duration, 2)}
