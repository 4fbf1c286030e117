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
"""Tests of the ironic provisioning driver, against an HTTP-level fake."""


from oslo_utils import uuidutils

from baremetal_orch.common import exception
from baremetal_orch.drivers.provisioning import ironic
from baremetal_orch.ironic import client as ironic_client
from baremetal_orch.ironic import configdrive
from baremetal_orch.ironic import throttle
from baremetal_orch.tests.unit.ironic import base
from baremetal_orch_testing import helpers


class DriverTestCase(base.IronicTestCase):

    def setUp(self):
        super().setUp()
        self.config(group='ironic', shard_key='a')
        self.driver = ironic.IronicDriver()

    def add(self, state, **kw):
        kw.setdefault('shard', 'a')
        inode = self.ironic.add_node('n-%s' % state.replace(' ', '-'),
                                     provision_state=state, **kw)
        return inode, helpers.driver_node(ironic_uuid=inode['uuid'])


class TestPrepare(DriverTestCase):
    """The driver calls of the conductor's prepare phase
    (:mod:`baremetal_orch.conductor.node_work`): ``manage`` of a node in
    enroll, then ``provide``. (A node available or active is not handed
    to the driver; ``provide`` of an available one asks nothing.)"""

    # Ironic state -> driver calls -> provision requests made -> states
    # Ironic went through.
    TABLE = [
        ('enroll', ['manage', 'provide'], ['manage', 'provide'],
         ['verifying', 'manageable', 'cleaning', 'available']),
        ('manageable', ['provide'], ['provide'], ['cleaning', 'available']),
        ('clean failed', ['provide'], ['manage', 'provide'],
         ['manageable', 'cleaning', 'available']),
        ('available', ['provide'], [], []),
    ]

    def test_table(self):
        for state, calls, requests, entered in self.TABLE:
            inode, node = self.add(state)
            for call in calls:
                getattr(self.driver, call)(node, 10)
            self.assertEqual(requests, self.ironic.provision_calls(
                inode['uuid']), state)
            self.assertEqual(entered,
                             self.ironic.states_entered(inode['uuid']),
                             state)
            self.assertEqual('available', inode['provision_state'])

    def test_node_already_cleaning_is_waited_for(self):
        inode, node = self.add('manageable')
        self.driver.provide(node, 10)
        self.ironic.nodes[inode['uuid']]['provision_state'] = 'cleaning'
        self.ironic.pending[inode['uuid']] = (['available'], None)
        self.driver.provide(node, 10)
        self.assertEqual(['provide'], self.ironic.provision_calls())
        self.assertEqual('available', inode['provision_state'])

    def test_failure_reports_last_error(self):
        inode, node = self.add('manageable')
        self.ironic.fail[inode['uuid']] = ('provide', 'clean failed',
                                           'Disk erase failed on sda')
        exc = self.assertRaises(exception.ProvisioningFailed,
                                self.driver.provide, node, 10)
        self.assertIn('Disk erase failed on sda', str(exc))
        self.assertIn(node.ident, str(exc))

    def test_timeout(self):
        inode, node = self.add('enroll')
        self.ironic.stuck.add(inode['uuid'])
        exc = self.assertRaises(exception.ProvisioningTimeout,
                                self.driver.manage, node, 0.2)
        self.assertIn(node.ident, str(exc))
        self.assertEqual(['manage'], self.ironic.provision_calls())

    def test_wrong_state(self):
        inode, node = self.add('deploying')
        exc = self.assertRaises(exception.ProvisioningFailed,
                                self.driver.provide, node, 10)
        # Ironic refused it: the node was not moved.
        self.assertIn('while it is in state "deploying"', str(exc))
        self.assertEqual([], self.ironic.states_entered(inode['uuid']))
        self.assertEqual('deploying', inode['provision_state'])

    def test_provide_manages_a_failed_node_first(self):
        # The conductor retries a node that failed cleaning with provide
        # (clean failed -> cleaning); Ironic provides a manageable node
        # only.
        inode, node = self.add('clean failed')
        self.driver.provide(node, 10)
        self.assertEqual(['manage', 'provide'],
                         self.ironic.provision_calls(inode['uuid']))
        self.assertEqual('available', inode['provision_state'])

    def test_manage_and_provide_alone(self):
        inode, node = self.add('enroll')
        self.driver.manage(node, 10)
        self.assertEqual('manageable', inode['provision_state'])
        self.driver.manage(node, 10)
        self.driver.provide(node, 10)
        self.driver.provide(node, 10)
        self.assertEqual(['manage', 'provide'],
                         self.ironic.provision_calls())
        self.assertEqual('available', inode['provision_state'])


