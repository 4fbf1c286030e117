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

"""Progress and ETA of a site deployment (doc/source/admin/steering.rst)."""

import json

import testscenarios

from baremetal_orch.common import exception
from baremetal_orch.common import statuses
from baremetal_orch.deployment import progress
from baremetal_orch.deployment import site as site_mod
from baremetal_orch.deployment import strategy
from baremetal_orch.deployment import tracker
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.deployment import examples
from baremetal_orch.tests.unit.deployment import serial

MIN1 = {'minimum_successful_nodes': 1}
P, D = 'prepare', 'deploy'


def group(name, depends_on=(), criteria=None):
    g = {'name': name, 'critical': False, 'depends_on': list(depends_on),
         'selectors': []}
    if criteria:
        g['success_criteria'] = criteria
    return g


def make(groups, group_nodes):
    doc = {'schema': strategy.SCHEMA_NAME, 'metadata': {'name': 's'},
           'data': {'groups': groups}}
    return site_mod.SiteDeployment(strategy.parse(doc), group_nodes)


def nodes(prefix, count):
    return ['%s%d' % (prefix, i) for i in range(count)]


CHAIN = ([group('a'), group('b', ['a']), group('c', ['b'])],
         {'a': nodes('a', 4), 'b': nodes('b', 4), 'c': nodes('c', 4)})
SIDE_BY_SIDE = ([group('a'), group('b'), group('c')], CHAIN[1])
# a -> c, b -> c; b has twice the nodes of a.
FORK = ([group('a'), group('b'), group('c', ['a', 'b'])],
        {'a': nodes('a', 2), 'b': nodes('b', 4), 'c': nodes('c', 2)})
# The measurements: a prepared one node in 10 s and deployed one in 20 s.
A_ONLY = [('a', P, 10), ('a', D, 20)]


def run_group(site, name, fail=None):
    """Run ``name`` to its end; ``fail`` maps node -> failing phase."""
    ex = examples.FakeExecutor([], fail=fail)
    site.start(name)
    if site.finish_prepare(name, ex.prepare(
            name, site.prepare_targets(name))).ok:
        site.finish_deploy(name, ex.deploy(name, site.deploy_targets(name)))


class TestEta(testscenarios.WithScenarios, base.TestCase):
    """One row: plan, measurements, groups run before, concurrency -> eta.

    Each row's expectation is worked out in its comment.
    """

    scenarios = [
        ('no_measurement', dict(plan=CHAIN, measured=[], conc=2,
                                expected=None)),
        # Every group 2 * 10 + 2 * 20 = 60 (b, c: the median of all).
        ('chain_adds_up', dict(plan=CHAIN, measured=A_ONLY, conc=2,
                               expected=180.0)),
        ('side_by_side_overlap', dict(plan=SIDE_BY_SIDE, measured=A_ONLY,
                                      conc=2, expected=60.0)),
        ('side_by_side_one_group_slot', dict(
            plan=SIDE_BY_SIDE, measured=A_ONLY, conc=2, slots=1,
            expected=180.0)),
        # max(60 on the longest path, 180 over 2 slots).
        ('side_by_side_two_group_slots', dict(
            plan=SIDE_BY_SIDE, measured=A_ONLY, conc=2, slots=2,
            expected=90.0)),
        ('side_by_side_many_group_slots', dict(
            plan=SIDE_BY_SIDE, measured=A_ONLY, conc=2, slots=10,
            expected=60.0)),
        # 4 nodes, 4 at once: one round of 10 + 20 per group.
        ('concurrency_all_at_once', dict(plan=CHAIN, measured=A_ONLY,
                                         conc=4, expected=90.0)),
        # ceil(4 / 3) = 2 rounds.
        ('concurrency_rounds_up', dict(plan=CHAIN, measured=A_ONLY,
                                       conc=3, expected=180.0)),
        ('concurrency_one', dict(plan=CHAIN, measured=A_ONLY, conc=1,
                                 expected=360.0)),
        # a: 1 round of 30; b: 2 rounds of 30; c after both: 30.
        ('fork_takes_the_longest_branch', dict(
            plan=FORK, measured=A_ONLY, conc=2, expected=90.0)),
        # Medians: a's own prepare 20 (of 10, 20, 90), deploy 20 (own);
        # b's prepare: none of its own, the median of all prepares, 55
        # (of 10, 20, 90, 100); b's deploy its own 40; c none: prepare 55,
        # deploy 30 (of 20 and 40). a: 2*20 + 2*20 = 80,
        # b: 2*55 + 2*40 = 190, c: 2*55 + 2*30 = 170 -> 440.
        ('own_median_else_the_phase_median', dict(
            plan=CHAIN, measured=[('a', P, 10), ('a', P, 90), ('a', P, 20),
                                  ('a', D, 20), ('b', D, 40),
                                  ('other', P, 100)],
            conc=2, expected=440.0)),
        # Only prepares measured: deploys take the median of everything.
        ('no_deploy_measured_yet', dict(
            plan=CHAIN, measured=[('a', P, 10)], conc=4, expected=60.0)),
        # a ended (success): b and c only.
        ('ended_group_counts_zero', dict(
            plan=CHAIN, measured=A_ONLY, conc=2, ran=[('a', None)],
            expected=120.0)),
        # a failed its prepare: b and c will never run.
        ('groups_after_a_failure_count_zero', dict(
            plan=([group('a', criteria=MIN1), group('b', ['a']),
                   group('c', ['b']), group('d')],
                  {'a': ['n1'], 'b': ['n2'], 'c': ['n3'], 'd': ['n4']}),
            measured=A_ONLY, conc=1, ran=[('a', {'n1': P})],
            expected=30.0)),
        # b runs after a; the nodes b shares with a are a's already.
        ('shared_nodes_counted_once', dict(
            plan=([group('a'), group('b', ['a'])],
                  {'a': ['n1', 'n2'], 'b': ['n1', 'n2', 'n3']}),
            measured=A_ONLY, conc=1, expected=90.0)),
        ('everything_ended', dict(plan=CHAIN, measured=A_ONLY, conc=2,
                                  ran=[('a', None), ('b', None),
                                       ('c', None)], expected=0.0)),
    ]
    slots = None
    ran = ()

    def test_eta(self):
        site = make(*self.plan)
        for name, fail in self.ran:
            run_group(site, name, fail)
        for name, phase, seconds in self.measured:
            site.durations.record(name, phase, seconds)
        self.assertEqual(self.expected,
                         progress.eta(site, self.conc, self.slots))


