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

"""Site deployment rules replayed over the example site."""

import json

from baremetal_orch.deployment import report as report_mod
from baremetal_orch.deployment import site as site_mod
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.deployment import examples
from baremetal_orch.tests.unit.deployment import serial

ALL_NODES = (['cmp%02d' % i for i in range(1, 9)]
             + ['ctl%02d' % i for i in range(1, 5)]
             + ['mon%02d' % i for i in range(1, 4)] + ['ntp01'])
CONTROL = ['ctl01', 'ctl02', 'ctl03', 'ctl04']
COMPUTE_1 = ['cmp01', 'cmp02', 'cmp03', 'cmp04']
COMPUTE_2 = ['cmp05', 'cmp06', 'cmp07', 'cmp08']
MONITORING = ['mon01', 'mon02', 'mon03']
TOPO = ['monitoring-nodes', 'ntp-node', 'control-nodes', 'compute-nodes-1',
        'compute-nodes-2']


def example_site(overlay=None):
    nodes = examples.load_site(overlay)
    strat = examples.load_strategy()
    return (site_mod.SiteDeployment(strat, examples.resolve(strat, nodes)),
            examples.FakeExecutor(nodes))


class TestSeedExamples(base.TestCase):
    """The seed's example runs, over etc/baremetal-orch/examples."""

    def run_example(self, overlay=None):
        site, ex = example_site(overlay)
        outcome = serial.run_serially(site, ex.prepare, ex.deploy)
        for phase in ('prepare', 'deploy'):
            sent = ex.sent_nodes(phase)
            self.assertEqual(sorted(set(sent)), sorted(sent),
                             'a node was sent twice to %s' % phase)
        self.assertTrue(site.is_done())
        json.dumps(site.to_dict())
        return site, ex, outcome, site.report()

    def assertGroups(self, expected, report):
        self.assertEqual(
            expected, {name: (g['status'], g['reason'])
                       for name, g in report['groups'].items()})

    def test_example_site_resolution(self):
        site, _ex = example_site()
        self.assertEqual(
            {'control-nodes': CONTROL, 'compute-nodes-1': COMPUTE_1,
             'compute-nodes-2': COMPUTE_2, 'monitoring-nodes': MONITORING,
             'ntp-node': ['ntp01']},
            {g: site.nodes(g) for g in site.strategy.names()})
        self.assertEqual(sorted(ALL_NODES),
                         sorted(n['name'] for n in examples.load_site()))

    def test_all_succeed(self):
        site, ex, outcome, report = self.run_example()
        self.assertEqual(('complete', 'success'), outcome)
        self.assertGroups(dict.fromkeys(TOPO, ('success', None)), report)
        self.assertEqual(TOPO, report['order'])
        self.assertEqual(dict.fromkeys(sorted(ALL_NODES), 'success'),
                         report['nodes'])
        self.assertEqual(16, len(ex.sent_nodes('prepare')))
        self.assertEqual(16, len(ex.sent_nodes('deploy')))
        for g in report['groups'].values():
            self.assertEqual(g['nodes'], g['succeeded_nodes'])
            self.assertEqual([], g['failed_nodes'])
            self.assertEqual([], g['misses'])

    def test_ntp_prepare_fails(self):
        site, ex, outcome, report = self.run_example('ntp-prepare-fails.yaml')
        self.assertEqual(('failed', 'failed'), outcome)
        self.assertGroups({
            'ntp-node': ('failed', 'prepare_criteria_not_met'),
            'control-nodes': ('failed', 'dependency_failed'),
            'compute-nodes-1': ('failed', 'dependency_failed'),
            'compute-nodes-2': ('failed', 'dependency_failed'),
            'monitoring-nodes': ('success', None)}, report)
        self.assertEqual(['monitoring-nodes', 'ntp-node'], report['order'])
        self.assertEqual([{'criterion': 'minimum_successful_nodes',
                           'needed': 1, 'actual': 0}],
                         report['groups']['ntp-node']['misses'])
        self.assertEqual(['ntp01'],
                         report['groups']['ntp-node']['failed_nodes'])
        expected = dict.fromkeys(ALL_NODES, 'not_started')
        expected.update(dict.fromkeys(MONITORING, 'success'))
        expected['ntp01'] = 'failure'
        self.assertEqual(expected, report['nodes'])
        # The ntp deploy is skipped; dependants are never attempted.
        self.assertEqual(MONITORING, ex.sent_nodes('deploy'))
        self.assertEqual(MONITORING + ['ntp01'], ex.sent_nodes('prepare'))

    def test_compute_nodes_2_deploy_fails(self):
        site, ex, outcome, report = self.run_example(
            'compute-nodes-2-deploy-fails.yaml')
        self.assertEqual(('complete', 'success_with_failures'), outcome)
        expected = dict.fromkeys(TOPO, ('success', None))
        expected['compute-nodes-2'] = ('failed', 'deploy_criteria_not_met')
        self.assertGroups(expected, report)
        g = report['groups']['compute-nodes-2']
        self.assertEqual(['cmp08'], g['succeeded_nodes'])
        self.assertEqual(['cmp05', 'cmp06', 'cmp07'], g['failed_nodes'])
        self.assertEqual([{'criterion': 'percent_successful_nodes',
                           'needed': 50, 'actual': 25.0}], g['misses'])
        self.assertEqual(TOPO, report['order'])

    def test_control_misses_90_percent(self):
        site, ex, outcome, report = self.run_example(
            'control-misses-90-percent.yaml')
        self.assertEqual(('failed', 'failed'), outcome)
        nodes = dict.fromkeys(ALL_NODES, 'not_started')
        nodes.update(dict.fromkeys(MONITORING + ['ntp01'], 'success'))
        nodes.update(dict.fromkeys(['ctl01', 'ctl03', 'ctl04'], 'prepared'))
        nodes['ctl02'] = 'failure'

        def entry(status, critical, reason, members, ok, failed,
                  misses=()):
            return {'status': status, 'critical': critical,
                    'reason': reason, 'nodes': members,
                    'succeeded_nodes': ok, 'failed_nodes': failed,
                    'misses': list(misses)}

        self.assertEqual({
            'order': ['monitoring-nodes', 'ntp-node', 'control-nodes'],
            'groups': {
                'monitoring-nodes': entry('success', False, None, MONITORING,
                                          MONITORING, []),
                'ntp-node': entry('success', True, None, ['ntp01'],
                                  ['ntp01'], []),
                'control-nodes': entry(
                    'failed', True, 'prepare_criteria_not_met', CONTROL,
                    ['ctl01', 'ctl03', 'ctl04'], ['ctl02'],
                    [{'criterion': 'percent_successful_nodes',
                      'needed': 90, 'actual': 75.0}]),
                'compute-nodes-1': entry('failed', False,
                                         'dependency_failed', COMPUTE_1,
                                         [], []),
                'compute-nodes-2': entry('failed', False,
                                         'dependency_failed', COMPUTE_2,
                                         [], []),
            },
            'nodes': dict(sorted(nodes.items()))}, report)
        # The control deploy was skipped.
        self.assertEqual([], ex.sent_by('deploy', 'control-nodes'))
        self.assertEqual(list(report['groups']), TOPO)

    def test_plan(self):
        site, _ex = example_site()
        self.assertEqual({
            'order': TOPO,
            'groups': {
                'monitoring-nodes': {'nodes': MONITORING, 'depends_on': [],
                                     'critical': False},
                'ntp-node': {'nodes': ['ntp01'], 'depends_on': [],
                             'critical': True},
                'control-nodes': {'nodes': CONTROL,
                                  'depends_on': ['ntp-node'],
                                  'critical': True},
                'compute-nodes-1': {'nodes': COMPUTE_1,
                                    'depends_on': ['control-nodes'],
                                    'critical': False},
                'compute-nodes-2': {'nodes': COMPUTE_2,
                                    'depends_on': ['control-nodes'],
                                    'critical': False},
            },
            'overlaps': {}, 'empty_groups': []}, site.plan())

    def test_bounds(self):
        site, _ex = example_site()
        durations = dict.fromkeys(TOPO, 2.0)
        self.assertEqual(6.0, site.strategy.critical_path_bound(durations))
        self.assertEqual(10.0, site.strategy.serial_bound(durations))

    def test_summarize(self):
        _site, _ex, _outcome, report = self.run_example(
            'compute-nodes-2-deploy-fails.yaml')
        lines = report_mod.summarize(report)
        self.assertEqual(len(TOPO) + 2, len(lines))
        self.assertIn('compute-nodes-2: failed (deploy_criteria_not_met)',
                      lines[-3])
        self.assertIn('missed percent_successful_nodes: needed 50, got 25.0',
                      lines[-3])
        self.assertEqual('nodes: failure 3, success 13', lines[-2])

    def test_round_trip_mid_run(self):
        site, ex = example_site()
        for name in ('monitoring-nodes', 'ntp-node'):
            site.start(name)
            site.finish_prepare(name, ex.prepare(
                name, site.prepare_targets(name)))
            site.finish_deploy(name, ex.deploy(
                name, site.deploy_targets(name)))
        site.start('control-nodes')
        targets = site.prepare_targets('control-nodes')
        self.assertEqual(CONTROL, targets)
        data = json.loads(json.dumps(site.to_dict()))
        restored = site_mod.SiteDeployment.from_dict(site.snapshot(), data)
        self.assertEqual(site.to_dict(), restored.to_dict())
        self.assertEqual(site.report(), restored.report())
        self.assertEqual(site.plan(), restored.plan())
        # The resumed conductor gets the claimed nodes again, nothing else.
        self.assertEqual(CONTROL, restored.prepare_targets('control-nodes'))
        restored.finish_prepare('control-nodes', ex.prepare(
            'control-nodes', targets))
        restored.finish_deploy('control-nodes', ex.deploy(
            'control-nodes', restored.deploy_targets('control-nodes')))
        self.assertEqual(('complete', 'success'), serial.run_serially(
            restored, ex.prepare, ex.deploy))
        self.assertEqual(TOPO, restored.report()['order'])
        for phase in ('prepare', 'deploy'):
            self.assertEqual(sorted(ALL_NODES), sorted(ex.sent_nodes(phase)))

    def test_round_trip_after_failures(self):
        site, _ex, outcome, report = self.run_example(
            'control-misses-90-percent.yaml')
        data = json.loads(json.dumps(site.to_dict()))
        restored = site_mod.SiteDeployment.from_dict(site.snapshot(), data)
        self.assertEqual(report, restored.report())
        self.assertEqual(outcome, restored.outcome())
        self.assertEqual(
            site.finish_prepare('control-nodes', {}),
            restored.finish_prepare('control-nodes', {}))


