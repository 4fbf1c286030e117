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
"""Secure RBAC: the personas a cloud has, against the default policy.

A system admin writes; a system reader reads everything and writes
nothing (403); a project member sees only the nodes its project owns,
may change them, creates nothing, and gets 403 on system resources; the
member of another project does not see them at all (404).
"""

from tempest import config
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from baremetal_orch_tempest_plugin.tests import base

CONF = config.CONF


class RBACTest(base.BaremetalOrchTest):

    credentials = ['system_admin', 'system_reader', 'project_member',
                   'project_alt_member']

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.enforce_scope.baremetal_orch:
            raise cls.skipException('baremetal_orch does not enforce the '
                                    'secure RBAC scopes')

    @classmethod
    def setup_clients(cls):
        super().setup_clients()
        cls.reader = cls.client(cls.os_system_reader)
        cls.member = cls.client(cls.os_project_member)
        cls.alt_member = cls.client(cls.os_project_alt_member)

    @classmethod
    def resource_setup(cls):
        super().resource_setup()
        cls.project_id = cls.os_project_member.credentials.project_id
        cls.alt_project_id = cls.os_project_alt_member.credentials.project_id
        cls.own = cls.create_node(name=cls.name('own'),
                                  owner=cls.project_id,
                                  driver_info={'ipmi_password': 'secret'})
        cls.free = cls.create_node(name=cls.name('free'))
        cls.port = cls.create_port(node_uuid=cls.own['uuid'],
                                   address='52:54:00:cc:dd:01')
        cls.chassis = cls.create_chassis(description=cls.name('rbac'))
        cls.strategy = cls.name('rbac')
        cls.create_strategy(cls.strategy, [
            {'name': 'g', 'selectors': [{'node_names': [cls.own['name']]}]}])

    def node_names(self, client):
        _, body = client.list('nodes', limit=1000)
        return {n['name'] for n in body['nodes']}


class TestSystemReader(RBACTest):

    @decorators.idempotent_id('a0b1c2d3-e4f5-4a6b-8c7d-8e9f0a1b2c01')
    def test_reads_everything(self):
        self.assertLessEqual({self.own['name'], self.free['name']},
                             self.node_names(self.reader))
        _, node = self.reader.show('nodes', self.own['uuid'])
        self.assertEqual('***', node['driver_info']['ipmi_password'])
        for collection, ident in (('ports', self.port['uuid']),
                                  ('chassis', self.chassis['uuid']),
                                  ('deployment_strategies', self.strategy)):
            self.reader.show(collection, ident)
        for collection in ('actions', 'services', 'shards', 'events',
                           'deployments'):
            self.reader.list(collection)

    @decorators.idempotent_id('a0b1c2d3-e4f5-4a6b-8c7d-8e9f0a1b2c02')
    def test_writes_are_403(self):
        calls = [
            (self.reader.create_node, (), {'name': self.name('no')}),
            (self.reader.update, ('nodes', self.own['uuid'], [
                {'op': 'add', 'path': '/extra/x', 'value': 'y'}]), {}),
            (self.reader.set_provision_state, (self.own['uuid'], 'manage'),
             {}),
            (self.reader.set_maintenance, (self.own['uuid'], 'no'), {}),
            (self.reader.delete, ('nodes', self.free['uuid']), {}),
            (self.reader.create, ('ports', {
                'node_uuid': self.free['uuid'],
                'address': '52:54:00:cc:dd:02'}), {}),
            (self.reader.create, ('chassis', {'description': 'no'}), {}),
            (self.reader.delete, ('chassis', self.chassis['uuid']), {}),
            (self.reader.create_strategy, (base.strategy_document(
                self.name('no'), [{'name': 'g', 'selectors': []}]),), {}),
            (self.reader.delete, ('deployment_strategies', self.strategy),
             {}),
            (self.reader.create_action, ('deploy_site', {
                'deployment_strategy': self.strategy}), {'dry_run': True}),
        ]
        for call, args, kwargs in calls:
            exc = self.assertRaises(lib_exc.Forbidden, call, *args, **kwargs)
            self.assertErrorDocument(403, exc.resp_body)
        # Nothing changed.
        _, node = self.admin.show('nodes', self.own['uuid'])
        self.assertEqual(('enroll', False, {}),
                         (node['provision_state'], node['maintenance'],
                          node['extra']))
        self.admin.show('chassis', self.chassis['uuid'])
        self.admin.show('deployment_strategies', self.strategy)


class TestProjectIsolation(RBACTest):

    @decorators.idempotent_id('a0b1c2d3-e4f5-4a6b-8c7d-8e9f0a1b2c03')
    def test_member_sees_and_changes_its_own_nodes_only(self):
        names = self.node_names(self.member)
        self.assertIn(self.own['name'], names)
        self.assertNotIn(self.free['name'], names)
        # ?owner= of another project does not widen the view.
        _, body = self.member.list('nodes', owner=self.alt_project_id)
        self.assertEqual([], body['nodes'])
        self.assertRaises(lib_exc.NotFound, self.member.show, 'nodes',
                          self.free['uuid'])
        _, node = self.member.update('nodes', self.own['uuid'], [
            {'op': 'add', 'path': '/extra/team', 'value': 'member'}])
        self.assertEqual('member', node['extra']['team'])
        # It may not give the node away, nor create one.
        self.assertRaises(lib_exc.Forbidden, self.member.update, 'nodes',
                          self.own['uuid'], [
                              {'op': 'replace', 'path': '/owner',
                               'value': self.alt_project_id}])
        self.assertRaises(lib_exc.Forbidden, self.member.create_node,
                          name=self.name('no'), owner=self.project_id)
        _, body = self.member.list('ports')
        self.assertEqual([self.port['uuid']],
                         [p['uuid'] for p in body['ports']])

    @decorators.idempotent_id('a0b1c2d3-e4f5-4a6b-8c7d-8e9f0a1b2c04')
    def test_member_gets_403_on_system_resources(self):
        for collection in ('chassis', 'deployment_strategies', 'actions',
                           'services', 'shards', 'events', 'deployments'):
            exc = self.assertRaises(lib_exc.Forbidden, self.member.list,
                                    collection)
            self.assertErrorDocument(403, exc.resp_body)
        self.assertRaises(lib_exc.Forbidden, self.member.create_action,
                          'deploy_site', {'deployment_strategy':
                                          self.strategy}, dry_run=True)

    @decorators.idempotent_id('a0b1c2d3-e4f5-4a6b-8c7d-8e9f0a1b2c05')
    def test_other_project_sees_nothing(self):
        names = self.node_names(self.alt_member)
        self.assertNotIn(self.own['name'], names)
        self.assertNotIn(self.free['name'], names)
        for call, args in (
                (self.alt_member.show, ('nodes', self.own['uuid'])),
                (self.alt_member.show, ('nodes', self.own['name'])),
                (self.alt_member.show, ('ports', self.port['uuid'])),
                (self.alt_member.update, ('nodes', self.own['uuid'], [
                    {'op': 'add', 'path': '/extra/x', 'value': 'y'}])),
                (self.alt_member.set_provision_state,
                 (self.own['uuid'], 'manage')),
                (self.alt_member.delete, ('nodes', self.own['uuid']))):
            exc = self.assertRaises(lib_exc.NotFound, call, *args)
            self.assertErrorDocument(404, exc.resp_body)
        _, body = self.alt_member.list('ports')
        self.assertNotIn(self.port['uuid'],
                         [p['uuid'] for p in body['ports']])
        self.assertNotIn('x', self.admin.show(
            'nodes', self.own['uuid'])[1]['extra'] or {})
