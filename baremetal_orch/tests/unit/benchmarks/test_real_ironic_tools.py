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
"""The pure logic of the P1, P7 and P9 benchmarks: summaries of
interleaved runs, the dependency-order driver of the raw-Ironic script
and where P9's makespan goes."""

import secrets
import subprocess
import sys
import time
import types

import psutil

from baremetal_orch.tests import base

from tools.benchmarks import ironic_limit
from tools.benchmarks import node_list
from tools.benchmarks import raw_ironic
from tools.benchmarks import real_ironic_deploy
from tools.benchmarks import stats


class TestStats(base.TestCase):

    def test_summary(self):
        self.assertEqual({'min': 1.0, 'median': 2.5, 'max': 9.0, 'n': 4},
                         stats.summary([9.0, 2.0, 1.0, 3.0]))
        self.assertEqual({'min': 0.333, 'median': 0.333, 'max': 0.333,
                          'n': 1}, stats.summary([1 / 3.0]))
        self.assertRaises(ValueError, stats.summary, [])

    def test_pair_ratios(self):
        self.assertEqual([2.0, 0.5], stats.pair_ratios([4, 1], [2, 2]))
        self.assertRaises(ValueError, stats.pair_ratios, [1, 2], [1])
        self.assertRaises(ValueError, stats.pair_ratios, [1], [0])

    def test_interleaved_alternates(self):
        calls = []

        def measure(name):
            def run():
                calls.append(name)
                return len(calls)
            return run

        self.assertEqual([[1, 3, 5], [2, 4, 6]], stats.interleaved(
            [measure('a'), measure('b')], 3))
        self.assertEqual(['a', 'b'] * 3, calls)

    def test_common_fields(self):
        ours = {'uuid': 1, 'name': 2, 'tags': 3, 'links': 4, 'created_at': 5}
        theirs = {'uuid': 1, 'name': 2, 'traits': 3, 'links': 4,
                  'created_at': 5}
        self.assertEqual(['created_at', 'name', 'uuid'],
                         node_list.common_fields(ours, theirs))
        self.assertEqual(['name', 'uuid'], node_list.common_fields(
            ours, theirs, lambda f: f != 'created_at'))


class FakeIronic:
    """Nodes that reach the state a verb leads to at the next poll, or
    after ``slow`` polls for the nodes named there."""

    LEADS_TO = {'manage': 'manageable', 'provide': 'available',
                'active': 'active'}

    def __init__(self, nodes, slow=None, fail=None):
        self.states = {n: 'enroll' for n in nodes}
        self.pending = {}
        self.slow = dict(slow or {})
        self.fail = fail
        self.sent = []

    def poll(self):
        for node, (state, polls) in list(self.pending.items()):
            if polls <= 0:
                self.states[node] = state
                del self.pending[node]
            else:
                self.pending[node] = (state, polls - 1)
        return dict(self.states), {n: 'boom' for n in self.states}

    def send(self, sends):
        for node, verb in sends:
            self.sent.append((node, verb))
            if (node, verb) == self.fail:
                self.states[node] = 'deploy failed'
                continue
            self.states[node] = 'wait'
            self.pending[node] = (self.LEADS_TO[verb],
                                  self.slow.get(node, 0))


class TestDagDriver(base.TestCase):

    depends = {'a': [], 'b': ['a'], 'c': ['a'], 'd': ['b', 'c']}
    members = {'a': ['a1', 'a2'], 'b': ['b1'], 'c': ['c1', 'c2'],
               'd': ['d1']}

    def run_fake(self, **kwargs):
        nodes = [n for m in self.members.values() for n in m]
        ironic = FakeIronic(nodes, **kwargs)
        ticks = iter(range(1000))
        driver = raw_ironic.DagDriver(self.depends, self.members,
                                      clock=lambda: next(ticks))
        raw_ironic.deploy(driver, ironic, poll_interval=0,
                          clock=lambda: 0, sleep=lambda s: None)
        return driver, ironic

    def test_each_node_goes_manage_provide_active_once(self):
        driver, ironic = self.run_fake()
        self.assertTrue(driver.done)
        for node in ironic.states:
            self.assertEqual(['manage', 'provide', 'active'],
                             [v for n, v in ironic.sent if n == node])
            self.assertEqual('active', ironic.states[node])

    def test_groups_start_after_their_dependencies_end(self):
        driver, ironic = self.run_fake(slow={'b1': 5})
        first = {}
        for i, (node, _verb) in enumerate(ironic.sent):
            first.setdefault(node[0], i)
        last = {}
        for i, (node, _verb) in enumerate(ironic.sent):
            last[node[0]] = i
        # b and c start together once a ends; d waits for slow b.
        self.assertLess(last['a'], first['b'])
        self.assertLess(last['a'], first['c'])
        self.assertLess(first['c'], last['b'])
        self.assertLess(last['b'], first['d'])
        self.assertEqual(driver.started['b'], driver.started['c'])
        self.assertGreaterEqual(driver.started['d'],
                                max(driver.finished['b'],
                                    driver.finished['c']))

    def test_parallel_groups_start_in_the_same_round(self):
        driver = raw_ironic.DagDriver(self.depends, self.members)
        states = {n: 'enroll' for m in self.members.values() for n in m}
        self.assertEqual([('a1', 'manage'), ('a2', 'manage')],
                         driver.decide(states))
        states.update(a1='active', a2='active')
        self.assertEqual([('b1', 'manage'), ('c1', 'manage'),
                          ('c2', 'manage')], driver.decide(states))
        self.assertEqual(['a'], sorted(driver.finished))

    def test_a_failed_node_stops_the_run(self):
        exc = self.assertRaises(raw_ironic.DeployFailed, self.run_fake,
                                fail=('c2', 'active'))
        self.assertIn('c2', str(exc))
        self.assertIn('deploy failed', str(exc))

    def test_a_node_sent_back_is_a_failure(self):
        driver = raw_ironic.DagDriver({'a': []}, {'a': ['n']})
        self.assertEqual([('n', 'manage')], driver.decide({'n': 'enroll'}))
        exc = self.assertRaises(raw_ironic.DeployFailed, driver.decide,
                                {'n': 'enroll'}, {'n': 'no power'})
        self.assertIn('no power', str(exc))

    def test_unknown_dependency(self):
        self.assertRaises(ValueError, raw_ironic.DagDriver,
                          {'a': ['x']}, {'a': []})

    def test_timeout(self):
        ironic = FakeIronic(['a1', 'a2'], slow={'a1': 10 ** 6})
        clock = iter(range(0, 10 ** 6, 10))
        driver = raw_ironic.DagDriver({'a': []}, {'a': ['a1', 'a2']})
        self.assertRaises(TimeoutError, raw_ironic.deploy, driver, ironic,
                          poll_interval=0, timeout=100,
                          clock=lambda: next(clock), sleep=lambda s: None)


