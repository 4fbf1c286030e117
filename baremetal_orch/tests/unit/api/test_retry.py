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
"""POST /v1/actions {"name": "retry"}: an ended site action run again on
its own strategy snapshot, only for the nodes that did not succeed."""

import json
import os

import fixtures
from oslo_utils import uuidutils

from baremetal_orch.common import context
from baremetal_orch.common import exception
from baremetal_orch.conductor import admission
from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import action as action_obj
from baremetal_orch.tests.unit.api import test_actions

ALL = {'percent_successful_nodes': 100}


def group(name, depends_on=(), critical=True, **selector):
    return {'name': name, 'critical': critical,
            'depends_on': list(depends_on), 'selectors': [selector],
            'success_criteria': ALL}


STRATEGY = {
    'schema': 'shipyard/DeploymentStrategy/v1',
    'metadata': {'name': 'deployment-strategy'},
    'data': {'groups': [
        group('ntp', node_names=['ntp01']),
        group('control', ['ntp'], node_tags=['control']),
        group('compute', ['control'], critical=False,
              node_tags=['compute']),
    ]},
}

NODES = {'ntp01': 'ntp', 'ctl01': 'control', 'ctl02': 'control',
         'ctl03': 'control', 'cmp01': 'compute', 'cmp02': 'compute'}


