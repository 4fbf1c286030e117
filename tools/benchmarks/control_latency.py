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
"""P8: from a control's 202 to the moment no new node work starts.

The all-in-one ``baremetal-orch`` (API and conductor in one process, no
broker) on a sqlite file, 2,000 fake nodes (written straight into the
database before the service starts; each phase of a node lasting from 1
to 3 s by default, spread over a group's nodes) in 10 groups of 200 with
no dependencies between them, ``[conductor]max_concurrent_groups = 4`` and
``max_concurrent_nodes = 50``: up to 200 nodes in flight, from 4 groups
side by side. One ``deploy_site``; ten trials on it, each:

#. wait until node work flows: :data:`FLOWING` node tasks of the action
   started since the last resume (their ``started_at``), then a delay
   drawn from :data:`DELAY` (``--seed``), past the burst of the resume;
#. ``POST /v1/actions/{uuid}/control {"verb": "pause"}``; t0 is the
   arrival of its 202;
#. wait until the action is ``paused`` (what was in flight drained);
#. t1 is the latest ``started_at`` of the action's node tasks (the
   conductor writes it as it starts a node's work); the figure is
   ``max(0, t1 - t0)``: after t1, no new node work started;
#. ``resume``, and the next trial.

The same action is paused ten times (not ten fresh actions): each trial
then pauses a different mix of groups and phases (the first trials while
the first four groups prepare, later ones in other phases), and the
2,000 nodes are created once. Besides the figure: the seconds from the
202 to ``paused``, the node starts after the 202, and the baseline: the
median gap between two batches of node starts while the action ran (a
phase sends its free slots as one batch), and the mean gap between two
node starts (1 / the rate at which node work starts).
"""

import argparse
import datetime
import json
import os
import random
import statistics
import sys
import time

import sqlalchemy as sa

from tools.benchmarks import harness
from tools.benchmarks import processes
from tools.benchmarks import stats

GOAL = 1.0
#: Node starts since the last resume before a pause: work flows.
FLOWING = 60
#: Seconds within which node starts count as one batch (the baseline).
BATCH = 0.01
#: Seconds after work flows again before the pause: drawn from this range.
DELAY = (1.0, 3.0)
STATE_FIELDS = {'fields': 'state'}

NODE_STARTS = sa.text(
    "SELECT started_at FROM tasks WHERE action_uuid = :action "
    "AND kind = 'node' AND started_at IS NOT NULL")


def epoch(stamp):
    """A naive UTC datetime (a task's ``started_at``) as epoch seconds."""
    if isinstance(stamp, str):
        stamp = datetime.datetime.fromisoformat(stamp)
    return stamp.replace(tzinfo=datetime.timezone.utc).timestamp()


def node_starts(engine, action):
    """Epoch seconds of every node task of ``action`` started."""
    with engine.connect() as conn:
        return [epoch(s) for (s,) in conn.execute(
            NODE_STARTS, {'action': action}).all()]


def spread(duration, index):
    """A node's phase duration: from 0.5 to 1.5 times ``duration``,
    spread evenly over a group's nodes, so that they end (and the next
    ones start) all along, not in waves of max_concurrent_nodes."""
    return round(duration * (0.5 + (index * 0.6180339887) % 1.0), 3)


def strategy(groups):
    return harness.chain_strategy('p8', groups)


def wait_state(client, path, wanted, timeout):
    def reached():
        state = client.get(path, status=200, params=STATE_FIELDS).json()[
            'state']
        if state in ('complete', 'failed', 'cancelled'):
            raise RuntimeError('the action ended (%s) during the trials'
                               % state)
        return state == wanted
    client.wait_for(reached, timeout=timeout, interval=0.02)


def trial(svc, uuid, since, delay):
    """One pause, ``delay`` seconds after node work flows again; returns
    its figures and (its 202, the resume's time)."""
    path = '/v1/actions/%s' % uuid
    client = svc.client
    client.wait_for(lambda: len([s for s in node_starts(svc.engine, uuid)
                                 if s >= since]) >= FLOWING,
                    timeout=600, interval=0.05)
    # Past the burst of a resume (every group's batch at once): the
    # groups' batches end and start at their own times.
    time.sleep(delay)
    sent = time.time()
    client.post(path + '/control', status=202,
                json={'verb': 'pause', 'reason': 'P8'})
    t0 = time.time()
    wait_state(client, path, 'paused', 600)
    paused = time.time()
    starts = node_starts(svc.engine, uuid)
    after = [s for s in starts if s > t0]
    t1 = max(starts)
    client.post(path + '/control', status=202, json={'verb': 'resume'})
    resumed = time.time()
    return {'p8_s': round(max(0.0, t1 - t0), 3),
            'delay_s': round(delay, 2),
            'last_start_to_202_s': round(t0 - t1, 3) if t1 <= t0 else None,
            'request_s': round(t0 - sent, 3),
            'to_paused_s': round(paused - t0, 3),
            'started_after_202': len(after),
            'started_before': len(starts) - len(after)}, (t0, resumed)


