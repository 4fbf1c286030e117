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
"""P2: makespan of a 20-group DAG over fake nodes with simulated durations,
serialized (max_concurrent_groups = 1) and with parallel groups, against
the bounds computed from the strategy: the sum of the group durations
(serialized) and the critical path (parallel)."""

import argparse
import json
import os
import sys

import sqlalchemy as sa

from tools.benchmarks import harness

GOAL = 1.10
LAYERS = 4
WIDTH = 5


def dag():
    """4 layers of 5 groups; each group depends on one or two groups of
    the layer before. Durations vary per group."""
    groups, depends, factor = [], {}, {}
    for layer in range(LAYERS):
        for i in range(WIDTH):
            name = 'l%dg%d' % (layer, i)
            groups.append(name)
            factor[name] = 1.0 + ((layer * WIDTH + i) % 3) * 0.5
            if layer:
                depends[name] = sorted({'l%dg%d' % (layer - 1, i),
                                        'l%dg%d' % (layer - 1,
                                                    (i + 1) % WIDTH)})
    return groups, depends, factor


def run(nodes_total, unit, parallel, connection=None):
    groups, depends, factor = dag()
    per_group = nodes_total // len(groups)
    overrides = {('conductor', 'max_concurrent_nodes'): per_group,
                 ('conductor', 'max_concurrent_groups'):
                     len(groups) if parallel else 1,
                 ('conductor', 'workers'): max(8, per_group * (
                     WIDTH if parallel else 1) + 4)}
    svc = harness.Service(connection=connection, overrides=overrides)
    try:
        nodes = []
        for g in groups:
            for i in range(per_group):
                nodes.append({'name': '%s-n%03d' % (g, i), 'tags': [g],
                              'driver_info': {
                                  'fake_duration': unit * factor[g]}})
        svc.add_nodes(nodes)
        document = harness.chain_strategy('p2', groups, depends)
        svc.add_strategy(document)
        action, seconds = svc.run_action('p2')
        assert action.result == 'success', action.report
        from baremetal_orch.deployment import strategy as strategy_mod
        strategy = strategy_mod.parse(document)
        # A group lasts its prepare plus its deploy (nodes side by side).
        durations = {g: 2 * unit * factor[g] for g in groups}
        bound = (strategy.critical_path_bound(durations) if parallel
                 else strategy.serial_bound(durations))
        return seconds, bound
    finally:
        svc.stop()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--quick', action='store_true')
    parser.add_argument('--mode', choices=['serial', 'parallel'],
                        required=True)
    parser.add_argument(
        '--connection', default=os.environ.get(harness.CONNECTION_ENV),
        help='a database server (a fresh database is made on it); default '
             '$%s, else an embedded sqlite file' % harness.CONNECTION_ENV)
    args = parser.parse_args(argv)
    nodes, unit = (100, 0.5) if args.quick else (2000, 2.0)
    seconds, bound = run(nodes, unit, args.mode == 'parallel',
                         args.connection)
    database = (sa.engine.make_url(args.connection).get_backend_name()
                if args.connection else 'sqlite')
    print(json.dumps(harness.figure(
        'P2-%s' % args.mode, round(seconds, 2), 's',
        baseline=round(bound, 2), goal=GOAL, nodes=nodes, groups=20,
        database=database)))


if __name__ == '__main__':
    sys.exit(main())
