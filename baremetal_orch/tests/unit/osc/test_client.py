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
"""The REST client over a real keystoneauth1 session (HTTP mocked)."""

from keystoneauth1 import fixture as ks_fixture
from keystoneauth1.identity import v3
from keystoneauth1 import noauth
from keystoneauth1 import session as ks_session
from osc_lib import exceptions
import requests
from requests_mock.contrib import fixture as rm_fixture

from baremetal_orch.osc import client
from baremetal_orch.tests import base

ENDPOINT = 'http://orch.test:6388'


class ClientTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.http = self.useFixture(rm_fixture.Fixture())

    def noauth_client(self, endpoint=ENDPOINT, **kwargs):
        session = ks_session.Session(auth=noauth.NoAuth(endpoint=endpoint))
        return client.Client(session, **kwargs)


class TestRequests(ClientTestCase):

    def test_microversion_header(self):
        # (API version option, header value)
        for option, header in [('1', 'baremetal-orchestration 1.0'),
                               (None, 'baremetal-orchestration 1.0'),
                               ('1.0', 'baremetal-orchestration 1.0'),
                               ('1.7', 'baremetal-orchestration 1.7')]:
            self.http.get(ENDPOINT + '/v1/shards', json={'shards': []})
            self.noauth_client(api_version=option).get('shards')
            self.assertEqual(
                header,
                self.http.last_request.headers['OpenStack-API-Version'])

    def test_endpoint_with_or_without_v1(self):
        for endpoint in (ENDPOINT, ENDPOINT + '/', ENDPOINT + '/v1',
                         ENDPOINT + '/v1/'):
            self.http.get(ENDPOINT + '/v1/nodes/n1', json={'uuid': 'u'})
            api = self.noauth_client(endpoint)
            self.assertEqual({'uuid': 'u'}, api.get('nodes/n1'))
            self.assertEqual(ENDPOINT + '/v1/nodes/n1',
                             self.http.last_request.url)

    def test_json_body_and_params(self):
        self.http.post(ENDPOINT + '/v1/nodes', status_code=201,
                       json={'uuid': 'u'})
        self.noauth_client().post('nodes', {'driver': 'fake'})
        req = self.http.last_request
        self.assertEqual({'driver': 'fake'}, req.json())
        self.assertEqual('application/json', req.headers['Content-Type'])
        self.http.get(ENDPOINT + '/v1/nodes', json={'nodes': []})
        self.noauth_client().get('nodes', params={'shard': 'a',
                                                  'tag': None})
        self.assertEqual({'shard': ['a']}, self.http.last_request.qs)

    def test_raw_yaml_body(self):
        self.http.post(ENDPOINT + '/v1/deployment_strategies',
                       status_code=201, json={'name': 's'})
        self.noauth_client().post('deployment_strategies',
                                  data=b'schema: x\n',
                                  content_type='application/yaml')
        req = self.http.last_request
        self.assertEqual(b'schema: x\n', req.body)
        self.assertEqual('application/yaml', req.headers['Content-Type'])

    def test_patch_sends_a_list(self):
        self.http.patch(ENDPOINT + '/v1/nodes/n1', json={})
        self.noauth_client().patch('nodes/n1', ({'op': 'remove',
                                                 'path': '/name'},))
        self.assertEqual([{'op': 'remove', 'path': '/name'}],
                         self.http.last_request.json())

    def test_no_content(self):
        self.http.delete(ENDPOINT + '/v1/nodes/n1', status_code=204)
        self.assertIsNone(self.noauth_client().delete('nodes/n1'))


def root_document(minimum, maximum, endpoint=ENDPOINT):
    """The API's root document (the shape ``GET /`` answers)."""
    v1 = {'id': 'v1', 'status': 'CURRENT', 'min_version': minimum,
          'version': maximum,
          'links': [{'href': endpoint + '/v1/', 'rel': 'self'}]}
    return {'name': 'OpenStack Bare Metal Orchestration API',
            'default_version': v1, 'versions': [v1]}


