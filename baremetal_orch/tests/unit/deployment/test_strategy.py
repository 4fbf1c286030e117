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

"""DeploymentStrategy model and validation."""

import copy

import jsonschema
import testscenarios

from baremetal_orch.common import exception
from baremetal_orch.deployment import criteria
from baremetal_orch.deployment import selectors
from baremetal_orch.deployment import strategy
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.deployment import examples


def _group(name, depends_on=(), critical=False, **extra):
    g = {'name': name, 'critical': critical, 'depends_on': list(depends_on),
         'selectors': [{'node_names': [name + '-node']}]}
    g.update(extra)
    return g


def _doc(*groups):
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 'strat', 'schema': 'metadata/Document/v1'},
            'data': {'groups': list(groups)}}


BASE = _doc(_group('a'), _group('b', ['a']), _group('c', ['b'],
                                                    critical=True))


def _mutate(fn):
    doc = copy.deepcopy(BASE)
    fn(doc)
    return doc


def _groups(doc):
    return doc['data']['groups']


def _set(path, value):
    def fn(doc):
        target = doc
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value
    return fn


def _del(path):
    def fn(doc):
        target = doc
        for part in path[:-1]:
            target = target[part]
        del target[path[-1]]
    return fn


G = ('data', 'groups')


class TestInvalid(testscenarios.WithScenarios, base.TestCase):
    """One row: a broken document, the error class and words it names."""

    scenarios = [
        # Schema errors.
        ('missing_critical', dict(
            doc=_mutate(_del(G + (2, 'critical'))),
            exc=exception.StrategySchemaError,
            words=['data.groups[2].critical', "'critical'", 'group c',
                   'missing'])),
        ('critical_not_bool', dict(
            doc=_mutate(_set(G + (0, 'critical'), 'yes')),
            exc=exception.StrategySchemaError,
            words=['data.groups[0].critical', 'boolean', 'group a'])),
        ('missing_depends_on', dict(
            doc=_mutate(_del(G + (1, 'depends_on'))),
            exc=exception.StrategySchemaError,
            words=['data.groups[1].depends_on', 'group b'])),
        ('missing_selectors', dict(
            doc=_mutate(_del(G + (1, 'selectors'))),
            exc=exception.StrategySchemaError,
            words=['data.groups[1].selectors', 'group b'])),
        ('missing_name', dict(
            doc=_mutate(_del(G + (1, 'name'))),
            exc=exception.StrategySchemaError,
            words=['data.groups[1].name', 'missing'])),
        ('empty_name', dict(
            doc=_mutate(_set(G + (0, 'name'), '')),
            exc=exception.StrategySchemaError,
            words=['data.groups[0].name', 'empty'])),
        ('unknown_group_key', dict(
            doc=_mutate(_set(G + (1, 'dependson'), [])),
            exc=exception.StrategySchemaError,
            words=['data.groups[1].dependson', 'unknown key'])),
        ('unknown_selector_key', dict(
            doc=_mutate(_set(G + (0, 'selectors'),
                             [{}, {'node_tag': ['x']}])),
            exc=exception.StrategySchemaError,
            words=['data.groups[0].selectors[1].node_tag', 'unknown key'])),
        ('selector_value_not_list', dict(
            doc=_mutate(_set(G + (0, 'selectors'), [{'node_tags': 'x'}])),
            exc=exception.StrategySchemaError,
            words=['data.groups[0].selectors[0].node_tags'])),
        ('empty_criteria', dict(
            doc=_mutate(_set(G + (1, 'success_criteria'), {})),
            exc=exception.StrategySchemaError,
            words=['data.groups[1].success_criteria', 'empty', 'group b'])),
        ('unknown_criterion', dict(
            doc=_mutate(_set(G + (1, 'success_criteria'), {'percent': 5})),
            exc=exception.StrategySchemaError,
            words=['data.groups[1].success_criteria.percent',
                   'unknown key'])),
        ('criterion_not_number', dict(
            doc=_mutate(_set(G + (1, 'success_criteria'),
                             {'percent_successful_nodes': 'half'})),
            exc=exception.StrategySchemaError,
            words=['success_criteria.percent_successful_nodes'])),
        ('wait_for_signal_not_bool', dict(
            doc=_mutate(_set(G + (0, 'wait_for_signal'), 'yes')),
            exc=exception.StrategySchemaError,
            words=['data.groups[0].wait_for_signal'])),
        ('fail_fast_not_bool', dict(
            doc=_mutate(_set(G + (1, 'fail_fast'), 1)),
            exc=exception.StrategySchemaError,
            words=['data.groups[1].fail_fast'])),
        ('wrong_schema', dict(
            doc=_mutate(_set(('schema',), 'shipyard/Other/v1')),
            exc=exception.StrategySchemaError,
            words=['schema', 'shipyard/DeploymentStrategy/v1'])),
        ('missing_metadata_name', dict(
            doc=_mutate(_del(('metadata', 'name'))),
            exc=exception.StrategySchemaError, words=['metadata.name'])),
        ('missing_data', dict(
            doc=_mutate(_del(('data',))),
            exc=exception.StrategySchemaError, words=["'data'"])),
        ('groups_not_list', dict(
            doc=_mutate(_set(('data', 'groups'), {})),
            exc=exception.StrategySchemaError, words=['data.groups'])),
        ('not_a_map', dict(
            doc=['schema'], exc=exception.StrategySchemaError,
            words=['map'])),
        # Criteria out of range.
        ('percent_over_100', dict(
            doc=_mutate(_set(G + (2, 'success_criteria'),
                             {'percent_successful_nodes': 120})),
            exc=exception.InvalidCriteria,
            words=['group c',
                   'data.groups[2].success_criteria.'
                   'percent_successful_nodes', '120'])),
        ('negative_minimum', dict(
            doc=_mutate(_set(G + (0, 'success_criteria'),
                             {'minimum_successful_nodes': -1})),
            exc=exception.InvalidCriteria,
            words=['group a', 'minimum_successful_nodes', '-1'])),
        ('negative_max_failed', dict(
            doc=_mutate(_set(G + (1, 'success_criteria'),
                             {'maximum_failed_nodes': -3})),
            exc=exception.InvalidCriteria,
            words=['group b', 'maximum_failed_nodes', '-3'])),
        # Malformed labels.
        ('label_no_value', dict(
            doc=_mutate(_set(G + (1, 'selectors'),
                             [{'node_labels': ['ok:yes', 'novalue']}])),
            exc=exception.InvalidSelector,
            words=['data.groups[1].selectors[0].node_labels[1]',
                   "'novalue'", 'group b'])),
        ('label_empty_key', dict(
            doc=_mutate(_set(G + (0, 'selectors'),
                             [{'node_labels': [':x']}])),
            exc=exception.InvalidSelector,
            words=['data.groups[0].selectors[0].node_labels[0]', "':x'"])),
        ('label_empty_value', dict(
            doc=_mutate(_set(G + (0, 'selectors'),
                             [{'node_labels': ['k:']}])),
            exc=exception.InvalidSelector, words=["'k:'", 'empty value'])),
        ('label_non_string', dict(
            doc=_mutate(_set(G + (0, 'selectors'),
                             [{'node_labels': [7]}])),
            exc=exception.InvalidSelector,
            words=['node_labels[0]', '7'])),
        ('label_map_non_string_value', dict(
            doc=_mutate(_set(G + (2, 'selectors'),
                             [{'node_labels': [{'k': 1}]}])),
            exc=exception.InvalidSelector,
            words=['data.groups[2].selectors[0].node_labels[0]',
                   "{'k': 1}"])),
        ('label_empty_map', dict(
            doc=_mutate(_set(G + (2, 'selectors'),
                             [{'node_labels': [{}]}])),
            exc=exception.InvalidSelector, words=['empty map'])),
        ('label_bad_syntax', dict(
            doc=_mutate(_set(G + (2, 'selectors'),
                             [{'node_labels': ['bad key:v']}])),
            exc=exception.InvalidSelector,
            words=['data.groups[2].selectors[0].node_labels[0]',
                   "'bad key:v'", 'group c'])),
        # Graph errors.
        ('duplicate', dict(
            doc=_doc(_group('a'), _group('b'), _group('a')),
            exc=exception.DuplicateGroupName, words=['duplicate', ' a'])),
        ('unknown_dependency', dict(
            doc=_doc(_group('a'), _group('b', ['a', 'zz'])),
            exc=exception.UnknownDependency, words=['group b', 'zz'])),
        ('self_dependency', dict(
            doc=_doc(_group('a'), _group('b', ['a', 'b'])),
            exc=exception.SelfDependency, words=['group b'])),
        ('cycle', dict(
            doc=_doc(_group('a', ['c']), _group('b', ['a']),
                     _group('c', ['b']), _group('d', ['c'])),
            exc=exception.DependencyCycle, words=['groups a, b, c'])),
        ('two_cycles', dict(
            doc=_doc(_group('y', ['x']), _group('x', ['y']),
                     _group('a', ['b']), _group('b', ['a']), _group('free')),
            exc=exception.DependencyCycle, words=['a, b; x, y'])),
        # Order of checks.
        ('schema_before_duplicates', dict(
            doc=_doc(_group('a'), _group('a', critical='no')),
            exc=exception.StrategySchemaError,
            words=['data.groups[1].critical'])),
        ('duplicates_before_unknown', dict(
            doc=_doc(_group('a', ['zz']), _group('a')),
            exc=exception.DuplicateGroupName, words=['a'])),
        ('unknown_before_self', dict(
            doc=_doc(_group('a', ['a']), _group('b', ['zz'])),
            exc=exception.UnknownDependency, words=['zz'])),
        ('self_before_cycle', dict(
            doc=_doc(_group('a', ['b']), _group('b', ['a']),
                     _group('c', ['c'])),
            exc=exception.SelfDependency, words=['group c'])),
        ('first_schema_error_in_document_order', dict(
            doc=_doc(_group('a', critical='no'), _group('b', critical=1)),
            exc=exception.StrategySchemaError,
            words=['data.groups[0].critical'])),
    ]

    def test_invalid(self):
        exc = self.assertRaises(self.exc, strategy.parse, self.doc)
        for word in self.words:
            self.assertIn(word, str(exc))
        self.assertIsInstance(exc, exception.InvalidStrategy)
        self.assertEqual(400, exc.status)


