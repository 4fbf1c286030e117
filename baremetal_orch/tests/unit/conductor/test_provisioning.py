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

from concurrent import futures


from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.conductor import node_work
from baremetal_orch.conductor import provisioning
from baremetal_orch.conductor import taskmanager
from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import node as node_obj
from baremetal_orch.tests import base


class ProvisioningTestCase(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = orch_context.get_admin_context()
        # Every provision notification is wanted: self.notes records them.
        self.config(notification_level='info')
        self.notes = []
        self.useFixture(fixtures.MockPatchObject(
            provisioning.notify, 'provision',
            side_effect=lambda ctx, node, status, prev, prev_target, ev:
            self.notes.append((status, prev, node.provision_state, ev))))

    def run_many(self, name, event, instance_info=None):
        """``event`` on one node held by h1, as the action lane runs it;
        returns its exception, or None."""
        pool = futures.ThreadPoolExecutor(max_workers=1)
        self.addCleanup(pool.shutdown)
        infos = None
        with taskmanager.acquire(self.ctx, name, 'h1') as task:
            if instance_info is not None:
                infos = {task.node.uuid: instance_info}
            failed = provisioning.run_many(self.ctx, [task.node], event, 10,
                                           'h1', pool, infos)
        return failed.get(task.node.uuid)

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
        self.assertIsNone(self.run_many('n1', 'manage'))
        self.assertEqual(('manageable', None), self.state('n1'))
        self.assertEqual([('start', 'enroll', 'verifying', 'manage'),
                          ('end', 'verifying', 'manageable', 'done')],
                         self.notes)

    def test_delete_goes_through_cleaning(self):
        self.create_node(name='n1', provision_state='active')
        self.assertIsNone(self.run_many('n1', 'delete'))
        self.assertEqual(('available', None), self.state('n1'))
        self.assertEqual(['deleting', 'cleaning', 'available'],
                         [n[2] for n in self.notes])

    def test_failure_records_last_error_and_reraises(self):
        self.create_node(name='n1', provision_state='available',
                         driver_info={'fake_fail_phase': 'deploy'})
        e = self.run_many('n1', 'deploy', {})
        self.assertIsInstance(e, exception.ProvisioningFailed)
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
        self.assertIsNone(self.run_many(
            'n1', 'deploy', {'deploy_signal_url': 'http://x/y'}))
        with open(os.path.join(configdrive, '%s.json' % node.uuid)) as f:
            written = json.load(f)
        self.assertEqual({'deploy_signal_url': 'http://x/y'},
                         written['instance_info'])
        self.assertEqual(('active', None), self.state('n1'))


class TestBrokenDriver(ProvisioningTestCase):

    def test_a_batch_call_that_raises_fails_its_nodes(self):
        # A driver that breaks instead of answering for each node: its
        # nodes fail with its error, none is left in a working state.
        from baremetal_orch.drivers.provisioning import fake

        self.create_node(name='n1', provision_state='available')
        with mock.patch.object(fake.FakeDriver, 'call_many', autospec=True,
                               side_effect=RuntimeError('driver broke')):
            e = self.run_many('n1', 'deploy', {})
        self.assertIsInstance(e, RuntimeError)
        node = dbapi.get_node('n1')
        self.assertEqual(('deploy failed', 'driver broke', None),
                         (node.provision_state, node.last_error,
                          node.reservation))


class TestMoveMany(ProvisioningTestCase):
    """A state change of many nodes and its notifications."""

    def move(self, count, event, nodes=None):
        """``event`` on ``count`` new nodes (or ``nodes``) held by h1;
        returns them."""
        if nodes is None:
            uuids = [self.create_node(name='n%d' % i).uuid
                     for i in range(count)]
            nodes = list(node_obj.Node.reserve_many(
                self.ctx, uuids, 'h1').values())
        provisioning.move_many(self.ctx, nodes, event, 'h1')
        return nodes

    def test_each_node_notified_when_wanted(self):
        self.move(3, 'manage')
        self.assertEqual([('start', 'enroll', 'verifying', 'manage')] * 3,
                         self.notes)

    def test_no_node_visited_for_notifications_filtered_out(self):
        # Notifications off (the default): a group's state change does no
        # per-node notification work at all, though its nodes moved.
        self.config(notification_level=None)
        moved = self.move(3, 'manage')
        self.assertEqual([], self.notes)
        self.assertEqual({'verifying'},
                         {dbapi.get_node(n.uuid).provision_state
                          for n in moved})

    def test_level_filters_by_status(self):
        # error only: a failure is notified, a start is not.
        self.config(notification_level='error')
        nodes = self.move(2, 'manage')
        self.assertEqual([], self.notes)
        self.move(0, 'fail', nodes)
        self.assertEqual([('error', 'verifying', 'enroll', 'fail')] * 2,
                         self.notes)


class TestPhases(ProvisioningTestCase):
    """The prepare and deploy phases of one node (a batch of one)."""

    def phase(self, name, phase):
        """Run ``phase`` on node ``name``; returns its task row."""
        action = self.running_action()
        node = dbapi.get_node(name)
        task = dbapi.create_task({'action_uuid': action, 'kind': 'node',
                                  'name': name, 'node_uuid': node.uuid})
        work = node_work.NodeWork('h1', lambda func, *args: func(*args))
        self.addCleanup(work.stop)
        work.run(self.ctx, action, [(task, node.uuid)], phase, {})
        return dbapi.get_task(task)

    def assertSucceeds(self, name, phase):
        task = self.phase(name, phase)
        self.assertEqual('success', task.status, task.reason)

    def assertFails(self, name, phase):
        task = self.phase(name, phase)
        self.assertEqual('failed', task.status)
        return task.reason

    def test_prepare_from_enroll(self):
        self.create_node(name='n1')
        self.assertSucceeds('n1', 'prepare')
        self.assertEqual(('available', None), self.state('n1'))
        self.assertEqual(['verifying', 'manageable', 'cleaning',
                          'available'], [n[2] for n in self.notes])

    def test_prepare_from_clean_failed(self):
        self.create_node(name='n1', provision_state='clean failed')
        self.assertSucceeds('n1', 'prepare')
        self.assertEqual(('available', None), self.state('n1'))

    def test_prepare_skips_prepared_nodes(self):
        for state in ('available', 'active', 'deploy failed'):
            self.create_node(name='n-' + state.replace(' ', '-'),
                             provision_state=state)
            self.assertSucceeds('n-' + state.replace(' ', '-'), 'prepare')
        self.assertEqual([], self.notes)

    def test_prepare_failure(self):
        self.create_node(name='n1',
                         driver_info={'fake_fail_phase': 'prepare'})
        self.assertIn('prepare phase', self.assertFails('n1', 'prepare'))
        node = dbapi.get_node('n1')
        self.assertEqual('clean failed', node.provision_state)
        self.assertIn('prepare phase', node.last_error)

    def test_prepare_refuses_an_unpreparable_node(self):
        self.create_node(name='n1', provision_state='error')
        self.assertIn('error', self.assertFails('n1', 'prepare'))

    def test_deploy_skips_active_nodes(self):
        self.create_node(name='n1', provision_state='active')
        with mock.patch('baremetal_orch.drivers.provisioning.fake.'
                        'FakeDriver.deploy', autospec=True) as deploy:
            self.assertSucceeds('n1', 'deploy')
        deploy.assert_not_called()

    def test_deploy_again_after_failure(self):
        self.create_node(name='n1', provision_state='deploy failed',
                         last_error='old')
        self.assertSucceeds('n1', 'deploy')
        node = dbapi.get_node('n1')
        self.assertEqual(('active', None), (node.provision_state,
                                            node.last_error))
