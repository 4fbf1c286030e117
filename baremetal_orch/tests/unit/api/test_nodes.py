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
"""/v1/nodes: create, show, list, patch, delete, states, filter."""

import json
import urllib.parse

from oslo_utils import uuidutils

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base

DETAIL_FIELDS = {
    'uuid', 'name', 'driver', 'ironic_uuid', 'chassis_uuid', 'rack_name',
    'tags', 'labels', 'shard', 'conductor_group', 'provision_state',
    'target_provision_state', 'power_state', 'maintenance',
    'maintenance_reason', 'console_enabled', 'driver_info', 'instance_info',
    'extra', 'applied_labels', 'deployed_groups', 'conductor', 'owner',
    'last_error', 'created_at', 'updated_at', 'links'}

SECRETS = {'ipmi_password': 'pw1', 'API_SECRET': 'pw2', 'auth_token': 'pw3',
           'ssh_key': 'pw4', 'nested': {'password': 'pw5', 'user': 'admin'},
           'address': '10.0.0.1'}
MASKED = {'ipmi_password': '***', 'API_SECRET': '***', 'auth_token': '***',
          'ssh_key': '***', 'nested': {'password': '***', 'user': 'admin'},
          'address': '10.0.0.1'}


class NodeApiTestCase(base.ApiTestCase):

    def make(self, **body):
        body.setdefault('driver', 'fake')
        return self.post('/v1/nodes', body, status=201).json

    def count(self):
        return len(dbapi.list_nodes())


