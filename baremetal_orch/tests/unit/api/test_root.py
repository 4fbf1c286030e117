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
"""Version discovery, microversions and the healthcheck."""

from baremetal_orch.api import microversion
from baremetal_orch.tests import base

HEADER = 'OpenStack-API-Version'
MIN = microversion.fmt(microversion.MIN_VERSION)
MAX = microversion.fmt(microversion.MAX_VERSION)


class TestRoot(base.ApiTestCase):

    def test_root_lists_min_and_max(self):
        # No credentials at all: version discovery is public.
        resp = self.app.get('/', status=200)
        doc = resp.json
        version = doc['default_version']
        self.assertEqual(('v1', 'CURRENT', MIN, MAX),
                         (version['id'], version['status'],
                          version['min_version'], version['version']))
        self.assertEqual('http://localhost/v1/', version['links'][0]['href'])
        self.assertEqual([version], doc['versions'])

    def test_v1_lists_min_max_and_resources(self):
        doc = self.app.get('/v1', status=200).json
        # As Ironic's /v1: the version is an object (keystoneauth's
        # discovery of a versioned endpoint reads it).
        version = doc['version']
        self.assertEqual(('v1', 'CURRENT', MIN, MAX),
                         (version['id'], version['status'],
                          version['min_version'], version['version']))
        self.assertEqual('http://localhost/v1/', version['links'][0]['href'])
        self.assertEqual('v1', doc['id'])
        for name in ('nodes', 'ports', 'chassis', 'deployment_strategies',
                     'actions', 'events', 'deployments'):
            self.assertEqual('http://localhost/v1/' + name,
                             doc[name][0]['href'])
        self.assertEqual('application/json',
                         doc['media_types'][0]['base'])

    def test_v1_links_only_what_lists(self):
        # Every link of /v1 answers a GET (tasks have no list: not linked).
        doc = self.app.get('/v1', status=200).json
        self.assertNotIn('tasks', doc)
        for name, value in doc.items():
            if isinstance(value, list) and value and 'href' in value[0] \
                    and name not in ('links', 'media_types'):
                path = value[0]['href'].replace('http://localhost', '')
                self.get(path, status=200)

    def test_healthcheck_unauthenticated(self):
        resp = self.app.get('/healthcheck', status=200)
        self.assertNotIn(b'errors', resp.body)
        self.assertEqual(200, self.app.get('/healthcheck/').status_int)


class TestMicroversions(base.ApiTestCase):
    # The answers name the Keystone service type.
    SERVICE = 'baremetal-orchestration'

    def test_no_header_is_the_minimum(self):
        resp = self.get('/v1/nodes', status=200)
        self.assertEqual('%s %s' % (self.SERVICE, MIN), resp.headers[HEADER])
        self.assertIn(HEADER, resp.headers['Vary'])

    def test_explicit_versions(self):
        for asked, answered in ((MIN, MIN), (MAX, MAX), ('latest', MAX),
                                (' 1.0 ', '1.0')):
            resp = self.get('/v1/nodes', status=200,
                            headers={HEADER: 'baremetal-orch %s' % asked})
            self.assertEqual('%s %s' % (self.SERVICE, answered),
                             resp.headers[HEADER], asked)

    def test_service_type_and_short_name(self):
        # A keystoneauth Adapter typed by the catalog sends the service
        # type; the short name is accepted too. MAX differs from MIN once
        # there is a 1.1; the 406 of an unsupported version shows the
        # header was read under either name.
        for name in (self.SERVICE, 'baremetal-orch'):
            resp = self.get('/v1/nodes', status=200,
                            headers={HEADER: '%s latest' % name})
            self.assertEqual('%s %s' % (self.SERVICE, MAX),
                             resp.headers[HEADER], name)
            resp = self.get('/v1/nodes', headers={HEADER: '%s 9.9' % name})
            self.assertError(resp, 406, 'baremetal_orch.microversion', '9.9')
        # Both given: the service type's wins.
        resp = self.get('/v1/nodes', headers={
            HEADER: '%s %s, baremetal-orch 9.9' % (self.SERVICE, MIN)})
        self.assertEqual(200, resp.status_int, resp.text)

    def test_other_services_versions_are_ignored(self):
        resp = self.get('/v1/nodes', status=200,
                        headers={HEADER: 'compute 2.90'})
        self.assertEqual('%s %s' % (self.SERVICE, MIN), resp.headers[HEADER])

    def test_unsupported(self):
        for asked in ('1.%d' % (microversion.MAX_VERSION[1] + 1), '2.0',
                      '0.9'):
            resp = self.get('/v1/nodes', version=asked)
            error = self.assertError(resp, 406,
                                     'baremetal_orch.microversion', asked)
            self.assertIn(MIN, error['detail'])
            self.assertIn(MAX, error['detail'])

    def test_malformed(self):
        for asked in ('one', '1', '1.x', '1.0.1', '1.-1x'):
            resp = self.get('/v1/nodes', version=asked)
            self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                             asked.strip())

    def test_error_on_a_write_creates_nothing(self):
        resp = self.post('/v1/nodes', {'driver': 'fake'}, version='9.9')
        self.assertError(resp, 406)
        self.assertEqual([], self.get('/v1/nodes').json['nodes'])


class TestErrorMessage(base.ApiTestCase):

    def test_message_repeats_the_detail(self):
        # openstacksdk's generic handling reads a top-level "message".
        for path in ('/v1/nodes/no-such-node', '/v1/no-such-thing'):
            doc = self.get(path, status=404).json
            self.assertEqual(doc['errors'][0]['detail'], doc['message'])
            self.assertTrue(doc['message'])
