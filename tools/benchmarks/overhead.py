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
"""P3: orchestration overhead per node, 100 to 10,000 fake nodes with zero
driver time (must stay flat), and P6: peak RSS of the conductor process
during the largest action. One size per process run."""

import argparse
import json
import sys

from tools.benchmarks import harness

GROUPS = 10


def run(size):
    svc = harness.Service(
        overrides={('conductor', 'max_concurrent_nodes'): 32})
    try:
        groups = ['g%d' % i for i in range(GROUPS)]
        svc.add_nodes([{'name': 'n%05d' % i, 'tags': [groups[i % GROUPS]]}
                       for i in range(size)])
        # A chain: each group after the previous one.
        svc.add_strategy(harness.chain_strategy(
            'p3', groups, {g: [groups[i - 1]] for i, g in enumerate(groups)
                           if i}))
        action, seconds = svc.run_action('p3')
        assert action.result == 'success', action.report
        return {'size': size, 'seconds': round(seconds, 3),
                'per_node_ms': round(seconds / size * 1000, 3),
                'peak_rss_mib': round(harness.peak_rss_mib(), 1)}
    finally:
        svc.stop()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('size', type=int)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.size)))


if __name__ == '__main__':
    sys.exit(main())
