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
"""The policy matrix: each persona x each call -> the expected status.

A system admin writes everything; a system reader reads everything and
writes nothing (403). Project personas see only the nodes (and ports) their
project owns (others are 404); a project member may patch its nodes and
run provision verbs, never create or delete (403); a project reader only
reads. Chassis, strategies, actions and tasks are system-only.
"""

import testscenarios

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base

load_tests = testscenarios.load_tests_apply_scenarios

#: Personas in the order they call: the system admin last, so the one
#: successful destructive call comes after every refused one.
PERSONAS = ('other_member', 'project_reader', 'project_member',
            'project_admin', 'system_reader', 'system_admin')

STRATEGY = {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 'deployment-strategy'},
            'data': {'groups': [{'name': 'g', 'critical': True,
                                 'depends_on': [], 'selectors': []}]}}
PATCH = [{'op': 'add', 'path': '/extra/touched', 'value': 'yes'}]


def row(sa, sr, pa, pm, pr, om):
    """Expected statuses of the six personas.

    In order: system admin, system reader, project admin, project member,
    project reader, a member of another project.
    """
    return {'system_admin': sa, 'system_reader': sr, 'project_admin': pa,
            'project_member': pm, 'project_reader': pr, 'other_member': om}


READ_SYSTEM_ONLY = row(200, 200, 403, 403, 403, 403)
WRITE_SYSTEM_ONLY = row(201, 403, 403, 403, 403, 403)

#: (name, method, path, body, expected, reset after a success)
CALLS = [
    # Nodes
    ('node_list', 'get', '/v1/nodes', None,
     row(200, 200, 200, 200, 200, 200), None),
    ('node_show_own', 'get', '/v1/nodes/own', None,
     row(200, 200, 200, 200, 200, 404), None),
    ('node_show_unowned', 'get', '/v1/nodes/sys', None,
     row(200, 200, 404, 404, 404, 404), None),
    ('node_show_by_uuid', 'get', '/v1/nodes/{own_uuid}', None,
     row(200, 200, 200, 200, 200, 404), None),
    ('node_create', 'post', '/v1/nodes', {'driver': 'fake'},
     WRITE_SYSTEM_ONLY, None),
    ('node_create_for_own_project', 'post', '/v1/nodes',
     {'driver': 'fake', 'owner': 'project-a'}, WRITE_SYSTEM_ONLY, None),
    ('node_patch_own', 'patch', '/v1/nodes/own', PATCH,
     row(200, 403, 200, 200, 403, 404), None),
    ('node_patch_unowned', 'patch', '/v1/nodes/sys', PATCH,
     row(200, 403, 404, 404, 404, 404), None),
    ('node_delete_own', 'delete', '/v1/nodes/free', None,
     row(204, 403, 403, 403, 403, 404), None),
    ('node_provision_own', 'put', '/v1/nodes/free/states/provision',
     {'target': 'manage'}, row(202, 403, 202, 202, 403, 404),
     'reset_free'),
    ('node_provision_unowned', 'put', '/v1/nodes/sys/states/provision',
     {'target': 'manage'}, row(202, 403, 404, 404, 404, 404), None),
    ('node_maintenance_own', 'put', '/v1/nodes/own/maintenance',
     {'reason': 'x'}, row(202, 403, 202, 202, 403, 404), None),
    ('node_maintenance_off_own', 'delete', '/v1/nodes/own/maintenance',
     None, row(202, 403, 202, 202, 403, 404), None),
    ('node_console_own', 'put', '/v1/nodes/own/states/console',
     {'enabled': True}, row(202, 403, 202, 202, 403, 404), None),
    ('node_states_own', 'get', '/v1/nodes/own/states', None,
     row(200, 200, 200, 200, 200, 404), None),
    ('node_filter', 'post', '/v1/nodes/filter', {'selectors': []},
     READ_SYSTEM_ONLY, None),
    # Ports
    ('port_list', 'get', '/v1/ports', None,
     row(200, 200, 200, 200, 200, 200), None),
    ('port_show_own', 'get', '/v1/ports/{port_uuid}', None,
     row(200, 200, 200, 200, 200, 404), None),
    ('port_create', 'post', '/v1/ports',
     {'node_uuid': '{own_uuid}', 'address': '52:54:00:00:00:99'},
     WRITE_SYSTEM_ONLY, None),
    ('port_patch', 'patch', '/v1/ports/{port_uuid}',
     [{'op': 'replace', 'path': '/pxe_enabled', 'value': False}],
     row(200, 403, 403, 403, 403, 403), None),
    ('port_delete', 'delete', '/v1/ports/{port_uuid}', None,
     row(204, 403, 403, 403, 403, 403), None),
    # Chassis
    ('chassis_list', 'get', '/v1/chassis', None, READ_SYSTEM_ONLY, None),
    ('chassis_show', 'get', '/v1/chassis/{chassis_uuid}', None,
     READ_SYSTEM_ONLY, None),
    ('chassis_create', 'post', '/v1/chassis', {}, WRITE_SYSTEM_ONLY, None),
    ('chassis_patch', 'patch', '/v1/chassis/{chassis_uuid}',
     [{'op': 'add', 'path': '/description', 'value': 'x'}],
     row(200, 403, 403, 403, 403, 403), None),
    ('chassis_delete', 'delete', '/v1/chassis/{chassis_uuid}', None,
     row(204, 403, 403, 403, 403, 403), None),
    # Deployment strategies
    ('strategy_list', 'get', '/v1/deployment_strategies', None,
     READ_SYSTEM_ONLY, None),
    ('strategy_show', 'get', '/v1/deployment_strategies/stored', None,
     READ_SYSTEM_ONLY, None),
    ('strategy_create', 'post', '/v1/deployment_strategies', STRATEGY,
     WRITE_SYSTEM_ONLY, None),
    ('strategy_validate', 'post', '/v1/deployment_strategies/validate',
     STRATEGY, READ_SYSTEM_ONLY, None),
    ('strategy_delete', 'delete', '/v1/deployment_strategies/stored',
     None, row(204, 403, 403, 403, 403, 403), None),
    # Actions and tasks
    ('action_list', 'get', '/v1/actions', None, READ_SYSTEM_ONLY, None),
    ('action_show', 'get', '/v1/actions/{action_uuid}', None,
     READ_SYSTEM_ONLY, None),
    ('action_dry_run', 'post', '/v1/actions',
     {'name': 'deploy_site', 'dry_run': True,
      'parameters': {'deployment_strategy': 'stored'}},
     row(200, 403, 403, 403, 403, 403), None),
    ('task_show', 'get', '/v1/tasks/{task_uuid}', None, READ_SYSTEM_ONLY,
     None),
]


