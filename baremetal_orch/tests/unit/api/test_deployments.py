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
"""GET /v1/deployments[/{uuid}]: deployment records, never their token."""

from oslo_utils import uuidutils

from baremetal_orch.objects import deployment as deployments
from baremetal_orch.tests import base

FIELDS = {'uuid', 'node_uuid', 'action_uuid', 'conductor', 'status',
          'status_reason', 'deploy_stdout', 'deploy_stderr',
          'deploy_status_code', 'signal_url', 'created_at', 'updated_at',
          'links'}


class TestDeploymentsApi(base.ApiTestCase):

    def setUp(self):
        super().setUp()
        self.action_a = uuidutils.generate_uuid()
        self.action_b = uuidutils.generate_uuid()
        self.nodes = [self.create_node(name='n%d' % i) for i in range(3)]
        self.records = {}
        self.tokens = {}
        for i, node in enumerate(self.nodes):
            action = self.action_a if i < 2 else self.action_b
            record, token = deployments.create(node, action, 'cond-%d' % i)
            self.records[node.name] = record
            self.tokens[node.name] = token

    def uuids(self, docs):
        return {d['uuid'] for d in docs}

    def test_show(self):
        record = self.records['n0']
        deployments.process(None, record, {'deploy_status_code': 3,
                                           'deploy_stdout': 'out',
                                           'deploy_stderr': 'err'})
        doc = self.get('/v1/deployments/%s' % record.uuid, status=200).json
        self.assertEqual(FIELDS, set(doc))
        self.assertEqual(
            {'uuid': record.uuid, 'node_uuid': self.nodes[0].uuid,
             'action_uuid': self.action_a, 'conductor': 'cond-0',
             'status': 'FAILED', 'deploy_status_code': 3,
             'deploy_stdout': 'out', 'deploy_stderr': 'err',
             'signal_url': record.signal_url},
            {k: doc[k] for k in ('uuid', 'node_uuid', 'action_uuid',
                                 'conductor', 'status', 'deploy_status_code',
                                 'deploy_stdout', 'deploy_stderr',
                                 'signal_url')})
        self.assertIn('non-zero status code: 3', doc['status_reason'])
        self.assertIsNotNone(doc['created_at'])
        self.assertNotIn(self.tokens['n0'], str(doc))
        self.assertNotIn(record.token_hash, str(doc))

    def test_show_errors(self):
        resp = self.get('/v1/deployments/%s' % uuidutils.generate_uuid())
        self.assertError(resp, 404, 'baremetal_orch.deployment.not_found')
        resp = self.get('/v1/deployments/nope')
        self.assertError(resp, 400, 'baremetal_orch.invalid_parameter')

    def test_list_and_filters(self):
        every = self.get('/v1/deployments', status=200).json['deployments']
        self.assertEqual({r.uuid for r in self.records.values()},
                         self.uuids(every))
        for doc in every:
            self.assertEqual(FIELDS, set(doc))
        by_action = self.get('/v1/deployments?action_uuid=%s'
                             % self.action_a, status=200).json
        self.assertEqual({self.records['n0'].uuid, self.records['n1'].uuid},
                         self.uuids(by_action['deployments']))
        by_node = self.get('/v1/deployments?node_uuid=%s'
                           % self.nodes[2].uuid, status=200).json
        self.assertEqual({self.records['n2'].uuid},
                         self.uuids(by_node['deployments']))
        both = self.get('/v1/deployments?node_uuid=%s&action_uuid=%s'
                        % (self.nodes[2].uuid, self.action_a),
                        status=200).json
        self.assertEqual([], both['deployments'])

    def test_superseded_records_are_not_listed(self):
        newer, _ = deployments.create(self.nodes[0], self.action_b, 'c')
        docs = self.get('/v1/deployments?node_uuid=%s' % self.nodes[0].uuid,
                        status=200).json['deployments']
        self.assertEqual([newer.uuid], [d['uuid'] for d in docs])
        # ... but still shown by uuid.
        self.get('/v1/deployments/%s' % self.records['n0'].uuid, status=200)

    def test_status_filter_and_fields(self):
        deployments.process(None, self.records['n1'],
                            {'deploy_status_code': 0})
        docs = self.get('/v1/deployments?status=COMPLETE&fields=status',
                        status=200).json['deployments']
        self.assertEqual([{'status': 'COMPLETE',
                           'links': docs[0]['links']}], docs)
        self.assertIn(self.records['n1'].uuid, docs[0]['links'][0]['href'])

    def test_paging_with_fields(self):
        url = '/v1/deployments?limit=1&fields=status'
        seen = 0
        while url:
            page = self.get(url.replace('http://localhost', ''),
                            status=200).json
            for doc in page['deployments']:
                self.assertEqual({'status', 'links'}, set(doc))
            seen += len(page['deployments'])
            url = page.get('next')
        self.assertEqual(3, seen)

    def test_paging_keeps_the_filters(self):
        more = [deployments.create(self.create_node(name='m%d' % i),
                                   self.action_a, 'c')[0].uuid
                for i in range(3)]
        expected = [self.records['n0'].uuid, self.records['n1'].uuid] + more
        seen = []
        url = '/v1/deployments?action_uuid=%s&limit=2' % self.action_a
        while url:
            page = self.get(url.replace('http://localhost', ''),
                            status=200).json
            self.assertLessEqual(len(page['deployments']), 2)
            seen.extend(d['uuid'] for d in page['deployments'])
            url = page.get('next')
            if url:
                self.assertIn('action_uuid=%s' % self.action_a, url)
        self.assertEqual(expected, seen)

    def test_bad_queries(self):
        for query in ('node_uuid=nope', 'action_uuid=1', 'limit=0',
                      'sort_key=token_hash', 'fields=token_hash',
                      'owner=x', 'marker=%s' % uuidutils.generate_uuid()):
            resp = self.get('/v1/deployments?%s' % query)
            self.assertError(resp, 400)

    def test_policy(self):
        self.get('/v1/deployments', persona='system_reader', status=200)
        self.get('/v1/deployments/%s' % self.records['n0'].uuid,
                 persona='system_reader', status=200)
        for persona in ('project_admin', 'project_member', 'project_reader'):
            self.assertError(self.get('/v1/deployments', persona=persona),
                             403)
            self.assertError(self.get('/v1/deployments/%s'
                                      % self.records['n0'].uuid,
                                      persona=persona), 403)

    def test_in_the_version_document(self):
        doc = self.get('/v1', status=200).json
        self.assertTrue(doc['deployments'][0]['href'].endswith(
            '/v1/deployments'))
        self.assertTrue(doc['events'][0]['href'].endswith('/v1/events'))
