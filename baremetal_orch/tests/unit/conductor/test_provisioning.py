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
"""Driving nodes through the FSM with the fake driver (synchronously)."""

import json
import os
from unittest import mock

import fixtures

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.conductor import provisioning
from baremetal_orch.conductor import taskmanager
from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base


class ProvisioningTestCase(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = orch_context.get_admin_context()
        self.notes = []
        self.useFixture(fixtures.MockPatchObject(
            provisioning.notify, 'provision',
            side_effect=lambda ctx, node, status, prev, prev_target, ev:
            self.notes.append((status, prev, node.provision_state, ev))))

    def run_with_task(self, name, func, *args):
        with taskmanager.acquire(self.ctx, name, 'h1') as task:
            return func(self.ctx, task, *args)

    def state(self, name):
        node = dbapi.get_node(name)
        return node.provision_state, node.target_provision_state


class TestDo(ProvisioningTestCase):

    def test_check_transition(self):
        node = self.create_node(name='n1')
        with taskmanager.acquire(self.ctx, 'n1', 'h1') as task:
            self.assertEqual('verifying', provisioning.check_transition(
                task.node, 'manage'))
            e = self.assertRaises(exception.InvalidStateRequested,
                                  provisioning.check_transition, task.node,
                                  'deploy')
        self.assertEqual(409, e.status)
        self.assertIn('"enroll"', str(e))
        self.assertIn('n1', str(e))
        self.assertEqual('enroll', dbapi.get_node(node.uuid).provision_state)

    def test_manage_notifies_start_then_end(self):
        self.create_node(name='n1')
        self.run_with_task('n1', provisioning.do, 'manage', 10)
        self.assertEqual(('manageable', None), self.state('n1'))
        self.assertEqual([('start', 'enroll', 'verifying', 'manage'),
                          ('end', 'verifying', 'manageable', 'done')],
                         self.notes)

    def test_delete_goes_through_cleaning(self):
        self.create_node(name='n1', provision_state='active')
        self.run_with_task('n1', provisioning.do, 'delete', 10)
        self.assertEqual(('available', None), self.state('n1'))
        self.assertEqual(['deleting', 'cleaning', 'available'],
                         [n[2] for n in self.notes])

    def test_failure_records_last_error_and_reraises(self):
        self.create_node(name='n1', provision_state='available',
                         driver_info={'fake_fail_phase': 'deploy'})
        e = self.assertRaises(exception.ProvisioningFailed,
                              self.run_with_task, 'n1', provisioning.do,
                              'deploy', 10, {})
        node = dbapi.get_node('n1')
        self.assertEqual(('deploy failed', None, str(e)),
                         (node.provision_state, node.target_provision_state,
                          node.last_error))
        self.assertEqual(('error', 'deploying', 'deploy failed', 'fail'),
                         self.notes[-1])
        self.assertIsNone(node.reservation)

    def test_deploy_hands_instance_info_to_the_driver(self):
        configdrive = self.useFixture(fixtures.TempDir()).path
        self.config(group='fake_driver', configdrive_dir=configdrive)
        node = self.create_node(name='n1', provision_state='available')
        self.run_with_task('n1', provisioning.deploy, 10,
                           {'deploy_signal_url': 'http://x/y'})
        with open(os.path.join(configdrive, '%s.json' % node.uuid)) as f:
            written = json.load(f)
        self.assertEqual({'deploy_signal_url': 'http://x/y'},
                         written['instance_info'])
        self.assertEqual(('active', None), self.state('n1'))


class TestPhases(ProvisioningTestCase):

    def test_prepare_from_enroll(self):
        self.create_node(name='n1')
        self.assertTrue(self.run_with_task('n1', provisioning.prepare, 10))
        self.assertEqual(('available', None), self.state('n1'))
        self.assertEqual(['verifying', 'manageable', 'cleaning',
                          'available'], [n[2] for n in self.notes])

    def test_prepare_from_clean_failed(self):
        self.create_node(name='n1', provision_state='clean failed')
        self.assertTrue(self.run_with_task('n1', provisioning.prepare, 10))
        self.assertEqual(('available', None), self.state('n1'))

    def test_prepare_skips_prepared_nodes(self):
        for state in ('available', 'active', 'deploy failed'):
            self.create_node(name='n-' + state.replace(' ', '-'),
                             provision_state=state)
            self.assertFalse(self.run_with_task(
                'n-' + state.replace(' ', '-'), provisioning.prepare, 10))
        self.assertEqual([], self.notes)

    def test_prepare_failure(self):
        self.create_node(name='n1',
                         driver_info={'fake_fail_phase': 'prepare'})
        self.assertRaises(exception.ProvisioningFailed, self.run_with_task,
                          'n1', provisioning.prepare, 10)
        node = dbapi.get_node('n1')
        self.assertEqual('clean failed', node.provision_state)
        self.assertIn('prepare phase', node.last_error)

    def test_prepare_refuses_an_unpreparable_node(self):
        self.create_node(name='n1', provision_state='error')
        e = self.assertRaises(exception.ProvisioningFailed,
                              self.run_with_task, 'n1',
                              provisioning.prepare, 10)
        self.assertIn('error', str(e))

    def test_deploy_skips_active_nodes(self):
        self.create_node(name='n1', provision_state='active')
        with mock.patch('baremetal_orch.drivers.provisioning.fake.'
                        'FakeDriver.deploy', autospec=True) as deploy:
            self.assertFalse(self.run_with_task('n1', provisioning.deploy,
                                                10, {}))
        deploy.assert_not_called()

    def test_deploy_again_after_failure(self):
        self.create_node(name='n1', provision_state='deploy failed',
                         last_error='old')
        self.assertTrue(self.run_with_task('n1', provisioning.deploy, 10,
                                           {}))
        node = dbapi.get_node('n1')
        self.assertEqual(('active', None), (node.provision_state,
                                            node.last_error))