class TestCreateShow(NodeApiTestCase):

    def test_create_minimal(self):
        resp = self.post('/v1/nodes', {'driver': 'fake'}, status=201)
        node = resp.json
        self.assertEqual(DETAIL_FIELDS, set(node))
        self.assertTrue(uuidutils.is_uuid_like(node['uuid']))
        self.assertEqual(
            ('enroll', None, False, False, [], {}, 'test-conductor'),
            (node['provision_state'], node['target_provision_state'],
             node['maintenance'], node['console_enabled'], node['tags'],
             node['labels'], node['conductor']))
        self.assertTrue(resp.location.endswith('/v1/nodes/' + node['uuid']))
        self.assertEqual([{'href': 'http://localhost/v1/nodes/%s'
                           % node['uuid'], 'rel': 'self'}], node['links'])

    def test_create_full_and_show_by_uuid_and_name(self):
        chassis = self.post('/v1/chassis', {}, status=201).json
        body = {'uuid': uuidutils.generate_uuid(), 'name': 'node-1',
                'driver': 'fake', 'rack_name': 'rack01',
                'tags': ['control', 'ntp'], 'labels': {'role': 'ctl'},
                'shard': 's1', 'conductor_group': 'g1',
                'chassis_uuid': chassis['uuid'], 'extra': {'a': [1]},
                'instance_info': {'image': 'x'}, 'owner': 'project-a',
                'ironic_uuid': uuidutils.generate_uuid()}
        created = self.make(**body)
        for key, value in body.items():
            self.assertEqual(value, created[key], key)
        by_uuid = self.get('/v1/nodes/' + body['uuid'], status=200).json
        by_name = self.get('/v1/nodes/node-1', status=200).json
        self.assertEqual(created, by_uuid)
        self.assertEqual(created, by_name)

    def test_show_fields(self):
        node = self.make(name='n1', shard='s1')
        doc = self.get('/v1/nodes/n1?fields=name,shard', status=200).json
        self.assertEqual({'name': 'n1', 'shard': 's1', 'links':
                          node['links']}, doc)
        resp = self.get('/v1/nodes/n1?fields=name,reservation')
        self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                         'reservation')

    def test_unknown_node(self):
        for ident in ('nope', uuidutils.generate_uuid()):
            resp = self.get('/v1/nodes/' + ident)
            self.assertError(resp, 404, 'baremetal_orch.node.not_found',
                             ident)

    def test_duplicate_name(self):
        self.make(name='n1')
        resp = self.post('/v1/nodes', {'driver': 'fake', 'name': 'n1'})
        self.assertError(resp, 409, 'baremetal_orch.duplicate_name', 'n1')
        self.assertEqual(1, self.count())

    def test_duplicate_uuid(self):
        node = self.make(name='n1')
        resp = self.post('/v1/nodes', {'driver': 'fake', 'name': 'n2',
                                       'uuid': node['uuid']})
        self.assertError(resp, 409, 'baremetal_orch.conflict', node['uuid'])
        self.assertEqual(1, self.count())

    def test_unknown_chassis(self):
        resp = self.post('/v1/nodes', {
            'driver': 'fake', 'chassis_uuid': uuidutils.generate_uuid()})
        self.assertEqual(4, resp.status_int // 100, resp.text)
        self.assertEqual(0, self.count())

    def test_invalid_documents(self):
        cases = [
            ({}, 'driver'),
            ({'driver': 'pxe'}, 'driver'),
            ({'driver': 'fake', 'name': 5}, 'name'),
            ({'driver': 'fake', 'name': 'has space'}, 'name'),
            ({'driver': 'fake', 'tags': 'control'}, 'tags'),
            ({'driver': 'fake', 'tags': ['a', 'a']}, 'tags'),
            ({'driver': 'fake', 'labels': {'k': 1}}, 'labels.k'),
            ({'driver': 'fake', 'labels': {'bad key!': 'v'}}, 'bad key!'),
            ({'driver': 'fake', 'uuid': 'not-a-uuid'}, 'uuid'),
            ({'driver': 'fake', 'provision_state': 'active'},
             'provision_state'),
            ({'driver': 'fake', 'colour': 'blue'}, 'colour'),
            ({'driver': 'fake', 'driver_info': []}, 'driver_info'),
            ({'driver': 'fake', 'driver_info': {'fake_fail_phase': 'x'}},
             'fake_fail_phase'),
            ({'driver': 'fake', 'driver_info': {'fake_duration': -1}},
             'fake_duration'),
            # Found by the fuzz test: float() of it overflows (was a 500).
            ({'driver': 'fake', 'driver_info': {'fake_duration': 10 ** 400}},
             'fake_duration'),
        ]
        for body, offender in cases:
            resp = self.post('/v1/nodes', body)
            self.assertError(resp, 400, detail_contains=offender)
        self.assertEqual(0, self.count())


class TestSecrets(NodeApiTestCase):
    """Secret values never leave the API, whatever the call."""

    def test_masked_everywhere(self):
        node = self.make(name='n1', driver_info=dict(SECRETS),
                         instance_info={'image_token': 't', 'image': 'i'})
        docs = [node,
                self.get('/v1/nodes/n1', status=200).json,
                self.get('/v1/nodes?detail=true',
                         status=200).json['nodes'][0],
                self.get('/v1/nodes?fields=driver_info,instance_info',
                         status=200).json['nodes'][0],
                self.get('/v1/nodes/n1?fields=driver_info,instance_info',
                         status=200).json,
                self.patch('/v1/nodes/n1', [
                    {'op': 'add', 'path': '/driver_info/other_password',
                     'value': 'pw6'}], status=200).json]
        for doc in docs:
            self.assertEqual({'image_token': '***', 'image': 'i'},
                             doc['instance_info'])
            info = dict(doc['driver_info'])
            info.pop('other_password', None)
            self.assertEqual(MASKED, info)
            for secret in ('pw1', 'pw2', 'pw3', 'pw4', 'pw5', 'pw6'):
                self.assertNotIn(secret, json.dumps(doc))
        self.assertEqual('***', docs[-1]['driver_info']['other_password'])
        # Stored unmasked: the patch did not write '***' back.
        stored = dbapi.get_node('n1').driver_info
        self.assertEqual(dict(SECRETS, other_password='pw6'), stored)

    def test_patch_cannot_copy_a_secret_out(self):
        self.make(name='n1', driver_info={'ipmi_password': 'pw1'})
        for patch in (
                [{'op': 'copy', 'from': '/driver_info/ipmi_password',
                  'path': '/extra/leak'}],
                [{'op': 'copy', 'from': '/driver_info', 'path': '/extra'}],
                [{'op': 'move', 'from': '/driver_info/ipmi_password',
                  'path': '/driver_info/plain'}],
                [{'op': 'test', 'path': '/driver_info/ipmi_password',
                  'value': 'pw1'}]):
            resp = self.patch('/v1/nodes/n1', patch)
            self.assertNotIn('pw1', resp.text)
            self.assertError(resp, 400, 'baremetal_orch.invalid_patch')
        self.assertEqual({}, dbapi.get_node('n1').extra or {})


class TestList(NodeApiTestCase):

    def test_short_and_detail(self):
        self.make(name='n1')
        short = self.get('/v1/nodes', status=200).json
        self.assertEqual({'uuid', 'name', 'provision_state', 'maintenance',
                          'links'}, set(short['nodes'][0]))
        self.assertNotIn('next', short)
        detail = self.get('/v1/nodes?detail=true', status=200).json
        self.assertEqual(DETAIL_FIELDS, set(detail['nodes'][0]))
        fields = self.get('/v1/nodes?fields=name,tags', status=200).json
        self.assertEqual({'name', 'tags', 'links'},
                         set(fields['nodes'][0]))

    def test_filters(self):
        self.make(name='a', shard='s1', rack_name='r1', tags=['x'],
                  conductor_group='g1', owner='p1')
        self.make(name='b', shard='s2', rack_name='r1', tags=['y'])
        self.make(name='c', tags=['x', 'y'])
        dbapi.update_node('c', {'maintenance': True,
                                'provision_state': 'active'})

        def names(query):
            resp = self.get('/v1/nodes?sort_key=name&' + query, status=200)
            return [n['name'] for n in resp.json['nodes']]
        self.assertEqual(['a'], names('shard=s1'))
        self.assertEqual(['a', 'b'], names('shard=s1,s2'))
        self.assertEqual(['c'], names('sharded=false'))
        self.assertEqual(['a', 'b'], names('sharded=true'))
        self.assertEqual(['a', 'b'], names('rack_name=r1'))
        self.assertEqual(['a', 'c'], names('tag=x'))
        self.assertEqual(['c'], names('maintenance=true'))
        self.assertEqual(['a', 'b'], names('maintenance=false'))
        self.assertEqual(['c'], names('provision_state=active'))
        self.assertEqual(['a'], names('conductor_group=g1'))
        self.assertEqual(['a'], names('owner=p1'))
        self.assertEqual(['a', 'b', 'c'], names('driver=fake'))
        self.assertEqual(['a', 'b', 'c'], names('conductor=test-conductor'))

    def test_paging_follows_next(self):
        for i in range(5):
            self.make(name='n%d' % i)
        seen = []
        url = '/v1/nodes?limit=2&sort_key=name'
        pages = 0
        while url:
            page = self.get(url, status=200).json
            seen.extend(n['name'] for n in page['nodes'])
            url = page.get('next')
            pages += 1
            self.assertLess(pages, 5)
        self.assertEqual(['n0', 'n1', 'n2', 'n3', 'n4'], seen)
        self.assertEqual(3, pages)

    def test_next_keeps_every_filter(self):
        for i in range(3):
            self.make(name='a%d' % i, shard='a', tags=['t'])
            self.make(name='b%d' % i, shard='b', tags=['t'])
        page = self.get('/v1/nodes?shard=a&tag=t&limit=2&sort_key=name'
                        '&sort_dir=desc&fields=name,shard', status=200).json
        self.assertEqual(['a2', 'a1'], [n['name'] for n in page['nodes']])
        query = urllib.parse.parse_qs(
            urllib.parse.urlparse(page['next']).query)
        self.assertEqual({'shard': ['a'], 'tag': ['t'], 'limit': ['2'],
                          'sort_key': ['name'], 'sort_dir': ['desc'],
                          'fields': ['name,shard'],
                          'marker': [self.get('/v1/nodes/a1').json['uuid']]},
                         query)
        page = self.get(page['next'], status=200).json
        self.assertEqual([{'name': 'a0', 'shard': 'a'}],
                         [{k: n[k] for k in ('name', 'shard')}
                          for n in page['nodes']])
        self.assertNotIn('next', page)

    def test_limit_is_capped(self):
        self.config(group='api', max_limit=2)
        for i in range(3):
            self.make(name='n%d' % i)
        page = self.get('/v1/nodes?limit=50', status=200).json
        self.assertEqual(2, len(page['nodes']))
        self.assertIn('limit=2', page['next'])
        self.assertEqual(2, len(self.get('/v1/nodes').json['nodes']))

    def test_sorting(self):
        for name, rack in (('b', 'r2'), ('a', 'r3'), ('c', 'r1')):
            self.make(name=name, rack_name=rack)

        def names(query):
            return [n['name'] for n in self.get('/v1/nodes?' + query,
                                                status=200).json['nodes']]
        self.assertEqual(['a', 'b', 'c'], names('sort_key=name'))
        self.assertEqual(['c', 'b', 'a'], names('sort_key=name&'
                                                'sort_dir=desc'))
        self.assertEqual(['c', 'b', 'a'], names('sort_key=rack_name'))

    def test_bad_queries(self):
        self.make(name='n1')
        for query, offender in (
                ('sort_key=reservation', 'reservation'),
                ('sort_key=driver_info', 'driver_info'),
                ('sort_dir=up', 'up'),
                ('limit=0', 'limit'), ('limit=-1', 'limit'),
                ('limit=ten', 'ten'),
                ('marker=' + uuidutils.generate_uuid(), 'Marker'),
                ('fields=name,secret', 'secret'),
                ('maintenance=maybe', 'maybe'),
                ('detail=perhaps', 'perhaps'),
                ('colour=blue', 'colour'),
                ('Shard=a', 'Shard')):
            resp = self.get('/v1/nodes?' + query)
            self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                             offender)


