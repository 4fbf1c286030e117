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
"""What the steering drills R8 (pause, kill -9, resume) and R9 (abort
while the owner is dead) share: two conductors and an API over RabbitMQ
and MariaDB (or a jobboard, ``BAREMETAL_ORCH_DRILL_JOBBOARD``), a
``deploy_site`` of fresh fake nodes per trial on R1's small DAG, the
kill and the restart of a conductor, and the fake driver's call log read
per trial (the node names carry the trial's prefix)."""

import collections
import json
import os
import signal
import time

from baremetal_orch.tests.functional.drills import base

HOSTS = ('conductor-1', 'conductor-2')
#: BAREMETAL_ORCH_DRILL_TRIALS changes the number of trials.
TRIALS = int(os.environ.get('BAREMETAL_ORCH_DRILL_TRIALS') or 10)
NODES_PER_GROUP = 30
FAKE_DURATION = 0.1
#: R1's DAG: g1; g2 and g3 after it; g4 after both; g5 last.
DAG = (('g1', ()), ('g2', ('g1',)), ('g3', ('g1',)), ('g4', ('g2', 'g3')),
       ('g5', ('g4',)))
GROUPS = tuple(g for g, _deps in DAG)
#: Driver calls a trial completes undisturbed (a provide and a deploy per
#: node).
CALLS = 2 * len(GROUPS) * NODES_PER_GROUP
ACTION_TIMEOUT = 300


def node_name(prefix, group, index):
    return '%s-%s-n%02d' % (prefix, group, index)


def rounded(seconds):
    return None if seconds is None else round(seconds, 2)


class SteeringDrill(base.DrillTestCase):
    """Two conductors; one fresh ``deploy_site`` per trial."""

    expensive = True

    def setUp(self):
        super().setUp()
        self.start_split(HOSTS, conductor={'max_concurrent_nodes': 10})

    def names(self, prefix):
        return [node_name(prefix, g, i) for g in GROUPS
                for i in range(NODES_PER_GROUP)]

    def deploy(self, prefix):
        """Create the trial's nodes and strategy; start the action; return
        it with its conductor (waited for with a jobboard)."""
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
        action = self.client.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': name}}).json()
        action['conductor'] = self.owner(action)
        return action

    def action(self, uuid):
        return self.client.get('/v1/actions/%s' % uuid, status=200).json()

    def control(self, uuid, verb, reason=None):
        """POST a control; returns the wall-clock time of its 202."""
        body = {'verb': verb}
        if reason:
            body['reason'] = reason
        self.client.post('/v1/actions/%s/control' % uuid, status=202,
                         json=body)
        return time.time()

    # The call log, per trial ---------------------------------------------

    def call_entries(self, prefix):
        """Every call-log entry of the trial's nodes (all stages)."""
        entries = []
        if os.path.exists(self.call_log):
            with open(self.call_log) as f:
                for line in f:
                    entry = json.loads(line)
                    if entry['name'].startswith(prefix + '-'):
                        entries.append(entry)
        return entries

    def completed(self, prefix):
        return sum(1 for e in self.call_entries(prefix)
                   if e['stage'] == 'end'
                   and e['call'] in base.COMPLETED_CALLS)

    def wait_completed(self, prefix, count, uuid):
        """Until ``count`` driver calls of the trial completed (node work
        flows); fails if the action ended before."""
        def reached():
            if self.completed(prefix) >= count:
                return True
            state = self.client.get('/v1/actions/%s' % uuid, status=200,
                                    params={'fields': 'state'}).json()[
                'state']
            if state in ('complete', 'failed', 'cancelled'):
                raise AssertionError('the action ended (%s) before %d '
                                     'completed calls' % (state, count))
        self.client.wait_for(reached, timeout=ACTION_TIMEOUT, interval=0.02)

    def twice(self, prefix, unrecorded=None):
        """``{'node call': completions}`` of the calls of the trial that
        completed more than once, but for a call the killed conductor
        completed without recording it (``unrecorded``, see
        :meth:`~base.DrillTestCase.assertEachCalledOnce`)."""
        unrecorded = unrecorded or {}
        ends = collections.defaultdict(list)
        for e in self.call_entries(prefix):
            if e['stage'] == 'end' and e['call'] in base.COMPLETED_CALLS:
                ends[(e['name'], e['call'])].append(e['time'])
        wrong = {}
        for key, times in ends.items():
            killed_at = unrecorded.get(key)
            if len(times) == 1 or (len(times) == 2 and killed_at is not None
                                   and times[0] <= killed_at <= times[1]):
                continue
            wrong['%s %s' % key] = len(times)
        return wrong

    # Conductors ----------------------------------------------------------

    def kill(self, host):
        """SIGKILL ``host``; returns the wall-clock time of the kill."""
        self.conductors[host].send_signal(signal.SIGKILL)
        killed_at = time.time()
        self.conductors[host].wait(10)
        return killed_at

    def restore(self, host):
        """Start ``host`` again; the next trial has both conductors."""
        self.start_conductor(host)
        self.wait_serving(host)
        self.wait_alive(HOSTS)

    def takeover_line(self, uuid, after):
        """Seconds from ``after`` to the first "Taking over action" log
        line of ``uuid``, or None (none was logged)."""
        lines = self.log_lines('Taking over action %s' % uuid)
        return rounded(lines[0][0] - after) if lines else None
