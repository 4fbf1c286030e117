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
"""P9: one group of N = 5 L nodes deployed under Ironic's limit L.

A real Ironic from PyPI (the functional tests' fixture: one ``ironic``
process on sqlite, fake-hardware, ``[fake]deploy_delay`` so that a deploy
lasts seconds) with ``[conductor]max_concurrent_deploy = L`` and one API
thread (so that its limit holds exactly). The ``ironic`` driver deploys
the N nodes of a group side by side, one thread per node, as a conductor
does with ``max_concurrent_nodes = N`` (``conductor/node_work.py``
hands each node's driver call to a pool the same way); the driver queues
the nodes Ironic refuses.

The makespan runs from the first deploy call to the last one's return.
The ideal is ``ceil(N / L)`` deploys back to back, one deploy being the
median time Ironic itself logged between a node's ``deploying`` and its
``active`` in this run (``Node ... moved to provision state``).

``--conductors 2``: two processes (two conductors with a throttle each)
share the Ironic, each deploying half of the nodes; the makespan runs from
the first start to the last end (CLOCK_MONOTONIC is shared by processes).

``--peer``: each run of one conductor is followed by a run of the peer on
fresh nodes (interleaved: ours, peer, ours, peer...): a minimal client
that knows L, keeps exactly L deploys in flight and sends the next one as
soon as one listing of every node (each ``--poll-interval``) shows a node
``active``: what Ironic itself allows, with no queue to learn the limit.

One JSON line per run, then one ``P9`` line per (L, conductors) with the
ratio's min, median and max (and the peer's, with ``--peer``).
"""

import argparse
from concurrent import futures
import datetime
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

import fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
#: Ironic's ``[fake]deploy_delay``: a deploy lasts about twice this, 16 s,
#: the longer of the two deploys the Ironic-limit issue was seen with (6
#: and 16 s). Each provision request costs Ironic's one API thread the same
#: fraction of a second whatever the deploy's length, which the ideal does
#: not count and no client can avoid (``--peer``); real deploys last
#: minutes.
DEPLOY_DELAY = 8
MOVED = re.compile(
    r'^(?P<ts>\S+ \S+) .*Node (?P<uuid>[0-9a-f-]{36}) moved to provision '
    r'state "(?P<state>[^"]+)" from state "(?P<prev>[^"]+)"', re.M)


def _configure(endpoint, poll_interval, shard=None):
    from baremetal_orch.conf import CONF
    CONF([], project='baremetal-orch', default_config_files=[])
    CONF.set_override('auth_type', 'none', group='ironic')
    CONF.set_override('endpoint_override', endpoint, group='ironic')
    CONF.set_override('poll_interval', poll_interval, group='ironic')
    CONF.set_override('shard_key', shard, group='ironic')


def deploy(uuids, poll_interval=0.2, shard=None):
    """Deploy the Ironic nodes side by side with the ironic driver;
    return ``(start, end, failures, throttle stats)``."""
    import types

    from baremetal_orch.drivers.provisioning import ironic as driver_mod
    from baremetal_orch.ironic import throttle

    # A fresh throttle each run, as in a worker process of its own: its
    # counters are this run's.
    throttle.reset()
    driver = driver_mod.IronicDriver()
    nodes = [types.SimpleNamespace(
        uuid=u, name=u, ident=u, ironic_uuid=u, driver='ironic',
        driver_info={}, instance_info={}, provision_state='available',
        shard=shard, conductor_group=None) for u in uuids]
    start = time.monotonic()
    with futures.ThreadPoolExecutor(len(nodes)) as pool:
        jobs = [pool.submit(driver.deploy, n, {}, 3600) for n in nodes]
        failures = [str(j.exception()) for j in jobs if j.exception()]
    end = time.monotonic()
    stats = throttle.throttle_for(driver.client.endpoint,
                                  throttle.DEPLOY).stats()
    return start, end, failures, stats