class TestPatch(NodeApiTestCase):

    def setUp(self):
        super().setUp()
        self.node = self.make(name='n1', tags=['a'],
                              labels={'k1': 'v1', 'k2': 'v2'},
                              extra={'x': 1})

    def test_replace_add_remove(self):
        doc = self.patch('/v1/nodes/n1', [
            {'op': 'replace', 'path': '/name', 'value': 'n2'},
            {'op': 'add', 'path': '/tags/-', 'value': 'b'},
            {'op': 'remove', 'path': '/labels/k1'},
            {'op': 'add', 'path': '/labels/k3', 'value': 'v3'},
            {'op': 'add', 'path': '/shard', 'value': 's9'},
            {'op': 'remove', 'path': '/extra/x'},
        ], status=200).json
        self.assertEqual(('n2', ['a', 'b'], {'k2': 'v2', 'k3': 'v3'}, 's9',
                          {}),
                         (doc['name'], doc['tags'], doc['labels'],
                          doc['shard'], doc['extra']))
        self.assertEqual(doc, self.get('/v1/nodes/n2', status=200).json)
        self.assertEqual(404, self.get('/v1/nodes/n1').status_int)
        self.assertEqual(self.node['uuid'], doc['uuid'])

    def test_remove_collections(self):
        doc = self.patch('/v1/nodes/n1', [
            {'op': 'remove', 'path': '/tags'},
            {'op': 'remove', 'path': '/labels'},
            {'op': 'remove', 'path': '/name'}], status=200).json
        self.assertEqual(([], {}, None),
                         (doc['tags'], doc['labels'], doc['name']))

    def test_chassis(self):
        chassis = self.post('/v1/chassis', {}, status=201).json
        doc = self.patch('/v1/nodes/n1', [
            {'op': 'add', 'path': '/chassis_uuid',
             'value': chassis['uuid']}], status=200).json
        self.assertEqual(chassis['uuid'], doc['chassis_uuid'])
        doc = self.patch('/v1/nodes/n1', [
            {'op': 'remove', 'path': '/chassis_uuid'}], status=200).json
        self.assertIsNone(doc['chassis_uuid'])

    def test_readonly_fields(self):
        for field in ('uuid', 'driver', 'provision_state',
                      'target_provision_state', 'maintenance',
                      'console_enabled', 'conductor', 'last_error',
                      'created_at', 'links', 'deployed_groups',
                      'applied_labels'):
            resp = self.patch('/v1/nodes/n1', [
                {'op': 'replace', 'path': '/' + field, 'value': 'x'}])
            self.assertError(resp, 400, 'baremetal_orch.invalid_patch',
                             field)
        resp = self.patch('/v1/nodes/n1', [
            {'op': 'move', 'from': '/provision_state', 'path': '/name'}])
        self.assertError(resp, 400, 'baremetal_orch.invalid_patch')
        self.assertEqual('enroll', dbapi.get_node('n1').provision_state)

    def test_bad_patch_documents(self):
        for patch in ({'op': 'replace', 'path': '/name', 'value': 'x'},
                      [{'path': '/name', 'value': 'x'}],
                      [{'op': 'replace', 'value': 'x'}],
                      [{'op': 'frobnicate', 'path': '/name'}],
                      ['replace /name'],
                      [{'op': 'remove', 'path': '/labels/nope'}],
                      [{'op': 'replace', 'path': '/nope/deeper',
                        'value': 1}],
                      [{'op': 'test', 'path': '/name', 'value': 'other'}],
                      [{'op': 'replace', 'path': '', 'value': {}}],
                      [{'op': 'replace', 'path': '', 'value': 5}]):
            resp = self.patch('/v1/nodes/n1', patch)
            # A test that fails: the patch conflicts with the node's state.
            self.assertError(resp, 409 if patch == [
                {'op': 'test', 'path': '/name', 'value': 'other'}] else 400)
        node = self.get('/v1/nodes/n1', status=200).json
        self.assertEqual(self.node, node)

    def test_result_is_validated(self):
        for patch, offender in (
                ([{'op': 'replace', 'path': '/tags', 'value': 'a'}], 'tags'),
                ([{'op': 'add', 'path': '/labels/k', 'value': 5}],
                 'labels'),
                ([{'op': 'add', 'path': '/labels/bad key',
                   'value': 'v'}], 'bad key'),
                ([{'op': 'replace', 'path': '/name', 'value': 'a b'}],
                 'name'),
                ([{'op': 'replace', 'path': '/extra', 'value': []}],
                 'extra'),
                ([{'op': 'add', 'path': '/driver_info/fake_fail_phase',
                   'value': 'lunch'}], 'fake_fail_phase'),
                ([{'op': 'add', 'path': '/chassis_uuid',
                   'value': 'not-a-uuid'}], 'chassis_uuid')):
            resp = self.patch('/v1/nodes/n1', patch)
            self.assertError(resp, 400, detail_contains=offender)
        self.assertEqual(self.node, self.get('/v1/nodes/n1').json)

    def test_duplicate_name(self):
        self.make(name='other')
        resp = self.patch('/v1/nodes/n1', [
            {'op': 'replace', 'path': '/name', 'value': 'other'}])
        self.assertError(resp, 409, 'baremetal_orch.duplicate_name')
        self.assertEqual('n1', dbapi.get_node(self.node['uuid']).name)

    def test_unknown_node(self):
        resp = self.patch('/v1/nodes/nope', [
            {'op': 'replace', 'path': '/name', 'value': 'x'}])
        self.assertError(resp, 404, 'baremetal_orch.node.not_found')


