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
"""P10 (API latency during work): the client's pacing and errors, a
phase's percentiles, the summary of runs, and P2's workload it shares."""

import time
from unittest import mock

import requests
import requests_mock

from baremetal_orch.tests import base

from tools.benchmarks import api_latency
from tools.benchmarks import makespan
from tools.benchmarks import stats

URL = 'http://127.0.0.1:1/v1/nodes'


class TestPercentile(base.TestCase):

    def test_interpolated(self):
        values = list(range(1, 101))  # 1..100
        self.assertEqual(50.5, stats.percentile(values, 50))
        self.assertAlmostEqual(99.01, stats.percentile(values, 99))
        self.assertEqual(100, stats.percentile(values, 100))
        self.assertEqual(1, stats.percentile(values, 0))

    def test_order_does_not_matter(self):
        self.assertEqual(3, stats.percentile([5, 1, 3], 50))

    def test_one_value(self):
        self.assertEqual(7, stats.percentile([7], 99))

    def test_refused(self):
        self.assertRaises(ValueError, stats.percentile, [], 50)
        self.assertRaises(ValueError, stats.percentile, [1], 101)


class TestPhase(base.TestCase):

    def test_errors_apart(self):
        samples = [(0.010, None)] * 98 + [(0.5, None), (0.02, 'HTTP 503'),
                                          (30.0, 'ReadTimeout')]
        doc = api_latency.phase(samples, 5.0)
        self.assertEqual(101, doc['requests'])
        self.assertEqual(2, doc['errors'])
        self.assertEqual(['HTTP 503', 'ReadTimeout'], doc['error_kinds'])
        self.assertEqual(20.2, doc['rate'])
        self.assertEqual(10.0, doc['p50_ms'])
        # The 99th percentile of the 99 answered: rank 97.02, between
        # 10 and 500 ms.
        self.assertEqual(19.8, doc['p99_ms'])
        self.assertEqual(500.0, doc['max_ms'])

    def test_nothing_answered(self):
        doc = api_latency.phase([(1.0, 'ConnectionError')], 1.0)
        self.assertNotIn('p99_ms', doc)
        self.assertIsNone(api_latency.ratio_of(doc, doc))

    def test_ratio(self):
        self.assertEqual(2.5, api_latency.ratio_of({'p99_ms': 10.0},
                                                   {'p99_ms': 25.0}))


def run_doc(ratio, idle_p99, busy_p99, load, load_after):
    return {'figure': 'P10-run', 'value': ratio,
            'idle': {'requests': 400, 'errors': 0, 'p50_ms': 9.0,
                     'p99_ms': idle_p99},
            'busy': {'requests': 600, 'errors': 1, 'p50_ms': 12.0,
                     'p99_ms': busy_p99},
            'nodes': 2000, 'groups': 20, 'deployment': 'aio',
            'database': 'sqlite', 'load': load, 'load_after': load_after}


class TestSummarise(base.TestCase):

    def test_median_of_the_runs(self):
        doc = api_latency.summarise([
            run_doc(1.5, 20.0, 30.0, [1, 1, 1], [2, 2, 2]),
            run_doc(3.0, 10.0, 30.0, [2, 2, 2], [3, 3, 3]),
            run_doc(2.0, 15.0, 30.0, [3, 3, 3], [4, 4, 4])])
        self.assertEqual(('P10', 2.0, 2.0),
                         (doc['figure'], doc['value'], doc['goal']))
        self.assertEqual({'min': 1.5, 'median': 2.0, 'max': 3.0, 'n': 3},
                         doc['ratios'])
        self.assertEqual(15.0, doc['idle_p99_ms']['median'])
        self.assertEqual({'idle': 1200, 'busy': 1800}, doc['requests'])
        self.assertEqual({'idle': 0, 'busy': 3}, doc['errors'])
        self.assertEqual(([1, 1, 1], [4, 4, 4]),
                         (doc['load'], doc['load_after']))
        self.assertEqual(3, doc['repeat'])

    def test_a_phase_without_answers(self):
        # A run whose busy requests all failed: its figures say so.
        failed = run_doc(None, 20.0, None, [1, 1, 1], [2, 2, 2])
        del failed['busy']['p99_ms'], failed['busy']['p50_ms']
        doc = api_latency.summarise([failed])
        self.assertIsNone(doc['value'])
        self.assertIsNone(doc['busy_p99_ms'])
        self.assertEqual(20.0, doc['idle_p99_ms']['median'])


