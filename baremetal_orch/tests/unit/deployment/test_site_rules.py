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

"""Site deployment rules: dependencies, overlaps, timeouts."""

import json
import threading

from baremetal_orch.common import exception
from baremetal_orch.deployment import groups
from baremetal_orch.deployment import retry as retry_mod
from baremetal_orch.deployment import site as site_mod
from baremetal_orch.deployment import strategy
from baremetal_orch.deployment import tracker
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.deployment import examples
from baremetal_orch.tests.unit.deployment import serial

MIN1 = {'minimum_successful_nodes': 1}


def group(name, depends_on=(), critical=False, criteria=None):
    g = {'name': name, 'critical': critical,
         'depends_on': list(depends_on), 'selectors': []}
    if criteria:
        g['success_criteria'] = criteria
    return g


def make(groups, group_nodes, node_status=None):
    doc = {'schema': strategy.SCHEMA_NAME, 'metadata': {'name': 's'},
           'data': {'groups': groups}}
    return site_mod.SiteDeployment(strategy.parse(doc), group_nodes,
                                   node_status)


def executor(fail=None):
    """A fake executor; ``fail`` maps node -> failing phase."""
    return examples.FakeExecutor([], fail=fail)


def statuses(site):
    return {n: g['status'] for n, g in site.report()['groups'].items()}


def reasons(site):
    return {n: g['reason'] for n, g in site.report()['groups'].items()}


class TestDependencies(base.TestCase):

    def test_diamond(self):
        # a -> b -> d, c -> d; a fails.
        site = make([group('a', criteria=MIN1), group('b', ['a']),
                     group('c'), group('d', ['b', 'c'])],
                    {'a': ['na'], 'b': ['nb'], 'c': ['nc'], 'd': ['nd']})
        ex = executor({'na': 'prepare'})
        self.assertEqual(['a', 'c'], site.ready_groups())
        outcome = serial.run_serially(site, ex.prepare, ex.deploy)
        self.assertEqual(('complete', 'success_with_failures'), outcome)
        self.assertEqual({'a': 'prepare_criteria_not_met',
                          'b': 'dependency_failed', 'c': None,
                          'd': 'dependency_failed'}, reasons(site))
        self.assertEqual('success', statuses(site)['c'])
        self.assertEqual(['a', 'c'], site.order())
        self.assertEqual(['na', 'nc'], ex.sent_nodes('prepare'))
        self.assertEqual('not_started', site.tracker.status('nd'))

    def test_readiness_helpers(self):
        site = make([group('a', criteria=MIN1), group('b', ['a']),
                     group('c', ['b'])],
                    {'a': ['na'], 'b': ['nb'], 'c': []})
        self.assertEqual(['a'], site.ready_groups())
        self.assertEqual(['pending'] * 3, [
            site.group_status(g)['status'] for g in ('a', 'b', 'c')])
        self.assertFalse(site.can_run('b'))
        self.assertFalse(site.dependency_failed('b'))
        site.start('a')
        self.assertEqual('running', site.group_status('a')['status'])
        self.assertEqual([], site.ready_groups())
        self.assertEqual(['na'], site.prepare_targets('a'))
        site.finish_prepare('a', {'na': False})
        self.assertTrue(site.dependency_failed('b'))
        self.assertFalse(site.dependency_failed('c'))
        self.assertEqual([], site.ready_groups())
        self.assertFalse(site.is_done())
        self.assertEqual(('running', None), site.outcome())
        site.skip('b')
        site.skip('b')  # idempotent
        self.assertTrue(site.dependency_failed('c'))
        self.assertEqual(['c'], site.skip_blocked())
        self.assertTrue(site.is_done())
        self.assertEqual(['failed'] * 3, [
            site.group_status(g)['status'] for g in ('a', 'b', 'c')])

    def test_critical_failure_lets_independent_groups_finish(self):
        site = make([group('crit', critical=True, criteria=MIN1),
                     group('child', ['crit']), group('other'),
                     group('other-child', ['other'], critical=True)],
                    {'crit': ['x'], 'child': ['c'], 'other': ['y'],
                     'other-child': ['z']})
        ex = executor({'x': 'deploy'})
        outcome = serial.run_serially(site, ex.prepare, ex.deploy)
        self.assertEqual(('failed', 'failed'), outcome)
        self.assertEqual({'crit': 'failed', 'child': 'failed',
                          'other': 'success', 'other-child': 'success'},
                         statuses(site))
        self.assertEqual('deploy_criteria_not_met', reasons(site)['crit'])
        self.assertEqual(['crit', 'other', 'other-child'], site.order())
        self.assertEqual('success', site.tracker.status('z'))

    def test_critical_dependency_failure_fails_action(self):
        site = make([group('a', criteria=MIN1), group('b', ['a'],
                                                      critical=True)],
                    {'a': ['x'], 'b': ['y']})
        ex = executor({'x': 'prepare'})
        self.assertEqual(('failed', 'failed'),
                         serial.run_serially(site, ex.prepare, ex.deploy))

    def test_node_failure_without_criteria(self):
        site = make([group('g')], {'g': ['n1', 'n2', 'n3']})
        ex = executor({'n2': 'prepare'})
        outcome = serial.run_serially(site, ex.prepare, ex.deploy)
        # No criteria: the group succeeds, the failed node is reported.
        self.assertEqual(('complete', 'success_with_failures'), outcome)
        self.assertEqual('success', statuses(site)['g'])
        self.assertEqual(['n1', 'n3'], ex.sent_nodes('deploy'))
        self.assertEqual(['n2'], site.report()['groups']['g']['failed_nodes'])

    def test_empty_groups(self):
        site = make([group('empty-min', criteria=MIN1),
                     group('empty-pct', criteria={
                         'percent_successful_nodes': 100}),
                     group('empty')],
                    {'empty-min': [], 'empty-pct': [], 'empty': []})
        self.assertEqual(['empty-min', 'empty-pct', 'empty'],
                         site.plan()['empty_groups'])
        ex = executor()
        serial.run_serially(site, ex.prepare, ex.deploy)
        self.assertEqual({'empty-min': 'prepare_criteria_not_met',
                          'empty-pct': None, 'empty': None}, reasons(site))
        self.assertEqual([{'criterion': 'minimum_successful_nodes',
                           'needed': 1, 'actual': 0}],
                         site.report()['groups']['empty-min']['misses'])
        self.assertEqual([], ex.sent)


