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
"""/v1/actions: deploy_site (and its dry run), update_site, update_labels."""

from oslo_utils import uuidutils

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base


def group(name, depends_on=(), critical=True, **selector):
    return {'name': name, 'critical': critical,
            'depends_on': list(depends_on), 'selectors': [selector]}


STRATEGY = {
    'schema': 'shipyard/DeploymentStrategy/v1',
    'metadata': {'name': 'deployment-strategy'},
    'data': {'groups': [
        group('ntp', node_names=['ntp01']),
        group('control', ['ntp'], node_tags=['control']),
        group('compute', ['control'], critical=False,
              node_tags=['compute', 'control'], rack_names=['rack01']),
        group('empty', critical=False, node_tags=['nothing']),
    ]},
}

NODES = [('ntp01', 'rack01', ['ntp']), ('ctl01', 'rack01', ['control']),
         ('ctl02', 'rack02', ['control']), ('cmp01', 'rack01', ['compute'])]


class ActionApiTestCase(base.ApiTestCase):

    def load_site(self, strategy=STRATEGY):
        for name, rack, tags in NODES:
            self.post('/v1/nodes', {'driver': 'fake', 'name': name,
                                    'rack_name': rack, 'tags': tags},
                      status=201)
        self.post('/v1/deployment_strategies', strategy, status=201)

    def finished(self, uuid):
        def check():
            action = self.get('/v1/actions/' + uuid, status=200).json
            if action['state'] not in ('pending', 'running'):
                return action
        return self.wait_for(check)

    def counts(self):
        return len(dbapi.list_actions()), len(dbapi.list_tasks())


