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

"""Success criteria (the deployment grouping specification;
doc/source/admin/strategies.rst)."""

import testscenarios

from baremetal_orch.common import exception
from baremetal_orch.deployment import criteria
from baremetal_orch.tests import base

P = criteria.PERCENT
MIN = criteria.MINIMUM
MAXF = criteria.MAXIMUM_FAILED


class TestEvaluate(testscenarios.WithScenarios, base.TestCase):
    """One row: criteria, total, succeeded -> misses."""

    scenarios = [
        ('no_criteria', dict(crit=None, total=3, ok=0, misses=[])),
        ('2_of_3_vs_67', dict(crit={P: 67}, total=3, ok=2,
                              misses=[(P, 67, 66.7)])),
        ('2_of_3_vs_66_7_no_rounding', dict(crit={P: 66.7}, total=3, ok=2,
                                            misses=[(P, 66.7, 66.7)])),
        ('2_of_3_vs_66_6', dict(crit={P: 66.6}, total=3, ok=2, misses=[])),
        ('3_of_4_vs_75', dict(crit={P: 75}, total=4, ok=3, misses=[])),
        ('7_of_10_vs_70', dict(crit={P: 70}, total=10, ok=7, misses=[])),
        ('1_of_4_vs_50', dict(crit={P: 50}, total=4, ok=1,
                              misses=[(P, 50, 25.0)])),
        ('0_of_3_vs_0', dict(crit={P: 0}, total=3, ok=0, misses=[])),
        ('empty_group_vs_percent_100', dict(crit={P: 100}, total=0, ok=0,
                                            misses=[])),
        ('empty_group_vs_minimum_1', dict(crit={MIN: 1}, total=0, ok=0,
                                          misses=[(MIN, 1, 0)])),
        ('empty_group_vs_minimum_0', dict(crit={MIN: 0}, total=0, ok=0,
                                          misses=[])),
        ('empty_group_vs_max_failed_0', dict(crit={MAXF: 0}, total=0, ok=0,
                                             misses=[])),
        ('minimum_met', dict(crit={MIN: 3}, total=4, ok=3, misses=[])),
        ('minimum_missed', dict(crit={MIN: 3}, total=4, ok=2,
                                misses=[(MIN, 3, 2)])),
        ('not_successful_counts_as_failed', dict(
            crit={MAXF: 1}, total=4, ok=2, misses=[(MAXF, 1, 2)])),
        ('max_failed_met', dict(crit={MAXF: 1}, total=4, ok=3, misses=[])),
        ('every_miss_recorded', dict(
            crit={P: 90, MIN: 3, MAXF: 1}, total=4, ok=2,
            misses=[(P, 90, 50.0), (MIN, 3, 2), (MAXF, 1, 2)])),
        ('control_nodes_3_of_4', dict(
            crit={P: 90, MIN: 3, MAXF: 1}, total=4, ok=3,
            misses=[(P, 90, 75.0)])),
        ('all_met', dict(crit={P: 90, MIN: 3, MAXF: 1}, total=4, ok=4,
                         misses=[])),
    ]

    def test_evaluate(self):
        crit = (criteria.Criteria.from_dict(self.crit)
                if self.crit is not None else None)
        got = criteria.evaluate(crit, self.total, self.ok)
        self.assertEqual([criteria.Miss(*m) for m in self.misses], got)
        self.assertEqual(
            [{'criterion': c, 'needed': n, 'actual': a}
             for c, n, a in self.misses], [m.to_dict() for m in got])


class TestInvalidCriteria(testscenarios.WithScenarios, base.TestCase):

    scenarios = [
        ('empty', dict(d={}, word='at least one')),
        ('not_a_map', dict(d=[P], word='map')),
        ('unknown', dict(d={'percent': 50}, word='percent')),
        ('percent_over', dict(d={P: 101}, word='101')),
        ('percent_negative', dict(d={P: -1}, word='-1')),
        ('percent_string', dict(d={P: '50'}, word="'50'")),
        ('percent_bool', dict(d={P: True}, word='True')),
        ('minimum_negative', dict(d={MIN: -1}, word='-1')),
        ('minimum_float', dict(d={MIN: 1.5}, word='1.5')),
        ('max_failed_negative', dict(d={MAXF: -2}, word='-2')),
        ('max_failed_bool', dict(d={MAXF: False}, word='False')),
    ]

    def test_invalid(self):
        exc = self.assertRaises(exception.InvalidCriteria,
                                criteria.Criteria.from_dict, self.d,
                                group='g1')
        self.assertIn('g1', str(exc))
        self.assertIn(self.word, str(exc))


class TestCriteria(base.TestCase):

    def test_round_trip(self):
        d = {P: 66.6, MIN: 3, MAXF: 0}
        crit = criteria.Criteria.from_dict(d)
        self.assertEqual(d, crit.to_dict())
        self.assertEqual({MIN: 2},
                         criteria.Criteria.from_dict({MIN: 2}).to_dict())

    def test_integral_float_count(self):
        crit = criteria.Criteria.from_dict({MIN: 2.0})
        self.assertIsInstance(crit.minimum_successful_nodes, int)

    def test_evaluate_bad_counts(self):
        for total, ok in ((3, 4), (3, -1), (-1, 0)):
            self.assertRaises(exception.InvalidParameterValue,
                              criteria.evaluate, None, total, ok)

    def test_percent(self):
        self.assertEqual(100, criteria.percent(0, 0))
        self.assertEqual(200, criteria.percent(3, 2) * 3)

    def test_reachable(self):
        # (criteria, total, failed so far, can still hold)
        table = [
            (None, 3, 3, True),
            ({P: 100}, 4, 0, True),
            ({P: 100}, 4, 1, False),
            ({P: 75}, 4, 1, True),
            ({P: 75}, 4, 2, False),
            ({P: 66.7}, 3, 1, False),    # 2 of 3 is 66.66...%
            ({P: 66.6}, 3, 1, True),
            ({MIN: 2}, 3, 1, True),
            ({MIN: 2}, 3, 2, False),
            ({MIN: 1}, 0, 0, False),     # an empty group counts 0
            ({MAXF: 1}, 5, 1, True),
            ({MAXF: 1}, 5, 2, False),
            ({P: 50, MAXF: 3}, 4, 3, False),
        ]
        for crit, total, failed, expected in table:
            crit = criteria.Criteria.from_dict(crit) if crit else None
            self.assertEqual(expected,
                             criteria.reachable(crit, total, failed),
                             (crit, total, failed))
        self.assertRaises(exception.InvalidParameterValue,
                          criteria.reachable, None, 2, 3)

    def test_miss_round_trip(self):
        miss = criteria.Miss(P, 67, 66.7)
        self.assertEqual(miss, criteria.Miss.from_dict(miss.to_dict()))