class TestCycleNames(base.TestCase):

    def test_hanging_groups_not_named(self):
        doc = _doc(_group('root'), _group('a', ['c', 'root']),
                   _group('b', ['a']), _group('c', ['b']),
                   _group('d', ['c']), _group('e', ['d']))
        exc = self.assertRaises(exception.DependencyCycle, strategy.parse,
                                doc)
        self.assertEqual([['a', 'b', 'c']], exc.kwargs['cycles'])
        self.assertTrue(str(exc).endswith('between groups a, b, c'),
                        str(exc))

    def test_find_cycles(self):
        graph = {'a': ['b'], 'b': ['c'], 'c': ['a', 'd'], 'd': [],
                 'e': ['e', 'a']}
        self.assertEqual([['a', 'b', 'c']], strategy.find_cycles(graph))
        self.assertEqual([], strategy.find_cycles({'a': [], 'b': ['a']}))


class TestSeedExample(base.TestCase):

    def setUp(self):
        super().setUp()
        self.doc = examples.load_yaml('deployment-strategy.yaml')
        self.strategy = strategy.parse(self.doc)

    def test_model(self):
        s = self.strategy
        self.assertEqual(strategy.DEFAULT_NAME, s.name)
        self.assertEqual(('control-nodes', 'compute-nodes-1',
                          'compute-nodes-2', 'monitoring-nodes', 'ntp-node'),
                         s.names())
        control = s.group('control-nodes')
        self.assertTrue(control.critical)
        self.assertEqual(('ntp-node',), control.depends_on)
        self.assertEqual(criteria.Criteria(90, 3, 1),
                         control.success_criteria)
        self.assertEqual((selectors.Selector(node_tags=('control',),
                                             rack_names=('rack03',)),),
                         control.selectors)
        self.assertIsNone(s.group('monitoring-nodes').success_criteria)
        self.assertFalse(control.wait_for_signal)
        self.assertRaises(exception.InvalidParameterValue, s.group, 'nope')

    def test_topological_order(self):
        self.assertEqual(('monitoring-nodes', 'ntp-node', 'control-nodes',
                          'compute-nodes-1', 'compute-nodes-2'),
                         self.strategy.topological_order())

    def test_dependents(self):
        self.assertEqual(('control-nodes', 'compute-nodes-1',
                          'compute-nodes-2'),
                         self.strategy.dependents('ntp-node'))
        self.assertEqual((), self.strategy.dependents('monitoring-nodes'))

    def test_round_trip(self):
        doc = self.strategy.to_document()
        self.assertEqual(self.doc['metadata'], doc['metadata'])
        again = strategy.parse(doc)
        self.assertEqual(self.strategy, again)
        self.assertEqual(doc, again.to_document())

    def test_bounds(self):
        durations = dict.fromkeys(self.strategy.names(), 1.0)
        durations['monitoring-nodes'] = 5.0
        # ntp -> control -> compute = 3, monitoring alone = 5.
        self.assertEqual(5.0, self.strategy.critical_path_bound(durations))
        durations['monitoring-nodes'] = 1.0
        self.assertEqual(3.0, self.strategy.critical_path_bound(durations))
        self.assertEqual(5.0, self.strategy.serial_bound(durations))
        self.assertEqual(0.0, self.strategy.critical_path_bound({}))


