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
"""The pure node label rules (the node labels specification;
doc/source/admin/labels.rst)."""

import hypothesis
from hypothesis import strategies as st
import testscenarios

from baremetal_orch.common import exception
from baremetal_orch.deployment import labels
from baremetal_orch.tests import base

P = labels.PREFIX
load_tests = testscenarios.load_tests_apply_scenarios


class TestDiff(base.TestCase):

    scenarios = [
        ('design_table', dict(
            existing={'a': '1', 'b': '2', 'c': '3'},
            wanted={'a': '1', 'c': '4', 'd': '99'},
            to_set={'c': '4', 'd': '99'}, to_remove=('b',))),
        ('no_change', dict(
            existing={'a': '1', 'kubernetes.io/os': 'linux'},
            wanted={'a': '1'},
            to_set={}, to_remove=())),
        ('both_empty', dict(
            existing={}, wanted={}, to_set={}, to_remove=())),
        ('only_additions', dict(
            existing={'a': '1'}, wanted={'a': '1', 'b': '2', 'c': ''},
            to_set={'b': '2', 'c': ''}, to_remove=())),
        ('only_removals', dict(
            existing={'a': '1', 'z': '9', 'b': '2'}, wanted={'a': '1'},
            to_set={}, to_remove=('b', 'z'))),
        ('value_changed_to_empty_string', dict(
            existing={'a': '1'}, wanted={'a': ''},
            to_set={'a': ''}, to_remove=())),
        ('value_changed_from_empty_string', dict(
            existing={'a': ''}, wanted={'a': 'x'},
            to_set={'a': 'x'}, to_remove=())),
        ('everything_removed', dict(
            existing={'a': '1', 'b': '2'}, wanted={},
            to_set={}, to_remove=('a', 'b'))),
        ('protected_labels_never_removed', dict(
            existing={'kubernetes.io/hostname': 'n1',
                      'kubernetes.io/arch': 'amd64',
                      'node-role.kubernetes.io/worker': '',
                      'node.kubernetes.io/exclude-from-lb': 'true',
                      'topology.kubernetes.io/zone': 'z1',
                      'beta.kubernetes.io/os': 'linux',
                      'k8s.io/x': 'y',
                      'feature.node.kubernetes.io/cpu-cpuid.AVX': 'true',
                      'old': '1'},
            wanted={},
            to_set={}, to_remove=('old',))),
        ('protected_label_set_when_wanted', dict(
            existing={'node-role.kubernetes.io/worker': 'a'},
            wanted={'node-role.kubernetes.io/worker': '',
                    'node-role.kubernetes.io/storage': ''},
            to_set={'node-role.kubernetes.io/worker': '',
                    'node-role.kubernetes.io/storage': ''},
            to_remove=())),
        ('lookalike_domains_are_removed', dict(
            existing={'mykubernetes.io/a': '1',
                      'kubernetes.io.example.com/b': '1',
                      'example.com/kubernetes.io': '1',
                      'kubernetes.io': '1',
                      'notk8s.io/c': '1',
                      'cluster.x-k8s.io/cluster-name': 'c1'},
            wanted={},
            to_set={},
            to_remove=('cluster.x-k8s.io/cluster-name',
                       'example.com/kubernetes.io', 'kubernetes.io',
                       'kubernetes.io.example.com/b', 'mykubernetes.io/a',
                       'notk8s.io/c'))),
        ('stale_generated_label_removed', dict(
            existing={P + 'group.old': 'true', P + 'rack': 'r1'},
            wanted={P + 'group.new': 'true', P + 'rack': 'r1'},
            to_set={P + 'group.new': 'true'},
            to_remove=(P + 'group.old',))),
    ]

    def test_diff(self):
        result = labels.diff(self.existing, self.wanted)
        self.assertEqual(self.to_set, result.to_set)
        self.assertEqual(self.to_remove, result.to_remove)
        self.assertEqual(not self.to_set and not self.to_remove,
                         result.is_empty())

    def test_merge_patches(self):
        patches = labels.merge_patches(labels.diff(self.existing,
                                                   self.wanted))
        expected = []
        if self.to_set:
            expected.append({'metadata': {'labels': self.to_set}})
        if self.to_remove:
            expected.append({'metadata': {'labels': dict.fromkeys(
                self.to_remove)}})
        self.assertEqual(expected, patches)

    def test_applying_the_diff_reaches_the_wanted_set(self):
        result = labels.diff(self.existing, self.wanted)
        after = labels.apply_diff(self.existing, result)
        protected = {k: v for k, v in self.existing.items()
                     if labels.is_protected(k) and k not in self.wanted}
        self.assertEqual(dict(self.wanted, **protected), after)
        self.assertTrue(labels.diff(after, self.wanted).is_empty())


