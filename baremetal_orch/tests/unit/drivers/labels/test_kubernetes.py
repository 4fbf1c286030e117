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
"""Tests of the kubernetes label driver against a real HTTP server."""

import os

import fixtures

from baremetal_orch.common import exception
from baremetal_orch.deployment import labels as labels_mod
from baremetal_orch.drivers import labels as label_drivers
from baremetal_orch.drivers.labels import kubernetes as k8s_driver
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.drivers.labels import fake_kubernetes

NODE = '/api/v1/nodes/'
MERGE = 'application/merge-patch+json'
PROTECTED = {'kubernetes.io/hostname': 'n1',
             'kubernetes.io/os': 'linux',
             'node-role.kubernetes.io/worker': '',
             'topology.kubernetes.io/zone': 'z1',
             'x.k8s.io/keep': 'me'}


class KubernetesDriverTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(fake_kubernetes.FakeKubernetesAPI())
        self.tmp = self.useFixture(fixtures.TempDir()).path
        # The current context points at a closed port: the driver must use
        # [labels]context.
        self.kubeconfig = fake_kubernetes.write_kubeconfig(
            os.path.join(self.tmp, 'kubeconfig'),
            {'test': self.api.url,
             'elsewhere': fake_kubernetes.closed_port_url()},
            current_context='elsewhere', token=self.api.token)
        self.config(group='labels', driver='kubernetes',
                    kubeconfig=self.kubeconfig, context='test',
                    request_timeout=5)
        self.driver = label_drivers.get_driver()
        self.addCleanup(self.driver.close)

    def requests(self):
        return [(method, path, ctype) for method, path, ctype, _body
                in self.api.requests]

    def bodies(self):
        return [body for _m, _p, _c, body in self.api.requests]


class TestKubernetesLabelDriver(KubernetesDriverTestCase):

    def test_loaded_from_entry_point_with_options(self):
        self.assertIsInstance(self.driver, k8s_driver.KubernetesLabelDriver)
        self.assertEqual(self.kubeconfig, self.driver.kubeconfig)
        self.assertEqual('test', self.driver.context)
        self.assertEqual(5, self.driver.request_timeout)

    def test_design_case_set_then_remove(self):
        self.api.add_node('n1', dict({'a': '1', 'b': '2', 'c': '3'},
                                     **PROTECTED))
        wanted = {'a': '1', 'c': '4', 'd': '99'}

        result = self.driver.apply('n1', wanted)

        self.assertEqual(labels_mod.LabelDiff(to_set={'c': '4', 'd': '99'},
                                              to_remove=('b',)), result)
        self.assertEqual([('GET', NODE + 'n1', None),
                          ('PATCH', NODE + 'n1', MERGE),
                          ('PATCH', NODE + 'n1', MERGE)], self.requests())
        self.assertEqual([None,
                          {'metadata': {'labels': {'c': '4', 'd': '99'}}},
                          {'metadata': {'labels': {'b': None}}}],
                         self.bodies())
        self.assertEqual(dict(wanted, **PROTECTED), self.api.labels('n1'))

    def test_no_change_no_patch(self):
        self.api.add_node('n1', dict({'a': '1'}, **PROTECTED))

        result = self.driver.apply('n1', {'a': '1'})

        self.assertTrue(result.is_empty())
        self.assertEqual([('GET', NODE + 'n1', None)], self.requests())
        self.assertEqual(dict({'a': '1'}, **PROTECTED), self.api.labels('n1'))

    def test_second_apply_is_a_no_op(self):
        self.api.add_node('n1', {'old': 'x'})
        wanted = {'a': '1', 'b': ''}
        self.assertFalse(self.driver.apply('n1', wanted).is_empty())
        del self.api.requests[:]

        self.assertTrue(self.driver.apply('n1', wanted).is_empty())

        self.assertEqual([('GET', NODE + 'n1', None)], self.requests())
        self.assertEqual(wanted, self.api.labels('n1'))

    def test_only_additions(self):
        self.api.add_node('n1', dict(PROTECTED))

        self.driver.apply('n1', {'a': '1', 'b': ''})

        self.assertEqual([('GET', NODE + 'n1', None),
                          ('PATCH', NODE + 'n1', MERGE)], self.requests())
        self.assertEqual({'metadata': {'labels': {'a': '1', 'b': ''}}},
                         self.bodies()[1])
        self.assertEqual(dict({'a': '1', 'b': ''}, **PROTECTED),
                         self.api.labels('n1'))

    def test_only_removals_keep_protected_labels(self):
        self.api.add_node('n1', dict({'a': '1', 'b': '2'}, **PROTECTED))

        result = self.driver.apply('n1', {})

        self.assertEqual(('a', 'b'), result.to_remove)
        self.assertEqual([('GET', NODE + 'n1', None),
                          ('PATCH', NODE + 'n1', MERGE)], self.requests())
        self.assertEqual({'metadata': {'labels': {'a': None, 'b': None}}},
                         self.bodies()[1])
        self.assertEqual(PROTECTED, self.api.labels('n1'))

    def test_node_without_labels(self):
        self.api.add_node('n1', None)

        self.driver.apply('n1', {'a': '1'})

        self.assertEqual({'a': '1'}, self.api.labels('n1'))

    def test_generated_full_set(self):
        self.api.add_node('n1', dict({P_RACK: 'old-rack'}, **PROTECTED))
        wanted = labels_mod.full_label_set(
            {'role': 'compute'},
            labels_mod.generated_labels('rack 7', 'shard-a', ['compute']))

        self.driver.apply('n1', wanted)

        self.assertEqual(dict(wanted, **PROTECTED), self.api.labels('n1'))
        self.assertTrue(self.api.labels('n1')[P_RACK].startswith('rack-7-'))

    def test_node_not_found(self):
        exc = self.assertRaises(exception.LabelNodeNotFound,
                                self.driver.apply, 'ghost', {'a': '1'})
        self.assertIn('ghost', str(exc))
        self.assertEqual([('GET', NODE + 'ghost', None)], self.requests())

    def test_server_error_on_read(self):
        self.api.add_node('n1', {})
        self.api.fail(500)

        exc = self.assertRaises(exception.LabelUpdateFailed,
                                self.driver.apply, 'n1', {'a': '1'})

        self.assertIn('n1', str(exc))
        self.assertIn('500', str(exc))
        self.assertEqual(['GET'], [r[0] for r in self.requests()])

    def test_server_error_on_patch_stops_before_removal(self):
        self.api.add_node('n1', {'b': '2'})
        self.api.fail(503, methods=('PATCH',))

        exc = self.assertRaises(exception.LabelUpdateFailed,
                                self.driver.apply, 'n1', {'a': '1'})

        self.assertIn('503', str(exc))
        self.assertIn('patching', str(exc))
        self.assertEqual(['GET', 'PATCH'], [r[0] for r in self.requests()])
        self.assertEqual({'b': '2'}, self.api.labels('n1'))

    def test_invalid_labels_refused_before_any_request(self):
        self.api.add_node('n1', {})
        self.assertRaises(exception.InvalidLabel,
                          self.driver.apply, 'n1', {'bad key': '1'})
        self.assertEqual([], self.requests())

    def test_token_from_kubeconfig_is_sent(self):
        self.api.add_node('n1', {})
        self.api.token = 'another-token'
        exc = self.assertRaises(exception.LabelUpdateFailed,
                                self.driver.apply, 'n1', {'a': '1'})
        self.assertIn('401', str(exc))


