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
"""[DEFAULT]enabled_drivers through the API: a clear 400."""

from baremetal_orch.tests import base


class TestEnabledDrivers(base.ApiTestCase):

    def test_create_with_a_driver_not_enabled(self):
        self.config(enabled_drivers=['ironic'])
        resp = self.post('/v1/nodes', {'name': 'n1', 'driver': 'fake'})
        error = self.assertError(resp, 400, 'baremetal_orch.driver.'
                                 'not_enabled', 'fake')
        self.assertIn('enabled_drivers = ironic', error['detail'])
        self.assertEqual([], self.get('/v1/nodes').json['nodes'])

    def test_enabled_driver_is_accepted(self):
        self.config(enabled_drivers=['fake'])
        self.post('/v1/nodes', {'name': 'n1', 'driver': 'fake'}, status=201)