def peer_deploy(endpoint, uuids, limit, poll_interval, shard):
    """The peer: L deploys in flight, the next sent when a listing shows
    one ``active``; return ``(start, end, failures, refusals)``."""
    import types

    from baremetal_orch.ironic import configdrive
    from tools.benchmarks import raw_ironic

    api = raw_ironic.SdkIronic(endpoint, threads=limit, shard=shard)
    drives = {u: configdrive.build(configdrive.meta_data(
        types.SimpleNamespace(ironic_uuid=u, name=u), {})) for u in uuids}
    pending, inflight, failures, refusals = list(uuids), set(), [], 0

    def send(uuid):
        try:
            api.conn.baremetal.set_node_provision_state(
                uuid, 'active', config_drive=drives[uuid])
            return True
        except Exception as exc:
            if getattr(exc, 'status_code', None) == 503:
                return False
            raise

    start = time.monotonic()
    sending = {}    # uuid -> future of its request, while unanswered
    try:
        while pending or inflight:
            states, errors = api.poll()
            for uuid, future in list(sending.items()):
                if future.done():
                    del sending[uuid]
                    if not future.result():
                        refusals += 1
                        inflight.discard(uuid)
                        pending.insert(0, uuid)
            for uuid in list(inflight - set(sending)):
                if states[uuid] == 'active':
                    inflight.discard(uuid)
                elif states[uuid] in raw_ironic.FAILED:
                    inflight.discard(uuid)
                    failures.append('%s: %s' % (uuid, errors[uuid]))
            for uuid in pending[:max(0, limit - len(inflight))]:
                pending.remove(uuid)
                inflight.add(uuid)
                sending[uuid] = api.pool.submit(send, uuid)
            if pending or inflight:
                time.sleep(poll_interval)
    finally:
        api.close()
    return start, time.monotonic(), failures, refusals


def worker(args):
    _configure(args.endpoint, args.poll_interval, args.shard)
    start, end, failures, stats = deploy(args.uuids.split(','),
                                         args.poll_interval, args.shard)
    print(json.dumps({'start': start, 'end': end, 'failures': failures,
                      'stats': stats}), flush=True)


def deploy_durations(log_text, uuids):
    """Seconds from ``deploying`` to ``active`` per node, from Ironic's
    own log."""
    began, durations = {}, []
    wanted = set(uuids)
    for match in MOVED.finditer(log_text):
        uuid = match.group('uuid')
        if uuid not in wanted:
            continue
        when = datetime.datetime.strptime(match.group('ts'),
                                          '%Y-%m-%d %H:%M:%S.%f')
        if match.group('state') == 'deploying':
            began[uuid] = when
        elif match.group('state') == 'active' and uuid in began:
            durations.append((when - began.pop(uuid)).total_seconds())
    return durations


def occupancy(log_text, uuids, limit):
    """Where the makespan goes, from Ironic's own log: ``ramp_s`` (the
    first ``deploying`` to the L-th), ``gap_s`` (median delay from a
    node's ``active`` to the next node's ``deploying``, once every node
    is sent) and ``busy`` (Ironic's deploy slots in use, as a share of
    L between the first ``deploying`` and the last ``active``)."""
    wanted, events = set(uuids), []
    for match in MOVED.finditer(log_text):
        if match.group('uuid') in wanted and match.group('state') in (
                'deploying', 'active'):
            events.append((datetime.datetime.strptime(
                match.group('ts'), '%Y-%m-%d %H:%M:%S.%f').timestamp(),
                match.group('state')))
    events.sort()
    starts = [t for t, state in events if state == 'deploying']
    ends = [t for t, state in events if state == 'active']
    if len(starts) < limit or not ends:
        return {}
    # The k-th start after the first L waits for the (k - L)-th end.
    gaps = [max(0.0, s - e) for s, e in zip(starts[limit:], ends)]
    busy, level, last = 0.0, 0, events[0][0]
    for t, state in events:
        busy += level * (t - last)
        level += 1 if state == 'deploying' else -1
        last = t
    span = events[-1][0] - events[0][0]
    return {'ramp_s': round(starts[limit - 1] - starts[0], 2),
            'gap_s': round(statistics.median(gaps), 3) if gaps else None,
            'gap_mean_s': round(statistics.mean(gaps), 3) if gaps else None,
            'gap_max_s': round(max(gaps), 3) if gaps else None,
            'busy': round(busy / (limit * span), 3) if span else None}


def available_nodes(ironic, count, tag):
    uuids = [ironic.create_node('p9-%s-%d' % (tag, i),
                                shard='p9-' + tag)['uuid']
             for i in range(count)]
    for target, state in (('manage', 'manageable'),
                          ('provide', 'available')):
        for uuid in uuids:
            ironic.provision(uuid, target)
        for uuid in uuids:
            ironic.wait_for(uuid, 'provision_state', state)
    return uuids


