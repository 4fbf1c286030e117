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
"""What API calls notify, through the sender thread: error paths of the
backend (502), and answers that do not wait for an absent bus."""

import threading

import fixtures
from oslo_messaging.notify import _impl_test

from baremetal_orch.db import api as dbapi
from baremetal_orch.notifications import notifier
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.objects import utils

FAILED = 'baremetal_orch.driver.provisioning_failed'


class TestBackendErrors(base.ApiTestCase):

    def setUp(self):
        super().setUp()
        self.bus = self.useFixture(utils.NotificationsFixture('debug'))

    def make(self, fail):
        return self.post('/v1/nodes', {
            'name': 'n1', 'driver': 'fake',
            'driver_info': {'fake_fail_phase': fail}}, status=201).json

    def node_events(self, action):
        return [m['event_type'] for m in self.bus.messages
                if '.%s.' % action in m['event_type']]

    def test_maintenance_refused_by_the_backend(self):
        self.make('maintenance')
        resp = self.put('/v1/nodes/n1/maintenance', {'reason': 'fan'})
        self.assertError(resp, 502, FAILED, 'maintenance phase')
        self.assertFalse(dbapi.get_node('n1').maintenance)
        self.assertEqual(['baremetal.node.maintenance_set.start',
                          'baremetal.node.maintenance_set.error'],
                         self.node_events('maintenance_set'))
        error = self.bus.messages[-1]
        self.assertEqual('ERROR', error['priority'])

    def test_console_refused_by_the_backend(self):
        self.make('console')
        resp = self.put('/v1/nodes/n1/states/console', {'enabled': True})
        self.assertError(resp, 502, FAILED, 'console phase')
        self.assertFalse(dbapi.get_node('n1').console_enabled)
        self.assertEqual(['baremetal.node.console_set.start',
                          'baremetal.node.console_set.error'],
                         self.node_events('console_set'))

    def test_the_request_context_goes_with_them(self):
        self.post('/v1/nodes', {'name': 'n1', 'driver': 'fake'}, status=201,
                  headers={'X-Auth-Token': 's3cr3t-token'})
        notifier.flush(10)
        contexts = [c for c, _m, _p, _r in _impl_test.NOTIFICATIONS]
        self.assertEqual(2, len(contexts))
        for ctxt in contexts:
            self.assertEqual('user-system_admin', ctxt['user'])
            self.assertIsNone(ctxt.get('auth_token'))

    def test_unknown_failure_phase_names_the_choices(self):
        resp = self.post('/v1/nodes', {
            'name': 'n1', 'driver': 'fake',
            'driver_info': {'fake_fail_phase': 'power'}})
        self.assertError(resp, 400, detail_contains='console, maintenance')


class TestAnswerWithoutTheBus(base.ApiTestCase):
    """A bus that does not take the notifications delays an answer by at
    most [api]notification_wait; they follow when it is back."""

    def setUp(self):
        super().setUp()
        self.bus = self.useFixture(utils.NotificationsFixture('info'))
        self.release = threading.Event()
        self.addCleanup(self.release.set)
        real = _impl_test.TestDriver.notify

        def blocked(driver, ctxt, message, priority, retry):
            self.release.wait(60)
            return real(driver, ctxt, message, priority, retry)
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_messaging.notify._impl_test.TestDriver.notify', blocked))
        self.log = self.useFixture(fixtures.FakeLogger())

    def test_create_answers_while_the_bus_is_away(self):
        self.config(group='api', notification_wait=0.1)
        self.post('/v1/nodes', {'name': 'n1', 'driver': 'fake'}, status=201)
        # Answered although not one notification reached the bus.
        self.assertEqual([], list(_impl_test.NOTIFICATIONS))
        self.assertIn('wait for the message bus', self.log.output)
        self.release.set()
        self.assertEqual(['baremetal.node.create.start',
                          'baremetal.node.create.end'],
                         self.bus.event_types())

    def test_answer_comes_after_the_notifications_when_the_bus_is_up(self):
        self.release.set()
        self.post('/v1/nodes', {'name': 'n1', 'driver': 'fake'}, status=201)
        # No flush by the test: the API waited for them.
        self.assertEqual(['baremetal.node.create.start',
                          'baremetal.node.create.end'],
                         [m['event_type'] for _c, m, _p, _r
                          in _impl_test.NOTIFICATIONS])
        self.assertTrue(notifier.flush(0))
