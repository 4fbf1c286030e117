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
"""Nodes, ports and chassis through the API, as a system admin."""

from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from baremetal_orch_tempest_plugin.tests import base


class TestNodes(base.BaremetalOrchTest):

    @classmethod
    def resource_setup(cls):
        super().resource_setup()
        cls.tag = cls.name('tag')
        cls.chassis = cls.create_chassis(description=cls.name('chassis'))
        cls.node = cls.create_node(
            name=cls.name('node'), tags=[cls.tag], rack_name='rack-t',
            labels={'role': 'worker'}, chassis_uuid=cls.chassis['uuid'],
            driver_info={'ipmi_password': 'tempest-secret',
                         'ipmi_address': '192.0.2.10'})

    @decorators.idempotent_id('2a3d1b8e-6c55-4f0e-8f7d-0c4c6e1a2b01')
    def test_create_masks_secrets_and_show_by_name(self):
        self.assertEqual('enroll', self.node['provision_state'])
        self.assertEqual('***', self.node['driver_info']['ipmi_password'])
        self.assertEqual('192.0.2.10',
                         self.node['driver_info']['ipmi_address'])
        _, shown = self.admin.show('nodes', self.node['name'])
        self.assertEqual(self.node['uuid'], shown['uuid'])
        self.assertEqual('***', shown['driver_info']['ipmi_password'])
        self.assertEqual(self.chassis['uuid'], shown['chassis_uuid'])

    @decorators.idempotent_id('2a3d1b8e-6c55-4f0e-8f7d-0c4c6e1a2b02')
    def test_list_filters_by_tag_and_trims_fields(self):
        _, body = self.admin.list('nodes', tag=self.tag, detail='true')
        self.assertEqual([self.node['uuid']],
                         [n['uuid'] for n in body['nodes']])
        _, body = self.admin.list('nodes', tag=self.tag, fields='uuid,name')
        self.assertEqual({'uuid', 'name', 'links'},
                         set(body['nodes'][0]))

    @decorators.idempotent_id('2a3d1b8e-6c55-4f0e-8f7d-0c4c6e1a2b03')
    def test_patch_and_bad_patch(self):
        node = self.create_node(name=self.name('patch'))
        _, node = self.admin.update('nodes', node['uuid'], [
            {'op': 'replace', 'path': '/rack_name', 'value': 'rack-p'},
            {'op': 'add', 'path': '/extra/team', 'value': 'blue'}])
        self.assertEqual(('rack-p', {'team': 'blue'}),
                         (node['rack_name'], node['extra']))
        exc = self.assertRaises(lib_exc.BadRequest, self.admin.update,
                                'nodes', node['uuid'], [
                                    {'op': 'replace', 'path': '/driver',
                                     'value': 'ironic'}])
        self.assertErrorDocument(400, exc.resp_body)

    @decorators.idempotent_id('2a3d1b8e-6c55-4f0e-8f7d-0c4c6e1a2b04')
    def test_provision_maintenance_and_delete(self):
        node = self.create_node(name=self.name('life'))
        for target, state in (('manage', 'manageable'),
                              ('provide', 'available'),
                              ('active', 'active')):
            self.admin.set_provision_state(node['uuid'], target)
            self.wait_for_provision_state(node['uuid'], state)
        # An active node cannot be deleted, nor managed again.
        self.assertRaises(lib_exc.Conflict, self.admin.delete, 'nodes',
                          node['uuid'])
        self.assertRaises(lib_exc.Conflict, self.admin.set_provision_state,
                          node['uuid'], 'manage')
        self.admin.set_maintenance(node['uuid'], 'tempest')
        _, shown = self.admin.show('nodes', node['uuid'])
        self.assertEqual((True, 'tempest'), (shown['maintenance'],
                                             shown['maintenance_reason']))
        self.admin.unset_maintenance(node['uuid'])
        self.assertFalse(self.admin.show('nodes',
                                         node['uuid'])[1]['maintenance'])
        self.admin.set_provision_state(node['uuid'], 'deleted')
        self.wait_for_provision_state(node['uuid'], 'available')
        self.admin.delete('nodes', node['uuid'])
        self.assertRaises(lib_exc.NotFound, self.admin.show, 'nodes',
                          node['uuid'])

    @decorators.idempotent_id('2a3d1b8e-6c55-4f0e-8f7d-0c4c6e1a2b05')
    def test_node_filter_selectors(self):
        other = self.create_node(name=self.name('other'), tags=[self.tag],
                                 rack_name='rack-u')
        _, body = self.admin.filter_nodes([{'node_tags': [self.tag]}])
        self.assertEqual(sorted([self.node['name'], other['name']]),
                         sorted(body['node_names']))
        _, body = self.admin.filter_nodes([{'node_tags': [self.tag],
                                            'rack_names': ['rack-u']}])
        self.assertEqual([other['name']], body['node_names'])
        _, body = self.admin.filter_nodes([{'node_tags': [self.tag],
                                            'node_labels': ['role:worker']}])
        self.assertEqual([self.node['name']], body['node_names'])

    @decorators.idempotent_id('2a3d1b8e-6c55-4f0e-8f7d-0c4c6e1a2b06')
    def test_missing_node_is_404_document(self):
        exc = self.assertRaises(lib_exc.NotFound, self.admin.show, 'nodes',
                                self.name('missing'))
        self.assertErrorDocument(404, exc.resp_body)


