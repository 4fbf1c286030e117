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
"""Inside an action a node is its UUID: renaming or deleting a node that
an active action holds is a 409, admission compares held nodes by UUID,
and a running action works by the UUIDs admission resolved, naming the
nodes in its report as admission saw them.

Before: a node held by a running action could be renamed, and a second
deploy_site selecting it by its new name was admitted (admission compared
the names the first one recorded), so two actions deployed one node.
And the flow looked its nodes up again by name: a node renamed meanwhile
(past the API's 409, in the database) failed, and a node that took its
old name was deployed in its place.
"""

import re
from unittest import mock

from oslo_utils import uuidutils

from baremetal_orch.common import context
from baremetal_orch.conductor import admission
from baremetal_orch.db import api as dbapi
from baremetal_orch.drivers.provisioning import fake
from baremetal_orch.objects import action as action_obj
from baremetal_orch.tests.unit.api import test_actions
from baremetal_orch.tests.unit.db import test_selectors_sql

#: A statement that looks nodes up by name.
BY_NAME = re.compile(r'nodes\.name\s*(IN\b|=)', re.IGNORECASE)


def strategy(name, node_names):
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': name},
            'data': {'groups': [{'name': 'g', 'critical': True,
                                 'depends_on': [],
                                 'selectors': [{'node_names': node_names}]}]}}


class HeldNodesTestCase(test_actions.ActionApiTestCase):

    def setUp(self):
        super().setUp()
        self.load_site()
        self.post('/v1/deployment_strategies', strategy('first', ['ctl01']),
                  status=201)
        # An admitted action, running (its flow is not what is tested).
        admitted = admission.admit(
            context.get_admin_context(), uuidutils.generate_uuid(),
            'deploy_site', {'deployment_strategy': 'first'},
            'test-conductor')
        self.running = dbapi.update_action(admitted.action.uuid,
                                           {'state': 'running'})
        self.ctl01 = dbapi.get_node('ctl01').uuid

    def test_rename_of_held_node_refused(self):
        resp = self.patch('/v1/nodes/ctl01', [
            {'op': 'replace', 'path': '/name', 'value': 'renamed'}])
        self.assertError(resp, 409, 'baremetal_orch.node.held_by_action',
                         self.running.uuid)
        self.assertEqual('ctl01', dbapi.get_node(self.ctl01).name)
        # Other changes of a held node are not refused.
        self.patch('/v1/nodes/ctl01', [
            {'op': 'add', 'path': '/extra/a', 'value': 1}], status=200)
        # A node the action does not hold is renamed.
        self.patch('/v1/nodes/ctl02', [
            {'op': 'replace', 'path': '/name', 'value': 'ctl02b'}],
            status=200)

    def test_delete_of_held_node_refused(self):
        for ident in ('ctl01', self.ctl01):
            resp = self.delete('/v1/nodes/' + ident)
            self.assertError(resp, 409, 'baremetal_orch.node.held_by_action',
                             self.running.uuid)
        dbapi.get_node(self.ctl01)
        self.delete('/v1/nodes/ctl02', status=204)

    def test_released_when_the_action_ends(self):
        dbapi.update_action(self.running.uuid, {'state': 'complete'})
        self.patch('/v1/nodes/ctl01', [
            {'op': 'replace', 'path': '/name', 'value': 'renamed'}],
            status=200)
        self.delete('/v1/nodes/renamed', status=204)

    def test_admission_compares_uuids(self):
        # The node got a new name (however: a direct database change
        # here); a second action selecting that name is still refused.
        dbapi.update_node(self.ctl01, {'name': 'renamed'})
        self.post('/v1/deployment_strategies',
                  strategy('second', ['renamed']), status=201)
        resp = self.post('/v1/actions', {
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'second'}})
        self.assertError(resp, 409, 'baremetal_orch.action.nodes_busy',
                         self.running.uuid)
        self.assertIn('renamed', resp.json['errors'][0]['detail'])
        # And another node that took the old name is not held.
        dbapi.update_node('ctl02', {'name': 'ctl01'})
        self.post('/v1/deployment_strategies',
                  strategy('third', ['ctl01']), status=201)
        resp = self.post('/v1/actions', {
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'third'}}, status=201)
        self.finished(resp.json['uuid'])
        # The flow's checkpoints kept what admission held.
        self.assertEqual([dbapi.get_node('ctl01').uuid],
                         action_obj.held_nodes(dbapi.get_action(
                             resp.json['uuid'])))

    def test_update_labels_holds_by_uuid(self):
        dbapi.update_node(self.ctl01, {'provision_state': 'active',
                                       'name': 'renamed'})
        resp = self.post('/v1/actions', {
            'name': 'update_labels',
            'parameters': {'target_nodes': [self.ctl01]}})
        self.assertError(resp, 409, 'baremetal_orch.action.nodes_busy',
                         self.running.uuid)


class RenamedWhileRunningTestCase(test_actions.ActionApiTestCase):

    def test_the_action_keeps_the_nodes_admission_resolved(self):
        # Selected by tag and rack (admission looks nothing up by name):
        # ntp01, then ctl01 once ntp01 is deployed.
        self.load_site(dict(test_actions.STRATEGY, data={'groups': [
            test_actions.group('ntp', node_tags=['ntp']),
            test_actions.group('control', ['ntp'], node_tags=['control'],
                               rack_names=['rack01'])]}))
        uuids = {n: dbapi.get_node(n).uuid
                 for n in ('ntp01', 'ctl01', 'ctl02')}
        call_many = fake.FakeDriver.call_many

        def renaming(driver, method, nodes, *args):
            if method == 'provide' and uuids['ntp01'] in {
                    n.uuid for n in nodes}:
                # While the action runs, past the API's 409: both nodes
                # get new names, and another node takes ctl01's old one.
                dbapi.update_node(uuids['ntp01'], {'name': 'ntp01-new'})
                dbapi.update_node(uuids['ctl01'], {'name': 'ctl01-new'})
                dbapi.update_node(uuids['ctl02'], {'name': 'ctl01'})
            return call_many(driver, method, nodes, *args)

        with mock.patch.object(fake.FakeDriver, 'call_many', autospec=True,
                               side_effect=renaming), \
                test_selectors_sql.count_selects(
                    dbapi.get_engine()) as selects:
            created = self.post('/v1/actions', {'name': 'deploy_site'},
                                status=201).json
            action = self.finished(created['uuid'])
        self.assertEqual('ctl01', dbapi.get_node(uuids['ctl02']).name)
        # Deployed, and reported under the names admission saw.
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']))
        self.assertEqual({'ntp01': 'success', 'ctl01': 'success'},
                         action['report']['nodes'])
        self.assertEqual(['ctl01'],
                         action['report']['groups']['control']['nodes'])
        self.assertEqual(
            {'ntp01': 'active', 'ctl01': 'active', 'ctl02': 'enroll'},
            {n: dbapi.get_node(u).provision_state for n, u in uuids.items()})
        # Nothing was looked up by name, from admission to the end.
        self.assertEqual([], [s for s in selects if BY_NAME.search(s)])