class TestLatest(ClientTestCase):
    """``latest`` negotiates the newest microversion the server offers."""

    def test_the_servers_maximum(self):
        for option in ('latest', '1.latest'):
            self.http.get(ENDPOINT + '/', json=root_document('1.0', '1.3'))
            self.http.get(ENDPOINT + '/v1/shards', json={'shards': []})
            api = self.noauth_client(api_version=option)
            api.get('shards')
            api.get('shards')
            self.assertEqual('1.3', api.api_version)
            sent = [(r.path, r.headers.get('OpenStack-API-Version'))
                    for r in self.http.request_history[-3:]]
            # The root once, without a version; then the maximum.
            asked = ('/v1/shards', 'baremetal-orchestration 1.3')
            self.assertEqual([('/', None), asked, asked], sent)

    def test_endpoint_registered_with_v1(self):
        self.http.get(ENDPOINT + '/', json=root_document('1.0', '1.2'))
        self.http.get(ENDPOINT + '/v1/nodes', json={'nodes': []})
        api = self.noauth_client(ENDPOINT + '/v1', api_version='latest')
        api.get('nodes')
        self.assertEqual(
            'baremetal-orchestration 1.2',
            self.http.last_request.headers['OpenStack-API-Version'])

    def test_a_fixed_version_does_not_ask(self):
        self.http.get(ENDPOINT + '/v1/shards', json={'shards': []})
        self.noauth_client(api_version='1.0').get('shards')
        self.assertEqual(['/v1/shards'],
                         [r.path for r in self.http.request_history])

    def test_root_without_versions(self):
        self.http.get(ENDPOINT + '/', json={'name': 'something else'})
        e = self.assertRaises(exceptions.CommandError,
                              self.noauth_client(api_version='latest').get,
                              'shards')
        self.assertIn('lists no v1 version range', str(e))
        self.assertIn('--os-baremetal-orch-api-version 1.N', str(e))

    def test_root_error(self):
        self.http.get(ENDPOINT + '/', status_code=503, json={
            'errors': [{'status': 503, 'title': 'Service Unavailable',
                        'detail': 'Busy.'}]})
        e = self.assertRaises(exceptions.CommandError,
                              self.noauth_client(api_version='latest').get,
                              'shards')
        self.assertIn('Cannot negotiate the latest API version: Busy. '
                      '(HTTP 503)', str(e))

    def test_root_unreachable(self):
        self.http.get(ENDPOINT + '/',
                      exc=requests.exceptions.ConnectionError('refused'))
        e = self.assertRaises(exceptions.CommandError,
                              self.noauth_client(api_version='latest').get,
                              'shards')
        self.assertIn('Unable to reach the baremetal-orch API', str(e))


class TestErrors(ClientTestCase):

    def test_api_sig_document(self):
        self.http.get(ENDPOINT + '/v1/nodes/n9', status_code=404, json={
            'errors': [{'status': 404, 'code': 'baremetal_orch.node.'
                        'not_found', 'title': 'Not Found',
                        'detail': 'Node n9 could not be found.',
                        'request_id': 'req-1'}]})
        e = self.assertRaises(client.ApiError, self.noauth_client().get,
                              'nodes/n9')
        self.assertIsInstance(e, exceptions.CommandError)
        self.assertEqual((404, 'baremetal_orch.node.not_found',
                          'Node n9 could not be found.', 'req-1'),
                         (e.status, e.code, e.detail, e.request_id))
        self.assertEqual('Node n9 could not be found. (HTTP 404, '
                         'baremetal_orch.node.not_found, request req-1)',
                         str(e))

    def test_error_without_document(self):
        self.http.get(ENDPOINT + '/v1/nodes', status_code=502,
                      text='<html>Bad gateway</html>', reason='Bad Gateway',
                      headers={'X-OpenStack-Request-Id': 'req-2'})
        e = self.assertRaises(client.ApiError, self.noauth_client().get,
                              'nodes')
        self.assertEqual('<html>Bad gateway</html> (HTTP 502, request '
                         'req-2)', str(e))

    def test_unreachable(self):
        self.http.get(ENDPOINT + '/v1/nodes',
                      exc=requests.exceptions.ConnectionError('refused'))
        e = self.assertRaises(exceptions.CommandError,
                              self.noauth_client().get, 'nodes')
        self.assertIn('Unable to reach the baremetal-orch API at %s'
                      % ENDPOINT, str(e))

    def test_not_json(self):
        self.http.get(ENDPOINT + '/v1/nodes', text='hello')
        e = self.assertRaises(exceptions.CommandError,
                              self.noauth_client().get, 'nodes')
        self.assertIn('not JSON', str(e))