class TestOverlaps(base.TestCase):

    def test_plan_overlaps(self):
        site = make([group('g1'), group('g2'), group('g3', ['g1'])],
                    {'g1': ['n2', 'n1'], 'g2': ['n2', 'n3'],
                     'g3': ['n1', 'n2']})
        plan = site.plan()
        self.assertEqual({'n1': ['g1', 'g3'], 'n2': ['g1', 'g2', 'g3']},
                         plan['overlaps'])
        self.assertEqual(['n1', 'n2'], plan['groups']['g1']['nodes'])
        self.assertEqual(['g1', 'g2', 'g3'], plan['order'])
        self.assertEqual(['g1'], plan['groups']['g3']['depends_on'])

    def test_first_group_takes_shared_node_and_it_counts_in_both(self):
        site = make([group('g1'),
                     group('g2', criteria={'minimum_successful_nodes': 2})],
                    {'g1': ['n1', 'n2'], 'g2': ['n2', 'n3']})
        ex = executor()
        self.assertEqual(('complete', 'success'),
                         serial.run_serially(site, ex.prepare, ex.deploy))
        self.assertEqual(['n1', 'n2'], ex.sent_by('prepare', 'g1'))
        self.assertEqual(['n3'], ex.sent_by('prepare', 'g2'))
        self.assertEqual(['n3'], ex.sent_by('deploy', 'g2'))
        g2 = site.report()['groups']['g2']
        self.assertEqual(['n2', 'n3'], g2['succeeded_nodes'])

    def test_deployed_node_counts_as_prepared(self):
        site = make([group('g1'),
                     group('g2', criteria={'percent_successful_nodes': 100})],
                    {'g1': ['n1'], 'g2': ['n1', 'n2']})
        ex = executor()
        serial.run_serially(site, ex.prepare, ex.deploy)
        # g2 ran after g1 deployed n1; its prepare counted n1 as prepared.
        result = site.finish_prepare('g2', {})
        self.assertEqual(groups.PhaseResult(True, (), 'prepare', 2, 2),
                         result)

    def test_failed_shared_node_counts_in_both_never_resent(self):
        site = make([group('g1'),
                     group('g2', criteria={'minimum_successful_nodes': 2})],
                    {'g1': ['n1', 'n2'], 'g2': ['n2', 'n3']})
        ex = executor({'n2': 'deploy'})
        outcome = serial.run_serially(site, ex.prepare, ex.deploy)
        self.assertEqual(('complete', 'success_with_failures'), outcome)
        # n2 failed its deploy in g1: for g2 it is not even prepared, so
        # g2 misses its minimum at prepare and is not deployed.
        self.assertEqual({'g1': None, 'g2': 'prepare_criteria_not_met'},
                         reasons(site))
        self.assertEqual(['n1', 'n2', 'n3'], ex.sent_nodes('prepare'))
        self.assertEqual(['n1', 'n2'], ex.sent_nodes('deploy'))
        g2 = site.report()['groups']['g2']
        self.assertEqual(['n2'], g2['failed_nodes'])
        self.assertEqual(['n3'], g2['succeeded_nodes'])
        self.assertEqual([{'criterion': 'minimum_successful_nodes',
                           'needed': 2, 'actual': 1}], g2['misses'])

    def test_node_of_skipped_group_not_stranded(self):
        site = make([group('g0', criteria=MIN1), group('g1', ['g0']),
                     group('g2')],
                    {'g0': ['n0'], 'g1': ['n1', 'n2'], 'g2': ['n2']})
        self.assertEqual({'n2': ['g1', 'g2']}, site.plan()['overlaps'])
        ex = executor({'n0': 'prepare'})
        serial.run_serially(site, ex.prepare, ex.deploy)
        self.assertEqual('dependency_failed', reasons(site)['g1'])
        self.assertEqual('success', statuses(site)['g2'])
        self.assertEqual('success', site.tracker.status('n2'))
        self.assertEqual('not_started', site.tracker.status('n1'))

    def test_prepared_node_deployed_by_later_group(self):
        site = make([group('ga', criteria={'minimum_successful_nodes': 2}),
                     group('gb', ['ga']), group('gc')],
                    {'ga': ['n1', 'n2'], 'gb': ['n1'], 'gc': ['n1']})
        ex = executor({'n2': 'prepare'})
        serial.run_serially(site, ex.prepare, ex.deploy)
        self.assertEqual({'ga': 'prepare_criteria_not_met',
                          'gb': 'dependency_failed', 'gc': None},
                         reasons(site))
        self.assertEqual(['n1', 'n2'], ex.sent_nodes('prepare'))
        self.assertEqual([('deploy', 'gc', 'n1')],
                         [s for s in ex.sent if s[0] == 'deploy'])
        self.assertEqual('success', site.tracker.status('n1'))

    def test_node_in_flight_elsewhere_counts_as_not_successful(self):
        site = make([group('ga'),
                     group('gb', criteria={'percent_successful_nodes': 100})],
                    {'ga': ['n1'], 'gb': ['n1', 'n2']})
        self.assertEqual(['ga', 'gb'], site.ready_groups())
        site.start('ga')
        site.start('gb')
        self.assertEqual(['n1'], site.prepare_targets('ga'))
        self.assertEqual(['n2'], site.prepare_targets('gb'))
        self.assertEqual({'n1': 'ga', 'n2': 'gb'}, site.tracker.claims())
        result = site.finish_prepare('gb', {'n2': True})
        self.assertFalse(result.ok)
        self.assertEqual(50.0, result.misses[0].actual)
        self.assertEqual('prepare_criteria_not_met', reasons(site)['gb'])

    def test_prepared_nodes_stay_with_their_group(self):
        site = make([group('ga'), group('gb')],
                    {'ga': ['n1', 'n2'], 'gb': ['n1', 'n2']})
        site.start('ga')
        site.start('gb')
        self.assertEqual(['n1', 'n2'], site.prepare_targets('ga'))
        self.assertEqual([], site.prepare_targets('gb'))
        site.finish_prepare('ga', {'n1': True, 'n2': True})
        site.finish_prepare('gb', {})
        # gb may not deploy what ga prepared and is about to deploy.
        self.assertEqual([], site.deploy_targets('gb'))
        self.assertEqual(['n1', 'n2'], site.deploy_targets('ga'))


