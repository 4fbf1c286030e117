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
"""/v1/chassis."""

import datetime

from oslo_utils import uuidutils

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base


class TestChassis(base.ApiTestCase):

    def make(self, **body):
        return self.post('/v1/chassis', body, status=201).json

    def test_create_show_list(self):
        uuid = uuidutils.generate_uuid()
        chassis = self.make(uuid=uuid, description='rack 1',
                            extra={'a': 1})
        self.assertEqual({'uuid', 'description', 'extra', 'created_at',
                          'updated_at', 'links'}, set(chassis))
        self.assertEqual((uuid, 'rack 1', {'a': 1}),
                         (chassis['uuid'], chassis['description'],
                          chassis['extra']))
        self.assertEqual(chassis, self.get('/v1/chassis/' + uuid,
                                           status=200).json)
        other = self.make()
        listed = self.get('/v1/chassis', status=200).json['chassis']
        self.assertEqual([uuid, other['uuid']], [c['uuid'] for c in listed])
        page = self.get('/v1/chassis?limit=1&fields=description',
                        status=200).json
        self.assertEqual([{'description': 'rack 1',
                           'links': chassis['links']}], page['chassis'])
        page = self.get(page['next'], status=200).json
        self.assertEqual([other['links']], [c['links']
                                            for c in page['chassis']])
        desc = self.get('/v1/chassis?sort_key=id&sort_dir=desc').json
        self.assertEqual([other['uuid'], uuid],
                         [c['uuid'] for c in desc['chassis']])

    def test_errors(self):
        chassis = self.make()
        self.assertError(self.get('/v1/chassis/' +
                                  uuidutils.generate_uuid()),
                         404, 'baremetal_orch.chassis.not_found')
        self.assertError(self.get('/v1/chassis/nope'), 400,
                         detail_contains='nope')
        for body, offender in (({'uuid': 'x'}, 'uuid'),
                               ({'description': 'x' * 256}, 'description'),
                               ({'extra': 'x'}, 'extra'),
                               ({'name': 'x'}, 'name')):
            self.assertError(self.post('/v1/chassis', body), 400,
                             detail_contains=offender)
        resp = self.post('/v1/chassis', {'uuid': chassis['uuid']})
        self.assertError(resp, 409, 'baremetal_orch.conflict',
                         chassis['uuid'])
        for query in ('sort_key=description', 'colour=x', 'limit=0'):
            self.assertError(self.get('/v1/chassis?' + query), 400)
        self.assertEqual(1, len(dbapi.list_chassis()))

    def test_patch(self):
        chassis = self.make(description='old', extra={'a': 1})
        url = '/v1/chassis/' + chassis['uuid']
        doc = self.patch(url, [
            {'op': 'replace', 'path': '/description', 'value': 'new'},
            {'op': 'add', 'path': '/extra/b', 'value': 2}], status=200).json
        self.assertEqual(('new', {'a': 1, 'b': 2}),
                         (doc['description'], doc['extra']))
        doc = self.patch(url, [{'op': 'remove', 'path': '/description'}],
                         status=200).json
        self.assertIsNone(doc['description'])
        for patch in ([{'op': 'replace', 'path': '/uuid',
                        'value': uuidutils.generate_uuid()}],
                      [{'op': 'replace', 'path': '/description',
                        'value': 5}],
                      [{'op': 'replace', 'path': '/extra', 'value': []}],
                      [{'op': 'remove', 'path': '/nope'}],
                      'not a patch'):
            self.assertError(self.patch(url, patch), 400)
        self.assertEqual(doc, self.get(url).json)

    def test_delete(self):
        chassis = self.make()
        url = '/v1/chassis/' + chassis['uuid']
        node = self.post('/v1/nodes', {'driver': 'fake',
                                       'chassis_uuid': chassis['uuid']},
                         status=201).json
        self.assertError(self.delete(url), 409,
                         'baremetal_orch.chassis.not_empty')
        self.get(url, status=200)
        self.delete('/v1/nodes/' + node['uuid'], status=204)
        self.assertEqual(b'', self.delete(url, status=204).body)
        self.assertError(self.get(url), 404)

    def test_timestamps_are_utc_with_offset(self):
        # As api-ref's parameters say: ISO 8601, in UTC, with its offset
        # (the database keeps naive UTC datetimes).
        uuid = self.make()['uuid']
        dbapi.update_chassis(uuid, {'description': 'changed'})
        shown = self.get('/v1/chassis/' + uuid, status=200).json
        for key in ('created_at', 'updated_at'):
            self.assertTrue(shown[key].endswith('+00:00'), shown[key])
            self.assertIsNotNone(
                datetime.datetime.fromisoformat(shown[key]).tzinfo)