class TestRetry(test_actions.ActionApiTestCase):

    def setUp(self):
        super().setUp()
        self.calls = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'calls.jsonl')
        self.config(group='fake_driver', call_log=self.calls)
        for name, tag in sorted(NODES.items()):
            info = {'fake_fail_phase': 'deploy'} if name == 'ctl02' else {}
            self.post('/v1/nodes', {'driver': 'fake', 'name': name,
                                    'tags': [tag], 'driver_info': info},
                      status=201)
        self.post('/v1/deployment_strategies', STRATEGY, status=201)

    def run_action(self, body):
        created = self.post('/v1/actions', body, status=201).json
        return self.finished(created['uuid'])

    def deployed(self):
        """Names of the nodes the fake driver deployed (start of a call),
        in order; the log is emptied."""
        with open(self.calls) as f:
            lines = [json.loads(line) for line in f]
        os.unlink(self.calls)
        return sorted(c['name'] for c in lines if c['call'] == 'deploy'
                      and c['stage'] == 'start')

    def node_tasks(self, uuid):
        """{phase: names of the nodes with a task}, over every group."""
        names = {}
        for task in dbapi.list_tasks(action_uuid=uuid, kind='phase'):
            names.setdefault(task.name, []).extend(
                t.name for t in dbapi.list_tasks(parent_uuid=task.uuid,
                                                 kind='node'))
        return {phase: sorted(n) for phase, n in names.items()}

    def failed_deploy(self):
        first = self.run_action({'name': 'deploy_site'})
        self.assertEqual(('failed', 'failed'),
                         (first['state'], first['result']))
        groups = first['report']['groups']
        self.assertEqual(
            {'ntp': None, 'control': 'deploy_criteria_not_met',
             'compute': 'dependency_failed'},
            {g: e['reason'] for g, e in groups.items()})
        self.assertEqual(['ctl01', 'ctl02', 'ctl03', 'ntp01'],
                         self.deployed())
        return first

    def test_retry_sends_only_what_did_not_succeed(self):
        first = self.failed_deploy()
        # The operator fixes ctl02.
        self.patch('/v1/nodes/ctl02', [
            {'op': 'remove', 'path': '/driver_info/fake_fail_phase'}],
            status=200)
        created = self.post('/v1/actions', {
            'name': 'retry', 'parameters': {'action': first['uuid']}},
            status=201).json
        self.assertEqual(('retry', {'action': first['uuid'],
                                    'deployment_strategy':
                                        'deployment-strategy'}),
                         (created['name'], created['parameters']))
        retry = self.finished(created['uuid'])
        self.assertEqual(('complete', 'success'),
                         (retry['state'], retry['result']))
        self.assertEqual(first['uuid'], retry['report']['retry_of'])
        # Only the failed node and those never started got node work.
        retried = ['cmp01', 'cmp02', 'ctl02']
        self.assertEqual({'prepare': retried, 'deploy': retried},
                         self.node_tasks(retry['uuid']))
        self.assertEqual(retried, self.deployed())
        # ctl01 and ctl03 (success before) count for control's 100 %.
        control = retry['report']['groups']['control']
        self.assertEqual(('success', ['ctl01', 'ctl02', 'ctl03']),
                         (control['status'], control['succeeded_nodes']))
        # ntp succeeded before: it ends success without node work.
        self.assertEqual('success', retry['report']['groups']['ntp']['status'])
        self.assertEqual(['ntp', 'control', 'compute'],
                         retry['report']['order'])
        self.assertEqual({'success'}, set(retry['report']['nodes'].values()))
        # The strategy snapshot is the first action's.
        self.assertEqual(dbapi.get_action(first['uuid']).parameters[
            'snapshot'], dbapi.get_action(retry['uuid']).parameters[
            'snapshot'])

        # The first action was retried: a second retry names the newer one.
        resp = self.post('/v1/actions', {
            'name': 'retry', 'parameters': {'action': first['uuid']}})
        self.assertError(resp, 409, 'baremetal_orch.action.already_retried',
                         retry['uuid'])
        # The retry can itself be retried; nothing is left to do.
        plan = self.post('/v1/actions', {
            'name': 'retry', 'dry_run': True,
            'parameters': {'action': retry['uuid']}}, status=200).json
        self.assertEqual((retry['uuid'], []),
                         (plan['plan']['retry_of'],
                          plan['plan']['retried_nodes']))
        self.assertEqual(2, len(dbapi.list_actions()))

    def test_a_retry_that_fails_again(self):
        first = self.failed_deploy()
        retry = self.run_action({'name': 'retry',
                                 'parameters': {'action': first['uuid']}})
        self.assertEqual(('failed', 'failed'),
                         (retry['state'], retry['result']))
        self.assertEqual(['ctl02'], self.deployed())
        self.assertEqual({'prepare': ['ctl02'], 'deploy': ['ctl02']},
                         self.node_tasks(retry['uuid']))
        self.assertEqual(first['uuid'], retry['report']['retry_of'])
        self.assertEqual(
            'dependency_failed',
            retry['report']['groups']['compute']['reason'])

    def test_dry_run_creates_nothing(self):
        first = self.failed_deploy()
        plan = self.post('/v1/actions', {
            'name': 'retry', 'dry_run': True,
            'parameters': {'action': first['uuid']}}, status=200).json['plan']
        self.assertEqual((first['uuid'], ['cmp01', 'cmp02', 'ctl02'],
                          ['ntp', 'control', 'compute']),
                         (plan['retry_of'], plan['retried_nodes'],
                          plan['order']))
        self.assertEqual(1, len(dbapi.list_actions()))

    def test_retry_of_an_active_action(self):
        admitted = admission.admit(
            context.get_admin_context(), uuidutils.generate_uuid(),
            'deploy_site', {}, 'test-conductor')
        running = dbapi.update_action(admitted.action.uuid,
                                      {'state': 'running'})
        resp = self.post('/v1/actions', {
            'name': 'retry', 'parameters': {'action': running.uuid}})
        self.assertError(resp, 409, 'baremetal_orch.action.not_finished',
                         'it is running')
        self.assertEqual(1, len(dbapi.list_actions()))

    def test_retries_admitted_together(self):
        first = self.failed_deploy()
        ctx = context.get_admin_context()
        # The first retry is admitted (its flow not started): the second
        # is refused, and leaves no row.
        earlier = admission.admit(ctx, uuidutils.generate_uuid(), 'retry',
                                  {'action': first['uuid']},
                                  'test-conductor').action
        self.assertEqual(first['uuid'],
                         earlier.progress['site']['retry_of'])
        error = self.assertRaises(
            exception.ActionAlreadyRetried, admission.admit, ctx,
            uuidutils.generate_uuid(), 'retry', {'action': first['uuid']},
            'test-conductor')
        self.assertIn(earlier.uuid, str(error))
        self.assertEqual(2, len(dbapi.list_actions()))
        # A retry that cannot run still names the action it retries, and
        # stays the one to retry.
        self.manager.actions.fail(ctx, earlier.uuid, 'no flow')
        ended = self.get('/v1/actions/' + earlier.uuid, status=200).json
        self.assertEqual(('failed', {'error': 'no flow',
                                     'retry_of': first['uuid']}),
                         (ended['state'], ended['report']))
        self.assertError(self.post('/v1/actions', {
            'name': 'retry', 'parameters': {'action': first['uuid']}}),
            409, 'baremetal_orch.action.already_retried', earlier.uuid)

    def test_started_from_what_admission_stored(self):
        # A conductor that did not admit the retry (a take-over, a job of
        # the jobboard) starts it from its progress, not from the site.
        first = self.failed_deploy()
        admitted = admission.admit(
            context.get_admin_context(), uuidutils.generate_uuid(), 'retry',
            {'action': first['uuid']}, 'test-conductor').action
        self.manager.actions.start(context.get_admin_context(),
                                   action_obj.Action.get(
                                       context.get_admin_context(),
                                       admitted.uuid))
        retry = self.finished(admitted.uuid)
        self.assertEqual(first['uuid'], retry['report']['retry_of'])
        self.assertEqual({'prepare': ['ctl02'], 'deploy': ['ctl02']},
                         self.node_tasks(retry['uuid']))
        self.assertEqual(['ctl02'], self.deployed())

    def test_what_cannot_be_retried(self):
        labels = dbapi.create_action({
            'name': 'update_labels', 'state': 'complete',
            'parameters': {'target_nodes': ['ctl01']}})
        self.assertError(self.post('/v1/actions', {
            'name': 'retry', 'parameters': {'action': labels.uuid}}),
            400, 'baremetal_orch.action.invalid', 'update_labels')
        missing = uuidutils.generate_uuid()
        self.assertError(self.post('/v1/actions', {
            'name': 'retry', 'parameters': {'action': missing}}),
            404, 'baremetal_orch.action.not_found', missing)
        for params, offender in (
                (None, 'parameters.action'), ({}, 'action'),
                ({'action': 'nope'}, 'action'),
                ({'action': missing, 'deployment_strategy': 'x'},
                 'deployment_strategy')):
            body = {'name': 'retry'}
            if params is not None:
                body['parameters'] = params
            self.assertError(self.post('/v1/actions', body), 400,
                             detail_contains=offender)
        self.assertEqual(1, len(dbapi.list_actions()))
