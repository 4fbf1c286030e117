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

"""The rule of a retry: which nodes it takes, what counts as done."""

from baremetal_orch.deployment import retry as retry_mod
from baremetal_orch.deployment import site as site_mod
from baremetal_orch.deployment import tracker
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.deployment import serial
from baremetal_orch.tests.unit.deployment import test_site_rules as rules

ALL = {'percent_successful_nodes': 100}
OLD = '0b5f3c1e-8a2d-4c6b-9e7f-1a2b3c4d5e6f'


def ended(groups, group_nodes, fail):
    """An action that ran to its end with the nodes of ``fail`` failing
    (node -> phase); returns it and what was sent."""
    site = rules.make(groups, group_nodes)
    ex = rules.executor(fail)
    serial.run_serially(site, ex.prepare, ex.deploy)
    return site, ex


def run(site, fail=None):
    ex = rules.executor(fail)
    return serial.run_serially(site, ex.prepare, ex.deploy), ex


class TestNodeStatuses(base.TestCase):

    def test_table(self):
        # previous status -> the status the retry starts from
        for before, after in ((tracker.SUCCESS, tracker.SUCCESS),
                              (tracker.FAILURE, tracker.NOT_STARTED),
                              (tracker.NOT_STARTED, tracker.NOT_STARTED),
                              # an ended action released its claims:
                              # prepare runs again.
                              (tracker.PREPARED, tracker.NOT_STARTED)):
            self.assertEqual({'n': after},
                             retry_mod.node_statuses({'n': before}), before)


