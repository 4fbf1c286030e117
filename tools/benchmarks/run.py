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
"""Run the benchmarks; print one JSON object per line and figure.

    python tools/benchmarks/run.py [--quick] [P1 P2 ...]

Figures: selectors, P1 (node list vs a real Ironic, interleaved, on
sqlite and on MariaDB, whole documents and like-for-like fields), P2
(makespan against the critical-path bound, serialized and parallel, all-in-one
and split: API and conductor processes over RabbitMQ), P3
(overhead per node, 100 to 10,000 nodes), P4 (shard sync vs full
listing, real Ironic), P5 (notifications on RabbitMQ vs off), P6 (peak
RSS of the conductor during the largest P3 action; with P7, also during
P7), P7 (deploy_site over a real Ironic, 4 shards and conductors, against
a script driving Ironic directly), P8 (from a pause's 202 to the last
node work started, 2,000 nodes in parallel groups, all-in-one), P9 (one
group of 5 L nodes deployed under Ironic's max_concurrent_deploy L, one
and two conductors, against ceil(5 L / L) deploys back to back), P10 (p99
of GET /v1/nodes?limit=100 while P2's parallel action runs on the
all-in-one, against its p99 on the idle service). Each measurement runs
in a process of its own.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIGURES = ('selectors', 'P1', 'P2', 'P3', 'P4', 'P5', 'P6', 'P7', 'P8', 'P9',
           'P10')


def _run(module, *args):
    """Run tools.benchmarks.<module>; return its JSON lines."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep +
               os.environ.get('PYTHONPATH', ''))
    proc = subprocess.run(
        [sys.executable, '-m', 'tools.benchmarks.%s' % module] + list(args),
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, timeout=4 * 3600)
    docs = [json.loads(line) for line in proc.stdout.splitlines()
            if line.startswith('{')]
    if proc.returncode != 0:
        for doc in docs:  # what it measured before it failed
            print(json.dumps(doc), flush=True)
        raise RuntimeError('%s failed:\n%s' % (module, proc.stderr[-3000:]))
    return docs


def figure(name, value, unit, baseline=None, goal=None, ratio=None, **kw):
    if ratio is None and baseline:
        ratio = round(value / baseline, 3)
    doc = {'figure': name, 'value': value, 'unit': unit,
           'baseline': baseline, 'ratio': ratio, 'goal': goal}
    doc.update(kw)
    return doc


def overhead(quick):
    sizes = (100, 400) if quick else (100, 1000, 10000)
    runs = [_run('overhead', str(size))[0] for size in sizes]
    first, last = runs[0], runs[-1]
    p3 = figure('P3', last['per_node_ms'], 'ms/node',
                baseline=first['per_node_ms'], goal=1.3,
                sizes={r['size']: r['per_node_ms'] for r in runs})
    p6 = figure('P6', last['peak_rss_mib'], 'MiB', goal=400,
                nodes=last['size'],
                note='peak RSS of the process running API-less conductor '
                     'and flow (ru_maxrss)')
    return p3, p6


def notifications(quick):
    nodes = '200' if quick else '1000'
    repeat = 1 if quick else 3
    runs = {'off': [], 'on': []}
    for _ in range(repeat):
        # Alternate, so a machine getting busier weighs on both modes.
        for mode in ('off', 'on'):
            runs[mode].append(_run('notifications_bench', '--mode', mode,
                                   '--nodes', nodes)[0]['seconds'])
    return figure('P5', statistics.median(runs['on']), 's',
                  baseline=statistics.median(runs['off']),
                  goal=1.10, nodes=int(nodes), repeat=repeat, runs=runs,
                  note='on: versioned notifications to RabbitMQ (info), '
                       'until the last one reached the broker')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true')
    parser.add_argument('figures', nargs='*', metavar='FIGURE',
                        help='among %s (default: all)' % ', '.join(FIGURES))
    args = parser.parse_args(argv)
    wanted = args.figures or list(FIGURES)
    unknown = sorted(set(wanted) - set(FIGURES))
    if unknown:
        parser.error('unknown figure(s): %s' % ', '.join(unknown))
    quick = ['--quick'] if args.quick else []
    cache = {}

    def emit(doc):
        print(json.dumps(doc), flush=True)

    for name in wanted:
        if name == 'selectors':
            emit(_run('selectors_bench', *quick)[0])
        elif name == 'P1':
            for backend in ('sqlite', 'mysql'):
                for doc in _run('node_list', '--backend', backend, *quick):
                    emit(doc)
        elif name == 'P2':
            for deployment in ('aio', 'split'):
                for mode in ('serial', 'parallel'):
                    emit(_run('makespan', '--mode', mode, '--deployment',
                              deployment, *quick)[0])
        elif name in ('P3', 'P6'):
            if 'overhead' not in cache:
                cache['overhead'] = overhead(args.quick)
            emit(cache['overhead'][0 if name == 'P3' else 1])
        elif name == 'P4':
            emit(_run('ironic_shard_sync', *quick)[0])
        elif name == 'P5':
            emit(notifications(args.quick))
        elif name == 'P7':
            for doc in _run('real_ironic_deploy', *quick):
                emit(doc)
        elif name == 'P8':
            emit(_run('control_latency', *quick)[0])
        elif name == 'P9':
            for doc in _run('ironic_limit', *quick):
                emit(doc)
        elif name == 'P10':
            for doc in _run('api_latency', *quick):
                emit(doc)


if __name__ == '__main__':
    sys.exit(main())