class TestSiteActions(ActionApiTestCase):

    def test_dry_run_returns_the_plan_and_creates_nothing(self):
        self.load_site()
        resp = self.post('/v1/actions', {'name': 'deploy_site',
                                         'dry_run': True}, status=200)
        self.assertEqual({'plan': {
            'order': ['ntp', 'control', 'compute', 'empty'],
            'groups': {
                'ntp': {'nodes': ['ntp01'], 'depends_on': [],
                        'critical': True},
                'control': {'nodes': ['ctl01', 'ctl02'],
                            'depends_on': ['ntp'], 'critical': True},
                'compute': {'nodes': ['cmp01', 'ctl01'],
                            'depends_on': ['control'], 'critical': False},
                'empty': {'nodes': [], 'depends_on': [],
                          'critical': False}},
            'overlaps': {'ctl01': ['control', 'compute']},
            'empty_groups': ['empty']}}, resp.json)
        self.assertEqual((0, 0), self.counts())
        self.assertEqual({'enroll'}, {n.provision_state
                                      for n in dbapi.list_nodes()})

    def test_dry_run_of_a_named_strategy(self):
        other = dict(STRATEGY, metadata={'name': 'only-ntp'},
                     data={'groups': [group('ntp', node_names=['ntp01'])]})
        self.load_site()
        self.post('/v1/deployment_strategies', other, status=201)
        plan = self.post('/v1/actions', {
            'name': 'update_site', 'dry_run': True,
            'parameters': {'deployment_strategy': 'only-ntp'}},
            status=200).json['plan']
        self.assertEqual(['ntp'], plan['order'])

    def test_unknown_strategy(self):
        self.load_site()
        for body in ({'name': 'deploy_site',
                      'parameters': {'deployment_strategy': 'nope'}},
                     {'name': 'deploy_site', 'dry_run': True,
                      'parameters': {'deployment_strategy': 'nope'}}):
            self.assertError(self.post('/v1/actions', body), 404,
                             'baremetal_orch.strategy.not_found', 'nope')
        dbapi.destroy_strategy('deployment-strategy')
        self.assertError(self.post('/v1/actions', {'name': 'deploy_site'}),
                         404, 'baremetal_orch.strategy.not_found',
                         'deployment-strategy')
        self.assertEqual((0, 0), self.counts())

    def test_bad_requests(self):
        self.load_site()
        for body, offender in (
                ({'name': 'reboot_site'}, 'name'),
                ({}, 'name'),
                ({'name': 'deploy_site', 'when': 'now'}, 'when'),
                ({'name': 'deploy_site', 'dry_run': 'yes'}, 'dry_run'),
                ({'name': 'deploy_site', 'parameters': []}, 'parameters'),
                ({'name': 'deploy_site',
                  'parameters': {'deployment_strategy': 'x', 'y': 1}},
                 'y'),
                ({'name': 'deploy_site',
                  'parameters': {'deployment_strategy': ''}},
                 'deployment_strategy')):
            self.assertError(self.post('/v1/actions', body), 400,
                             detail_contains=offender)
        self.assertEqual((0, 0), self.counts())

    def test_deploy_list_show(self):
        self.load_site()
        created = self.post('/v1/actions', {'name': 'deploy_site'},
                            status=201).json
        self.assertEqual(('deploy_site', False,
                          {'deployment_strategy': 'deployment-strategy'}),
                         (created['name'], created['dry_run'],
                          created['parameters']))
        action = self.finished(created['uuid'])
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']))
        # Groups in the order they started: each after its dependencies.
        order = action['report']['order']
        self.assertEqual({'ntp', 'control', 'compute', 'empty'}, set(order))
        self.assertLess(order.index('ntp'), order.index('control'))
        self.assertLess(order.index('control'), order.index('compute'))
        self.assertIsNotNone(action['finished_at'])
        self.assertEqual({'active'}, {n.provision_state
                                      for n in dbapi.list_nodes()})
        listed = self.get('/v1/actions', status=200).json['actions']
        self.assertEqual([created['uuid']], [a['uuid'] for a in listed])
        self.assertEqual([], self.get('/v1/actions?state=running').json[
            'actions'])
        self.assertEqual(1, len(self.get('/v1/actions?name=deploy_site'
                                         '&state=complete').json['actions']))
        doc = self.get('/v1/actions/%s?fields=state,result'
                       % created['uuid'], status=200).json
        self.assertEqual({'state', 'result', 'links'}, set(doc))
        self.assertError(self.get('/v1/actions/' +
                                  uuidutils.generate_uuid()),
                         404, 'baremetal_orch.action.not_found')
        self.assertError(self.get('/v1/actions/nope'), 400)
        self.assertError(self.get('/v1/actions?colour=red'), 400)

    def test_nodes_busy(self):
        self.load_site()
        running = dbapi.create_action({
            'name': 'deploy_site', 'state': 'running',
            'parameters': {'snapshot': {'nodes': {
                dbapi.get_node('ctl02').uuid: 'ctl02'}}}})
        resp = self.post('/v1/actions', {'name': 'deploy_site'})
        self.assertError(resp, 409, 'baremetal_orch.action.nodes_busy',
                         running.uuid)
        self.assertIn('ctl02', resp.json['errors'][0]['detail'])
        self.assertEqual(1, len(dbapi.list_actions()))

    def test_no_conductor_leaves_no_pending_action(self):
        self.load_site()
        dbapi.update_service('test-conductor', {'forced_down': True})
        resp = self.post('/v1/actions', {'name': 'deploy_site'})
        self.assertError(resp, 503)
        # Nothing stays pending to hold the nodes or the strategy: a
        # refused action leaves no row.
        self.assertEqual([], dbapi.list_active_actions())
        self.assertEqual([], dbapi.list_actions())
        self.delete('/v1/deployment_strategies/deployment-strategy',
                    status=204)