class TestPortsAndChassis(base.BaremetalOrchTest):

    @classmethod
    def resource_setup(cls):
        super().resource_setup()
        cls.node = cls.create_node(name=cls.name('ports'))

    @decorators.idempotent_id('7c0e2f4a-1d3b-4a6e-9b8c-5d2e1f0a3c01')
    def test_port_lifecycle(self):
        port = self.create_port(node_uuid=self.node['uuid'],
                                address='52:54:00:aa:bb:01')
        self.assertEqual(self.node['uuid'], port['node_uuid'])
        _, body = self.admin.list('ports', node=self.node['uuid'])
        self.assertEqual([port['uuid']], [p['uuid'] for p in body['ports']])
        _, port = self.admin.update('ports', port['uuid'], [
            {'op': 'replace', 'path': '/pxe_enabled', 'value': False}])
        self.assertFalse(port['pxe_enabled'])
        # One address, one port.
        self.assertRaises(lib_exc.Conflict, self.admin.create, 'ports',
                          {'node_uuid': self.node['uuid'],
                           'address': '52:54:00:aa:bb:01'})
        # A node with ports cannot be deleted.
        self.assertRaises(lib_exc.Conflict, self.admin.delete, 'nodes',
                          self.node['uuid'])
        self.admin.delete('ports', port['uuid'])
        self.assertRaises(lib_exc.NotFound, self.admin.show, 'ports',
                          port['uuid'])

    @decorators.idempotent_id('7c0e2f4a-1d3b-4a6e-9b8c-5d2e1f0a3c02')
    def test_bad_mac_is_400(self):
        exc = self.assertRaises(lib_exc.BadRequest, self.admin.create,
                                'ports', {'node_uuid': self.node['uuid'],
                                          'address': 'not-a-mac'})
        self.assertErrorDocument(400, exc.resp_body)

    @decorators.idempotent_id('7c0e2f4a-1d3b-4a6e-9b8c-5d2e1f0a3c03')
    def test_chassis_lifecycle(self):
        chassis = self.create_chassis(description='tempest chassis')
        _, chassis = self.admin.update('chassis', chassis['uuid'], [
            {'op': 'replace', 'path': '/description', 'value': 'renamed'}])
        self.assertEqual('renamed', chassis['description'])
        _, body = self.admin.list('chassis')
        self.assertIn(chassis['uuid'], [c['uuid'] for c in body['chassis']])
        node = self.create_node(name=self.name('in-chassis'),
                                chassis_uuid=chassis['uuid'])
        # A chassis with nodes cannot be deleted.
        self.assertRaises(lib_exc.Conflict, self.admin.delete, 'chassis',
                          chassis['uuid'])
        self.admin.delete('nodes', node['uuid'])
        self.admin.delete('chassis', chassis['uuid'])
        self.assertRaises(lib_exc.NotFound, self.admin.show, 'chassis',
                          chassis['uuid'])