class TestLabelDiff(base.TestCase):

    def test_design_case_to_dict_and_patch_order(self):
        result = labels.diff({'a': '1', 'b': '2', 'c': '3'},
                             {'a': '1', 'c': '4', 'd': '99'})
        self.assertEqual({'to_set': {'c': '4', 'd': '99'},
                          'to_remove': ['b']}, result.to_dict())
        self.assertEqual(
            [{'metadata': {'labels': {'c': '4', 'd': '99'}}},
             {'metadata': {'labels': {'b': None}}}],
            labels.merge_patches(result))

    def test_empty_diff_gives_no_patch(self):
        result = labels.LabelDiff()
        self.assertTrue(result.is_empty())
        self.assertEqual([], labels.merge_patches(result))
        self.assertEqual({'to_set': {}, 'to_remove': []}, result.to_dict())

    def test_frozen(self):
        result = labels.LabelDiff(to_set={'a': '1'})
        self.assertRaises(AttributeError, setattr, result, 'to_set', {})

    def test_diff_does_not_alias_inputs(self):
        wanted = {'a': '1'}
        result = labels.diff({}, wanted)
        wanted['a'] = '2'
        self.assertEqual({'a': '1'}, result.to_set)
        self.assertEqual({'a': '1'},
                         labels.merge_patches(result)[0]['metadata']['labels'])


_keys = st.sampled_from(['a', 'b', 'c', 'example.com/d',
                         'kubernetes.io/hostname',
                         'node-role.kubernetes.io/worker', 'x.k8s.io/e'])
_values = st.sampled_from(['', '1', '2'])
_label_sets = st.dictionaries(_keys, _values, max_size=7)


class TestDiffProperties(base.TestCase):

    @hypothesis.settings(max_examples=200, deadline=None)
    @hypothesis.given(existing=_label_sets, wanted=_label_sets)
    def test_set_then_remove_reaches_wanted_plus_protected(
            self, existing, wanted):
        result = labels.diff(existing, wanted)
        after = labels.apply_diff(existing, result)
        for key, value in wanted.items():
            self.assertEqual(value, after[key])
        for key in set(after) - set(wanted):
            self.assertTrue(labels.is_protected(key))
            self.assertEqual(existing[key], after[key])
        for key in existing:
            if labels.is_protected(key):
                self.assertIn(key, after)
        self.assertTrue(labels.diff(after, wanted).is_empty())
        self.assertEqual(result.is_empty(),
                         labels.merge_patches(result) == [])


class TestIsProtected(base.TestCase):

    scenarios = [(key, dict(key=key, protected=protected)) for key, protected
                 in [('kubernetes.io/hostname', True),
                     ('KUBERNETES.IO/hostname', True),
                     ('k8s.io/a', True),
                     ('node-role.kubernetes.io/worker', True),
                     ('node-role.kubernetes.io/', True),
                     ('node.kubernetes.io/instance-type', True),
                     ('topology.kubernetes.io/region', True),
                     ('beta.kubernetes.io/arch', True),
                     ('x.k8s.io/a', True),
                     ('a.b.k8s.io/a', True),
                     ('mykubernetes.io/a', False),
                     ('kubernetes.io.evil.com/a', False),
                     ('example.com/kubernetes.io', False),
                     ('kubernetes.io', False),
                     ('k8s.io', False),
                     ('plain', False),
                     (P + 'rack', False),
                     ('xk8s.io/a', False),
                     ('cluster.x-k8s.io/a', False)]]

    def test_is_protected(self):
        self.assertEqual(self.protected, labels.is_protected(self.key))