class TestPaging(ClientTestCase):

    def _pages(self, *pages):
        responses = []
        for i, names in enumerate(pages):
            body = {'nodes': [{'uuid': n} for n in names]}
            if i < len(pages) - 1:
                body['next'] = (ENDPOINT + '/v1/nodes?limit=2&marker=%s'
                                '&shard=a' % names[-1])
            responses.append({'json': body})
        self.http.get(ENDPOINT + '/v1/nodes', responses)

    def test_follows_next_keeping_the_query(self):
        self._pages(['a', 'b'], ['c', 'd'], ['e'])
        items = self.noauth_client().list('nodes', {'shard': 'a'})
        self.assertEqual(['a', 'b', 'c', 'd', 'e'],
                         [i['uuid'] for i in items])
        queries = [r.qs for r in self.http.request_history]
        self.assertEqual([{'shard': ['a']},
                          {'shard': ['a'], 'marker': ['b']},
                          {'shard': ['a'], 'marker': ['d']}], queries)

    def test_limit_stops_early(self):
        self._pages(['a', 'b'], ['c', 'd'], ['e'])
        items = self.noauth_client().list('nodes', limit=3)
        self.assertEqual(['a', 'b', 'c'], [i['uuid'] for i in items])
        self.assertEqual(2, len(self.http.request_history))
        self.assertEqual(['3'], self.http.request_history[0].qs['limit'])


class TestKeystone(ClientTestCase):

    AUTH_URL = 'http://keystone.test/v3'

    def test_endpoint_from_the_catalog_and_token(self):
        token = ks_fixture.V3Token(project_id='p1')
        service = token.add_service(client.SERVICE_TYPE)
        service.add_standard_endpoints(public=ENDPOINT + '/',
                                       internal='http://internal.test',
                                       region='RegionOne')
        token.add_service('baremetal').add_standard_endpoints(
            public='http://ironic.test', region='RegionOne')
        self.http.post(self.AUTH_URL + '/auth/tokens', json=token,
                       headers={'X-Subject-Token': 'tok-1'})
        self.http.get(ENDPOINT + '/v1/shards', json={'shards': []})
        session = ks_session.Session(auth=v3.Password(
            auth_url=self.AUTH_URL, username='u', password='p',
            project_id='p1', user_domain_id='default'))
        api = client.Client(session, interface='public',
                            region_name='RegionOne')
        self.assertEqual({'shards': []}, api.get('shards'))
        self.assertEqual('tok-1',
                         self.http.last_request.headers['X-Auth-Token'])

    def test_no_endpoint_in_the_catalog(self):
        token = ks_fixture.V3Token(project_id='p1')
        self.http.post(self.AUTH_URL + '/auth/tokens', json=token,
                       headers={'X-Subject-Token': 'tok-1'})
        session = ks_session.Session(auth=v3.Password(
            auth_url=self.AUTH_URL, username='u', password='p',
            project_id='p1', user_domain_id='default'))
        e = self.assertRaises(exceptions.CommandError,
                              client.Client(session).get, 'shards')
        self.assertIn(client.SERVICE_TYPE, str(e))

    def test_endpoint_override(self):
        self.http.get('http://override.test/v1/shards', json={})
        session = ks_session.Session(auth=noauth.NoAuth())
        client.Client(session, endpoint_override='http://override.test'
                      ).get('shards')
        self.assertEqual('http://override.test/v1/shards',
                         self.http.last_request.url)
