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
"""Tests of the noop label driver and of driver loading."""

import threading

from baremetal_orch.common import exception
from baremetal_orch.deployment import labels as labels_mod
from baremetal_orch.drivers import labels as label_drivers
from baremetal_orch.drivers.labels import base as label_base
from baremetal_orch.drivers.labels import noop
from baremetal_orch.tests import base


class TestNoopLabelDriver(base.TestCase):

    def setUp(self):
        super().setUp()
        noop.NoopLabelDriver.reset()
        self.addCleanup(noop.NoopLabelDriver.reset)
        self.driver = noop.NoopLabelDriver()

    def test_first_apply_sets_everything(self):
        result = self.driver.apply('n1', {'a': '1', 'b': ''})
        self.assertEqual(labels_mod.LabelDiff(to_set={'a': '1', 'b': ''}),
                         result)
        self.assertEqual({'a': '1', 'b': ''}, self.driver.applied('n1'))

    def test_design_case(self):
        self.driver.apply('n1', {'a': '1', 'b': '2', 'c': '3'})
        result = self.driver.apply('n1', {'a': '1', 'c': '4', 'd': '99'})
        self.assertEqual({'to_set': {'c': '4', 'd': '99'},
                          'to_remove': ['b']}, result.to_dict())
        self.assertEqual({'a': '1', 'c': '4', 'd': '99'},
                         self.driver.applied('n1'))

    def test_no_change(self):
        self.driver.apply('n1', {'a': '1'})
        self.assertTrue(self.driver.apply('n1', {'a': '1'}).is_empty())
        self.assertEqual({'a': '1'}, self.driver.applied('n1'))

    def test_unknown_node_has_no_record(self):
        self.assertIsNone(self.driver.applied('never'))

    def test_applied_returns_a_copy(self):
        self.driver.apply('n1', {'a': '1'})
        self.driver.applied('n1')['a'] = 'changed'
        self.assertEqual({'a': '1'}, self.driver.applied('n1'))

    def test_record_shared_between_instances(self):
        self.driver.apply('n1', {'a': '1'})
        other = noop.NoopLabelDriver()
        self.assertEqual({'a': '1'}, other.applied('n1'))
        self.assertTrue(other.apply('n1', {'a': '1'}).is_empty())

    def test_reset(self):
        self.driver.apply('n1', {'a': '1'})
        noop.NoopLabelDriver.reset()
        self.assertIsNone(self.driver.applied('n1'))

    def test_fail_nodes_argument(self):
        driver = noop.NoopLabelDriver(fail_nodes=['bad'])
        self.driver.apply('bad', {'a': '1'})
        exc = self.assertRaises(exception.LabelUpdateFailed,
                                driver.apply, 'bad', {'b': '2'})
        self.assertIn('bad', str(exc))
        self.assertEqual({'a': '1'}, self.driver.applied('bad'))
        self.assertFalse(driver.apply('good', {'a': '1'}).is_empty())

    def test_fail_nodes_option(self):
        self.config(group='labels', noop_fail_nodes=['n2', 'n3'])
        driver = label_drivers.get_driver('noop')
        self.assertRaises(exception.LabelUpdateFailed,
                          driver.apply, 'n3', {'a': '1'})
        self.assertIsNone(driver.applied('n3'))
        self.assertEqual({'a': '1'}, driver.apply('n1', {'a': '1'}).to_set)

    def test_explicit_fail_nodes_override_the_option(self):
        self.config(group='labels', noop_fail_nodes=['n1'])
        driver = noop.NoopLabelDriver(fail_nodes=())
        self.assertFalse(driver.apply('n1', {'a': '1'}).is_empty())

    def test_invalid_labels(self):
        exc = self.assertRaises(exception.InvalidLabel,
                                self.driver.apply, 'n1', {'a': 'x y'})
        self.assertIn('Invalid label a', str(exc))
        self.assertIsNone(self.driver.applied('n1'))

    def test_generated_labels_accepted(self):
        wanted = labels_mod.full_label_set(
            {'a': '1'}, labels_mod.generated_labels('r1', 's1', ['g']))
        self.driver.apply('n1', wanted)
        self.assertEqual(wanted, self.driver.applied('n1'))

    def test_protected_labels_kept_once_set(self):
        self.driver.apply('n1', {'node-role.kubernetes.io/worker': '',
                                 'a': '1'})
        result = self.driver.apply('n1', {})
        self.assertEqual(('a',), result.to_remove)
        self.assertEqual({'node-role.kubernetes.io/worker': ''},
                         self.driver.applied('n1'))

    def test_concurrent_applies(self):
        def work(start):
            driver = noop.NoopLabelDriver()
            for i in range(start, start + 50):
                driver.apply('node-%d' % i, {'n': str(i)})

        threads = [threading.Thread(target=work, args=(i * 50,))
                   for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for i in range(200):
            self.assertEqual({'n': str(i)},
                             self.driver.applied('node-%d' % i))


class TestGetDriver(base.TestCase):

    def test_default_is_noop(self):
        driver = label_drivers.get_driver()
        self.assertIsInstance(driver, noop.NoopLabelDriver)
        self.assertIsInstance(driver, label_base.LabelDriver)

    def test_configured_driver(self):
        self.config(group='labels', driver='kubernetes')
        driver = label_drivers.get_driver()
        self.assertEqual('kubernetes', driver.name)

    def test_unknown_driver(self):
        exc = self.assertRaises(exception.InvalidParameterValue,
                                label_drivers.get_driver, 'nope')
        self.assertIn('nope', str(exc))