class TestDeploy(DriverTestCase):

    def _drives(self, inode):
        """The meta_data.json of the config drive of each provision
        request for ``inode`` (None: the request had no config drive)."""
        drives = []
        for req in self.ironic.mock.request_history:
            if req.method == 'PUT' and req.path == (
                    '/v1/nodes/%s/states/provision' % inode['uuid']):
                drive = req.json().get('configdrive')
                drives.append(drive and configdrive.read(drive))
        return drives

    def test_deploy_sends_what_the_node_reads_in_its_config_drive(self):
        inode, node = self.add('available',
                               instance_info={'capabilities': 'boot:uefi'})
        node.instance_info = {'image_source': 'http://images/a.qcow2',
                              'nested/key': {'a': 1}}
        info = dict(node.instance_info,
                    deploy_signal_id='http://orch/v1/signals/x?token=t',
                    deployment_uuid='d-1')
        self.driver.deploy(node, info, 10)
        self.assertEqual('active', inode['provision_state'])
        self.assertEqual(['deploying', 'active'],
                         self.ironic.states_entered(inode['uuid']))
        # Ironic's instance info: the node's own, what Ironic's deploy
        # reads; the signal inputs only in the config drive.
        self.assertEqual({'capabilities': 'boot:uefi',
                          'image_source': 'http://images/a.qcow2',
                          'nested/key': {'a': 1}}, inode['instance_info'])
        self.assertEqual([{'uuid': inode['uuid'], 'name': node.name,
                           'hostname': node.name, 'meta': info}],
                         self._drives(inode))
        # The patch came before the provision request.
        methods = [(r.method, r.path) for r in
                   self.ironic.mock.request_history
                   if r.method in ('PATCH', 'PUT')]
        self.assertEqual(
            [('PATCH', '/v1/nodes/%s' % inode['uuid']),
             ('PUT', '/v1/nodes/%s/states/provision' % inode['uuid'])],
            methods)

    def test_unchanged_instance_info_is_not_patched(self):
        inode, node = self.add('available', instance_info={'a': 1})
        node.instance_info = {'a': 1}
        self.driver.deploy(node, {'a': 1, 'deployment_uuid': 'd-1'}, 10)
        self.assertEqual([], self.ironic.requests('PATCH'))
        self.assertEqual(['active'], self.ironic.provision_calls())
        self.assertEqual({'a': 1, 'deployment_uuid': 'd-1'},
                         self._drives(inode)[0]['meta'])

    def test_a_node_without_instance_info_costs_one_request(self):
        # The common case of a site (and P7): no patch of the Ironic
        # node, whose instance info keeps the last deploy's config drive.
        inode, node = self.add('deploy failed', instance_info={
            'configdrive': '******'})
        self.driver.deploy(node, {'deploy_signal_id': 'http://x'}, 10)
        self.assertEqual([], self.ironic.requests('PATCH'))
        self.assertEqual(['active'], self.ironic.provision_calls())
        self.assertEqual({'deploy_signal_id': 'http://x'},
                         self._drives(inode)[0]['meta'])

    def test_active_node_is_not_deployed_again(self):
        inode, node = self.add('active')
        self.driver.deploy(node, {'image_source': 'x'}, 10)
        self.assertEqual([], self.ironic.provision_calls())
        self.assertEqual([], self.ironic.requests('PATCH'))

    def test_deploying_node_is_waited_for(self):
        inode, node = self.add('deploying')
        self.ironic.pending[inode['uuid']] = (['active'], None)
        self.driver.deploy(node, {}, 10)
        self.assertEqual([], self.ironic.provision_calls())
        self.assertEqual('active', inode['provision_state'])

    def test_failed_deploy_reports_last_error(self):
        inode, node = self.add('available')
        self.ironic.fail[inode['uuid']] = (
            'active', 'deploy failed', 'Timeout reached while waiting for '
            'callback for node')
        exc = self.assertRaises(exception.ProvisioningFailed,
                                self.driver.deploy, node, {}, 10)
        self.assertIn('Timeout reached while waiting for callback', str(exc))

    def test_deploy_failed_node_is_deployed_again(self):
        inode, node = self.add('deploy failed')
        self.driver.deploy(node, {}, 10)
        self.assertEqual(['active'], self.ironic.provision_calls())

    def test_timeout(self):
        inode, node = self.add('available')
        self.ironic.stuck.add(inode['uuid'])
        self.assertRaises(exception.ProvisioningTimeout, self.driver.deploy,
                          node, {}, 0.2)

    def test_ironic_refusal_is_reported(self):
        inode, node = self.add('available')
        node.instance_info = {'x': 1}
        self.ironic.errors[inode['uuid']] = (400, 'Instance info is bad')
        exc = self.assertRaises(exception.ProvisioningFailed,
                                self.driver.deploy, node, {'x': 1}, 10)
        self.assertIn('Instance info is bad', str(exc))
        self.assertEqual([], self.ironic.provision_calls())

    def test_wrong_state(self):
        inode, node = self.add('manageable')
        self.assertRaises(exception.ProvisioningFailed, self.driver.deploy,
                          node, {}, 10)
        self.assertEqual([], self.ironic.provision_calls())


