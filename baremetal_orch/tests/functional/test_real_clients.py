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
"""The clients OpenStack users already have, against a REAL service.

keystoneauth1's version discovery and Adapter, and openstacksdk with a
``ServiceDescription``, each given the unversioned root and the versioned
``/v1`` URL (a catalog entry or an ``endpoint_override`` may name either),
and the detail of an error reaching an openstacksdk exception.
"""

from keystoneauth1 import adapter
from keystoneauth1 import discover
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import noauth
from keystoneauth1 import session
from openstack import connection
from openstack import exceptions as sdk_exc
from openstack import proxy
from openstack import service_description

from baremetal_orch.tests.functional import test_osc

SERVICE_TYPE = 'baremetal-orchestration'


class TestRealClients(test_osc.CLITestCase):

    def setUp(self):
        super().setUp()
        self.start_service()
        self.urls = (self.endpoint, self.endpoint + '/v1',
                     self.endpoint + '/v1/')
        root = self.api.get('/', status=200).json()
        self.maximum = root['default_version']['version']
        self.minimum = root['default_version']['min_version']

    def session(self):
        return session.Session(auth=noauth.NoAuth())

    def test_keystoneauth_discovery_on_both_urls(self):
        v1 = self.endpoint + '/v1/'
        for url in self.urls:
            found = discover.Discover(self.session(), url)
            [data] = found.version_data()
            self.assertEqual((1, 0), data['version'], url)
            self.assertEqual(v1, data['url'], url)
            self.assertEqual(discover.normalize_version_number(self.maximum),
                             data['max_microversion'], url)
            self.assertEqual(discover.normalize_version_number(self.minimum),
                             data['min_microversion'], url)
            self.assertEqual(v1, found.url_for('1'), url)

    def test_keystoneauth_adapter_microversion_on_both_urls(self):
        for url in self.urls:
            client = adapter.Adapter(
                self.session(), service_type=SERVICE_TYPE,
                endpoint_override=url, version='1',
                default_microversion=self.maximum)
            endpoint = client.get_endpoint_data()
            self.assertEqual(self.endpoint + '/v1/', endpoint.url, url)
            self.assertEqual(
                discover.normalize_version_number(self.maximum),
                endpoint.max_microversion, url)
            resp = client.get(endpoint.url + 'nodes')
            self.assertEqual(200, resp.status_code, url)
            # The header goes under the service type, and is honoured:
            # the answer names the version asked for.
            self.assertEqual(
                '%s %s' % (SERVICE_TYPE, self.maximum),
                resp.request.headers['OpenStack-API-Version'])
            self.assertEqual(
                '%s %s' % (SERVICE_TYPE, self.maximum),
                resp.headers['OpenStack-API-Version'])
            # An unsupported version asked under the service type is a 406,
            # not silently the minimum.
            self.assertRaises(ks_exc.NotAcceptable, client.get,
                              endpoint.url + 'nodes', microversion='1.999')

    def sdk_proxy(self, url):
        conn = connection.Connection(
            session=self.session(),
            baremetal_orchestration_endpoint_override=url)
        # As an SDK user describes a service: a Proxy for its major
        # version, whose requests name paths relative to it.
        conn.add_service(service_description.ServiceDescription(
            SERVICE_TYPE, supported_versions={'1': proxy.Proxy}))
        return conn.baremetal_orchestration

    def test_openstacksdk_on_both_urls(self):
        for url in self.urls:
            orch = self.sdk_proxy(url)
            self.assertEqual((1, 0), orch.get_api_major_version(), url)
            endpoint = orch.get_endpoint_data()
            self.assertEqual(self.endpoint + '/v1/', endpoint.url, url)
            self.assertEqual(
                discover.normalize_version_number(self.maximum),
                endpoint.max_microversion, url)
            resp = orch.get('/nodes', microversion=self.maximum)
            self.assertEqual(200, resp.status_code, url)
            self.assertEqual(self.endpoint + '/v1/nodes', resp.url, url)
            self.assertEqual([], resp.json()['nodes'])

    def test_error_detail_reaches_an_sdk_exception(self):
        orch = self.sdk_proxy(self.endpoint + '/v1')
        resp = orch.get('/nodes/no-such-node')
        exc = self.assertRaises(sdk_exc.NotFoundException,
                                sdk_exc.raise_from_response, resp)
        self.assertIn('no-such-node', exc.details)
        self.assertIn('no-such-node', str(exc))
        # A 400 names the offending value too, and the API-SIG document
        # is still there for the clients that read it.
        resp = orch.get('/nodes', params={'limit': 'many'})
        exc = self.assertRaises(sdk_exc.BadRequestException,
                                sdk_exc.raise_from_response, resp)
        self.assertIn('many', exc.details)
        [error] = resp.json()['errors']
        self.assertEqual(400, error['status'])
        self.assertIn('many', error['detail'])
