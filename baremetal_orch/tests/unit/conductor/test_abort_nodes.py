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
"""abort_nodes and the fake driver's wait (driver_info.fake_wait)."""

from concurrent import futures
import os
import threading

import fixtures
from oslo_utils import uuidutils

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.conductor import node_work
from baremetal_orch.conductor import provisioning
from baremetal_orch.db import api as dbapi
from baremetal_orch.drivers import provisioning as drivers
from baremetal_orch.drivers.provisioning import fake
from baremetal_orch.tests import base
from baremetal_orch_testing import helpers


def fake_node(**kw):
    values = dict(name='n1', driver='fake',
                  driver_info={'fake_wait': 'deploy'},
                  provision_state='available')
    values.update(kw)
    return helpers.driver_node(**values)


class TestFakeWait(base.TestCase):

    def setUp(self):
        super().setUp()
        self.driver = fake.FakeDriver()

    def start(self, driver, node, call):
        """Run ``call(node)`` in a thread; return its outcome list."""
        outcome = []

        def run():
            try:
                call(node)
                outcome.append(None)
            except Exception as e:
                outcome.append(e)

        thread = threading.Thread(target=run)
        thread.start()
        self.addCleanup(thread.join, 30)
        return thread, outcome

    def test_deploy_is_held_until_aborted(self):
        node = fake_node()
        thread, outcome = self.start(
            self.driver, node, lambda n: self.driver.deploy(n, {}, 60))
        self.wait_for(lambda: node.uuid in self.driver._held, timeout=10)
        self.assertEqual([], outcome)
        self.assertTrue(self.driver.abort(node))
        thread.join(30)
        self.assertIsInstance(outcome[0], exception.ProvisioningFailed)
        self.assertIn('By request, the fake deploy was aborted',
                      str(outcome[0]))
        # Nothing held any more: a second abort sends nothing.
        self.assertFalse(self.driver.abort(node))

    def test_prepare_is_held_too(self):
        # The prepare phase of a manageable node: provide.
        node = fake_node(driver_info={'fake_wait': 'prepare'},
                         provision_state='manageable')
        thread, outcome = self.start(
            self.driver, node, lambda n: self.driver.provide(n, 60))
        self.wait_for(lambda: node.uuid in self.driver._held, timeout=10)
        self.assertTrue(self.driver.abort(node))
        thread.join(30)
        self.assertIn('fake prepare was aborted', str(outcome[0]))

    def test_a_node_not_held_is_not_aborted(self):
        self.assertFalse(self.driver.abort(fake_node()))
        # Held in deploy, not in prepare: the prepare phase of an enrolled
        # node (manage, then provide) runs through.
        node = fake_node(provision_state='enroll')
        self.driver.manage(node, 10)
        self.driver.provide(node, 10)
        self.assertFalse(self.driver.abort(node))

    def test_hold_ends_at_the_timeout(self):
        exc = self.assertRaises(exception.ProvisioningTimeout,
                                self.driver.deploy, fake_node(), {}, 0.1)
        self.assertIn('active', str(exc))

    def test_abort_from_another_process_through_wait_dir(self):
        wait_dir = self.useFixture(fixtures.TempDir()).path
        self.config(group='fake_driver', wait_dir=wait_dir)
        other = fake.FakeDriver()   # another process's driver
        node = fake_node()
        self.assertFalse(other.abort(node))
        thread, outcome = self.start(
            self.driver, node, lambda n: self.driver.deploy(n, {}, 60))
        marker = os.path.join(wait_dir, '%s.wait' % node.uuid)
        self.wait_for(lambda: os.path.exists(marker), timeout=10)
        self.assertTrue(other.abort(node))
        thread.join(30)
        self.assertIn('fake deploy was aborted', str(outcome[0]))
        self.assertEqual([], os.listdir(wait_dir))

    def test_validate(self):
        self.driver.validate(fake_node())
        exc = self.assertRaises(exception.InvalidParameterValue,
                                self.driver.validate,
                                fake_node(driver_info={'fake_wait': 'x'}))
        self.assertIn('fake_wait', str(exc))


class TestAbortNodes(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = orch_context.get_admin_context()
        self.driver = drivers.get_driver('fake')

    def deploy_phase(self, name):
        """The deploy phase of node ``name`` as an action's node work runs
        it, in a thread; returns (thread, task uuid)."""
        action = self.running_action()
        node = dbapi.get_node(name)
        task = dbapi.create_task({'action_uuid': action, 'kind': 'node',
                                  'name': name, 'node_uuid': node.uuid})
        work = node_work.NodeWork('h1', lambda func, *args: func(*args))
        self.addCleanup(work.stop)
        thread = threading.Thread(target=work.run, args=(
            self.ctx, action, [(task, node.uuid)], 'deploy', {}))
        thread.start()
        self.addCleanup(thread.join, 30)
        return thread, task

    def test_node_aborted_mid_deploy_fails_with_the_abort(self):
        held = self.create_node(name='held', provision_state='available',
                                driver_info={'fake_wait': 'deploy'})
        idle = self.create_node(name='idle', provision_state='active')
        thread, task = self.deploy_phase('held')
        self.wait_for(lambda: held.uuid in self.driver._held, timeout=10)
        self.assertEqual({held.uuid: True, idle.uuid: False},
                         provisioning.abort_nodes(self.ctx,
                                                  [held.uuid, idle.uuid]))
        thread.join(30)
        task = dbapi.get_task(task)
        self.assertEqual('failed', task.status)
        self.assertIn('fake deploy was aborted', task.reason)
        node = dbapi.get_node('held')
        self.assertEqual('deploy failed', node.provision_state)
        self.assertIn('fake deploy was aborted', node.last_error)
        self.assertIsNone(node.reservation)
        self.assertEqual('active', dbapi.get_node('idle').provision_state)

    def test_errors_count_as_false(self):
        node = self.create_node(name='n1', provision_state='available')
        other = self.create_node(name='n2', driver='ironic',
                                 provision_state='available')
        self.config(enabled_drivers=['fake'])
        missing = uuidutils.generate_uuid()
        self.assertEqual(
            {node.uuid: False, other.uuid: False, missing: False},
            provisioning.abort_nodes(self.ctx, [node.uuid, other.uuid,
                                                missing]))

    def test_side_by_side_in_a_pool(self):
        names = ['n%d' % i for i in range(3)]
        nodes = [self.create_node(name=n, provision_state='available',
                                  driver_info={'fake_wait': 'deploy'})
                 for n in names]
        threads = [self.deploy_phase(n)[0] for n in names]
        self.wait_for(lambda: all(n.uuid in self.driver._held
                                  for n in nodes), timeout=10)
        pool = futures.ThreadPoolExecutor(max_workers=3)
        self.addCleanup(pool.shutdown)
        self.assertEqual({n.uuid: True for n in nodes},
                         provisioning.abort_nodes(
                             self.ctx, [n.uuid for n in nodes], pool=pool))
        for thread in threads:
            thread.join(30)
        self.assertEqual(['deploy failed'] * 3, [
            dbapi.get_node(n).provision_state for n in names])
