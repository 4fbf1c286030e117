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
"""Bad requests on every write call: a 4xx API-SIG document, never a 500,
and nothing written. Unknown paths and wrong methods alike."""

from unittest import mock

from oslo_utils import uuidutils

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base

ERROR_KEYS = {'status', 'code', 'title', 'detail', 'request_id'}


class ErrorTestCase(base.ApiTestCase):

    def setUp(self):
        super().setUp()
        self.config(group='api', max_request_body_size=1024)
        self.node = self.post('/v1/nodes', {'driver': 'fake', 'name': 'n1'},
                              status=201).json
        self.port = self.post('/v1/ports', {
            'node_uuid': self.node['uuid'],
            'address': '52:54:00:00:00:01'}, status=201).json
        self.chassis = self.post('/v1/chassis', {}, status=201).json

    def assertDocument(self, resp, status):
        self.assertEqual(status, resp.status_int, resp.text)
        self.assertEqual('application/json', resp.content_type)
        errors = resp.json['errors']
        self.assertEqual(1, len(errors))
        self.assertEqual(ERROR_KEYS, set(errors[0]))
        self.assertEqual(status, errors[0]['status'])
        self.assertTrue(errors[0]['code'].startswith('baremetal_orch.'))
        self.assertTrue(errors[0]['title'])
        self.assertTrue(errors[0]['detail'])
        self.assertEqual(resp.headers['x-openstack-request-id'],
                         errors[0]['request_id'])
        return errors[0]

    def snapshot(self):
        """Everything a write could change."""
        return ([n.as_dict() for n in dbapi.list_nodes()],
                [p.as_dict() for p in dbapi.list_ports()],
                [c.as_dict() for c in dbapi.list_chassis()],
                [s.name for s in dbapi.list_strategies()],
                [a.uuid for a in dbapi.list_actions()])

    def writes(self):
        """(method, path, what a valid body looks like) of every write."""
        return [
            ('post', '/v1/nodes', 'object'),
            ('patch', '/v1/nodes/n1', 'patch'),
            ('put', '/v1/nodes/n1/states/provision', 'object'),
            ('put', '/v1/nodes/n1/states/console', 'object'),
            ('put', '/v1/nodes/n1/maintenance', 'object'),
            ('post', '/v1/nodes/filter', 'object'),
            ('post', '/v1/ports', 'object'),
            ('patch', '/v1/ports/' + self.port['uuid'], 'patch'),
            ('post', '/v1/chassis', 'object'),
            ('patch', '/v1/chassis/' + self.chassis['uuid'], 'patch'),
            ('post', '/v1/deployment_strategies', 'object'),
            ('post', '/v1/deployment_strategies/validate', 'object'),
            ('post', '/v1/actions', 'object'),
        ]