class TestConcurrentGroups(base.TestCase):

    def test_two_threads_each_node_handled_once(self):
        shared = ['s%03d' % i for i in range(300)]
        for _round in range(3):
            site = make([group('g1'), group('g2')],
                        {'g1': shared + ['a'], 'g2': shared + ['b']})
            ex = executor()
            barrier = threading.Barrier(2)
            errors = []

            def drive(name):
                try:
                    barrier.wait()
                    site.start(name)
                    targets = site.prepare_targets(name)
                    # A retried step gets the same nodes back.
                    if site.prepare_targets(name) != targets:
                        errors.append('%s: targets changed' % name)
                    site.finish_prepare(name, ex.prepare(name, targets))
                    targets = site.deploy_targets(name)
                    site.finish_deploy(name, ex.deploy(name, targets))
                except Exception as e:
                    errors.append(e)

            threads = [threading.Thread(target=drive, args=(n,))
                       for n in ('g1', 'g2')]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            self.assertEqual([], errors)
            for phase in ('prepare', 'deploy'):
                sent = ex.sent_nodes(phase)
                self.assertEqual(sorted(shared + ['a', 'b']), sorted(sent))
            self.assertEqual(('complete', 'success'), site.outcome())
            self.assertEqual({tracker.SUCCESS},
                             set(site.tracker.statuses().values()))


