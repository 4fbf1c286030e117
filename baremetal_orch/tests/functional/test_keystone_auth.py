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
"""The API behind a REAL Keystone (keystonemiddleware auth_token)."""

import os
import uuid

from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import keystone
from baremetal_orch_testing import services


class TestKeystoneAuth(base.FunctionalTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.keystone = cls.use_class_fixture(keystone.KeystoneFixture())

    def setUp(self):
        super().setUp()
        ks = self.keystone
        suffix = uuid.uuid4().hex[:8]
        self.password = 'pw-' + suffix
        self.project_a = 'proj-a-' + suffix
        self.project_b = 'proj-b-' + suffix
        self.project_a_id = ks.create_project(self.project_a)
        ks.create_project(self.project_b)
        ks.create_user('sysreader-' + suffix, self.password,
                       system_roles=['reader'])
        ks.create_user('member-a-' + suffix, self.password,
                       project=self.project_a, roles=['member', 'reader'])
        ks.create_user('member-b-' + suffix, self.password,
                       project=self.project_b, roles=['member', 'reader'])
        self.suffix = suffix
        tmp = self.log_dir
        port = services.free_port()
        sections = services.base_sections(
            tmp, port, 'sqlite:///%s' % os.path.join(tmp, 'ks.sqlite'),
            DEFAULT={'host': 'aio-keystone'},
            api={'auth_strategy': 'keystone'})
        sections['keystone_authtoken'] = ks.authtoken_options()
        conf = services.write_config(os.path.join(tmp, 'ks.conf'), sections)
        proc = self.start_process(['baremetal-orch', '--config-file', conf])
        self.endpoint = 'http://127.0.0.1:%d' % port
        self.wait_for_http(self.endpoint + '/', status=200, process=proc,
                           timeout=90)

    def client(self, token=None):
        return services.Client(self.endpoint, token=token)

    def test_personas(self):
        ks = self.keystone
        # No token: 401 with an API-SIG document; the root stays public.
        resp = self.client().get('/v1/nodes', status=401)
        self.assertEqual(401, resp.status_code)
        self.client().get('/', status=200)
        self.client().get('/healthcheck', status=200)

        admin = self.client(ks.admin_token(system=True))
        reader = self.client(ks.token('sysreader-' + self.suffix,
                                      self.password, system_scope='all'))
        member_a = self.client(ks.token('member-a-' + self.suffix,
                                        self.password,
                                        project=self.project_a))
        member_b = self.client(ks.token('member-b-' + self.suffix,
                                        self.password,
                                        project=self.project_b))

        # A system admin creates; one node belongs to project A.
        admin.post('/v1/nodes', status=201, json={
            'name': 'ks-node-a', 'driver': 'fake',
            'owner': self.project_a_id})
        admin.post('/v1/nodes', status=201, json={
            'name': 'ks-node-x', 'driver': 'fake'})

        # A system reader lists everything but cannot create.
        names = {n['name'] for n in reader.get('/v1/nodes',
                                               status=200).json()['nodes']}
        self.assertEqual({'ks-node-a', 'ks-node-x'}, names)
        resp = reader.post('/v1/nodes', status=403, json={
            'name': 'nope', 'driver': 'fake'})
        self.assertEqual(403, resp.json()['errors'][0]['status'])
        self.assertEqual(404, admin.get('/v1/nodes/nope').status_code)

        # A project member sees only its project's nodes.
        names = {n['name'] for n in member_a.get(
            '/v1/nodes', status=200).json()['nodes']}
        self.assertEqual({'ks-node-a'}, names)
        member_a.get('/v1/nodes/ks-node-a', status=200)
        member_a.get('/v1/nodes/ks-node-x', status=404)
        member_a.post('/v1/nodes', status=403, json={
            'name': 'nope', 'driver': 'fake'})
        # ... and may change its own node.
        member_a.patch('/v1/nodes/ks-node-a', status=200, json=[
            {'op': 'add', 'path': '/extra/team', 'value': 'a'}])
        # Another project's member sees none of them.
        self.assertEqual([], member_b.get('/v1/nodes',
                                          status=200).json()['nodes'])
        member_b.get('/v1/nodes/ks-node-a', status=404)