class TestDelete(NodeApiTestCase):

    def test_delete(self):
        node = self.make(name='n1')
        resp = self.delete('/v1/nodes/n1', status=204)
        self.assertEqual(b'', resp.body)
        self.assertError(self.get('/v1/nodes/' + node['uuid']), 404)
        self.assertError(self.delete('/v1/nodes/n1'), 404,
                         'baremetal_orch.node.not_found')

    def test_node_with_ports(self):
        node = self.make(name='n1')
        self.post('/v1/ports', {'node_uuid': node['uuid'],
                                'address': '52:54:00:00:00:01'}, status=201)
        resp = self.delete('/v1/nodes/n1')
        self.assertError(resp, 409, 'baremetal_orch.node.has_ports',
                         node['uuid'])
        self.get('/v1/nodes/n1', status=200)

    def test_active_node(self):
        self.make(name='n1')
        dbapi.update_node('n1', {'provision_state': 'active'})
        resp = self.delete('/v1/nodes/n1')
        self.assertError(resp, 409, 'baremetal_orch.node.wrong_state',
                         'active')
        self.get('/v1/nodes/n1', status=200)

    def test_locked_node(self):
        self.make(name='n1')
        dbapi.reserve_node('n1', 'busy-host')
        resp = self.delete('/v1/nodes/n1')
        self.assertError(resp, 409, 'baremetal_orch.node.locked',
                         'busy-host')
        self.get('/v1/nodes/n1', status=200)


