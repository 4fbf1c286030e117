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
"""Drill R8: a paused action stays paused through kill -9 and take-over,
and its resume completes it with no node sent twice; ten trials.

Each trial deploys 150 fresh fake nodes (R1's DAG, five groups of 30) on
two conductors, and at a random point (after a random number of completed
driver calls; the seed is attached to the result) pauses the action,
waits until it is ``paused``, kills its conductor with SIGKILL and waits
until the survivor took it over (the action's ``conductor`` changes). The
action must still be ``paused`` with the pause's reason, and no driver
call of the trial may start from the moment it was seen ``paused`` until
the resume, a quiet window of at least :data:`QUIET` seconds after the
take-over. The resume must complete it (``complete``/``success``, every
node ``active``), every node provided and deployed exactly once
(completed calls: a paused action has nothing in flight, so no second
completion is allowed). Figures: the seconds from the pause's 202 to
``paused``, from the kill to the take-over, from the resume's 202 to the
end.
"""

import time

from baremetal_orch.tests.functional.drills import steering

#: Seconds without any driver call, checked after the take-over.
QUIET = 3.0


class TestR8PauseCrash(steering.SteeringDrill):

    def test_pause_kill_9_resume(self):
        rng = self.make_random()
        figures = {'drill': 'R8', 'seed': self.seed,
                   'nodes': len(steering.GROUPS) * steering.NODES_PER_GROUP,
                   'trials': []}
        try:
            for trial in range(1, steering.TRIALS + 1):
                figures['trials'].append(self._trial(rng, trial))
        finally:
            self.record_figures(figures)
        self.assertEqual(steering.TRIALS, len(figures['trials']))

    def _trial(self, rng, trial):
        prefix = 'p%02d' % trial
        # Pause somewhere between the first group and the last ones.
        point = rng.randint(5, int(steering.CALLS * 0.7))
        context = 'trial %d (seed %d, pause after %d calls)' % (
            trial, self.seed, point)
        action = self.deploy(prefix)
        uuid, owner = action['uuid'], action['conductor']
        self.assertIn(owner, steering.HOSTS, context)
        survivor = [h for h in steering.HOSTS if h != owner][0]
        self.wait_completed(prefix, point, uuid)
        paused_202 = self.control(uuid, 'pause', 'drill R8')
        self.client.wait_for(lambda: self.action(uuid)['state'] == 'paused',
                             timeout=120, interval=0.05)
        paused_at = time.time()
        done_at_pause = self.completed(prefix)
        killed_at = self.kill(owner)
        taken = self.client.wait_for(
            lambda: self.action(uuid)['conductor'] == survivor,
            timeout=120, interval=0.05)
        taken_at = time.time()
        self.assertTrue(taken, context)
        time.sleep(QUIET)
        current = self.action(uuid)
        self.assertEqual(('paused', 'drill R8', survivor),
                         (current['state'], current['state_reason'],
                          current['conductor']), context)
        resume_202 = self.control(uuid, 'resume')
        # Nothing started while it was paused (a driver call logs its
        # start), across the kill and the take-over.
        started = sorted('%s %s' % (e['name'], e['call'])
                         for e in self.call_entries(prefix)
                         if e['stage'] == 'start'
                         and paused_at <= e['time'] < resume_202)
        self.assertEqual([], started, 'calls started while paused: %s'
                         % context)
        final = self.client.wait_for_action(
            uuid, timeout=steering.ACTION_TIMEOUT)
        ended_at = time.time()
        self.assertEqual(('complete', 'success', survivor),
                         (final['state'], final['result'],
                          final['conductor']),
                         '%s: %s' % (context, final['report']))
        self.assertEqual({}, self.twice(prefix),
                         'nodes sent twice: %s' % context)
        names = self.names(prefix)
        self.assertEachCalledOnce(names, context)
        self.assertEqual({n: 'active' for n in names},
                         self.node_states(names), context)
        self.restore(owner)
        return {'trial': trial, 'paused_after_calls': point,
                'calls_done_at_pause': done_at_pause, 'killed': owner,
                'taken_over_by': survivor,
                'pause_to_paused_s': steering.rounded(paused_at -
                                                      paused_202),
                'takeover_s': steering.rounded(taken_at - killed_at),
                'takeover_log_s': self.takeover_line(uuid, killed_at),
                'quiet_s': steering.rounded(resume_202 - paused_at),
                'started_while_paused': len(started),
                'resume_to_end_s': steering.rounded(ended_at - resume_202),
                'sent_twice': 0}
