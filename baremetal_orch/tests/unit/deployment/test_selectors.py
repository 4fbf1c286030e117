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

"""Selector semantics (the deployment grouping specification;
doc/source/admin/strategies.rst)."""

import types

import testscenarios

from baremetal_orch.common import exception
from baremetal_orch.deployment import selectors
from baremetal_orch.tests import base

NODES = [
    {'name': 'n1', 'rack_name': 'rack01', 'tags': ['control'],
     'labels': {'role': 'ctl'}},
    {'name': 'n2', 'rack_name': 'rack01', 'tags': ['compute'],
     'labels': {'role': 'cmp', 'zone': 'a'}},
    {'name': 'n3', 'rack_name': 'rack02', 'tags': ['compute', 'gpu'],
     'labels': {'zone': 'b', 'empty': ''}},
    {'name': 'n4', 'rack_name': 'rack03', 'tags': [], 'labels': {}},
]
ALL = ['n1', 'n2', 'n3', 'n4']


class TestMatches(testscenarios.WithScenarios, base.TestCase):
    """One row: a selector list and the nodes it must select."""

    scenarios = [
        ('empty_list', dict(sels=[], expected=ALL)),
        ('none', dict(sels=None, expected=ALL)),
        ('empty_selector', dict(sels=[{}], expected=ALL)),
        ('selector_of_empty_criteria', dict(
            sels=[{'node_names': [], 'node_tags': [], 'node_labels': [],
                   'rack_names': []}], expected=ALL)),
        ('empty_selector_beside_others', dict(
            sels=[{'node_names': ['n1']}, {}], expected=ALL)),
        ('one_name', dict(sels=[{'node_names': ['n2']}], expected=['n2'])),
        ('tags_or', dict(sels=[{'node_tags': ['control', 'gpu']}],
                         expected=['n1', 'n3'])),
        ('racks_or', dict(sels=[{'rack_names': ['rack02', 'rack03']}],
                          expected=['n3', 'n4'])),
        ('names_or', dict(sels=[{'node_names': ['n1', 'n4', 'nX']}],
                          expected=['n1', 'n4'])),
        ('and_across_criteria', dict(
            sels=[{'node_tags': ['compute'], 'rack_names': ['rack01']}],
            expected=['n2'])),
        ('and_empty_result', dict(
            sels=[{'node_tags': ['control'], 'rack_names': ['rack02']}],
            expected=[])),
        ('omitted_and_empty_criteria_ignored', dict(
            sels=[{'node_names': [], 'node_tags': ['compute']}],
            expected=['n2', 'n3'])),
        ('union', dict(sels=[{'node_names': ['n1']},
                             {'rack_names': ['rack02']}],
                       expected=['n1', 'n3'])),
        ('union_overlapping', dict(sels=[{'node_tags': ['compute']},
                                         {'rack_names': ['rack02']}],
                                   expected=['n2', 'n3'])),
        ('label_map', dict(sels=[{'node_labels': [{'role': 'ctl'}]}],
                           expected=['n1'])),
        ('label_string', dict(sels=[{'node_labels': ['zone:b']}],
                              expected=['n3'])),
        ('label_string_spaces', dict(sels=[{'node_labels': ['zone: a']}],
                                     expected=['n2'])),
        ('labels_or', dict(sels=[{'node_labels': ['zone:b',
                                                  {'role': 'ctl'}]}],
                           expected=['n1', 'n3'])),
        ('label_multi_key_map_is_or', dict(
            sels=[{'node_labels': [{'role': 'ctl', 'zone': 'b'}]}],
            expected=['n1', 'n3'])),
        ('label_wrong_value', dict(sels=[{'node_labels': ['role:db']}],
                                   expected=[])),
        ('label_empty_value_map', dict(sels=[{'node_labels': [{'empty': ''}]}],
                                       expected=['n3'])),
        ('label_and_tag', dict(sels=[{'node_labels': ['zone:a', 'zone:b'],
                                      'node_tags': ['gpu']}],
                               expected=['n3'])),
        ('seed_example', dict(
            sels=[{'node_names': ['n1', 'n2'], 'rack_names': ['rack01'],
                   'node_tags': ['control']},
                  {'node_names': ['n4'], 'node_labels': [{'role': 'ctl'}]}],
            expected=['n1'])),
        ('unknown_everything', dict(
            sels=[{'node_names': ['zz']}, {'node_tags': ['zz']}],
            expected=[])),
    ]

    def test_select(self):
        self.assertEqual(self.expected, selectors.select(self.sels, NODES))

    def test_matches_objects(self):
        # Node objects with attributes and Selector objects behave like
        # dicts.
        objs = [types.SimpleNamespace(**n) for n in NODES]
        sels = selectors.coerce(self.sels)
        got = [o.name for o in objs if selectors.matches(sels, o)]
        self.assertEqual(self.expected, got)

    def test_round_trip(self):
        sels = selectors.coerce(self.sels)
        again = selectors.coerce([s.to_dict() for s in sels])
        self.assertEqual(sels, again)
        self.assertEqual(self.expected, selectors.select(again, NODES))


class TestSelectsAll(testscenarios.WithScenarios, base.TestCase):

    scenarios = [
        ('empty_list', dict(sels=[], expected=True)),
        ('empty_selector', dict(sels=[{}], expected=True)),
        ('empty_beside_others', dict(sels=[{'node_tags': ['a']}, {}],
                                     expected=True)),
        ('only_empty_lists', dict(sels=[{'node_labels': []}],
                                  expected=True)),
        ('one_criterion', dict(sels=[{'node_tags': ['a']}], expected=False)),
        ('two_selectors', dict(sels=[{'node_tags': ['a']},
                                     {'rack_names': ['r']}],
                               expected=False)),
    ]

    def test_selects_all(self):
        self.assertEqual(self.expected, selectors.selects_all(self.sels))
        # A node that no criterion names is selected only when the list
        # selects all nodes.
        stranger = {'name': 'zz', 'rack_name': 'zz', 'tags': ['zz'],
                    'labels': {'zz': 'zz'}}
        self.assertEqual(self.expected,
                         selectors.matches(self.sels, stranger))