P_RACK = labels_mod.RACK_LABEL


class TestKubernetesUnreachable(base.TestCase):

    def _driver(self, url, timeout=5):
        tmp = self.useFixture(fixtures.TempDir()).path
        kubeconfig = fake_kubernetes.write_kubeconfig(
            os.path.join(tmp, 'kubeconfig'), {'test': url},
            current_context='test', token='t')
        driver = k8s_driver.KubernetesLabelDriver(
            kubeconfig=kubeconfig, request_timeout=timeout)
        self.addCleanup(driver.close)
        return driver

    def test_connection_refused(self):
        driver = self._driver(fake_kubernetes.closed_port_url())
        exc = self.assertRaises(exception.LabelUpdateFailed,
                                driver.apply, 'n1', {'a': '1'})
        self.assertIn('unreachable', str(exc))
        self.assertIn('n1', str(exc))

    def test_server_that_never_answers_times_out(self):
        silent = self.useFixture(fake_kubernetes.SilentServer())
        driver = self._driver(silent.url, timeout=0.2)
        exc = self.assertRaises(exception.LabelUpdateFailed,
                                driver.apply, 'n1', {'a': '1'})
        self.assertIn('timeout 0.2 s', str(exc))
        self.assertIn('timed out', str(exc))

    def test_missing_kubeconfig(self):
        driver = k8s_driver.KubernetesLabelDriver(
            kubeconfig=os.path.join(
                self.useFixture(fixtures.TempDir()).path, 'missing'))
        exc = self.assertRaises(exception.LabelUpdateFailed,
                                driver.apply, 'n1', {'a': '1'})
        self.assertIn('cannot load kubeconfig', str(exc))

    def test_unknown_context(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        kubeconfig = fake_kubernetes.write_kubeconfig(
            os.path.join(tmp, 'kubeconfig'),
            {'test': fake_kubernetes.closed_port_url()},
            current_context='test', token='t')
        driver = k8s_driver.KubernetesLabelDriver(kubeconfig=kubeconfig,
                                                  context='nope')
        exc = self.assertRaises(exception.LabelUpdateFailed,
                                driver.apply, 'n1', {'a': '1'})
        self.assertIn('nope', str(exc))

    def test_no_node_name(self):
        driver = k8s_driver.KubernetesLabelDriver(kubeconfig='/nonexistent')
        self.assertRaises(exception.LabelUpdateFailed,
                          driver.apply, '', {'a': '1'})
        self.assertRaises(exception.LabelUpdateFailed,
                          driver.apply, None, {'a': '1'})