class TestStates(NodeApiTestCase):

    def provision(self, ident, target, expect):
        resp = self.put('/v1/nodes/%s/states/provision' % ident,
                        {'target': target}, status=202)
        self.assertEqual(b'', resp.body)

        def reached():
            node = dbapi.get_node(ident)
            return (node.provision_state == expect
                    and node.reservation is None)
        self.wait_for(reached)
        return self.get('/v1/nodes/%s/states' % ident, status=200).json

    def test_full_cycle(self):
        node = self.make(name='n1')
        self.provision('n1', 'manage', 'manageable')
        self.provision(node['uuid'], 'provide', 'available')
        states = self.provision('n1', 'active', 'active')
        self.assertEqual({'provision_state': 'active',
                          'target_provision_state': None,
                          'power_state': None, 'maintenance': False,
                          'console_enabled': False, 'last_error': None},
                         states)
        self.provision('n1', 'deleted', 'available')
        self.assertEqual('available',
                         self.get('/v1/nodes/n1').json['provision_state'])

    def test_failure_shows_last_error(self):
        self.make(name='n1', driver_info={'fake_fail_phase': 'deploy'})
        dbapi.update_node('n1', {'provision_state': 'available'})
        states = self.provision('n1', 'active', 'deploy failed')
        self.assertIn('deploy phase', states['last_error'])

    def test_illegal_transition(self):
        self.make(name='n1')
        resp = self.put('/v1/nodes/n1/states/provision', {'target': 'active'})
        error = self.assertError(
            resp, 409, 'baremetal_orch.node.invalid_state_transition')
        self.assertIn('"enroll"', error['detail'])
        self.assertIn('"n1"', error['detail'])
        self.assertEqual('enroll', dbapi.get_node('n1').provision_state)

    def test_locked_node(self):
        self.make(name='n1')
        dbapi.reserve_node('n1', 'busy-host')
        resp = self.put('/v1/nodes/n1/states/provision', {'target': 'manage'})
        self.assertError(resp, 409, 'baremetal_orch.node.locked',
                         'busy-host')
        self.assertEqual('enroll', dbapi.get_node('n1').provision_state)

    def test_bad_requests(self):
        self.make(name='n1')
        for body, offender in (({'target': 'rebuild'}, 'target'),
                               ({}, 'target'),
                               ({'target': 'manage', 'x': 1}, 'x')):
            resp = self.put('/v1/nodes/n1/states/provision', body)
            self.assertError(resp, 400, 'baremetal_orch.schema_validation',
                             offender)
        self.assertError(self.put('/v1/nodes/nope/states/provision',
                                  {'target': 'manage'}), 404)

    def test_maintenance(self):
        self.make(name='n1')
        resp = self.put('/v1/nodes/n1/maintenance', {'reason': 'fan'},
                        status=202)
        self.assertEqual(b'', resp.body)
        node = self.get('/v1/nodes/n1').json
        self.assertEqual((True, 'fan'), (node['maintenance'],
                                         node['maintenance_reason']))
        self.delete('/v1/nodes/n1/maintenance', status=202)
        node = self.get('/v1/nodes/n1').json
        self.assertEqual((False, None), (node['maintenance'],
                                         node['maintenance_reason']))
        # No body at all: maintenance without a reason.
        resp = self.app.put('/v1/nodes/n1/maintenance',
                            headers=self.headers(), expect_errors=True)
        self.assertEqual(202, resp.status_int, resp.text)
        node = self.get('/v1/nodes/n1').json
        self.assertEqual((True, None), (node['maintenance'],
                                        node['maintenance_reason']))
        self.assertError(self.put('/v1/nodes/n1/maintenance',
                                  {'reason': 5}), 400)

    def test_console(self):
        self.make(name='n1')
        self.put('/v1/nodes/n1/states/console', {'enabled': True},
                 status=202)
        self.assertTrue(self.get('/v1/nodes/n1').json['console_enabled'])
        self.put('/v1/nodes/n1/states/console', {'enabled': False},
                 status=202)
        self.assertFalse(self.get('/v1/nodes/n1').json['console_enabled'])
        self.assertError(self.put('/v1/nodes/n1/states/console',
                                  {'enabled': 'yes'}), 400,
                         detail_contains='enabled')