class TestValidateLabels(base.TestCase):

    long_prefix = '.'.join(['a' * 63] * 4)  # 255 characters
    scenarios = [
        ('plain', dict(labels={'a': 'b'}, error=None)),
        ('empty_value', dict(labels={'a': ''}, error=None)),
        ('prefixed', dict(labels={'example.com/a-b_c.d': 'V-1_2.3'},
                          error=None)),
        ('protected_domain', dict(
            labels={'node-role.kubernetes.io/worker': ''}, error=None)),
        ('name_63', dict(labels={'a' * 63: 'b' * 63}, error=None)),
        ('prefix_253', dict(labels={long_prefix[:253] + '/a': ''},
                            error=None)),
        ('empty_mapping', dict(labels={}, error=None)),
        ('name_64', dict(labels={'a' * 64: 'b'}, error='a' * 64)),
        ('value_64', dict(labels={'k': 'b' * 64}, error='k')),
        ('empty_key', dict(labels={'': 'b'}, error='')),
        ('empty_name', dict(labels={'example.com/': 'b'},
                            error='example.com/')),
        ('empty_prefix', dict(labels={'/a': 'b'}, error='/a')),
        ('two_slashes', dict(labels={'a/b/c': 'b'}, error='a/b/c')),
        ('uppercase_prefix', dict(labels={'Example.com/a': 'b'},
                                  error='Example.com/a')),
        ('prefix_254', dict(labels={long_prefix[:251] + '.ab/a': ''},
                            error=long_prefix[:251] + '.ab/a')),
        ('prefix_bad_char', dict(labels={'exa_mple.com/a': 'b'},
                                 error='exa_mple.com/a')),
        ('name_starts_with_dash', dict(labels={'-a': 'b'}, error='-a')),
        ('name_ends_with_dot', dict(labels={'a.': 'b'}, error='a.')),
        ('name_with_space', dict(labels={'a b': 'c'}, error='a b')),
        ('value_with_space', dict(labels={'k1': 'a b'}, error='k1')),
        ('value_ends_with_underscore', dict(labels={'k2': 'a_'},
                                            error='k2')),
        ('value_with_slash', dict(labels={'k3': 'a/b'}, error='k3')),
        ('value_not_a_string', dict(labels={'k4': 1}, error='k4')),
        ('value_none', dict(labels={'k5': None}, error='k5')),
        ('key_not_a_string', dict(labels={7: 'a'}, error='7')),
        ('not_a_mapping', dict(labels=['a'], error="['a']")),
        ('reserved_prefix', dict(labels={P + 'rack': 'r1'},
                                 error=P + 'rack')),
    ]

    def test_validate(self):
        if self.error is None:
            self.assertIsNone(labels.validate_labels(self.labels))
            return
        exc = self.assertRaises(exception.InvalidLabel,
                                labels.validate_labels, self.labels)
        self.assertIn('Invalid label %s' % self.error, str(exc))
        self.assertEqual('baremetal_orch.invalid_label', exc.code)
        self.assertEqual(400, exc.status)


class TestValidateReserved(base.TestCase):

    def test_reserved_allowed_for_full_sets(self):
        self.assertIsNone(labels.validate_labels({P + 'rack': 'r1'},
                                                 allow_reserved=True))

    def test_reserved_message_names_the_prefix(self):
        exc = self.assertRaises(exception.InvalidLabel,
                                labels.validate_labels, {P + 'x': ''})
        self.assertIn('reserved', str(exc))
        self.assertIn('baremetal-orch.openstack.org', str(exc))


class TestGeneratedLabels(base.TestCase):

    scenarios = [
        ('all', dict(
            args=('rack-1', 'shard-a', ['control-nodes', 'ntp-node']),
            expected={P + 'rack': 'rack-1', P + 'shard': 'shard-a',
                      P + 'group.control-nodes': 'true',
                      P + 'group.ntp-node': 'true'})),
        ('none_skipped', dict(args=(None, None, None), expected={})),
        ('empty_skipped', dict(args=('', '', ['', None]), expected={})),
        ('rack_only', dict(args=('r1', None, ()),
                           expected={P + 'rack': 'r1'})),
        ('shard_only', dict(args=(None, 's1', []),
                            expected={P + 'shard': 's1'})),
        ('duplicate_groups', dict(
            args=(None, None, ('g', 'g')),
            expected={P + 'group.g': 'true'})),
        ('group_name_57', dict(
            args=(None, None, ['g' * 57]),
            expected={P + 'group.' + 'g' * 57: 'true'})),
    ]

    def test_generated(self):
        result = labels.generated_labels(*self.args)
        self.assertEqual(self.expected, result)
        labels.validate_labels(result, allow_reserved=True)


