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
"""Version discovery and microversion negotiation."""

from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from baremetal_orch_tempest_plugin.services import client as orch_client
from baremetal_orch_tempest_plugin.tests import base

HEADER = orch_client.MICROVERSION_HEADER.lower()


class TestMicroversions(base.BaremetalOrchTest):
    """``OpenStack-API-Version: baremetal-orchestration 1.N`` and the root."""

    @classmethod
    def resource_setup(cls):
        super().resource_setup()
        _, root = cls.admin.get_root()
        cls.min_version = root['default_version']['min_version']
        cls.max_version = root['default_version']['version']

    def negotiate(self, asked):
        client = self.client(self.os_system_admin, microversion=asked)
        resp, _ = client.list('nodes', limit=1)
        return resp[HEADER]

    @decorators.idempotent_id('5b7f6a55-3e1f-4c39-9d0c-1b5c0e6f1a01')
    def test_root_lists_the_version_range(self):
        _, root = self.admin.get_root()
        self.assertEqual('v1', root['default_version']['id'])
        self.assertEqual(root['default_version'], root['versions'][0])
        self.assertLessEqual(tuple(map(int, self.min_version.split('.'))),
                             tuple(map(int, self.max_version.split('.'))))
        _, v1 = self.admin.get_v1()
        self.assertEqual(root['default_version'], v1['version'])
        for resource in ('nodes', 'ports', 'chassis', 'actions',
                         'deployment_strategies', 'services', 'shards',
                         'events', 'deployments'):
            self.assertIn(resource, v1)

    @decorators.idempotent_id('5b7f6a55-3e1f-4c39-9d0c-1b5c0e6f1a02')
    def test_no_header_is_the_minimum(self):
        client = self.client(self.os_system_admin)
        client.microversion = None
        resp, _ = client.list('nodes', limit=1)
        self.assertEqual(
            '%s %s' % (orch_client.SERVICE_TYPE, self.min_version),
            resp[HEADER])
        self.assertIn(orch_client.MICROVERSION_HEADER, resp['vary'])

    @decorators.idempotent_id('5b7f6a55-3e1f-4c39-9d0c-1b5c0e6f1a03')
    def test_latest_and_exact_versions(self):
        self.assertEqual(
            '%s %s' % (orch_client.SERVICE_TYPE, self.max_version),
            self.negotiate('latest'))
        for version in {self.min_version, self.max_version}:
            self.assertEqual('%s %s' % (orch_client.SERVICE_TYPE, version),
                             self.negotiate(version))

    @decorators.idempotent_id('5b7f6a55-3e1f-4c39-9d0c-1b5c0e6f1a04')
    def test_unsupported_version_is_406(self):
        major = int(self.max_version.split('.')[0])
        too_new = '%d.%d' % (major, int(self.max_version.split('.')[1]) + 1)
        exc = self.assertRaises(lib_exc.NotAcceptable, self.negotiate,
                                too_new)
        self.assertErrorDocument(406, exc.resp_body, too_new)
        exc = self.assertRaises(lib_exc.NotAcceptable, self.negotiate,
                                '%d.0' % (major + 1))
        self.assertEqual(406, exc.resp.status)

    @decorators.idempotent_id('5b7f6a55-3e1f-4c39-9d0c-1b5c0e6f1a05')
    def test_malformed_version_is_400(self):
        exc = self.assertRaises(lib_exc.BadRequest, self.negotiate,
                                'one.two')
        self.assertErrorDocument(400, exc.resp_body, 'one.two')
