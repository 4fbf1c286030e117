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
"""The ironic driver's abort against a real Ironic
(doc/source/admin/steering.rst, abort).

A node whose deploy interface is ``custom-agent`` (fake boot and power)
stays in ``wait call-back``: Ironic powered it on and waits for an
ironic-python-agent that never calls back. With Ironic's
``deploy_callback_timeout`` far away, only an abort moves it on. Ironic's
own request log shows what was sent.
"""

import threading

from oslo_utils import uuidutils

from baremetal_orch.common import exception
from baremetal_orch.drivers.provisioning import ironic as ironic_driver
from baremetal_orch.ironic import outage
from baremetal_orch.ironic import throttle
from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import ironic as ironic_fixture
from baremetal_orch_testing import helpers


class TestIronicAbort(base.FunctionalTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # No callback timeout within the test: the node waits until the
        # abort.
        cls.ironic = cls.use_class_fixture(ironic_fixture.IronicFixture(
            deploy_callback_timeout=3600))

    def setUp(self):
        super().setUp()
        throttle.reset()
        outage.reset()
        self.addCleanup(throttle.reset)
        self.addCleanup(outage.reset)
        self.config(group='ironic', poll_interval=0.1,
                    **self.ironic.ironic_options())
        self.driver = ironic_driver.IronicDriver()

    def available(self, name, **fields):
        inode = self.ironic.create_node(
            '%s-%s' % (name, uuidutils.generate_uuid()[:8]), **fields)
        self.ironic.provision(inode['uuid'], 'manage', 'manageable')
        inode = self.ironic.provision(inode['uuid'], 'provide', 'available')
        return inode, helpers.driver_node(inode)

    def provision_requests(self, inode, mark):
        return [r for r in self.ironic.request_log(mark)
                if r.method == 'PUT' and r.path ==
                '/v1/nodes/%s/states/provision' % inode['uuid']]

    def test_deploy_waiting_for_its_agent_is_aborted(self):
        inode, node = self.available('wait',
                                     **ironic_fixture.FAILING_DEPLOY)
        mark = self.ironic.log_mark()
        outcome = []

        def deploy():
            try:
                self.driver.deploy(node, {}, 300)
                outcome.append(None)
            except Exception as e:
                outcome.append(e)

        thread = threading.Thread(target=deploy)
        thread.start()
        self.addCleanup(thread.join, 60)
        self.ironic.wait_for(inode['uuid'], 'provision_state',
                             'wait call-back', timeout=60)
        self.assertEqual([], outcome)

        self.assertTrue(self.driver.abort(node))
        thread.join(60)
        self.assertFalse(thread.is_alive())
        # The deploy waiting on the node failed with Ironic's reason.
        self.assertIsInstance(outcome[0], exception.ProvisioningFailed)
        self.assertIn('By request, the deploy operation was aborted',
                      str(outcome[0]))
        inode = self.ironic.get_node(inode['uuid'])
        self.assertEqual('deploy failed', inode['provision_state'])
        self.assertIn('aborted', inode['last_error'])
        # Ironic saw the deploy and one abort, both accepted.
        self.assertEqual(['202', '202'], [
            r.status for r in self.provision_requests(inode, mark)])

        # Aborted, it is in no wait state: a second abort sends nothing.
        mark = self.ironic.log_mark()
        self.assertFalse(self.driver.abort(node))
        self.assertEqual([], self.provision_requests(inode, mark))

    def test_stable_nodes_are_not_aborted(self):
        available, a_node = self.available('avail')
        active, b_node = self.available('active')
        self.ironic.provision(active['uuid'], 'active', 'active')
        mark = self.ironic.log_mark()
        self.assertFalse(self.driver.abort(a_node))
        self.assertFalse(self.driver.abort(b_node))
        self.assertEqual([], [r for r in self.ironic.request_log(mark)
                              if r.method != 'GET'])
        self.assertEqual('available', self.ironic.get_node(
            available['uuid'])['provision_state'])
        self.assertEqual('active', self.ironic.get_node(
            active['uuid'])['provision_state'])