class TestGeneratedLabelsSanitized(base.TestCase):

    scenarios = [
        ('space', dict(text='rack 1', prefix='rack-1-')),
        ('slash', dict(text='rack/1', prefix='rack-1-')),
        ('leading_and_trailing', dict(text='-rack 1.', prefix='rack-1-')),
        ('unicode_only', dict(text='\u673a\u67b6', prefix='')),
        ('too_long', dict(text='r' * 80, prefix='r' * 48)),
        ('colon', dict(text='row:3', prefix='row-3-')),
    ]

    def test_rack_and_shard_values(self):
        result = labels.generated_labels(self.text, self.text, ())
        for key in (labels.RACK_LABEL, labels.SHARD_LABEL):
            value = result[key]
            self.assertTrue(value.startswith(self.prefix), value)
            self.assertLessEqual(len(value), 63)
            self.assertEqual(value, labels.label_name(self.text))
        labels.validate_labels(result, allow_reserved=True)

    def test_group_key(self):
        result = labels.generated_labels(None, None, [self.text])
        (key, value), = result.items()
        self.assertEqual('true', value)
        self.assertEqual(labels.group_label_key(self.text), key)
        self.assertTrue(
            key.startswith(labels.GROUP_LABEL_PREFIX + self.prefix), key)
        self.assertLessEqual(len(key) - len(P), 63)
        labels.validate_labels(result, allow_reserved=True)

    def test_distinct_texts_do_not_collide(self):
        other = self.text + '!'
        self.assertNotEqual(labels.label_name(self.text),
                            labels.label_name(other))
        self.assertNotEqual(labels.group_label_key(self.text),
                            labels.group_label_key(other))

    def test_too_long_names_are_cut_to_fit(self):
        value = labels.label_name('r' * 80)
        self.assertEqual(63, len(value))
        self.assertRegex(value, '^r{54}-[0-9a-f]{8}$')
        key = labels.group_label_key('g' * 80)
        self.assertEqual(63, len(key) - len(P))
        self.assertRegex(key, '^%sgroup[.]g{48}-[0-9a-f]{8}$' % P)

    def test_deterministic(self):
        self.assertEqual(labels.label_name(self.text),
                         labels.label_name(str(self.text)))


class TestFullLabelSet(base.TestCase):

    def test_node_labels_plus_generated(self):
        generated = labels.generated_labels('r1', 's1', ['g1'])
        result = labels.full_label_set(
            {'a': '1', 'node-role.kubernetes.io/worker': ''}, generated)
        self.assertEqual({'a': '1', 'node-role.kubernetes.io/worker': '',
                          P + 'rack': 'r1', P + 'shard': 's1',
                          P + 'group.g1': 'true'}, result)

    def test_generated_wins_on_its_prefix(self):
        result = labels.full_label_set(
            {P + 'rack': 'user-value', P + 'group.fake': 'true', 'a': '1'},
            {P + 'rack': 'r1'})
        self.assertEqual({'a': '1', P + 'rack': 'r1'}, result)

    def test_empty_inputs(self):
        self.assertEqual({}, labels.full_label_set(None, None))
        self.assertEqual({}, labels.full_label_set({}, {}))

    def test_inputs_not_modified(self):
        node_labels = {'a': '1'}
        generated = {P + 'rack': 'r1'}
        labels.full_label_set(node_labels, generated)
        self.assertEqual({'a': '1'}, node_labels)
        self.assertEqual({P + 'rack': 'r1'}, generated)

    def test_invalid_node_label_refused(self):
        exc = self.assertRaises(exception.InvalidLabel,
                                labels.full_label_set,
                                {'bad key': '1'}, {})
        self.assertIn('bad key', str(exc))


class TestPurity(base.TestCase):

    def test_no_io_layers_imported(self):
        import ast
        import inspect
        tree = ast.parse(inspect.getsource(labels))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                imported.add('%s.%s' % (node.module, node.names[0].name))
        forbidden = ('db', 'drivers', 'api', 'conductor', 'objects', 'flows')
        for name in imported:
            for layer in forbidden:
                self.assertFalse(
                    name.startswith('baremetal_orch.%s' % layer), name)