class TestFilter(NodeApiTestCase):

    def test_filter(self):
        self.make(name='ctl01', tags=['control'], rack_name='rack03',
                  labels={'zone': 'a'})
        self.make(name='cmp01', tags=['compute'], rack_name='rack01',
                  labels={'zone': 'b'})
        self.make(name='mon01', tags=['monitoring'], rack_name='rack01')

        def names(selectors):
            return self.post('/v1/nodes/filter', {'selectors': selectors},
                             status=200).json['node_names']
        self.assertEqual(['cmp01', 'ctl01', 'mon01'], names([]))
        self.assertEqual(['cmp01', 'ctl01', 'mon01'],
                         names([{'node_names': ['ctl01']}, {}]))
        self.assertEqual(['cmp01', 'ctl01'],
                         names([{'node_tags': ['control', 'compute']}]))
        self.assertEqual(['cmp01'], names([{'rack_names': ['rack01'],
                                            'node_labels': ['zone:b']}]))
        self.assertEqual(['ctl01', 'mon01'],
                         names([{'node_labels': [{'zone': 'a'}]},
                                {'node_tags': ['monitoring']}]))

    def test_invalid_selectors(self):
        for body, offender in (
                ({'selectors': [{'node_labels': ['bad']}]}, "'bad'"),
                ({'selectors': [{'nodes': ['x']}]}, 'nodes'),
                ({'selectors': 'x'}, 'selectors'),
                ({}, 'selectors')):
            resp = self.post('/v1/nodes/filter', body)
            self.assertError(resp, 400, detail_contains=offender)
