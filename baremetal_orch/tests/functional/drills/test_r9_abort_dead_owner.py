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
"""Drill R9: an abort sent while the action's conductor is dead is carried
out by the conductor that takes the action over; ten trials.

Each trial deploys 150 fresh fake nodes (R1's DAG, five groups of 30) on
two conductors and, after a random number of completed driver calls (the
seed is attached to the result), kills the action's conductor with
SIGKILL, waits until ``GET /v1/services`` shows it dead, and aborts the
action. The survivor must end it ``cancelled`` (result ``failed``, the
abort's reason) and be its conductor; a group none of whose nodes saw a
driver call must be ``failed`` with reason ``aborted`` and its nodes
``not_started``; no node provided or deployed twice (completed calls; a
call the dead conductor completed without recording it is the one
exception, as in R1). Figures: the seconds from the kill to the dead
conductor shown dead, to the abort's 202, to the take-over (whichever
comes first: the survivor takes over once the heartbeat is stale, as the
API then shows it dead), and from the abort's 202 to the end.
"""

import time

from baremetal_orch.tests.functional.drills import steering


class TestR9AbortDeadOwner(steering.SteeringDrill):

    def test_abort_while_owner_dead(self):
        rng = self.make_random()
        figures = {'drill': 'R9', 'seed': self.seed,
                   'nodes': len(steering.GROUPS) * steering.NODES_PER_GROUP,
                   'trials': []}
        try:
            for trial in range(1, steering.TRIALS + 1):
                figures['trials'].append(self._trial(rng, trial))
        finally:
            self.record_figures(figures)
        self.assertEqual(steering.TRIALS, len(figures['trials']))
        # Some trials left groups never started: the abort reached them.
        self.assertTrue(any(t['groups_never_started']
                            for t in figures['trials']), figures)

    def _dead(self, host):
        services = self.client.get('/v1/services', status=200).json()[
            'services']
        return any(s['host'] == host and not s['alive'] for s in services)

    def _trial(self, rng, trial):
        prefix = 'a%02d' % trial
        # Kill while the first groups run: later groups never start.
        point = rng.randint(3, int(steering.CALLS * 0.5))
        context = 'trial %d (seed %d, kill after %d calls)' % (
            trial, self.seed, point)
        action = self.deploy(prefix)
        uuid, owner = action['uuid'], action['conductor']
        self.assertIn(owner, steering.HOSTS, context)
        survivor = [h for h in steering.HOSTS if h != owner][0]
        self.wait_completed(prefix, point, uuid)
        killed_at = self.kill(owner)
        snapshot = self.node_rows(prefix)
        in_flight = [n for n, (_s, holder) in snapshot.items()
                     if holder == owner]
        self.client.wait_for(lambda: self._dead(owner), timeout=60,
                             interval=0.1)
        dead_at = time.time()
        abort_202 = self.control(uuid, 'abort', 'drill R9')
        final = self.client.wait_for_action(
            uuid, timeout=steering.ACTION_TIMEOUT)
        ended_at = time.time()
        self.assertEqual(('cancelled', 'failed', 'drill R9', survivor),
                         (final['state'], final['result'],
                          final['state_reason'], final['conductor']),
                         '%s: %s' % (context, final['report']))
        touched = {e['name'] for e in self.call_entries(prefix)}
        report = final['report']
        never = [g for g in steering.GROUPS
                 if not any(steering.node_name(prefix, g, i) in touched
                            for i in range(steering.NODES_PER_GROUP))]
        for group in never:
            entry = report['groups'][group]
            self.assertEqual(('failed', 'aborted'),
                             (entry['status'], entry.get('reason')),
                             '%s: group %s' % (context, group))
            for i in range(steering.NODES_PER_GROUP):
                name = steering.node_name(prefix, group, i)
                self.assertEqual('not_started', report['nodes'][name],
                                 '%s: %s' % (context, name))
        unrecorded = self.unrecorded_calls(snapshot, owner, killed_at)
        self.assertEqual({}, self.twice(prefix, unrecorded),
                         'nodes sent twice: %s' % context)
        redone = sorted('%s %s' % key for key, n in self.completed_calls()
                        .items() if key[0].startswith(prefix + '-')
                        and n > 1)
        takeover = self.takeover_line(uuid, killed_at)
        self.restore(owner)
        return {'trial': trial, 'killed_after_calls': point,
                'killed': owner, 'ended_by': final['conductor'],
                'in_flight_on_killed': len(in_flight),
                'groups_never_started': never,
                'nodes_not_started': sum(
                    1 for s in report['nodes'].values()
                    if s == 'not_started'),
                'kill_to_dead_s': steering.rounded(dead_at - killed_at),
                'kill_to_abort_s': steering.rounded(abort_202 - killed_at),
                # Whether the abort was stored before the survivor took
                # the action over (else it reached the survivor's flow).
                'abort_before_takeover': takeover is None
                or takeover > abort_202 - killed_at,
                'takeover_log_s': takeover,
                'abort_to_end_s': steering.rounded(ended_at - abort_202),
                'unrecorded_completions_redone': redone,
                'sent_twice': 0}
