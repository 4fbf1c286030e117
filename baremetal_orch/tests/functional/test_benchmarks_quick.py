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
"""The ``--quick`` sizes of the benchmarks against real components still
run: ``tools/benchmarks/run.py --quick P1`` (a real Ironic beside the
all-in-one, on sqlite and on MariaDB) and ``--quick P7`` (deploy_site
over a real Ironic with 4 shard conductors, RabbitMQ and MariaDB, against
the raw openstacksdk script), and ``--quick P10`` (the API's latency
while P2's action runs on the all-in-one, 200 nodes). Only the shape and
the completeness of the output are checked, never a speed: figures come
from full runs."""

import json
import os
import subprocess
import sys

from baremetal_orch.tests.functional import base

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


class TestQuickBenchmarks(base.FunctionalTestCase):

    def run_bench(self, *figures):
        proc = subprocess.run(
            [sys.executable, os.path.join(ROOT, 'tools', 'benchmarks',
                                          'run.py'), '--quick'] +
            list(figures),
            cwd=ROOT, capture_output=True, text=True, timeout=840,
            stdin=subprocess.DEVNULL)
        self.assertEqual(0, proc.returncode, proc.stderr[-4000:])
        return [json.loads(line) for line in proc.stdout.splitlines()]

    def test_p1_quick(self):
        docs = self.run_bench('P1')
        self.assertEqual(
            [('sqlite', 'detail'), ('sqlite', 'common'),
             ('mysql', 'detail'), ('mysql', 'common')],
            [(d['backend'], d['listing']) for d in docs])
        for doc in docs:
            self.assertEqual(('P1', 'nodes/s', 1000, 2),
                             (doc['figure'], doc['unit'], doc['nodes'],
                              doc['pairs']))
            self.assertEqual(2, doc['ratios']['n'])
            self.assertLessEqual(doc['ratios']['min'],
                                 doc['ratios']['median'])
            self.assertLessEqual(doc['ratios']['median'],
                                 doc['ratios']['max'])
            self.assertGreater(doc['value'], 0)
            self.assertGreater(doc['baseline'], 0)
        common = docs[1]['fields']
        self.assertIn('provision_state', common)
        self.assertNotIn('links', common)

    def test_p7_quick(self):
        docs = self.run_bench('P7')
        self.assertEqual(['P7-run', 'P7-run', 'P7', 'P6'],
                         [d['figure'] for d in docs])
        ours, script, p7, p6 = docs
        self.assertEqual(('baremetal_orch', 'script'),
                         (ours['side'], script['side']))
        self.assertEqual(4, len(ours['conductors']))
        for conductor in ours['conductors']:
            self.assertGreater(conductor['peak_rss_mib'], 0)
        self.assertEqual((40, 10, 4, 1), (p7['nodes'], p7['groups'],
                                          p7['shards'], p7['pairs']))
        self.assertEqual((ours['seconds'], script['seconds']),
                         (p7['value'], p7['baseline']))
        self.assertEqual(max(c['peak_rss_mib'] for c in ours['conductors']),
                         p6['value'])

    def test_p10_quick(self):
        run, p10 = self.run_bench('P10')
        self.assertEqual(('P10-run', 'P10'), (run['figure'], p10['figure']))
        self.assertEqual((200, 20, 'aio', 'sqlite'),
                         (run['nodes'], run['groups'], run['deployment'],
                          run['database']))
        for name in ('idle', 'busy'):
            phase = run[name]
            # Both phases sent requests and every one was answered 200.
            self.assertGreater(phase['requests'], 0, name)
            self.assertEqual((0, []), (phase['errors'],
                                       phase['error_kinds']), name)
            self.assertLess(0, phase['p50_ms'], name)
            self.assertLessEqual(phase['p50_ms'], phase['p99_ms'], name)
            self.assertLessEqual(phase['p99_ms'], phase['max_ms'], name)
        self.assertEqual(round(run['busy']['p99_ms'] /
                               run['idle']['p99_ms'], 3), run['value'])
        self.assertGreater(run['action_s'], 0)
        self.assertEqual(3, len(run['load']))
        self.assertEqual((run['value'], 2.0, 1),
                         (p10['value'], p10['goal'], p10['repeat']))
        self.assertEqual({'min': run['value'], 'median': run['value'],
                          'max': run['value'], 'n': 1}, p10['ratios'])
        self.assertEqual({'idle': 0, 'busy': 0}, p10['errors'])

    def test_ironic_poll_cost_quick(self):
        # The figure behind poller.LISTED_PER_GET, on a real Ironic.
        proc = subprocess.run(
            [sys.executable, '-m', 'tools.benchmarks.ironic_poll_cost',
             '--nodes', '40', '--pairs', '2', '--gets', '5'],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
            stdin=subprocess.DEVNULL)
        self.assertEqual(0, proc.returncode, proc.stderr[-4000:])
        [doc] = [json.loads(line) for line in proc.stdout.splitlines()]
        self.assertEqual(('ironic-poll-cost', 40, 10, 2),
                         (doc['figure'], doc['nodes'], doc['shard_nodes'],
                          doc['pairs']))
        for key in ('get_ms', 'shard_listing_ms', 'full_listing_ms',
                    'patch_ms', 'listed_per_get'):
            self.assertEqual(2, doc[key]['n'], key)
            self.assertGreater(doc[key]['min'], 0, key)

    def test_ironic_deploy_cost_quick(self):
        # What the config drive costs Ironic against a deploy without.
        proc = subprocess.run(
            [sys.executable, '-m', 'tools.benchmarks.ironic_deploy_cost',
             '--nodes', '4', '--pairs', '1'],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
            stdin=subprocess.DEVNULL)
        self.assertEqual(0, proc.returncode, proc.stderr[-4000:])
        [doc] = [json.loads(line) for line in proc.stdout.splitlines()]
        self.assertEqual(('ironic-deploy-cost', 4, 1),
                         (doc['figure'], doc['nodes'], doc['pairs']))
        self.assertGreater(doc['drive_bytes'], 0)
        for key in ('drive_ms', 'plain_ms'):
            self.assertEqual(1, doc[key]['n'], key)
            self.assertGreater(doc[key]['min'], 0, key)