class TestBadBodies(ErrorTestCase):

    def test_every_write(self):
        before = self.snapshot()
        big = '{"extra": {"pad": "%s"}}' % ('x' * 2048)
        for method, path, kind in self.writes():
            cases = [
                ('{"driver": ', None, 400),
                ('{"a": 1}}', None, 400),
                ('"a string"', None, 400),
                ('5', None, 400),
                ('null', None, 400),
                (big, None, 413),
                ('[' + big + ']', None, 413),
                ('{}', 'text/plain', 415),
                ('{}', 'application/xml', 415),
            ]
            if kind == 'object':
                cases.append(('[]', None, 400))
            else:
                cases.append(('{}', None, 400))
            if not path.endswith('/maintenance'):
                cases.append(('', None, 400))
            for body, ctype, status in cases:
                resp = self._call(method, path, body,
                                  content_type=ctype)
                self.assertDocument(resp, status)
            self.assertEqual(before, self.snapshot(),
                             '%s %s wrote something' % (method, path))

    def test_unknown_fields_and_wrong_types(self):
        before = self.snapshot()
        for path, body, offender in (
                ('/v1/nodes', {'driver': 'fake', 'color': 'x'}, 'color'),
                ('/v1/nodes', {'driver': 'fake', 'tags': {'a': 1}}, 'tags'),
                ('/v1/nodes', {'driver': 'fake', 'extra': 'x'}, 'extra'),
                ('/v1/ports', {'node_uuid': self.node['uuid'],
                               'address': '52:54:00:00:00:09',
                               'vlan': 5}, 'vlan'),
                ('/v1/ports', {'node_uuid': self.node['uuid'],
                               'address': 52}, 'address'),
                ('/v1/chassis', {'description': ['x']}, 'description'),
                ('/v1/chassis', {'colour': 'x'}, 'colour'),
                ('/v1/actions', {'name': 'deploy_site', 'x': 1}, 'x'),
                ('/v1/actions', {'name': 5}, 'name'),
                ('/v1/nodes/filter', {'selectors': [], 'x': 1}, 'x')):
            error = self.assertDocument(self.post(path, body), 400)
            self.assertIn(offender, error['detail'])
        for path, body, offender in (
                ('/v1/nodes/n1/states/provision', {'target': 5}, 'target'),
                ('/v1/nodes/n1/states/console', {'enabled': 1}, 'enabled'),
                ('/v1/nodes/n1/maintenance', {'why': 'x'}, 'why')):
            error = self.assertDocument(self.put(path, body), 400)
            self.assertIn(offender, error['detail'])
        self.assertEqual(before, self.snapshot())

    def test_json_with_a_charset_is_json(self):
        resp = self.post('/v1/chassis', b'{"description": "c"}',
                         content_type='application/json; charset=UTF-8')
        self.assertEqual(201, resp.status_int, resp.text)


class TestRouting(ErrorTestCase):

    def test_unknown_paths(self):
        for path in ('/nope', '/v1/nope', '/v2', '/v1/nodes/n1/nope',
                     '/v1/ports/%s/nope' % self.port['uuid']):
            error = self.assertDocument(self.get(path), 404)
            self.assertEqual('baremetal_orch.http_404', error['code'])

    def test_wrong_methods(self):
        uuid = uuidutils.generate_uuid()
        for method, path in (
                ('put', '/v1/nodes'), ('patch', '/v1/nodes'),
                ('delete', '/v1/nodes'), ('put', '/v1/nodes/n1'),
                ('get', '/v1/nodes/n1/states/provision'),
                ('post', '/v1/nodes/n1/states/provision'),
                ('get', '/v1/nodes/n1/maintenance'),
                ('delete', '/v1/ports'), ('patch', '/v1/ports'),
                ('put', '/v1/ports/' + uuid),
                ('delete', '/v1/chassis'), ('patch', '/v1/chassis'),
                ('delete', '/v1/deployment_strategies'),
                ('patch', '/v1/deployment_strategies/x'),
                ('put', '/v1/actions'), ('delete', '/v1/actions/' + uuid),
                ('patch', '/v1/actions/' + uuid),
                ('get', '/v1/tasks'), ('post', '/v1/tasks'),
                ('delete', '/v1/tasks/' + uuid)):
            kwargs = {'body': {}} if method in ('put', 'post',
                                                'patch') else {}
            resp = getattr(self, method)(path, **kwargs)
            error = self.assertDocument(resp, 405)
            self.assertEqual('baremetal_orch.http_405', error['code'],
                             '%s %s' % (method, path))
        self.get('/v1/nodes/n1', status=200)


class TestUnexpectedErrors(ErrorTestCase):

    def test_a_bug_is_a_500_without_details(self):
        with mock.patch('baremetal_orch.objects.chassis.Chassis.list',
                        autospec=True,
                        side_effect=RuntimeError('db password is hunter2')):
            resp = self.get('/v1/chassis')
        error = self.assertDocument(resp, 500)
        self.assertEqual('baremetal_orch.internal', error['code'])
        self.assertNotIn('hunter2', resp.text)