class TestProber(base.TestCase):

    def probe(self, seconds, rate, **response):
        prober = api_latency.Prober(URL, rate, params={'limit': 100})
        self.addCleanup(prober.close)
        with requests_mock.Mocker() as mocked:
            mocked.get(URL, **response)
            prober.start()
            time.sleep(seconds)
            samples, ran = prober.stop()
        self.assertTrue(samples)
        self.assertIn('limit=100', mocked.request_history[0].url)
        return samples, ran

    def test_rate_is_a_ceiling(self):
        samples, ran = self.probe(0.5, 20, json={'nodes': []})
        self.assertEqual({None}, {error for _t, error in samples})
        self.assertLessEqual(len(samples), ran * 20 + 1)

    def test_late_slots_are_dropped(self):
        # The first answer takes 0.5 s, five slots at 10 a second: the
        # requests after it keep their pace, no burst to catch up. On a
        # clock of the test's own (the wall clock's jitter under load is
        # not the prober's schedule).
        clock = [0.0]
        prober = api_latency.Prober(URL, 10)
        self.addCleanup(prober.close)
        sent = []

        class Stop:
            ended = False

            def is_set(self):
                return self.ended

            def wait(self, seconds):
                clock[0] += max(seconds, 0.0)
                return self.ended

        def get():
            sent.append(round(clock[0], 6))
            clock[0] += 0.5 if len(sent) == 1 else 0.01
            prober._stop.ended = len(sent) == 5
            return 0.01, None

        prober._stop, prober.get = Stop(), get
        with mock.patch.object(api_latency, 'time',
                               mock.Mock(monotonic=lambda: clock[0])):
            prober._loop()
        self.assertEqual([0.0, 0.5, 0.6, 0.7, 0.8], sent)
        self.assertEqual(5, len(prober.samples))

    def test_errors_are_samples(self):
        samples, _ran = self.probe(0.2, 50, status_code=503)
        self.assertEqual({'HTTP 503'}, {error for _t, error in samples})
        samples, _ran = self.probe(
            0.2, 50, exc=requests.exceptions.ConnectionError)
        self.assertEqual({'ConnectionError'},
                         {error for _t, error in samples})


class TestWorkload(base.TestCase):
    """P2 and P10 build their site from the same function."""

    def test_parallel_p2_site(self):
        load = makespan.workload(2000, 2.0, parallel=True)
        self.assertEqual(20, len(load.groups))
        self.assertEqual(2000, len(load.nodes))
        self.assertEqual(makespan.STRATEGY,
                         load.document['metadata']['name'])
        self.assertEqual(makespan.conductor_overrides(100, 20, True),
                         load.overrides)
        self.assertEqual(28.0, makespan.bound_of(load))

    def test_serial_bound(self):
        load = makespan.workload(100, 0.5, parallel=False)
        self.assertEqual(5, len(load.nodes) // len(load.groups))
        self.assertEqual(29.5, makespan.bound_of(load))

    def test_check_ended(self):
        makespan.check_ended('complete', 'success', 1.0)
        self.assertRaises(RuntimeError, makespan.check_ended, 'failed',
                          'failure', 1.0)


class TestParser(base.TestCase):

    def test_switches_as_p2(self):
        parse = api_latency.build_parser().parse_args
        args = parse([])
        self.assertEqual(('aio', None, None, 20.0),
                         (args.deployment, args.repeat, args.idle,
                          args.rate))
        self.assertEqual('split', parse(['--split']).deployment)
        self.assertEqual(3, parse(['--repeat', '3']).repeat)
        self.assertRaises(SystemExit, parse, ['--deployment', 'k8s'])