class TestParseLabel(testscenarios.WithScenarios, base.TestCase):
    """Valid label items and what they parse to."""

    scenarios = [
        ('string', dict(item='k:v', expected=(('k', 'v'),))),
        ('string_spaces', dict(item=' k : v ', expected=(('k', 'v'),))),
        ('prefixed_key', dict(item='example.com/role:ctl',
                              expected=(('example.com/role', 'ctl'),))),
        ('map', dict(item={'k': 'v'}, expected=(('k', 'v'),))),
        ('map_several_keys', dict(item={'a': '1', 'b': '2'},
                                  expected=(('a', '1'), ('b', '2')))),
        ('map_empty_value', dict(item={'k': ''}, expected=(('k', ''),))),
        ('dots_dashes', dict(item='a.b-c_d:X-1.2_3',
                             expected=(('a.b-c_d', 'X-1.2_3'),))),
    ]

    def test_parse(self):
        self.assertEqual(self.expected, selectors.parse_label(self.item))


class TestMalformedLabel(testscenarios.WithScenarios, base.TestCase):
    """Malformed label items raise InvalidSelector naming the item."""

    scenarios = [
        ('no_value', dict(item='novalue')),
        ('empty_key', dict(item=':x')),
        ('empty_value_string', dict(item='k:')),
        ('empty_string', dict(item='')),
        ('integer', dict(item=5)),
        ('none', dict(item=None)),
        ('list', dict(item=['k:v'])),
        ('empty_map', dict(item={})),
        ('non_string_value', dict(item={'k': 1})),
        ('bool_value', dict(item={'k': True})),
        ('non_string_key', dict(item={1: 'v'})),
        ('space_in_key', dict(item='bad key:v')),
        ('space_in_value', dict(item='k:bad value')),
        ('colon_in_value', dict(item='a:b:c')),
        ('leading_dash', dict(item='-k:v')),
        ('uppercase_prefix', dict(item='Example.COM/k:v')),
        ('empty_prefix', dict(item='/k:v')),
        ('long_name', dict(item='k:' + 'v' * 64)),
    ]

    def test_invalid(self):
        exc = self.assertRaises(exception.InvalidSelector,
                                selectors.parse_label, self.item,
                                where='sel.node_labels[0]')
        self.assertIn(repr(self.item), str(exc))
        self.assertIn('sel.node_labels[0]', str(exc))
        self.assertEqual(400, exc.status)

    def test_invalid_in_selector(self):
        self.assertRaises(exception.InvalidSelector,
                          selectors.Selector.from_dict,
                          {'node_labels': [self.item]})


class TestSelector(base.TestCase):

    def test_from_dict(self):
        sel = selectors.Selector.from_dict(
            {'node_names': ['a', 'b', 'a'], 'node_tags': None,
             'node_labels': ['k:v', {'k': 'v', 'x': 'y'}],
             'rack_names': ['r1']})
        self.assertEqual(('a', 'b'), sel.node_names)
        self.assertEqual((), sel.node_tags)
        self.assertEqual((('k', 'v'), ('x', 'y')), sel.node_labels)
        self.assertEqual(('r1',), sel.rack_names)
        self.assertFalse(sel.is_empty())
        self.assertEqual({'node_names': ['a', 'b'], 'node_tags': [],
                          'node_labels': [{'k': 'v'}, {'x': 'y'}],
                          'rack_names': ['r1']}, sel.to_dict())

    def test_empty(self):
        self.assertTrue(selectors.Selector.from_dict({}).is_empty())
        self.assertTrue(selectors.Selector().is_empty())

    def test_unknown_key(self):
        exc = self.assertRaises(exception.InvalidSelector,
                                selectors.Selector.from_dict,
                                {'node_tag': ['a']})
        self.assertIn('node_tag', str(exc))

    def test_bad_values(self):
        for d in ({'node_names': 'n1'}, {'node_tags': [1]},
                  {'rack_names': ['']}, {'node_labels': 'k:v'}):
            self.assertRaises(exception.InvalidSelector,
                              selectors.Selector.from_dict, d)
        self.assertRaises(exception.InvalidSelector,
                          selectors.Selector.from_dict, ['node_names'])

    def test_node_without_tags_or_labels(self):
        node = {'name': 'n', 'rack_name': None, 'tags': None,
                'labels': None}
        self.assertFalse(selectors.matches([{'node_tags': ['a']}], node))
        self.assertFalse(selectors.matches([{'node_labels': ['a:b']}], node))
        self.assertFalse(selectors.matches([{'rack_names': ['r']}], node))
        self.assertTrue(selectors.matches([{'node_names': ['n']}], node))

    def test_label_key_and_value_validators(self):
        self.assertTrue(selectors.is_valid_label_key('a.b/c'))
        self.assertFalse(selectors.is_valid_label_key('a/b/c'))
        self.assertFalse(selectors.is_valid_label_key(''))
        self.assertTrue(selectors.is_valid_label_value(''))
        self.assertFalse(selectors.is_valid_label_value('',
                                                        allow_empty=False))
        self.assertFalse(selectors.is_valid_label_value(None))
