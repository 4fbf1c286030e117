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
"""Selector resolution: 200 groups over 20,000 nodes, in SQL (one indexed
query per group) against the reference semantics evaluated in Python over
the loaded nodes."""

import argparse
import json
import random
import sys
import time

from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import selectors as selectors_mod
from tools.benchmarks import harness


def site(count, rng):
    nodes = []
    for i in range(count):
        nodes.append({
            'name': 'n%05d' % i, 'rack_name': 'rack%02d' % rng.randrange(40),
            'tags': sorted(rng.sample(['compute', 'control', 'storage',
                                       'ntp', 'monitoring', 'gpu'], 2)),
            'labels': {'zone': 'z%d' % rng.randrange(8),
                       'tier': rng.choice(['a', 'b', 'c'])}})
    return nodes


def selector(rng, count):
    kind = rng.randrange(4)
    if kind == 0:
        return {'node_tags': [rng.choice(['compute', 'gpu', 'storage'])],
                'rack_names': ['rack%02d' % rng.randrange(40)
                               for _ in range(3)]}
    if kind == 1:
        return {'node_labels': [{'zone': 'z%d' % rng.randrange(8)},
                                'tier:%s' % rng.choice('abc')]}
    if kind == 2:
        return {'node_names': ['n%05d' % rng.randrange(count)
                               for _ in range(20)]}
    return {'node_tags': ['control'],
            'node_labels': ['zone:z%d' % rng.randrange(8)]}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--quick', action='store_true')
    args = parser.parse_args(argv)
    count, groups = (2000, 50) if args.quick else (20000, 200)
    rng = random.Random(20261121)
    svc = harness.Service()
    try:
        nodes = site(count, rng)
        svc.add_nodes(nodes)
        group_selectors = [
            [selectors_mod.Selector.from_dict(selector(rng, count))
             for _ in range(rng.randrange(1, 3))] for _ in range(groups)]
        started = time.monotonic()
        sql = [dbapi.resolve_selectors(s) for s in group_selectors]
        sql_seconds = time.monotonic() - started
        started = time.monotonic()
        ref = [sorted(selectors_mod.select(s, nodes))
               for s in group_selectors]
        ref_seconds = time.monotonic() - started
        assert sql == ref, 'SQL and the reference semantics disagree'
    finally:
        svc.stop()
    print(json.dumps(harness.figure(
        'selectors', round(sql_seconds, 3), 's',
        baseline=round(ref_seconds, 3), nodes=count, groups=groups,
        matched=sum(len(r) for r in sql),
        note='baseline: the reference semantics in Python over nodes '
             'already in memory')))


if __name__ == '__main__':
    sys.exit(main())