class TestEtaMidGroup(base.TestCase):

    def test_deploy_phase_counts_only_deploys(self):
        site = make(*CHAIN)
        for name, phase, seconds in A_ONLY:
            site.durations.record(name, phase, seconds)
        site.start('a')
        targets = site.prepare_targets('a')
        site.finish_prepare('a', dict.fromkeys(targets, True))
        # a: 2 deploy rounds of 20; b, c: 60 each.
        self.assertEqual(160.0, progress.eta(site, 2))
        site.deploy_targets('a')
        self.assertEqual(160.0, progress.eta(site, 2))

    def test_prepare_phase_counts_both(self):
        site = make(*CHAIN)
        for name, phase, seconds in A_ONLY:
            site.durations.record(name, phase, seconds)
        site.start('a')
        site.prepare_targets('a')
        self.assertEqual(180.0, progress.eta(site, 2))

    def test_bad_concurrency(self):
        site = make(*CHAIN)
        self.assertRaises(exception.InvalidParameterValue, progress.eta,
                          site, 0)


def counts(prepare, deploy):
    keys = ('done', 'failed', 'in_flight', 'pending')
    return {P: dict(zip(keys, prepare)), D: dict(zip(keys, deploy))}


class TestRemaining(base.TestCase):
    """Which group a node not yet handled is counted for."""

    def setUp(self):
        super().setUp()
        self.site = make([group('a'), group('b', ['a'])],
                         {'a': ['n1', 'n2'], 'b': ['n1', 'n2', 'n3']})
        self.states = {'a': {'status': statuses.RUNNING, 'phase': D},
                       'b': {'status': statuses.PENDING, 'phase': None}}

    def test_the_same_groups_with_another_status_go_elsewhere(self):
        # n1 and n2 are in the same groups: prepared, n1 goes to a,
        # running its deploy; not started, n2 goes to b, which will
        # prepare it (a's deploy does not).
        self.site.tracker.mark('n1', tracker.PREPARED)
        self.assertEqual({'a': (0, 1), 'b': (2, 2)}, progress._remaining(
            self.site, ['a', 'b'], self.states))

    def test_only_the_groups_counted(self):
        self.site.tracker.mark('n1', tracker.PREPARED)
        self.assertEqual({'b': (2, 3)}, progress._remaining(
            self.site, ['b'], self.states))


