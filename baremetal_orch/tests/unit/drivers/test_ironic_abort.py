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
"""The ironic driver's abort, against the HTTP-level fake Ironic."""

import threading

from baremetal_orch.common import exception
from baremetal_orch.drivers.provisioning import ironic
from baremetal_orch.ironic import client as ironic_client
from baremetal_orch.tests.unit.drivers import test_ironic

VERSION_HEADER = 'X-OpenStack-Ironic-API-Version'


class TestAbort(test_ironic.DriverTestCase):

    def abort_requests(self, inode):
        return [r for r in self.ironic.requests(
            'PUT', '/v1/nodes/%s/states/provision' % inode['uuid'])]

    def test_wait_states_are_aborted(self):
        # Ironic state -> microversion of the abort (with a shard key the
        # client's own is 1.82; deploy wait needs 1.110).
        for state, version, ends in (
                ('wait call-back', '1.110', 'deploy failed'),
                ('clean wait', '1.82', 'clean failed'),
                ('inspect wait', '1.82', 'inspect failed'),
                ('rescue wait', '1.82', 'rescue failed')):
            inode, node = self.add(state)
            self.assertTrue(self.driver.abort(node), state)
            self.assertEqual(['abort'],
                             self.ironic.provision_calls(inode['uuid']))
            sent = self.abort_requests(inode)
            self.assertEqual(version, sent[0][3][VERSION_HEADER], state)
            self.assertEqual(ends, inode['provision_state'])

    def test_other_states_are_left_alone(self):
        for state in ('enroll', 'manageable', 'available', 'deploying',
                      'cleaning', 'active', 'deploy failed', 'deploy hold',
                      'clean hold', 'service wait'):
            inode, node = self.add(state)
            self.assertFalse(self.driver.abort(node), state)
            self.assertEqual(state, inode['provision_state'])
        self.assertEqual([], self.ironic.provision_calls())

    def test_state_changed_meanwhile_is_false(self):
        # Ironic's answers when the node left its wait between our read
        # and the abort (400, 409), or is too old for 1.110 (406).
        for status in (400, 406, 409):
            inode, node = self.add('wait call-back')
            self.ironic.errors[inode['uuid']] = (
                status, 'The requested action "abort" can not be performed '
                'on node while it is in state "active".')
            self.assertFalse(self.driver.abort(node), status)
            self.assertEqual(['abort'],
                             self.ironic.provision_calls(inode['uuid']))

    def test_other_refusal_is_a_driver_error(self):
        inode, node = self.add('clean wait')
        self.ironic.errors[inode['uuid']] = (403, 'Access was denied')
        exc = self.assertRaises(exception.DriverError, self.driver.abort,
                                node)
        self.assertIn('Access was denied', str(exc))

    def test_node_of_another_shard_is_not_aborted(self):
        inode, node = self.add('wait call-back', shard='b')
        self.assertRaises(exception.NodeNotInShard, self.driver.abort, node)
        self.assertEqual([], self.ironic.provision_calls())
        self.assertEqual('wait call-back', inode['provision_state'])

    def test_a_waiting_deploy_fails_with_the_abort(self):
        inode, node = self.add('wait call-back')
        # The deploy of another process: Ironic would move it on once
        # the agent calls back, which never happens.
        self.ironic.pending[inode['uuid']] = (['active'], None)
        self.ironic.stuck.add(inode['uuid'])
        outcome = []

        def deploy():
            try:
                self.driver.deploy(node, {}, 30)
            except Exception as e:
                outcome.append(e)
            else:
                outcome.append(None)

        thread = threading.Thread(target=deploy)
        thread.start()
        self.addCleanup(thread.join, 30)
        # Its first GET of the node found it waiting; the next ones are
        # its wait's polls. (Not any two GETs: the client's version
        # discovery makes two before them, and an abort sent then made the
        # deploy start anew from deploy failed, and succeed.)
        self.wait_for(lambda: len(self.ironic.requests(
            'GET', '/v1/nodes/%s' % inode['uuid'])) >= 2, timeout=10)
        self.assertTrue(self.driver.abort(node))
        thread.join(30)
        self.assertIsInstance(outcome[0], exception.ProvisioningFailed)
        self.assertIn('By request, the deploy operation was aborted',
                      str(outcome[0]))
        self.assertEqual(['abort'], self.ironic.provision_calls())


class TestAbortOutages(test_ironic.DriverTestCase):

    def setUp(self):
        super().setUp()
        self.config(group='ironic', outage_tolerance=60)
        self.now = [0.0]

        def sleep(seconds):
            self.now[0] += seconds

        client = ironic_client.IronicClient(sleep=sleep,
                                            clock=lambda: self.now[0])
        self.driver = ironic.IronicDriver(client=client)

    def test_lost_answer_is_reconciled_not_resent(self):
        inode, node = self.add('wait call-back')
        self.ironic.lost[inode['uuid']] = 1
        self.assertTrue(self.driver.abort(node))
        self.assertEqual(['abort'],
                         self.ironic.provision_calls(inode['uuid']))
        self.assertEqual('deploy failed', inode['provision_state'])

    def test_abort_ironic_never_saw_is_sent_again(self):
        inode, node = self.add('clean wait')
        self.driver._ironic_node(node)
        # The PUT finds a reset; the read after it answers: still waiting.
        self.ironic.resets[inode['uuid']] = 1
        self.assertTrue(self.driver._send_abort(node, 'clean wait'))
        self.assertEqual(['abort', 'abort'],
                         self.ironic.provision_calls(inode['uuid']))
        self.assertEqual('clean failed', inode['provision_state'])

    def test_tolerance_spent_is_a_driver_error(self):
        inode, node = self.add('wait call-back')
        self.driver._ironic_node(node)
        self.ironic.resets[inode['uuid']] = 10000
        exc = self.assertRaises(exception.DriverError,
                                self.driver._send_abort, node,
                                'wait call-back')
        self.assertIn('outage_tolerance', str(exc))
        self.assertEqual('wait call-back', inode['provision_state'])