class TestRetry(base.TestCase):

    def test_only_failed_and_unstarted_nodes_are_sent(self):
        groups = [rules.group('a', critical=True, criteria=ALL),
                  rules.group('b', ['a'])]
        previous, first = ended(groups, {'a': ['a1', 'a2', 'a3'],
                                         'b': ['b1']},
                                {'a2': 'deploy'})
        self.assertEqual(('failed', 'failed'), previous.outcome())
        self.assertEqual(['a1', 'a2', 'a3'], first.sent_nodes('prepare'))
        site = retry_mod.retry(previous, OLD)
        self.assertEqual({'a1': 'success', 'a2': 'not_started',
                          'a3': 'success', 'b1': 'not_started'},
                         site.tracker.statuses())
        self.assertEqual(['a2', 'b1'], retry_mod.retried_nodes(site))
        outcome, ex = run(site)
        self.assertEqual(('complete', 'success'), outcome)
        # a1 and a3 are never sent again, yet 'a' meets its 100 %.
        self.assertEqual(['a2', 'b1'], ex.sent_nodes('prepare'))
        self.assertEqual(['a2', 'b1'], ex.sent_nodes('deploy'))
        entry = site.report()['groups']['a']
        self.assertEqual(('success', ['a1', 'a2', 'a3']),
                         (entry['status'], entry['succeeded_nodes']))
        self.assertEqual(['a', 'b'], site.order())

    def test_earlier_successes_count_in_every_criterion(self):
        groups = [rules.group('g', critical=True, criteria={
            'percent_successful_nodes': 75, 'minimum_successful_nodes': 3,
            'maximum_failed_nodes': 1})]
        nodes = {'g': ['n1', 'n2', 'n3', 'n4']}
        previous, _ex = ended(groups, nodes, {'n3': 'deploy',
                                              'n4': 'deploy'})
        self.assertEqual(('failed', 'failed'), previous.outcome())
        # The retry fails n4 again: 3 of 4, one failure, still a success.
        outcome, ex = run(retry_mod.retry(previous, OLD), {'n4': 'deploy'})
        self.assertEqual(('complete', 'success_with_failures'), outcome)
        self.assertEqual(['n3', 'n4'], ex.sent_nodes('prepare'))
        self.assertEqual(['n3', 'n4'], ex.sent_nodes('deploy'))

    def test_a_group_that_succeeded_sends_no_work(self):
        groups = [rules.group('done', criteria=ALL),
                  rules.group('bad', critical=True, criteria=ALL)]
        previous, _ex = ended(groups, {'done': ['d1', 'd2'], 'bad': ['x']},
                              {'x': 'prepare'})
        site = retry_mod.retry(previous, OLD)
        self.assertEqual(['d1', 'd2'], site.nodes('done'))
        self.assertEqual('pending', site.group_status('done')['status'])
        site.start('done')
        self.assertEqual([], site.prepare_targets('done'))
        self.assertTrue(site.finish_prepare('done', {}).ok)
        self.assertEqual([], site.deploy_targets('done'))
        self.assertTrue(site.finish_deploy('done', {}).ok)
        self.assertEqual('success', site.group_status('done')['status'])
        outcome, ex = run(site)
        self.assertEqual(('complete', 'success'), outcome)
        self.assertEqual(['x'], ex.sent_nodes('prepare'))

    def test_shared_node_is_sent_once_and_counts_for_both(self):
        # s is in a and b; it failed the first time in a, so b missed its
        # prepare criteria with b1 prepared but never deployed.
        groups = [rules.group('a', criteria=ALL),
                  rules.group('b', criteria=ALL)]
        nodes = {'a': ['s', 'a1'], 'b': ['s', 'b1']}
        previous, _ex = ended(groups, nodes, {'s': 'deploy'})
        self.assertEqual({'a': 'deploy_criteria_not_met',
                          'b': 'prepare_criteria_not_met'},
                         rules.reasons(previous))
        self.assertEqual({'a1': 'success', 'b1': 'prepared',
                          's': 'failure'}, previous.tracker.statuses())
        outcome, ex = run(retry_mod.retry(previous, OLD))
        self.assertEqual(('complete', 'success'), outcome)
        # s once (by the first group to run), b1 prepared again, a1 never.
        self.assertEqual([('prepare', 'a', 's'), ('deploy', 'a', 's'),
                          ('prepare', 'b', 'b1'), ('deploy', 'b', 'b1')],
                         ex.sent)

    def test_shared_node_that_succeeded_is_not_sent(self):
        groups = [rules.group('a', criteria=ALL),
                  rules.group('b', ['a'], criteria=ALL)]
        nodes = {'a': ['s'], 'b': ['s', 'b1']}
        previous, _ex = ended(groups, nodes, {'b1': 'prepare'})
        self.assertEqual('success', previous.tracker.status('s'))
        outcome, ex = run(retry_mod.retry(previous, OLD))
        self.assertEqual(('complete', 'success'), outcome)
        self.assertEqual([('prepare', 'b', 'b1'), ('deploy', 'b', 'b1')],
                         ex.sent)

    def test_groups_after_a_failed_dependency_run(self):
        # a failed, so b and c never started: all of them run now, in the
        # plan's order.
        groups = [rules.group('a', critical=True, criteria=ALL),
                  rules.group('b', ['a']), rules.group('c', ['b']),
                  rules.group('other')]
        nodes = {'a': ['a1'], 'b': ['b1'], 'c': ['c1'], 'other': ['o1']}
        previous, _ex = ended(groups, nodes, {'a1': 'prepare'})
        self.assertEqual({'a': 'prepare_criteria_not_met',
                          'b': 'dependency_failed', 'c': 'dependency_failed',
                          'other': None}, rules.reasons(previous))
        site = retry_mod.retry(previous, OLD)
        self.assertEqual(['a', 'other'], site.ready_groups())
        outcome, ex = run(site)
        self.assertEqual(('complete', 'success'), outcome)
        self.assertEqual(['a1', 'b1', 'c1'], ex.sent_nodes('prepare'))
        self.assertEqual(list(site.strategy.topological_order()),
                         site.order())

    def test_a_failing_retry_can_be_retried(self):
        groups = [rules.group('a', critical=True, criteria=ALL)]
        nodes = {'a': ['a1', 'a2']}
        previous, _ex = ended(groups, nodes, {'a1': 'deploy',
                                              'a2': 'deploy'})
        second = retry_mod.retry(previous, OLD)
        outcome, _ex = run(second, {'a2': 'deploy'})
        self.assertEqual(('failed', 'failed'), outcome)
        third = retry_mod.retry(second, 'newer')
        outcome, ex = run(third)
        self.assertEqual(('complete', 'success'), outcome)
        self.assertEqual(['a2'], ex.sent_nodes('deploy'))
        self.assertEqual('newer', third.report()['retry_of'])

    def test_retry_of_is_kept_in_report_and_snapshot(self):
        groups = [rules.group('a')]
        previous, _ex = ended(groups, {'a': ['a1']}, {'a1': 'prepare'})
        self.assertNotIn('retry_of', previous.report())
        self.assertNotIn('retry_of', previous.to_dict())
        site = retry_mod.retry(previous, OLD)
        self.assertEqual(OLD, site.report()['retry_of'])
        again = site_mod.SiteDeployment.from_dict(site.snapshot(),
                                                  site.to_dict())
        self.assertEqual(OLD, again.retry_of)
        self.assertEqual(site.to_dict(), again.to_dict())
        run(again)
        self.assertEqual(OLD, again.report()['retry_of'])

    def test_plan(self):
        groups = [rules.group('a'), rules.group('b', ['a'])]
        previous, _ex = ended(groups, {'a': ['a1', 'a2'], 'b': ['b1']},
                              {'a2': 'prepare'})
        plan = retry_mod.plan(retry_mod.retry(previous, OLD))
        self.assertEqual((OLD, ['a2'], ['a', 'b']),
                         (plan['retry_of'], plan['retried_nodes'],
                          plan['order']))
        self.assertEqual(['a1', 'a2'], plan['groups']['a']['nodes'])