class TestStartableGroups(base.TestCase):
    """Which ready groups may take the free group slots: the plan's order."""

    def test_table(self):
        # (groups that ended with success, running groups, free slots,
        #  expected startable groups)
        table = [
            ((), (), 1, ['monitoring-nodes']),
            ((), (), 2, ['monitoring-nodes', 'ntp-node']),
            ((), ('monitoring-nodes',), 1, ['ntp-node']),
            (('monitoring-nodes',), (), 3, ['ntp-node']),
            (('monitoring-nodes', 'ntp-node'), (), 1, ['control-nodes']),
            (('monitoring-nodes', 'ntp-node', 'control-nodes'), (), 1,
             ['compute-nodes-1']),
            (('monitoring-nodes', 'ntp-node', 'control-nodes'), (), 5,
             ['compute-nodes-1', 'compute-nodes-2']),
            ((), (), 0, []),
        ]
        for done, running, free, expected in table:
            site, _ex = example_site()
            for group in done:
                site.start(group)
                site.finish_prepare(group, {
                    n: True for n in site.prepare_targets(group)})
                site.finish_deploy(group, {
                    n: True for n in site.deploy_targets(group)})
            for group in running:
                site.start(group)
            self.assertEqual(expected, site.startable_groups(free),
                             (done, running, free))
        # The plan's order, as the dry run shows it.
        site, _ex = example_site()
        self.assertEqual(TOPO, site.plan()['order'])