class TestStrategy(base.TestCase):

    def test_schema_is_valid_draft7(self):
        jsonschema.Draft7Validator.check_schema(strategy.SCHEMA)

    def test_metadata_extra_keys_and_extension(self):
        doc = _doc(_group('a', wait_for_signal=True, fail_fast=True,
                          success_criteria={'minimum_successful_nodes': 0}))
        doc['metadata'].update({'labels': {'x': 'y'},
                                'storagePolicy': 'cleartext',
                                'layeringDefinition': {'layer': 'site'}})
        s = strategy.parse(doc)
        self.assertTrue(s.group('a').wait_for_signal)
        out = s.to_document()
        self.assertEqual(doc['metadata'], out['metadata'])
        self.assertTrue(out['data']['groups'][0]['wait_for_signal'])
        self.assertTrue(s.group('a').fail_fast)
        self.assertTrue(out['data']['groups'][0]['fail_fast'])
        self.assertEqual(s, strategy.parse(out))

    def test_empty_selectors_and_labels(self):
        doc = _doc(_group('a', selectors=[]),
                   _group('b', selectors=[{'node_labels': [
                       'k:v', {'x': '', 'y': 'z'}]}]))
        s = strategy.parse(doc)
        self.assertEqual((), s.group('a').selectors)
        self.assertEqual((('k', 'v'), ('x', ''), ('y', 'z')),
                         s.group('b').selectors[0].node_labels)
        self.assertEqual(s, strategy.parse(s.to_document()))

    def test_topological_ties_in_document_order(self):
        s = strategy.parse(_doc(_group('x', ['z']), _group('y'),
                                _group('z'), _group('w', ['y'])))
        self.assertEqual(('y', 'z', 'x', 'w'), s.topological_order())

    def test_diamond_order_and_dependents(self):
        s = strategy.parse(_doc(_group('d', ['b', 'c']), _group('c'),
                                _group('b', ['a']), _group('a')))
        self.assertEqual(('c', 'a', 'b', 'd'), s.topological_order())
        self.assertEqual(('d', 'b'), s.dependents('a'))

    def test_no_groups(self):
        s = strategy.parse(_doc())
        self.assertEqual((), s.topological_order())

    def test_duplicate_depends_on_collapsed(self):
        s = strategy.parse(_doc(_group('a'), _group('b', ['a', 'a'])))
        self.assertEqual(('a',), s.group('b').depends_on)

    def test_format_path(self):
        self.assertEqual('data.groups[2].critical',
                         strategy.format_path(['data', 'groups', 2,
                                               'critical']))
        self.assertEqual('(document)', strategy.format_path([]))
