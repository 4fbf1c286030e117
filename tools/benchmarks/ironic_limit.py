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

One JSON line per run, then one ``P9`` line per (L, conductors) with the
ratio's min, median and max.
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
DEPLOY_DELAY = '4'
MOVED = re.compile(
    r'^(?P<ts>\S+ \S+) .*Node (?P<uuid>[0-9a-f-]{36}) moved to provision '
    r'state "(?P<state>[^"]+)" from state "(?P<prev>[^"]+)"', re.M)


def _configure(endpoint, poll_interval):
    from baremetal_orch.conf import CONF
    CONF([], project='baremetal-orch', default_config_files=[])
    CONF.set_override('auth_type', 'none', group='ironic')
    CONF.set_override('endpoint_override', endpoint, group='ironic')
    CONF.set_override('poll_interval', poll_interval, group='ironic')


def deploy(uuids, poll_interval=0.2):
    """Deploy the Ironic nodes side by side with the ironic driver;
    return ``(start, end, failures, throttle stats)``."""
    import types

    from baremetal_orch.drivers.provisioning import ironic as driver_mod
    from baremetal_orch.ironic import throttle

    driver = driver_mod.IronicDriver()
    nodes = [types.SimpleNamespace(
        uuid=u, name=u, ident=u, ironic_uuid=u, driver='ironic',
        driver_info={}, instance_info={}, provision_state='available',
        shard=None, conductor_group=None) for u in uuids]
    start = time.monotonic()
    with futures.ThreadPoolExecutor(len(nodes)) as pool:
        jobs = [pool.submit(driver.deploy, n, {}, 3600) for n in nodes]
        failures = [str(j.exception()) for j in jobs if j.exception()]
    end = time.monotonic()
    stats = throttle.throttle_for(driver.client.endpoint,
                                  throttle.DEPLOY).stats()
    return start, end, failures, stats


def worker(args):
    _configure(args.endpoint, args.poll_interval)
    start, end, failures, stats = deploy(args.uuids.split(','),
                                         args.poll_interval)
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


def available_nodes(ironic, count, tag):
    uuids = [ironic.create_node('p9-%s-%d' % (tag, i))['uuid']
             for i in range(count)]
    for target, state in (('manage', 'manageable'),
                          ('provide', 'available')):
        for uuid in uuids:
            ironic.provision(uuid, target)
        for uuid in uuids:
            ironic.wait_for(uuid, 'provision_state', state)
    return uuids


def run_once(ironic, limit, conductors, tag, poll_interval):
    nodes = 5 * limit
    uuids = available_nodes(ironic, nodes, tag)
    if conductors == 1:
        start, end, failures, stats = deploy(uuids, poll_interval)
        runs = [{'stats': stats}]
    else:
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep +
                   os.environ.get('PYTHONPATH', ''))
        share = math.ceil(nodes / conductors)
        procs = [subprocess.Popen(
            [sys.executable, '-m', 'tools.benchmarks.ironic_limit',
             '--worker', '--endpoint', ironic.endpoint,
             '--poll-interval', str(poll_interval),
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
        durations = deploy_durations(f.read(), uuids)
    states = {ironic.get_node(u)['provision_state'] for u in uuids}
    one = statistics.median(durations)
    ideal = math.ceil(nodes / limit) * one
    makespan = end - start
    return {'limit': limit, 'nodes': nodes, 'conductors': conductors,
            'makespan_s': round(makespan, 2),
            'one_deploy_s': round(one, 3), 'ideal_s': round(ideal, 2),
            'ratio': round(makespan / ideal, 3),
            'failures': len(failures), 'states': sorted(states),
            'own_peak': [r['stats']['peak'] for r in runs],
            'refusals': [r['stats']['refusals'] for r in runs]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true')
    parser.add_argument('--limits', default='4,20')
    parser.add_argument('--conductors', default='1,2')
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--poll-interval', type=float, default=0.2)
    parser.add_argument('--ironic-db', default='sqlite',
                        choices=('sqlite', 'mysql'),
                        help="Ironic's database: its own sqlite file, or a "
                             "throw-away database on the local MariaDB, as "
                             "operators run Ironic")
    parser.add_argument('--worker', action='store_true')
    parser.add_argument('--endpoint')
    parser.add_argument('--uuids')
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
                fake_delays={'deploy_delay': DEPLOY_DELAY}, api_threads=1,
                conductor_options={'max_concurrent_deploy': limit}))
            for conductors in [int(x) for x in args.conductors.split(',')]:
                ratios = []
                for rep in range(repeat):
                    _configure(ironic.endpoint, args.poll_interval)
                    doc = run_once(ironic, limit, conductors,
                                   '%d-%d-%d' % (limit, conductors, rep),
                                   args.poll_interval)
                    print(json.dumps(doc), flush=True)
                    ratios.append(doc['ratio'])
                print(json.dumps({
                    'figure': 'P9', 'value': statistics.median(ratios),
                    'unit': 'makespan / ideal', 'goal': 1.10,
                    'limit': limit, 'nodes': 5 * limit,
                    'conductors': conductors, 'min': min(ratios),
                    'max': max(ratios), 'runs': len(ratios),
                    'deploy_delay': DEPLOY_DELAY,
                    'ironic_db': args.ironic_db,
                    'load': os.getloadavg()}), flush=True)


if __name__ == '__main__':
    sys.exit(main())
