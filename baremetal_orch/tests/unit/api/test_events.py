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
"""GET /v1/events: filters, paging, fields and policy."""

from oslo_utils import uuidutils

from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import deployment as deployments
from baremetal_orch.tests import base

FIELDS = {'uuid', 'event_type', 'resource_uuid', 'action_uuid', 'message',
          'details', 'created_at'}


class TestEventsApi(base.ApiTestCase):

    def setUp(self):
        super().setUp()
        self.action = uuidutils.generate_uuid()
        self.node = self.create_node(name='n1')
        self.other = uuidutils.generate_uuid()
        record, _ = deployments.create(self.node, self.action, 'c')
        deployments.process(None, record, {'deploy_status': 'IN_PROGRESS',
                                           'deploy_status_reason': 'started'})
        deployments.process(None, dbapi.get_deployment(record.uuid),
                            {'deploy_status_code': 0, 'answer': 42})
        self.record = record
        dbapi.create_event('action.note', resource_uuid=self.other,
                           action_uuid=None, message='other',
                           details={'k': 'v'})

    def events(self, query='', **kw):
        return self.get('/v1/events%s' % query, status=200,
                        **kw).json['events']

    def test_list_everything_oldest_first(self):
        events = self.events()
        self.assertEqual(['deployment.signal.in_progress',
                          'deployment.signal.complete', 'action.note'],
                         [e['event_type'] for e in events])
        for event in events:
            self.assertEqual(FIELDS, set(event))
        first, second = events[:2]
        self.assertEqual(
            {'event_type': 'deployment.signal.in_progress',
             'resource_uuid': self.node.uuid, 'action_uuid': self.action,
             'message': 'started',
             'details': {'deployment_uuid': self.record.uuid,
                         'status': 'IN_PROGRESS', 'reason': 'started'}},
            {k: first[k] for k in ('event_type', 'resource_uuid',
                                   'action_uuid', 'message', 'details')})
        self.assertEqual({'answer': 42}, second['details']['outputs'])
        self.assertTrue(uuidutils.is_uuid_like(first['uuid']))
        self.assertIsNotNone(first['created_at'])

    def test_filters(self):
        self.assertEqual(2, len(self.events('?resource_uuid=%s'
                                            % self.node.uuid)))
        self.assertEqual(2, len(self.events('?action_uuid=%s'
                                            % self.action)))
        self.assertEqual(['other'], [e['message'] for e in self.events(
            '?resource_uuid=%s' % self.other)])
        self.assertEqual([], self.events('?resource_uuid=%s&action_uuid=%s'
                                         % (self.other, self.action)))
        self.assertEqual(['deployment.signal.complete'], [
            e['event_type'] for e in self.events(
                '?event_type=deployment.signal.complete')])

    def test_paging_and_fields(self):
        for i in range(3):
            dbapi.create_event('action.note', action_uuid=self.action,
                               message=str(i))
        seen = []
        url = '/v1/events?action_uuid=%s&limit=2&fields=message' % (
            self.action)
        while url:
            page = self.get(url.replace('http://localhost', ''),
                            status=200).json
            for event in page['events']:
                self.assertEqual({'message'}, set(event))
            seen.extend(e['message'] for e in page['events'])
            url = page.get('next')
            if url:
                self.assertIn('action_uuid=%s' % self.action, url)
                self.assertIn('fields=message', url)
        self.assertEqual(['started', self.record_reason(), '0', '1', '2'],
                         seen)
        desc = self.events('?sort_dir=desc&action_uuid=%s' % self.action)
        self.assertEqual('2', desc[0]['message'])

    def record_reason(self):
        return dbapi.get_deployment(self.record.uuid).status_reason

    def test_bad_queries(self):
        for query in ('resource_uuid=x', 'action_uuid=1', 'limit=-1',
                      'sort_key=message', 'fields=secret', 'node_uuid=%s'
                      % self.node.uuid, 'sort_dir=up'):
            self.assertError(self.get('/v1/events?%s' % query), 400)

    def test_policy(self):
        self.events(persona='system_reader')
        for persona in ('project_admin', 'project_member', 'project_reader'):
            self.assertError(self.get('/v1/events', persona=persona), 403)