def gaps_while_running(starts, paused, together=BATCH):
    """Gaps between consecutive node starts, but those that span a
    pause (``paused``: [(pause 202, resume)]); starts less than
    ``together`` seconds apart count as one (a batch)."""
    batches = []
    for stamp in sorted(starts):
        if not batches or stamp - batches[-1] >= together:
            batches.append(stamp)
    starts = batches
    gaps = []
    for a, b in zip(starts, starts[1:]):
        if not any(a < end and b > begin for begin, end in paused):
            gaps.append(b - a)
    return gaps


def run(trials, groups_total, per_group, fake_duration, max_groups,
        max_nodes, workers, rng):
    groups = ['g%02d' % i for i in range(groups_total)]
    overrides = {('conductor', 'max_concurrent_groups'): max_groups,
                 ('conductor', 'max_concurrent_nodes'): max_nodes}
    if workers:
        overrides[('conductor', 'workers')] = workers
    svc = processes.AllInOne(overrides=overrides)
    svc.setUp()
    try:
        svc.add_nodes([{'name': '%s-n%03d' % (g, i), 'tags': [g],
                        'driver_info': {'fake_duration': spread(
                            fake_duration, i)}}
                       for g in groups for i in range(per_group)])
        svc.start()
        svc.add_strategy(strategy(groups))
        action = svc.client.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'p8'}}).json()
        uuid = action['uuid']
        since = time.time()
        results, paused = [], []
        for _ in range(trials):
            doc, window = trial(svc, uuid, since, rng.uniform(*DELAY))
            results.append(doc)
            paused.append(window)
            since = window[1]
        final = svc.client.wait_for_action(uuid, timeout=3600)
        starts = node_starts(svc.engine, uuid)
        gaps = gaps_while_running(starts, paused)
        per_node = gaps_while_running(starts, paused, 0)
        return results, gaps, per_node, final
    finally:
        svc.stop()


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true',
                        help='3 trials on 1,200 nodes')
    parser.add_argument('--trials', type=int, default=10)
    parser.add_argument('--seed', type=int,
                        help='of the delays before the pauses')
    parser.add_argument('--fake-duration', type=float, default=2.0,
                        help='seconds per phase of a fake node')
    parser.add_argument('--max-concurrent-groups', type=int, default=4)
    parser.add_argument('--max-concurrent-nodes', type=int, default=50)
    parser.add_argument(
        '--workers', type=int, default=0,
        help='[conductor]workers (default: the service\'s default)')
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.quick:
        trials, groups, per_group = 3, 4, 300
    else:
        trials, groups, per_group = args.trials, 10, 200
    seed = args.seed if args.seed is not None else random.randrange(2 ** 31)
    load_before = os.getloadavg()
    results, gaps, per_node, final = run(
        trials, groups, per_group, args.fake_duration,
        args.max_concurrent_groups, args.max_concurrent_nodes,
        args.workers, random.Random(seed))
    values = [r['p8_s'] for r in results]
    print(json.dumps(harness.figure(
        'P8', round(statistics.median(values), 3), 's', goal=GOAL,
        baseline=round(statistics.median(gaps), 4) if gaps else None,
        baseline_gaps=stats.summary(gaps, 4) if gaps else None,
        seed=seed,
        ratio=None, summary=stats.summary(values),
        to_paused=stats.summary(r['to_paused_s'] for r in results),
        started_after_202=stats.summary(
            (r['started_after_202'] for r in results), 0),
        baseline_mean_gap_per_node_s=round(statistics.mean(per_node), 4)
        if per_node else None,
        nodes=groups * per_group, groups=groups,
        max_concurrent_groups=args.max_concurrent_groups,
        max_concurrent_nodes=args.max_concurrent_nodes,
        workers=args.workers or 'default',
        fake_duration=args.fake_duration, database='sqlite',
        deployment='aio', action_end=[final['state'], final['result']],
        trials=results,
        load=[round(x, 2) for x in load_before],
        load_after=[round(x, 2) for x in os.getloadavg()],
        note='value: median over the trials of max(0, latest node start '
             '- the pause\'s 202); baseline: median gap between two '
             'batches of node starts (starts within %s s are one) while '
             'running' % BATCH)))


if __name__ == '__main__':
    sys.exit(main())
