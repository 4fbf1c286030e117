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
"""/v1/ports."""

from oslo_utils import uuidutils

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base

FIELDS = {'uuid', 'node_uuid', 'address', 'pxe_enabled',
          'local_link_connection', 'extra', 'created_at', 'updated_at',
          'links'}


class PortApiTestCase(base.ApiTestCase):

    def setUp(self):
        super().setUp()
        self.node = self.post('/v1/nodes', {'driver': 'fake', 'name': 'n1'},
                              status=201).json
        self.other = self.post('/v1/nodes', {'driver': 'fake',
                                             'name': 'n2'}, status=201).json

    def make(self, address='52:54:00:00:00:01', node=None, **body):
        body.update(address=address,
                    node_uuid=(node or self.node)['uuid'])
        return self.post('/v1/ports', body, status=201).json


class TestPorts(PortApiTestCase):

    def test_create_and_show(self):
        port = self.make('52-54-00-AB-CD-EF', pxe_enabled=False,
                         local_link_connection={'switch_id': 's',
                                                'port_id': 'p'},
                         extra={'a': 1})
        self.assertEqual(FIELDS, set(port))
        self.assertEqual(('52:54:00:ab:cd:ef', self.node['uuid'], False,
                          {'switch_id': 's', 'port_id': 'p'}, {'a': 1}),
                         (port['address'], port['node_uuid'],
                          port['pxe_enabled'],
                          port['local_link_connection'], port['extra']))
        self.assertEqual(port, self.get('/v1/ports/' + port['uuid'],
                                        status=200).json)
        doc = self.get('/v1/ports/%s?fields=address' % port['uuid'],
                       status=200).json
        self.assertEqual({'address', 'links'}, set(doc))

    def test_create_by_node_name_is_refused(self):
        resp = self.post('/v1/ports', {'node_uuid': 'n1',
                                       'address': '52:54:00:00:00:01'})
        self.assertError(resp, 400, detail_contains='node_uuid')

    def test_invalid_documents(self):
        for body, offender in (
                ({'address': '52:54:00:00:00:01'}, 'node_uuid'),
                ({'node_uuid': self.node['uuid']}, 'address'),
                ({'node_uuid': self.node['uuid'], 'address': 'nope'},
                 'address'),
                ({'node_uuid': self.node['uuid'],
                  'address': '52:54:00:00:00:01', 'pxe_enabled': 'yes'},
                 'pxe_enabled'),
                ({'node_uuid': self.node['uuid'],
                  'address': '52:54:00:00:00:01',
                  'local_link_connection': {'vlan': 1}}, 'vlan'),
                ({'node_uuid': self.node['uuid'],
                  'address': '52:54:00:00:00:01', 'mtu': 9000}, 'mtu')):
            self.assertError(self.post('/v1/ports', body), 400,
                             detail_contains=offender)
        self.assertEqual([], dbapi.list_ports())

    def test_unknown_node(self):
        resp = self.post('/v1/ports', {'node_uuid': uuidutils.generate_uuid(),
                                       'address': '52:54:00:00:00:01'})
        self.assertEqual(4, resp.status_int // 100)
        self.assertIn('errors', resp.json)
        self.assertEqual([], dbapi.list_ports())

    def test_duplicate_address(self):
        self.make('52:54:00:00:00:01')
        resp = self.post('/v1/ports', {'node_uuid': self.other['uuid'],
                                       'address': '52:54:00:00:00:01'})
        self.assertError(resp, 409, 'baremetal_orch.conflict',
                         '52:54:00:00:00:01')
        # Upper case is the same address.
        resp = self.post('/v1/ports', {'node_uuid': self.other['uuid'],
                                       'address': '52:54:00:00:00:01'
                                       .upper()})
        self.assertError(resp, 409)
        self.assertEqual(1, len(dbapi.list_ports()))

    def test_unknown_and_malformed_uuid(self):
        self.assertError(self.get('/v1/ports/' + uuidutils.generate_uuid()),
                         404, 'baremetal_orch.port.not_found')
        self.assertError(self.get('/v1/ports/nope'), 400,
                         'baremetal_orch.invalid_parameter', 'nope')

    def test_list(self):
        p1 = self.make('52:54:00:00:00:01')
        p2 = self.make('52:54:00:00:00:02', node=self.other)
        p3 = self.make('52:54:00:00:00:03')

        def uuids(query=''):
            return [p['uuid'] for p in self.get('/v1/ports?' + query,
                                                status=200).json['ports']]
        self.assertEqual([p1['uuid'], p2['uuid'], p3['uuid']], uuids())
        self.assertEqual([p2['uuid']], uuids('node=n2'))
        self.assertEqual([p1['uuid'], p3['uuid']],
                         uuids('node=' + self.node['uuid']))
        self.assertEqual([p3['uuid']], uuids('address=52:54:00:00:00:03'))
        self.assertEqual([p3['uuid'], p2['uuid'], p1['uuid']],
                         uuids('sort_key=address&sort_dir=desc'))
        page = self.get('/v1/ports?limit=2&fields=address&node=n1',
                        status=200).json
        self.assertEqual([{'address': '52:54:00:00:00:01',
                           'links': p1['links']},
                          {'address': '52:54:00:00:00:03',
                           'links': p3['links']}], page['ports'])
        self.assertIn('node=n1', page['next'])
        self.assertEqual([], self.get(page['next'],
                                      status=200).json['ports'])
        self.assertError(self.get('/v1/ports?node=nope'), 404)
        for query in ('colour=red', 'sort_key=node_id2', 'limit=x',
                      'fields=nope'):
            self.assertError(self.get('/v1/ports?' + query), 400)

    def test_patch(self):
        port = self.make('52:54:00:00:00:01')
        doc = self.patch('/v1/ports/' + port['uuid'], [
            {'op': 'replace', 'path': '/address',
             'value': '52-54-00-00-00-0A'},
            {'op': 'replace', 'path': '/pxe_enabled', 'value': False},
            {'op': 'replace', 'path': '/node_uuid',
             'value': self.other['uuid']},
            {'op': 'add', 'path': '/extra/a', 'value': 'b'}],
            status=200).json
        self.assertEqual(('52:54:00:00:00:0a', False, self.other['uuid'],
                          {'a': 'b'}),
                         (doc['address'], doc['pxe_enabled'],
                          doc['node_uuid'], doc['extra']))
        self.assertEqual(doc, self.get('/v1/ports/' + port['uuid']).json)

    def test_patch_errors(self):
        port = self.make('52:54:00:00:00:01')
        self.make('52:54:00:00:00:02')
        url = '/v1/ports/' + port['uuid']
        for patch, status in (
                ([{'op': 'replace', 'path': '/uuid',
                   'value': uuidutils.generate_uuid()}], 400),
                ([{'op': 'replace', 'path': '/created_at', 'value': 'x'}],
                 400),
                ([{'op': 'replace', 'path': '/address', 'value': 'x'}],
                 400),
                ([{'op': 'replace', 'path': '/pxe_enabled', 'value': 1}],
                 400),
                ([{'op': 'remove', 'path': '/nope'}], 400),
                ({'op': 'remove'}, 400),
                ([{'op': 'replace', 'path': '/address',
                   'value': '52:54:00:00:00:02'}], 409),
                ([{'op': 'replace', 'path': '/node_uuid',
                   'value': uuidutils.generate_uuid()}], 404)):
            self.assertError(self.patch(url, patch), status)
        self.assertEqual(port, self.get(url).json)

    def test_delete(self):
        port = self.make('52:54:00:00:00:01')
        resp = self.delete('/v1/ports/' + port['uuid'], status=204)
        self.assertEqual(b'', resp.body)
        self.assertError(self.get('/v1/ports/' + port['uuid']), 404)
        self.assertError(self.delete('/v1/ports/' + port['uuid']), 404)
        # The node can go now.
        self.delete('/v1/nodes/n1', status=204)