class TestTimeoutAndGuards(base.TestCase):

    def setUp(self):
        super().setUp()
        self.site = make([group('g', critical=True), group('h', ['g'])],
                         {'g': ['n1', 'n2', 'n3'], 'h': ['n4']})

    def test_prepare_timeout(self):
        self.site.start('g')
        self.assertEqual(['n1', 'n2', 'n3'], self.site.prepare_targets('g'))
        self.site.fail('g', 'timeout', results={'n1': True})
        self.assertEqual({'n1': 'prepared', 'n2': 'failure',
                          'n3': 'failure', 'n4': 'not_started'},
                         self.site.tracker.statuses())
        self.assertEqual({}, self.site.tracker.claims())
        # Late results change nothing.
        self.assertFalse(self.site.finish_prepare('g', {'n2': True}).ok)
        self.assertEqual('failure', self.site.tracker.status('n2'))
        self.assertEqual([], self.site.prepare_targets('g'))
        self.assertEqual([], self.site.deploy_targets('g'))
        self.site.fail('g', 'timeout')  # idempotent
        self.assertEqual(['h'], self.site.skip_blocked())
        self.assertEqual(('failed', 'failed'), self.site.outcome())
        self.assertEqual({'g': 'timeout', 'h': 'dependency_failed'},
                         reasons(self.site))

    def test_deploy_timeout(self):
        self.site.start('g')
        self.site.prepare_targets('g')
        self.site.finish_prepare('g', {'n1': True, 'n2': True,
                                       'n3': False})
        self.assertEqual(['n1', 'n2'], self.site.deploy_targets('g'))
        self.site.fail('g', 'timeout', results={'n2': True})
        self.assertEqual({'n1': 'failure', 'n2': 'success', 'n3': 'failure',
                          'n4': 'not_started'}, self.site.tracker.statuses())
        entry = self.site.report()['groups']['g']
        self.assertEqual(['n2'], entry['succeeded_nodes'])
        self.assertEqual(['n1', 'n3'], entry['failed_nodes'])

    def test_guards(self):
        site = self.site
        conflict = exception.Conflict
        self.assertRaises(conflict, site.start, 'h')
        self.assertRaises(conflict, site.skip, 'h')
        self.assertRaises(conflict, site.prepare_targets, 'g')
        self.assertRaises(conflict, site.finish_prepare, 'g', {})
        site.start('g')
        site.start('g')  # idempotent while running
        self.assertEqual(['g'], site.order())
        self.assertRaises(conflict, site.deploy_targets, 'g')
        self.assertRaises(conflict, site.finish_deploy, 'g', {})
        site.prepare_targets('g')
        self.assertRaises(conflict, site.finish_prepare, 'g', {'n4': True})
        first = site.finish_prepare('g', {'n1': True, 'n2': True})
        self.assertEqual('failure', site.tracker.status('n3'))
        self.assertEqual(first, site.finish_prepare('g', {}))
        site.deploy_targets('g')
        site.finish_deploy('g', {'n1': True, 'n2': True})
        self.assertRaises(conflict, site.start, 'g')
        self.assertRaises(conflict, site.fail, 'g', 'timeout')
        self.assertRaises(exception.InvalidParameterValue, site.fail, 'h',
                          'bored')
        self.assertRaises(exception.InvalidParameterValue, site.start, 'zz')
        self.assertRaises(exception.InvalidParameterValue, site.nodes, 'zz')

    def test_group_nodes_must_match_strategy(self):
        strat = self.site.strategy
        self.assertRaises(exception.InvalidParameterValue,
                          site_mod.SiteDeployment, strat, {'g': []})
        self.assertRaises(exception.InvalidParameterValue,
                          site_mod.SiteDeployment, strat,
                          {'g': [], 'h': [], 'x': []})

    def test_initial_node_status(self):
        site = make([group('g', criteria={'minimum_successful_nodes': 2})],
                    {'g': ['n1', 'n2']}, node_status={'n1': 'success'})
        site.start('g')
        self.assertEqual(['n2'], site.prepare_targets('g'))
        self.assertTrue(site.finish_prepare('g', {'n2': True}).ok)

    def test_bad_state_version(self):
        data = self.site.to_dict()
        data['version'] = 99
        self.assertRaises(exception.InvalidParameterValue,
                          site_mod.SiteDeployment.from_dict,
                          self.site.snapshot(), data)