class TestUpdateLabels(ActionApiTestCase):

    def setUp(self):
        super().setUp()
        self.load_site()
        dbapi.update_node('ctl01', {'provision_state': 'active'})

    def test_bad_target_nodes(self):
        for params, status, offender in (
                (None, 400, 'target_nodes'),
                ({}, 400, 'target_nodes'),
                ({'target_nodes': 'ctl01'}, 400, 'target_nodes'),
                ({'target_nodes': []}, 400, 'target_nodes'),
                ({'target_nodes': ['ctl01', 'ctl01']}, 400,
                 'target_nodes'),
                ({'target_nodes': ['ctl01', 'ghost']}, 400, 'ghost'),
                ({'target_nodes': ['ctl01', 'ctl02']}, 400, 'ctl02')):
            body = {'name': 'update_labels'}
            if params is not None:
                body['parameters'] = params
            self.assertError(self.post('/v1/actions', body), status,
                             detail_contains=offender)
        error = self.assertError(self.post('/v1/actions', {
            'name': 'update_labels',
            'parameters': {'target_nodes': ['ctl02']}}), 400)
        self.assertIn('never been deployed', error['detail'])
        self.assertError(self.post('/v1/actions', {
            'name': 'update_labels', 'dry_run': True,
            'parameters': {'target_nodes': ['ctl01']}}), 400,
            detail_contains='dry_run')
        self.assertEqual((0, 0), self.counts())

    def test_update_labels_of_a_deployed_node(self):
        created = self.post('/v1/actions', {
            'name': 'update_labels',
            'parameters': {'target_nodes': ['ctl01']}}, status=201).json
        self.assertEqual({'target_nodes': ['ctl01']},
                         created['parameters'])
        action = self.finished(created['uuid'])
        self.assertEqual('complete', action['state'], action)


class TestUpdateLabelsAfterDeploy(ActionApiTestCase):
    """update_labels end to end on a deployed site, noop driver."""

    def test_partial_update_no_rollback(self):
        self.load_site()
        self.patch('/v1/nodes/ctl01', [
            {'op': 'add', 'path': '/labels', 'value': {'role': 'ctl'}}],
            status=200)
        deploy = self.finished(self.post('/v1/actions', {
            'name': 'deploy_site'}, status=201).json['uuid'])
        self.assertEqual('complete', deploy['state'], deploy)
        self.config(group='labels', driver='noop',
                    noop_fail_nodes=['ctl02'])
        created = self.post('/v1/actions', {
            'name': 'update_labels',
            'parameters': {'target_nodes': ['ctl01', 'ctl02', 'ntp01']}},
            status=201).json
        action = self.finished(created['uuid'])
        # The action fails because one node failed; the others keep their
        # new labels (no rollback).
        self.assertEqual(('failed', 'failed'),
                         (action['state'], action['result']))
        report = action['report']
        self.assertEqual(['ctl01', 'ctl02', 'ntp01'], report['requested'])
        self.assertEqual(['ctl01', 'ntp01'], report['relabeled'])
        self.assertEqual(['ctl02'], report['not_relabeled'])
        ctl01 = self.get('/v1/nodes/ctl01', status=200).json
        applied = ctl01['applied_labels']
        self.assertEqual('ctl', applied['role'])
        self.assertEqual('rack01',
                         applied['baremetal-orch.openstack.org/rack'])
        self.assertEqual('true', applied[
            'baremetal-orch.openstack.org/group.control'])
        self.assertIsNone(self.get('/v1/nodes/ctl02',
                                   status=200).json['applied_labels'] or None)
        # Nodes outside the targets are never touched.
        self.assertIsNone(self.get('/v1/nodes/cmp01',
                                   status=200).json['applied_labels'] or None)
        # One subtask per node in the task tree, the failure with a reason.
        tree = self.get('/v1/tasks/%s?tree=true' % action['task_uuid'],
                        status=200).json
        subtasks = {t['name']: t for t in tree['subtasks']}
        self.assertEqual({'ctl01', 'ctl02', 'ntp01'}, set(subtasks))
        self.assertEqual('failed', subtasks['ctl02']['status'])
        self.assertIn('fail', subtasks['ctl02']['reason'])
        self.assertEqual('success', subtasks['ntp01']['status'])
        # A targeted action does not change what the site deployed.
        self.assertEqual('complete', self.get(
            '/v1/actions/%s' % deploy['uuid'], status=200).json['state'])