def run_once(ironic, limit, conductors, tag, poll_interval, peer=False):
    nodes = 5 * limit
    uuids = available_nodes(ironic, nodes, tag)
    # Each run's nodes are a shard of their own, served as a shard-aware
    # conductor serves its shard: the listings of a run do not grow with
    # the nodes earlier runs left in this Ironic.
    shard = 'p9-' + tag
    _configure(ironic.endpoint, poll_interval, shard)
    if peer:
        start, end, failures, refusals = peer_deploy(
            ironic.endpoint, uuids, limit, poll_interval, shard)
        runs = [{'stats': {'peak': limit, 'refusals': refusals}}]
    elif conductors == 1:
        start, end, failures, stats = deploy(uuids, poll_interval, shard)
        runs = [{'stats': stats}]
    else:
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep +
                   os.environ.get('PYTHONPATH', ''))
        share = math.ceil(nodes / conductors)
        procs = [subprocess.Popen(
            [sys.executable, '-m', 'tools.benchmarks.ironic_limit',
             '--worker', '--endpoint', ironic.endpoint,
             '--poll-interval', str(poll_interval), '--shard', shard,
             '--uuids', ','.join(uuids[i * share:(i + 1) * share])],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
            for i in range(conductors)]
        runs = []
        for proc in procs:
            out, _err = proc.communicate(timeout=3600)
            runs.append([json.loads(line) for line in out.splitlines()
                         if line.startswith('{')][-1])
        start = min(r['start'] for r in runs)
        end = max(r['end'] for r in runs)
        failures = [f for r in runs for f in r['failures']]
    with open(ironic.logs['ironic.log'].path) as f:
        log_text = f.read()
    durations = deploy_durations(log_text, uuids)
    states = {ironic.get_node(u)['provision_state'] for u in uuids}
    one = statistics.median(durations)
    ideal = math.ceil(nodes / limit) * one
    makespan = end - start
    return {'limit': limit, 'nodes': nodes, 'conductors': conductors,
            'client': 'peer' if peer else 'ours',
            'makespan_s': round(makespan, 2),
            'one_deploy_s': round(one, 3), 'ideal_s': round(ideal, 2),
            'ratio': round(makespan / ideal, 3),
            'failures': len(failures), 'states': sorted(states),
            'own_peak': [r['stats']['peak'] for r in runs],
            'refusals': [r['stats']['refusals'] for r in runs],
            **occupancy(log_text, uuids, limit)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true')
    parser.add_argument('--limits', default='4,20')
    parser.add_argument('--conductors', default='1,2')
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--poll-interval', type=float, default=0.2)
    parser.add_argument('--deploy-delay', type=int, default=DEPLOY_DELAY,
                        help="Ironic's [fake]deploy_delay: a deploy lasts "
                             "about twice this")
    parser.add_argument('--ironic-db', default='sqlite',
                        choices=('sqlite', 'mysql'),
                        help="Ironic's database: its own sqlite file, or a "
                             "throw-away database on the local MariaDB, as "
                             "operators run Ironic")
    parser.add_argument('--peer', action='store_true',
                        help='interleave each one-conductor run with a '
                             'run of the peer that knows L')
    parser.add_argument('--worker', action='store_true')
    parser.add_argument('--endpoint')
    parser.add_argument('--uuids')
    parser.add_argument('--shard')
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    from baremetal_orch_testing.fixtures import databases
    from tools.benchmarks import real_ironic
    repeat = 1 if args.quick else args.repeat
    for limit in [int(x) for x in args.limits.split(',')]:
        with fixtures.Fixture() as scope:
            connection = None
            if args.ironic_db != 'sqlite':
                connection = real_ironic.mysql_url(scope.useFixture(
                    databases.Database(args.ironic_db)).url)
            ironic = scope.useFixture(real_ironic.Ironic(
                connection=connection,
                fake_delays={'deploy_delay': str(args.deploy_delay)},
                api_threads=1,
                conductor_options={'max_concurrent_deploy': limit}))
            for conductors in [int(x) for x in args.conductors.split(',')]:
                ratios, peers = [], []
                for rep in range(repeat):
                    doc = run_once(ironic, limit, conductors,
                                   '%d-%d-%d' % (limit, conductors, rep),
                                   args.poll_interval)
                    print(json.dumps(doc), flush=True)
                    ratios.append(doc['ratio'])
                    if args.peer and conductors == 1:
                        doc = run_once(ironic, limit, conductors,
                                       '%d-peer-%d' % (limit, rep),
                                       args.poll_interval, peer=True)
                        print(json.dumps(doc), flush=True)
                        peers.append(doc['ratio'])
                if peers:
                    print(json.dumps({
                        'figure': 'P9-peer', 'value': statistics.median(
                            peers), 'unit': 'makespan / ideal',
                        'limit': limit, 'min': min(peers),
                        'max': max(peers), 'runs': len(peers)}),
                        flush=True)
                print(json.dumps({
                    'figure': 'P9', 'value': statistics.median(ratios),
                    'unit': 'makespan / ideal', 'goal': 1.10,
                    'limit': limit, 'nodes': 5 * limit,
                    'conductors': conductors, 'min': min(ratios),
                    'max': max(ratios), 'runs': len(ratios),
                    'deploy_delay': args.deploy_delay,
                    'ironic_db': args.ironic_db,
                    'load': os.getloadavg()}), flush=True)


if __name__ == '__main__':
    sys.exit(main())