class TestP7Strategy(base.TestCase):

    def test_groups_span_shards_and_cover_every_node_once(self):
        groups = real_ironic_deploy.groups_of(40)
        self.assertEqual(sorted(real_ironic_deploy.DEPENDS), sorted(groups))
        names = [n for members in groups.values() for n in members]
        self.assertEqual(sorted(real_ironic_deploy.node_name(i)
                                for i in range(40)), sorted(names))
        for members in groups.values():
            shards = {int(n.split('-')[1]) % real_ironic_deploy.SHARDS
                      for n in members}
            self.assertEqual(set(range(real_ironic_deploy.SHARDS)), shards)

    def test_strategy_has_the_dag(self):
        doc = real_ironic_deploy.strategy('p7', 1000)
        groups = {g['name']: g for g in doc['data']['groups']}
        self.assertEqual(real_ironic_deploy.DEPENDS,
                         {g: groups[g]['depends_on'] for g in groups})
        self.assertEqual({100}, {len(g['selectors'][0]['node_names'])
                                 for g in groups.values()})

    def test_the_first_side_alternates_between_pairs(self):
        order = [real_ironic_deploy.sides_in_order(pair, ['ours', 'script'])
                 for pair in range(4)]
        self.assertEqual([['ours', 'script'], ['script', 'ours'],
                          ['ours', 'script'], ['script', 'ours']], order)

    def test_summarise(self):
        runs = [
            {'side': 'baremetal_orch', 'seconds': 12.0, 'conductors': [
                {'cpu_s': 1.0, 'peak_rss_mib': 100.0},
                {'cpu_s': 3.0, 'peak_rss_mib': 150.0}]},
            {'side': 'script', 'seconds': 10.0, 'config_drive': True},
            {'side': 'baremetal_orch', 'seconds': 9.0, 'conductors': [
                {'cpu_s': 2.0, 'peak_rss_mib': 120.0}]},
            {'side': 'script', 'seconds': 10.0, 'config_drive': True},
        ]
        p7, p6 = real_ironic_deploy.summarise(runs, 40, 2)
        self.assertTrue(p7['script_config_drive'])
        runs[3]['config_drive'] = False
        self.assertFalse(
            real_ironic_deploy.summarise(runs, 40, 2)[0][
                'script_config_drive'])
        self.assertEqual(('P7', 10.5, 10.0, 1.05), (
            p7['figure'], p7['value'], p7['baseline'], p7['ratio']))
        self.assertEqual({'min': 0.9, 'median': 1.05, 'max': 1.2, 'n': 2},
                         p7['ratios'])
        self.assertEqual(('P6', 150.0), (p6['figure'], p6['value']))

    def test_machine_counts_the_cpu_spent_and_the_servers(self):
        # This process stands for a server: the CPU it spends shows in
        # its name's share and in the machine's busy time.
        name = psutil.Process().name()
        machine = real_ironic_deploy.Machine(servers=(name,))
        spent = time.process_time()
        while time.process_time() - spent < 0.3:
            pass
        used = machine.report()
        self.assertGreaterEqual(used['servers_cpu_s'][name], 0.2)
        self.assertGreaterEqual(used['machine_busy_s'], 0.2)
        self.assertGreaterEqual(used['machine_idle_s'], 0.0)

    def test_a_server_that_ends_takes_nothing_back(self):
        # Another process of the same name spends CPU, then ends before
        # the report: what it spent before the start is not taken off
        # what the others spent since.
        name = psutil.Process().name()
        other = subprocess.Popen(
            [sys.executable, '-c',
             'import sys, time\n'
             'while time.process_time() < 0.6: pass\n'
             'print(flush=True); sys.stdin.read()'],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.addCleanup(other.kill)
        other.stdout.readline()
        self.assertEqual(name, psutil.Process(other.pid).name())
        machine = real_ironic_deploy.Machine(servers=(name,))
        other.communicate(b'')
        spent = time.process_time()
        while time.process_time() - spent < 0.3:
            pass
        used = machine.report()
        self.assertGreaterEqual(used['servers_cpu_s'][name], 0.2)

    def test_script_config_drive_is_like_ours(self):
        # The script hands each node what ours does: the same keys, values
        # of the same length, in a drive built the same way.
        from baremetal_orch.ironic import configdrive
        from baremetal_orch.objects import deployment as deployments
        node = types.SimpleNamespace(
            id='8a1b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', name='bench-00001',
            instance_info={'image_source': 'http://127.0.0.1/image'})
        drives = real_ironic_deploy.config_drives([node])
        self.assertEqual([node.id], list(drives))
        theirs = configdrive.read(drives[node.id])
        record = types.SimpleNamespace(
            uuid='5f0c6d1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f',
            signal_url='%s/v1/signals/5f0c6d1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f'
            % real_ironic_deploy.SIGNAL_ENDPOINT)
        ours = deployments.instance_info(node, record,
                                         secrets.token_urlsafe(32))
        self.assertEqual({k: len(v) for k, v in ours.items()},
                         {k: len(v) for k, v in theirs['meta'].items()})
        self.assertEqual((node.id, node.name),
                         (theirs['uuid'], theirs['name']))

    def test_script_sends_config_drive_with_active_only(self):
        api = raw_ironic.SdkIronic('http://127.0.0.1:9', threads=1,
                                   config_drives={'n1': 'drive-1'})
        self.addCleanup(api.close)
        self.assertEqual({'config_drive': 'drive-1'},
                         api.payload('n1', 'active'))
        self.assertEqual({}, api.payload('n1', 'provide'))
        api.config_drives = None
        self.assertEqual({}, api.payload('n1', 'active'))

    def test_request_counts(self):
        from baremetal_orch_testing.fixtures import ironic

        class Log:
            def request_log(self, since):
                R = ironic.Request
                return [R('GET', '/v1/nodes', {}, '200'),
                        R('GET', '/v1/nodes/detail', {}, '200'),
                        R('GET', '/v1/nodes/abc', {}, '200'),
                        R('PUT', '/v1/nodes/abc/states/provision', {}, '202'),
                        R('PATCH', '/v1/nodes/abc', {}, '200'),
                        R('GET', '/v1', {}, '200')][since:]

        self.assertEqual({'list': 2, 'get_node': 1, 'provision': 1,
                          'other': 2},
                         real_ironic_deploy.request_counts(Log(), 0))
        self.assertEqual({'list': 0, 'get_node': 0, 'provision': 0,
                          'other': 2},
                         real_ironic_deploy.request_counts(Log(), 4))


def _moved(events):
    """Ironic log lines of ``(seconds, node, state)``."""
    line = ('2026-11-27 12:00:%06.3f 1 INFO ironic.common.states [-] Node '
            '%s moved to provision state "%s" from state "x"')
    return '\n'.join(line % (t, '%08d-0000-0000-0000-000000000000' % n, st)
                     for t, n, st in events)


class TestP9Occupancy(base.TestCase):

    def test_ramp_gaps_and_busy_share(self):
        # L = 2, four nodes: 0 and 1 start 0.5 s apart, 2 waits 0.3 s
        # after 0 ends, 3 waits 0.5 s after 1 ends.
        log_text = _moved([
            (10.0, 0, 'deploying'), (10.5, 1, 'deploying'),
            (12.0, 0, 'active'), (12.3, 2, 'deploying'),
            (12.5, 1, 'active'), (13.0, 3, 'deploying'),
            (14.3, 2, 'active'), (15.0, 3, 'active')])
        uuids = ['%08d-0000-0000-0000-000000000000' % n for n in range(4)]
        got = ironic_limit.occupancy(log_text, uuids, 2)
        self.assertEqual(0.5, got['ramp_s'])
        self.assertEqual(0.4, got['gap_s'])
        self.assertEqual(0.5, got['gap_max_s'])
        # Slot-seconds in use 2 + 2 + 2 + 2 = 8 over 2 slots x 5 s.
        self.assertEqual(0.8, got['busy'])

    def test_other_nodes_are_ignored(self):
        log_text = _moved([(10.0, 0, 'deploying'), (11.0, 0, 'active'),
                           (10.5, 7, 'deploying')])
        self.assertEqual({}, ironic_limit.occupancy(
            log_text, ['%08d-0000-0000-0000-000000000000' % 0], 2))
