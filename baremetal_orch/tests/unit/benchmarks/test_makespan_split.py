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
"""The pure logic of P2 (makespan) in both deployments: the conductor's
options, the split processes' configuration, the recorded duration."""

from oslo_config import cfg
import sqlalchemy as sa

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base

from tools.benchmarks import makespan
from tools.benchmarks import processes
from tools.benchmarks import split

URL = 'rabbit://guest:guest@127.0.0.1:5672/bmo-x'


class TestConductorOverrides(base.TestCase):

    def test_serial(self):
        self.assertEqual(
            {('conductor', 'max_concurrent_nodes'): 100,
             ('conductor', 'max_concurrent_groups'): 1,
             ('conductor', 'workers'): 104},
            makespan.conductor_overrides(100, 20, parallel=False))

    def test_parallel(self):
        # A layer's 5 groups run side by side: workers for all their nodes.
        self.assertEqual(
            {('conductor', 'max_concurrent_nodes'): 100,
             ('conductor', 'max_concurrent_groups'): 20,
             ('conductor', 'workers'): 504},
            makespan.conductor_overrides(100, 20, parallel=True))

    def test_workers_floor(self):
        self.assertEqual(8, makespan.conductor_overrides(
            1, 20, parallel=False)[('conductor', 'workers')])


class TestFakeNodes(base.TestCase):

    def test_per_group_tagged_with_durations(self):
        groups, _depends, factor = makespan.dag()
        nodes = makespan.fake_nodes(groups, factor, 3, 2.0)
        self.assertEqual(60, len(nodes))
        self.assertEqual(60, len({n['name'] for n in nodes}))
        by_group = {}
        for n in nodes:
            by_group.setdefault(n['tags'][0], []).append(
                n['driver_info']['fake_duration'])
        self.assertEqual(set(groups), set(by_group))
        self.assertEqual([3.0] * 3, by_group['l0g1'])  # factor 1.5
        self.assertEqual([4.0] * 3, by_group['l0g2'])  # factor 2.0


class TestConfigSections(base.TestCase):

    def test_rpc_over_the_broker(self):
        sections = split.config_sections('/tmp/x', 4242, 'sqlite:///a.db',
                                         URL)
        self.assertEqual('oslo', sections['DEFAULT']['rpc_transport'])
        self.assertEqual(URL, sections['DEFAULT']['transport_url'])
        self.assertEqual(split.HOST, sections['DEFAULT']['host'])
        self.assertEqual('sqlite:///a.db',
                         sections['database']['connection'])
        self.assertEqual(4242, sections['api']['port'])
        self.assertEqual('noauth', sections['api']['auth_strategy'])
        self.assertEqual(30, sections['conductor']['heartbeat_timeout'])

    def test_overrides_applied(self):
        overrides = makespan.conductor_overrides(100, 20, parallel=True)
        overrides[('api', 'workers')] = 2
        sections = split.config_sections('/tmp/x', 4242, 'sqlite:///a.db',
                                         URL, overrides, host='c9')
        self.assertEqual(20, sections['conductor']['max_concurrent_groups'])
        self.assertEqual(100, sections['conductor']['max_concurrent_nodes'])
        self.assertEqual(504, sections['conductor']['workers'])
        # The heartbeat stays, the other sections keep theirs.
        self.assertEqual(2, sections['conductor']['heartbeat_interval'])
        self.assertEqual(2, sections['api']['workers'])
        self.assertEqual(4242, sections['api']['port'])
        self.assertEqual('c9', sections['DEFAULT']['host'])


class TestRecordedSeconds(base.TestCase):

    def test_fraction_and_offset(self):
        self.assertAlmostEqual(121.25, processes.recorded_seconds({
            'created_at': '2026-11-24T10:00:00.500000+00:00',
            'finished_at': '2026-11-24T10:02:01.750000+00:00'}))

    def test_naive_is_utc(self):
        self.assertEqual(3600.0, processes.recorded_seconds({
            'created_at': '2026-11-24T10:00:00',
            'finished_at': '2026-11-24T12:00:00+01:00'}))

    def test_unfinished(self):
        self.assertIsNone(processes.recorded_seconds({
            'created_at': '2026-11-24T10:00:00+00:00',
            'finished_at': None}))
        self.assertIsNone(processes.recorded_seconds({'state': 'running'}))


class TestStateReader(base.DbTestCase):

    def test_database(self):
        # What P7 and P10 watch the action with: its row, read anew at
        # each call, from the benchmark's own engine.
        engine = sa.create_engine(cfg.CONF.database.connection)
        self.addCleanup(engine.dispose)
        action = dbapi.create_action({'name': 'deploy_site'})
        state = processes.state_reader(action.uuid, processes.POLL_DATABASE,
                                       engine=engine)
        self.assertEqual('pending', state())
        dbapi.update_action(action.uuid, {'state': 'complete'})
        self.assertEqual('complete', state())


class TestParser(base.TestCase):

    def test_deployment(self):
        parse = makespan.build_parser().parse_args
        self.assertEqual('aio', parse(['--mode', 'serial']).deployment)
        self.assertEqual('split', parse(['--mode', 'serial',
                                         '--split']).deployment)
        self.assertEqual('split', parse(
            ['--mode', 'parallel', '--deployment', 'split']).deployment)
        self.assertRaises(SystemExit, parse,
                          ['--mode', 'serial', '--deployment', 'k8s'])