class TestFailFast(base.TestCase):
    """A phase that stops early leaves its unstarted nodes as they were."""

    def test_unstarted_nodes_keep_their_status(self):
        site = make([group('ga', criteria={'percent_successful_nodes': 100}),
                     group('gb', ['ga'])],
                    {'ga': ['n1', 'n2', 'n3'], 'gb': ['n3']})
        site.start('ga')
        self.assertEqual(['n1', 'n2', 'n3'], site.prepare_targets('ga'))
        self.assertTrue(site.can_still_succeed('ga', {}))
        self.assertFalse(site.can_still_succeed('ga', {'n1': False}))
        result = site.finish_prepare(
            'ga', {'n1': False, 'n2': None, 'n3': None})
        self.assertFalse(result.ok)
        self.assertEqual('prepare_criteria_not_met', reasons(site)['ga'])
        self.assertEqual(
            {'n1': 'failure', 'n2': 'not_started', 'n3': 'not_started'},
            site.report()['nodes'])
        self.assertEqual({}, site.tracker.claims())

    def test_earlier_failures_count(self):
        site = make([group('ga'),
                     group('gb', criteria={'maximum_failed_nodes': 0})],
                    {'ga': ['n1'], 'gb': ['n1', 'n2']})
        site.start('ga')
        site.prepare_targets('ga')
        site.finish_prepare('ga', {'n1': False})
        site.start('gb')
        self.assertEqual(['n2'], site.prepare_targets('gb'))
        # n1 failed in ga: gb's criteria are out of reach before it starts.
        self.assertFalse(site.can_still_succeed('gb', {}))


class TestNodesByIdentifier(base.TestCase):
    """The rules work by node identifier (an action's: UUIDs); the names
    admission saw are what the plan and the report show, and the order a
    group's nodes go in."""

    NAMES = {'u1': 'zz', 'u2': 'aa', 'u3': 'mm'}

    def make(self):
        doc = {'schema': strategy.SCHEMA_NAME, 'metadata': {'name': 's'},
               'data': {'groups': [group('g1'), group('g2')]}}
        return site_mod.SiteDeployment(
            strategy.parse(doc), {'g1': ['u1', 'u2'], 'g2': ['u2', 'u3']},
            node_names=self.NAMES)

    def test_by_identifier_shown_by_name(self):
        site = self.make()
        self.assertEqual({'g1': ['aa', 'zz'], 'g2': ['aa', 'mm']},
                         {g: e['nodes']
                          for g, e in site.plan()['groups'].items()})
        self.assertEqual({'aa': ['g1', 'g2']}, site.plan()['overlaps'])
        site.start('g1')
        # In the names' order, as before the UUIDs.
        self.assertEqual(['u2', 'u1'], site.prepare_targets('g1'))
        site.finish_prepare('g1', {'u2': True, 'u1': False})
        site.finish_deploy('g1', {n: True for n in site.deploy_targets('g1')})
        report = site.report()
        self.assertEqual({'aa': 'success', 'zz': 'failure',
                          'mm': 'not_started'}, report['nodes'])
        self.assertEqual((['aa', 'zz'], ['aa'], ['zz']),
                         tuple(report['groups']['g1'][k] for k in (
                             'nodes', 'succeeded_nodes', 'failed_nodes')))
        restored = site_mod.SiteDeployment.from_dict(
            site.snapshot(), json.loads(json.dumps(site.to_dict())))
        self.assertEqual(report, restored.report())
        self.assertEqual((['u2', 'u1'], ['u2', 'u3']),
                         (restored.nodes('g1'), restored.nodes('g2')))
        again = retry_mod.retry(restored, 'previous')
        self.assertEqual(['mm', 'zz'],
                         retry_mod.plan(again)['retried_nodes'])
        self.assertEqual('zz', again.tracker.name_of('u1'))

    def test_a_group_report_is_its_entry_in_the_report(self):
        site = self.make()

        def same():
            report = site.report()['groups']
            for name in ('g1', 'g2'):
                self.assertEqual(report[name], site.group_report(name))
        same()
        site.start('g1')
        site.prepare_targets('g1')
        site.finish_prepare('g1', {'u2': True, 'u1': False})
        same()
        site.start('g2')
        site.prepare_targets('g2')
        site.finish_prepare('g2', {'u3': True})
        same()
        site.finish_deploy('g1', {n: True for n in site.deploy_targets('g1')})
        self.assertEqual(['aa'], site.group_report('g2')['succeeded_nodes'])
        same()
        self.assertRaises(exception.InvalidParameterValue,
                          site.group_report, 'zz')
