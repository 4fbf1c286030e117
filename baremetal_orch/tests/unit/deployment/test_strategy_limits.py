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
"""Limits of a strategy document, and validation in linear time."""

from baremetal_orch.common import exception
from baremetal_orch.common import limits
from baremetal_orch.deployment import selectors
from baremetal_orch.deployment import strategy
from baremetal_orch.tests import base


def document(groups, name='s1'):
    return {'schema': strategy.SCHEMA_NAME, 'metadata': {'name': name},
            'data': {'groups': groups}}


def chain(n):
    return [{'name': 'g%d' % i, 'critical': True,
             'depends_on': ['g%d' % (i - 1)] if i else [], 'selectors': []}
            for i in range(n)]


class CountingGraph(dict):
    """A dependency graph that counts how often it is looked into."""

    lookups = 0

    def __getitem__(self, key):
        self.lookups += 1
        return super().__getitem__(key)


class TestLinearTime(base.TestCase):

    def test_cycle_check_looks_at_each_group_once(self):
        # The check walked everything reachable from every group: a chain
        # of 8,000 groups took 24.5 s through the API (quadratic).
        for n in (100, 2000):
            graph = CountingGraph({'g%d' % i: ['g%d' % (i - 1)] if i else []
                                   for i in range(n)})
            self.assertEqual([], strategy.find_cycles(graph))
            self.assertLessEqual(graph.lookups, 2 * n)

    def test_cycles_named_as_before(self):
        graph = {'a': ['b'], 'b': ['c'], 'c': ['a'], 'd': ['a'],
                 'e': ['f'], 'f': ['e'], 'g': ['g'], 'h': []}
        self.assertEqual([['a', 'b', 'c'], ['e', 'f']],
                         strategy.find_cycles(graph))
        long_cycle = {'g%d' % i: ['g%d' % ((i + 1) % 3000)]
                      for i in range(3000)}
        self.assertEqual([sorted(long_cycle)],
                         strategy.find_cycles(long_cycle))

    def test_dependents_of_a_long_chain(self):
        parsed = strategy.parse(document(chain(limits.MAX_GROUPS)))
        self.assertEqual(tuple('g%d' % i for i in range(1, limits.MAX_GROUPS)),
                         parsed.dependents('g0'))
        self.assertEqual((), parsed.dependents('g%d' % (limits.MAX_GROUPS
                                                        - 1)))


class TestLimits(base.TestCase):

    def assertLimit(self, doc, path, what, limit):
        e = self.assertRaises(exception.LimitExceeded, strategy.parse, doc)
        self.assertEqual('%s: more than %d %s (the limit)'
                         % (path, limit, what), e.message)
        self.assertEqual(400, e.status)

    def test_groups(self):
        strategy.parse(document(chain(limits.MAX_GROUPS)))
        self.assertLimit(document(chain(limits.MAX_GROUPS + 1)),
                         'data.groups', 'groups', limits.MAX_GROUPS)

    def test_selectors_and_values(self):
        group = {'name': 'a', 'critical': True, 'depends_on': []}
        ok = [{'node_tags': ['t']}] * limits.MAX_SELECTORS
        strategy.parse(document([dict(group, selectors=ok)]))
        self.assertLimit(
            document([dict(group, selectors=ok + [{}])]),
            'data.groups[0].selectors', 'selectors', limits.MAX_SELECTORS)
        self.assertLimit(
            document([dict(group, selectors=[{'node_names': [
                'n%d' % i for i in range(limits.MAX_VALUES + 1)]}])]),
            'data.groups[0].selectors[0].node_names',
            'values in one criterion', limits.MAX_VALUES)
        self.assertLimit(
            document([dict(group, selectors=[{'node_labels': [
                {'k%d' % i: 'v' for i in range(limits.MAX_LABEL_PAIRS
                                               + 1)}]}])]),
            'data.groups[0].selectors[0].node_labels',
            'label pairs in one selector', limits.MAX_LABEL_PAIRS)

    def test_whole_document(self):
        def group(i, selectors):
            return {'name': 'g%d' % i, 'critical': True, 'depends_on': [],
                    'selectors': selectors}

        pairs = [{'node_labels': ['k:v%d' % i for i in range(20)]}]
        n = limits.MAX_STRATEGY_LABEL_PAIRS // 20
        strategy.parse(document([group(i, pairs) for i in range(n)]))
        self.assertLimit(
            document([group(i, pairs) for i in range(n)] + [
                group(n, [{'node_labels': ['k:v']}])]),
            'data.groups', 'label pairs in all groups together',
            limits.MAX_STRATEGY_LABEL_PAIRS)
        names = [{'node_names': ['n%d' % i for i in range(
            limits.MAX_VALUES)]}] * 2
        n = limits.MAX_STRATEGY_SELECTOR_VALUES // (2 * limits.MAX_VALUES)
        self.assertLimit(
            document([group(i, names) for i in range(n + 1)]),
            'data.groups', 'selector values in all groups together',
            limits.MAX_STRATEGY_SELECTOR_VALUES)

    def test_limits_come_before_the_schema(self):
        # Counted on what is there, whatever its types.
        self.assertLimit(document([1] * (limits.MAX_GROUPS + 1)),
                         'data.groups', 'groups', limits.MAX_GROUPS)

    def test_group_name_length(self):
        group = {'name': 'g' * limits.GROUP_NAME_MAX_LENGTH,
                 'critical': True, 'depends_on': [], 'selectors': []}
        strategy.parse(document([group]))
        group['name'] += 'g'
        e = self.assertRaises(exception.StrategySchemaError, strategy.parse,
                              document([group]))
        self.assertIn('data.groups[0].name', e.message)

    def test_strategy_name_rule(self):
        for name in ('s', 'a.b_c~d-e', 'x' * limits.NAME_MAX_LENGTH):
            self.assertEqual(name, strategy.parse(document([], name)).name)
        for name in ('a/b', 'a b', '-a', 'a\n', 'x' * 256, 'é'):
            e = self.assertRaises(exception.InvalidName, strategy.parse,
                                  document([], name))
            self.assertIn('deployment strategy name', e.message)

    def test_selector_lists(self):
        self.assertRaises(exception.LimitExceeded, selectors.coerce,
                          [{}] * (limits.MAX_SELECTORS + 1))
        self.assertEqual(limits.MAX_SELECTORS,
                         len(selectors.coerce([{}] * limits.MAX_SELECTORS)))