class PolicyTestCase(base.ApiTestCase):

    def setUp(self):
        super().setUp()
        own = self.create_node(name='own', owner='project-a')
        self.create_node(name='free', owner='project-a')
        self.create_node(name='theirs', owner='project-b')
        self.create_node(name='sys')
        port = dbapi.create_port({'node_id': own.id,
                                  'address': '52:54:00:00:00:01'})
        theirs = dbapi.get_node('theirs')
        dbapi.create_port({'node_id': theirs.id,
                           'address': '52:54:00:00:00:02'})
        chassis = dbapi.create_chassis({})
        dbapi.create_strategy('stored', dict(
            STRATEGY, metadata={'name': 'stored'}))
        action = dbapi.create_action({'name': 'deploy_site',
                                      'state': 'complete'})
        task = dbapi.create_task({'action_uuid': action.uuid,
                                  'kind': 'action', 'name': 'deploy_site'})
        self.values = {'own_uuid': own.uuid, 'port_uuid': port.uuid,
                       'chassis_uuid': chassis.uuid,
                       'action_uuid': action.uuid, 'task_uuid': task}

    def fill(self, value):
        if isinstance(value, str):
            return value.format(**self.values)
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        return value

    def reset_free(self):
        self.wait_for(lambda: dbapi.get_node('free').reservation is None)
        dbapi.update_node('free', {'provision_state': 'enroll'})


class TestPolicyMatrix(PolicyTestCase):

    scenarios = [(name, {'method': method, 'path': path, 'body': body,
                         'expected': expected, 'reset': reset})
                 for name, method, path, body, expected, reset in CALLS]

    def test_call(self):
        kwargs = {}
        if self.body is not None:
            kwargs['body'] = self.fill(self.body)
        got = {}
        for persona in PERSONAS:
            resp = getattr(self, self.method)(self.fill(self.path),
                                              persona=persona, **kwargs)
            got[persona] = resp.status_int
            if resp.status_int >= 400:
                # Refusals are API-SIG documents too.
                self.assertEqual(resp.status_int,
                                 resp.json['errors'][0]['status'])
            elif self.reset:
                getattr(self, self.reset)()
        self.assertEqual(self.expected, got)


class TestVisibility(PolicyTestCase):
    """What each persona sees in the lists."""

    def names(self, persona):
        nodes = self.get('/v1/nodes?sort_key=name', persona=persona,
                         status=200).json['nodes']
        return [n['name'] for n in nodes]

    def test_node_lists(self):
        everyone = ['free', 'own', 'sys', 'theirs']
        self.assertEqual(everyone, self.names('system_admin'))
        self.assertEqual(everyone, self.names('system_reader'))
        for persona in ('project_admin', 'project_member',
                        'project_reader'):
            self.assertEqual(['free', 'own'], self.names(persona))
        self.assertEqual(['theirs'], self.names('other_member'))

    def test_owner_filter_cannot_widen_a_project_view(self):
        nodes = self.get('/v1/nodes?owner=project-a',
                         persona='other_member', status=200).json['nodes']
        self.assertEqual([], nodes)

    def test_port_lists(self):
        def addresses(persona):
            return sorted(p['address'] for p in self.get(
                '/v1/ports', persona=persona, status=200).json['ports'])
        both = ['52:54:00:00:00:01', '52:54:00:00:00:02']
        self.assertEqual(both, addresses('system_admin'))
        self.assertEqual(both, addresses('system_reader'))
        self.assertEqual(['52:54:00:00:00:01'],
                         addresses('project_reader'))
        self.assertEqual(['52:54:00:00:00:02'], addresses('other_member'))

    def test_refused_writes_change_nothing(self):
        before = dbapi.get_node('own')
        for persona in ('system_reader', 'project_reader', 'other_member'):
            self.patch('/v1/nodes/own', PATCH, persona=persona)
            self.put('/v1/nodes/own/states/provision', {'target': 'manage'},
                     persona=persona)
            self.delete('/v1/nodes/own', persona=persona)
        after = dbapi.get_node('own')
        self.assertEqual((before.extra, before.provision_state,
                          before.updated_at),
                         (after.extra, after.provision_state,
                          after.updated_at))

    def test_project_member_patch_is_kept(self):
        doc = self.patch('/v1/nodes/own', PATCH, persona='project_member',
                         status=200).json
        self.assertEqual({'touched': 'yes'}, doc['extra'])
        # ... but cannot give its node away to another project.
        resp = self.patch('/v1/nodes/own', [
            {'op': 'replace', 'path': '/owner', 'value': 'project-b'}],
            persona='project_member')
        self.assertEqual(403, resp.status_int, resp.text)
        self.assertEqual('project-a', dbapi.get_node('own').owner)