class TestPhaseCounts(base.TestCase):

    def test_nothing_started(self):
        site = make(*CHAIN)
        self.assertEqual(counts((0, 0, 0, 12), (0, 0, 0, 12)),
                         progress.phase_counts(site, ()))
        self.assertEqual(counts((0, 0, 0, 12), (0, 0, 0, 12)),
                         progress.phase_counts(site))

    def test_in_flight_given_or_from_claims(self):
        site = make(*CHAIN)
        site.start('a')
        site.prepare_targets('a')
        self.assertEqual(counts((0, 0, 1, 11), (0, 0, 0, 12)),
                         progress.phase_counts(site, {'a0'}))
        # Every claimed node of a running group's phase.
        self.assertEqual(counts((0, 0, 4, 8), (0, 0, 0, 12)),
                         progress.phase_counts(site))
        site.finish_prepare('a', {'a0': True, 'a1': True, 'a2': True,
                                  'a3': False})
        # a's prepare met its criteria (none): its phase is deploy and
        # its prepared nodes, still claimed, count as deploying.
        self.assertEqual(counts((3, 1, 0, 8), (0, 0, 3, 8)),
                         progress.phase_counts(site))
        # Given names count in the phase their status is in.
        self.assertEqual(counts((3, 1, 1, 7), (0, 0, 1, 10)),
                         progress.phase_counts(site, ['a1', 'b0']))

    def test_failures_counted_in_their_phase(self):
        site = make(*CHAIN)
        run_group(site, 'a', {'a0': P, 'a1': D})
        run_group(site, 'b', {'b0': D})
        # prepare: a0 failed; deploy: a1, b0 failed; c never started.
        self.assertEqual(counts((7, 1, 0, 4), (5, 2, 0, 4)),
                         progress.phase_counts(site, ()))
        restored = site_mod.SiteDeployment.from_dict(
            site.snapshot(), json.loads(json.dumps(site.to_dict())))
        self.assertEqual(progress.phase_counts(site, ()),
                         progress.phase_counts(restored, ()))

    def test_timeout_after_prepare_is_a_deploy_failure(self):
        site = make(*CHAIN)
        site.start('a')
        site.finish_prepare('a', dict.fromkeys(site.prepare_targets('a'),
                                               True))
        site.deploy_targets('a')
        site.fail('a', 'timeout', results={'a0': True})
        self.assertEqual(counts((4, 0, 0, 8), (1, 3, 0, 8)),
                         progress.phase_counts(site, ()))


class TestDurations(base.TestCase):

    def test_median_and_bound(self):
        durations = progress.Durations(keep=3)
        self.assertFalse(durations)
        self.assertIsNone(durations.median('a', P))
        for seconds in (100, 1, 2, 3):
            durations.record('a', P, seconds)
        self.assertTrue(durations)
        # 100 fell off: the last 3 are kept.
        self.assertEqual(2, durations.median('a', P))
        durations.record('a', P, 4)
        self.assertEqual({'a': {P: [2000, 3000, 4000]}}, durations.to_dict())

    def test_stored_in_whole_milliseconds(self):
        durations = progress.Durations()
        durations.record('a', P, 1.23456)
        durations.record('a', D, 0.0004)
        stored = durations.to_dict()
        self.assertEqual({'a': {P: [1235], D: [0]}}, stored)
        again = progress.Durations.from_dict(stored)
        self.assertEqual(1.235, again.median('a', P))
        self.assertEqual(stored, again.to_dict())

    def test_even_count_median(self):
        durations = progress.Durations()
        for seconds in (10, 40, 20, 30):
            durations.record('g', D, seconds)
        self.assertEqual(25, durations.median('g', D))

    def test_default_bound(self):
        durations = progress.Durations()
        for seconds in range(progress.KEEP * 2):
            durations.record('g', D, seconds)
        self.assertEqual(progress.KEEP, len(durations.to_dict()['g'][D]))

    def test_bad_records(self):
        durations = progress.Durations()
        for phase, seconds in (('boot', 1), (P, float('nan')),
                               (P, float('inf'))):
            self.assertRaises(exception.InvalidParameterValue,
                              durations.record, 'g', phase, seconds)
        self.assertFalse(durations)
        durations.record('g', P, -3)
        self.assertEqual(0.0, durations.median('g', P))

    def test_persisted_with_the_site(self):
        site = make(*CHAIN)
        for name, phase, seconds in A_ONLY + [('b', P, 30)]:
            site.durations.record(name, phase, seconds)
        data = json.loads(json.dumps(site.to_dict()))
        self.assertEqual({'a': {P: [10000], D: [20000]}, 'b': {P: [30000]}},
                         data['durations'])
        restored = site_mod.SiteDeployment.from_dict(site.snapshot(), data)
        self.assertEqual(site.to_dict(), restored.to_dict())
        self.assertEqual(progress.eta(site, 2), progress.eta(restored, 2))

    def test_state_without_durations(self):
        site = make(*CHAIN)
        data = site.to_dict()
        del data['durations']
        restored = site_mod.SiteDeployment.from_dict(site.snapshot(), data)
        self.assertFalse(restored.durations)
        self.assertIsNone(progress.eta(restored, 2))


class TestSummary(base.TestCase):

    def test_the_contract_shape(self):
        site = make(*CHAIN)
        self.assertEqual({'phases': counts((0, 0, 0, 12), (0, 0, 0, 12)),
                          'eta': None}, progress.summary(site, (), 2))
        serial.run_serially(site, examples.FakeExecutor([]).prepare,
                            examples.FakeExecutor([]).deploy)
        site.durations.record('a', P, 1.5)
        doc = progress.summary(site, (), 2, 1)
        self.assertEqual({'phases': counts((12, 0, 0, 0), (12, 0, 0, 0)),
                          'eta': 0.0}, doc)
        self.assertEqual(doc, json.loads(json.dumps(doc)))