class TestUndeploy(DriverTestCase):

    def test_active_node_is_torn_down(self):
        inode, node = self.add('active')
        self.driver.undeploy(node, 10)
        self.assertEqual(['deleted'], self.ironic.provision_calls())
        self.assertEqual(['deleting', 'cleaning', 'available'],
                         self.ironic.states_entered(inode['uuid']))
        self.assertEqual('available', inode['provision_state'])

    def test_available_node_is_left_alone(self):
        inode, node = self.add('available')
        self.driver.undeploy(node, 10)
        self.assertEqual([], self.ironic.provision_calls())


class TestScope(DriverTestCase):

    def test_every_action_refuses_a_node_of_another_shard(self):
        calls = [
            lambda n: self.driver.manage(n, 10),
            lambda n: self.driver.provide(n, 10),
            lambda n: self.driver.deploy(n, {'a': 1}, 10),
            lambda n: self.driver.undeploy(n, 10),
            lambda n: self.driver.set_console(n, True),
            lambda n: self.driver.set_maintenance(n, True, 'r'),
        ]
        inode, node = self.add('manageable', shard='b')
        for call in calls:
            self.assertRaises(exception.NodeNotInShard, call, node)
        self.assertEqual([], [r for r in self.ironic.mock.request_history
                              if r.method != 'GET'])

    def test_conductor_group_is_checked_too(self):
        self.config(group='ironic', conductor_group='g1')
        inode, node = self.add('available', conductor_group='g2')
        self.assertRaises(exception.NodeNotInShard, self.driver.deploy,
                          node, {}, 10)

    def test_no_ironic_uuid(self):
        node = helpers.driver_node()
        for call in (self.driver.manage, self.driver.provide):
            self.assertRaises(exception.InvalidParameterValue, call, node,
                              10)
        self.assertEqual([], self.ironic.requests())

    def test_missing_ironic_node(self):
        node = helpers.driver_node(ironic_uuid=uuidutils.generate_uuid())
        exc = self.assertRaises(exception.ProvisioningFailed,
                                self.driver.deploy, node, {}, 10)
        self.assertIn('404', str(exc))


class TestConsoleAndMaintenance(DriverTestCase):

    def test_console(self):
        inode, node = self.add('active')
        self.driver.set_console(node, True)
        self.assertTrue(inode['console_enabled'])
        self.driver.set_console(node, False)
        self.assertFalse(inode['console_enabled'])

    def test_maintenance(self):
        inode, node = self.add('active')
        self.driver.set_maintenance(node, True, reason='disk swap')
        self.assertTrue(inode['maintenance'])
        self.assertEqual('disk swap', inode['maintenance_reason'])
        self.driver.set_maintenance(node, False)
        self.assertFalse(inode['maintenance'])
        self.assertEqual(['PUT', 'DELETE'], [
            r[0] for r in self.ironic.requests(
                path='/v1/nodes/%s/maintenance' % inode['uuid'])])

    def test_refusal_is_a_driver_error(self):
        inode, node = self.add('active')
        self.ironic.errors[inode['uuid']] = (400, 'No console interface')
        exc = self.assertRaises(exception.DriverError,
                                self.driver.set_console, node, True)
        self.assertIn('No console interface', str(exc))


class TestDriver(base.IronicTestCase):

    def test_validate(self):
        driver = ironic.IronicDriver()
        driver.validate(helpers.driver_node(
            ironic_uuid=uuidutils.generate_uuid()))
        driver.validate(helpers.driver_node(ironic_uuid=None))
        self.assertRaises(exception.InvalidParameterValue, driver.validate,
                          helpers.driver_node(ironic_uuid='not-a-uuid'))

    def test_one_client_per_driver(self):
        driver = ironic.IronicDriver()
        self.assertIs(driver.client, driver.client)
        self.assertIsNot(driver.client, ironic.IronicDriver().client)

    def test_client_is_lazy(self):
        driver = ironic.IronicDriver()
        self.assertIsNone(driver._client)
        self.assertEqual([], self.ironic.requests())


class TestBusyAndOutages(DriverTestCase):
    """Ironic's concurrency limit and an Ironic that does not answer."""

    def setUp(self):
        super().setUp()
        self.config(group='ironic', outage_tolerance=60)
        self.slept = []
        self.now = [0.0]

        def sleep(seconds):
            self.slept.append(seconds)
            self.now[0] += seconds

        client = ironic_client.IronicClient(sleep=sleep,
                                            clock=lambda: self.now[0])
        self.driver = ironic.IronicDriver(client=client)

    def _deploy_queue(self):
        return throttle.throttle_for(self.driver.client.endpoint,
                                     throttle.DEPLOY)

    def test_concurrency_limit_queues_the_node(self):
        inode, node = self.add('available')
        # More refusals than [ironic]api_max_retries ever allowed.
        self.ironic.busy[inode['uuid']] = 8
        self._deploy_queue().window._hold = 0.0
        self.driver.deploy(node, {}, 60)
        self.assertEqual('active', inode['provision_state'])
        self.assertEqual(['active'] * 9,
                         self.ironic.provision_calls(inode['uuid']))
        stats = self._deploy_queue().stats()
        self.assertEqual(8, stats['refusals'])
        self.assertEqual(0, stats['in_flight'])

    def test_lost_answer_is_reconciled_not_resent(self):
        for state, target, call in (
                ('available', 'active',
                 lambda n: self.driver.deploy(n, {}, 60)),
                ('manageable', 'provide',
                 lambda n: self.driver.provide(n, 60)),
                ('active', 'deleted',
                 lambda n: self.driver.undeploy(n, 60))):
            inode, node = self.add(state)
            self.ironic.lost[inode['uuid']] = 1
            call(node)
            self.assertEqual([target],
                             self.ironic.provision_calls(inode['uuid']))
            self.assertEqual(0, self.ironic.lost[inode['uuid']])

    def test_request_ironic_never_saw_is_sent_after_a_read(self):
        inode, node = self.add('available')
        uuid = inode['uuid']
        before = len(self.ironic.requests())
        # The listing/GET of the node answers; the PUT finds a reset,
        # then the read after it two more.
        self.driver._ironic_node(node)
        self.ironic.resets[uuid] = 3
        self.driver._move(node, 'active', 'active', 60, 'available')
        self.assertEqual(['active', 'active'],
                         self.ironic.provision_calls(uuid))
        methods = [r[0] for r in self.ironic.requests()[before:]]
        # Never two PUTs without a GET between them.
        self.assertNotIn('PUT PUT', ' '.join(methods))
        self.assertEqual('active', inode['provision_state'])

    def test_wait_rides_out_an_outage(self):
        inode, node = self.add('available')
        uuid = inode['uuid']
        self.ironic.stuck.add(uuid)
        self.driver.client.set_provision_state(uuid, 'active')
        self.ironic.stuck.discard(uuid)
        self.ironic.resets[uuid] = 6
        self.driver.deploy(node, {}, 60)
        self.assertEqual('active', inode['provision_state'])
        self.assertEqual(['active'], self.ironic.provision_calls(uuid))
        self.assertGreaterEqual(sum(self.slept), 10)

    def test_tolerance_spent_says_so(self):
        inode, node = self.add('available')
        self.ironic.stuck.add(inode['uuid'])
        self.driver.client.set_provision_state(inode['uuid'], 'active')
        self.ironic.resets[inode['uuid']] = 10000
        exc = self.assertRaises(exception.ProvisioningFailed,
                                self.driver.deploy, node, {}, 600)
        self.assertIn('did not answer for 6', str(exc))
        self.assertIn('outage_tolerance', str(exc))

    def test_ironic_failure_keeps_its_reason_after_an_outage(self):
        inode, node = self.add('available')
        uuid = inode['uuid']
        self.ironic.fail[uuid] = (
            'active', 'deploy failed', "The deploying state can't be "
            "resumed by conductor ironic-1. Moving to fail state.")
        self.ironic.lost[uuid] = 1
        self.ironic.resets[uuid] = 0
        exc = self.assertRaises(exception.ProvisioningFailed,
                                self.driver.deploy, node, {}, 60)
        self.assertIn("can't be resumed by conductor", str(exc))
        self.assertNotIn('Connection', str(exc))
