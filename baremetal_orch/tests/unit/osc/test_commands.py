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
"""port, chassis, strategy, action, task, deployment, event, service and
shard commands: the requests they make and what they print.
"""

import json
import os

import fixtures
from osc_lib import exceptions
import yaml

from baremetal_orch.osc import client
from baremetal_orch.osc.v1 import action
from baremetal_orch.osc.v1 import chassis
from baremetal_orch.osc.v1 import deployment
from baremetal_orch.osc.v1 import event
from baremetal_orch.osc.v1 import port
from baremetal_orch.osc.v1 import service
from baremetal_orch.osc.v1 import shard
from baremetal_orch.osc.v1 import strategy
from baremetal_orch.osc.v1 import task
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.osc import fakes
from baremetal_orch.tests.unit.osc import test_progress
from baremetal_orch.tests.unit.osc import test_report

U1 = '11111111-2222-3333-4444-555555555555'
U2 = '22222222-3333-4444-5555-666666666666'
MAC = 'aa:bb:cc:dd:ee:ff'
YAML = 'application/yaml'


def req(method, path, body=None, params=None, data=None,
        content_type=None):
    return (method, path, body, params or {}, data, content_type)


class TestRequests(base.TestCase):

    def setUp(self):
        super().setUp()
        tmp = self.useFixture(fixtures.TempDir()).path
        self.doc = os.path.join(tmp, 'strategy.yaml')
        with open(self.doc, 'wb') as f:
            f.write(b'schema: shipyard/DeploymentStrategy/v1\n')

    def cases(self):
        """(command, argv, answers, requests)"""
        doc = b'schema: shipyard/DeploymentStrategy/v1\n'
        return [
            (port.CreatePort,
             [MAC, '--node', U1, '--pxe-enabled', '--local-link-connection',
              'switch_id=s1', '--local-link-connection', 'port_id=p1',
              '--extra', 'a=1', '--uuid', U1], {},
             [req('POST', 'ports', {
                 'address': MAC, 'node_uuid': U1, 'uuid': U1,
                 'pxe_enabled': True, 'extra': {'a': 1},
                 'local_link_connection': {'switch_id': 's1',
                                           'port_id': 'p1'}})]),
            (port.CreatePort, [MAC, '--node', 'n1'],
             {('GET', 'nodes/n1'): {'uuid': U1}},
             [req('GET', 'nodes/n1', params={'fields': 'uuid'}),
              req('POST', 'ports', {'address': MAC, 'node_uuid': U1})]),
            (port.ListPort, ['--node', 'n1', '--address', MAC, '--long'],
             {}, [req('GET', 'ports', params={'node': 'n1',
                                              'address': MAC})]),
            (port.ShowPort, [U1], {}, [req('GET', 'ports/%s' % U1)]),
            (port.SetPort, [U1, '--address', MAC, '--pxe-disabled',
                            '--extra', 'k=v', '--node', U1], {},
             [req('PATCH', 'ports/%s' % U1, [
                 {'op': 'add', 'path': '/address', 'value': MAC},
                 {'op': 'add', 'path': '/node_uuid', 'value': U1},
                 {'op': 'add', 'path': '/pxe_enabled', 'value': False},
                 {'op': 'add', 'path': '/extra/k', 'value': 'v'}])]),
            (port.DeletePort, [U1], {}, [req('DELETE', 'ports/%s' % U1)]),
            (chassis.CreateChassis, ['--description', 'rack 3',
                                     '--extra', 'row=4'], {},
             [req('POST', 'chassis', {'description': 'rack 3',
                                      'extra': {'row': 4}})]),
            (chassis.ListChassis, ['--limit', '2'], {},
             [req('GET', 'chassis', params={'limit': 2})]),
            (chassis.ShowChassis, [U1], {},
             [req('GET', 'chassis/%s' % U1)]),
            (chassis.SetChassis, [U1, '--description', 'd'], {},
             [req('PATCH', 'chassis/%s' % U1, [
                 {'op': 'add', 'path': '/description', 'value': 'd'}])]),
            (chassis.DeleteChassis, [U1, U1], {},
             [req('DELETE', 'chassis/%s' % U1)] * 2),
            (strategy.CreateStrategy, [self.doc], {},
             [req('POST', 'deployment_strategies', data=doc,
                  content_type=YAML)]),
            (strategy.ValidateStrategy, [self.doc], {},
             [req('POST', 'deployment_strategies/validate', data=doc,
                  content_type=YAML)]),
            (strategy.ListStrategy, ['--sort', 'name'], {},
             [req('GET', 'deployment_strategies',
                  params={'sort_key': 'name'})]),
            (strategy.ShowStrategy, ['s1'], {},
             [req('GET', 'deployment_strategies/s1')]),
            (strategy.DeleteStrategy, ['s1'], {},
             [req('DELETE', 'deployment_strategies/s1')]),
            (action.CreateAction, ['deploy_site'], {},
             [req('POST', 'actions', {'name': 'deploy_site'})]),
            (action.CreateAction, ['update_site', '--strategy', 's1'], {},
             [req('POST', 'actions', {
                 'name': 'update_site',
                 'parameters': {'deployment_strategy': 's1'}})]),
            (action.CreateAction, ['deploy_site', '--dry-run'], {},
             [req('POST', 'actions', {'name': 'deploy_site',
                                      'dry_run': True})]),
            (action.CreateAction, ['update_labels', '--target-node', 'a',
                                   '--target-node', 'b'], {},
             [req('POST', 'actions', {
                 'name': 'update_labels',
                 'parameters': {'target_nodes': ['a', 'b']}})]),
            (action.ListAction, ['--state', 'running', '--name',
                                 'deploy_site'], {},
             [req('GET', 'actions', params={'state': 'running',
                                            'name': 'deploy_site'})]),
            (action.ShowAction, [U1], {}, [req('GET', 'actions/%s' % U1)]),
            (action.ListAction, ['--state', 'paused', '--name', 'retry'],
             {}, [req('GET', 'actions', params={'state': 'paused',
                                                'name': 'retry'})]),
            (action.PauseAction, [U1, '--reason', 'change freeze'], {},
             [req('POST', 'actions/%s/control' % U1,
                  {'verb': 'pause', 'reason': 'change freeze'})]),
            (action.PauseAction, [U1], {},
             [req('POST', 'actions/%s/control' % U1, {'verb': 'pause'})]),
            (action.ResumeAction, [U1, '--reason', 'freeze over'], {},
             [req('POST', 'actions/%s/control' % U1,
                  {'verb': 'resume', 'reason': 'freeze over'})]),
            (action.AbortAction, [U1, '--reason', ''], {},
             [req('POST', 'actions/%s/control' % U1,
                  {'verb': 'abort', 'reason': ''})]),
            (action.RetryAction, [U1], {},
             [req('POST', 'actions', {'name': 'retry',
                                      'parameters': {'action': U1}})]),
            (task.ShowTask, [U1], {}, [req('GET', 'tasks/%s' % U1)]),
            (task.ShowTask, [U1, '--tree'], {},
             [req('GET', 'tasks/%s' % U1, params={'tree': 'true'})]),
            (deployment.ListDeployment,
             ['--node', U1, '--action', U1, '--status', 'COMPLETE'], {},
             [req('GET', 'deployments', params={
                 'node_uuid': U1, 'action_uuid': U1,
                 'status': 'COMPLETE'})]),
            (deployment.ListDeployment, ['--node', 'n1'],
             {('GET', 'nodes/n1'): {'uuid': U1}},
             [req('GET', 'nodes/n1', params={'fields': 'uuid'}),
              req('GET', 'deployments', params={'node_uuid': U1})]),
            (deployment.ShowDeployment, [U1], {},
             [req('GET', 'deployments/%s' % U1)]),
            (event.ListEvent, ['--resource', U1, '--action', U1,
                               '--event-type', 'deployment.signal.failed',
                               '--limit', '10'], {},
             [req('GET', 'events', params={
                 'resource_uuid': U1, 'action_uuid': U1, 'limit': 10,
                 'event_type': 'deployment.signal.failed'})]),
            (service.ListService, [], {}, [req('GET', 'services')]),
            (service.SetService, ['conductor-1', '--forced-down',
                                  '--disable'], {},
             [req('PATCH', 'services/conductor-1', [
                 {'op': 'replace', 'path': '/forced_down', 'value': True},
                 {'op': 'replace', 'path': '/disabled', 'value': True}])]),
            (service.SetService, ['c1', '--no-forced-down', '--enable'],
             {},
             [req('PATCH', 'services/c1', [
                 {'op': 'replace', 'path': '/forced_down', 'value': False},
                 {'op': 'replace', 'path': '/disabled',
                  'value': False}])]),
            (shard.ListShard, [], {}, [req('GET', 'shards')]),
        ]

    def test_table(self):
        for cmd, argv, answers, expected in self.cases():
            api = fakes.FakeClient(answers)
            fakes.run(cmd, argv, api)
            self.assertEqual(expected, api.calls, (cmd.__name__, argv))


class TestArgumentErrors(base.TestCase):

    COMMAND_ERRORS = [
        (action.CreateAction, ['update_labels']),
        (action.CreateAction, ['deploy_site', '--target-node', 'a']),
        (action.CreateAction, ['update_labels', '--target-node', 'a',
                               '--strategy', 's']),
        (action.CreateAction, ['update_labels', '--target-node', 'a',
                               '--dry-run']),
        (action.CreateAction, ['deploy_site', '--dry-run', '--wait']),
        (service.SetService, ['c1']),
        (strategy.CreateStrategy, ['/nonexistent/strategy.yaml']),
    ]
    USAGE_ERRORS = [
        (action.CreateAction, ['deploy_everything']),
        (port.CreatePort, [MAC]),
        (port.CreatePort, [MAC, '--node', 'n', '--pxe-enabled',
                           '--pxe-disabled']),
        (service.SetService, ['c1', '--enable', '--disable']),
        (deployment.ListDeployment, ['--status', 'DONE']),
        (action.PauseAction, []),
        (action.RetryAction, [U1, '--reason', 'x']),
    ]

    def test_command_errors(self):
        for cmd, argv in self.COMMAND_ERRORS:
            api = fakes.FakeClient()
            self.assertRaises(exceptions.CommandError, fakes.run, cmd, argv,
                              api)
            self.assertEqual([], api.calls, argv)

    def test_usage_errors(self):
        self.useFixture(fixtures.MonkeyPatch('sys.stderr',
                                             fakes.io.StringIO()))
        for cmd, argv in self.USAGE_ERRORS:
            self.assertRaises(SystemExit, fakes.run, cmd, argv)


def site_action(state, result, report):
    return {'uuid': U1, 'name': 'deploy_site', 'state': state,
            'result': result, 'task_uuid': None, 'report': report,
            'parameters': {}, 'links': []}


class TestCreateActionOutput(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'baremetal_orch.osc.progress.time.sleep', lambda s: None))

    def _run(self, argv, answers):
        return fakes.run(action.CreateAction, argv,
                         fakes.FakeClient(answers))

    def test_without_wait_shows_the_action(self):
        status, app, _api = self._run(
            ['deploy_site', '-f', 'json'],
            {('POST', 'actions'): site_action('pending', None, None)})
        self.assertEqual(0, status)
        doc = json.loads(app.stdout.getvalue())
        self.assertEqual((U1, 'pending'), (doc['uuid'], doc['state']))

    def test_dry_run_shows_the_plan(self):
        plan = {'order': ['ntp', 'ctl'],
                'groups': {'ctl': {'nodes': ['ctl01', 'ntp01'],
                                   'depends_on': ['ntp'], 'critical': True},
                           'ntp': {'nodes': ['ntp01'], 'depends_on': [],
                                   'critical': True}},
                'overlaps': {'ntp01': ['ntp', 'ctl']}, 'empty_groups': []}
        _status, app, _api = self._run(['deploy_site', '--dry-run', '-f',
                                        'json'],
                                       {('POST', 'actions'): {'plan': plan}})
        self.assertEqual(
            [{'Group': 'ntp', 'Critical': True, 'Depends On': [],
              'Nodes': ['ntp01'], 'Also In': ['ctl']},
             {'Group': 'ctl', 'Critical': True, 'Depends On': ['ntp'],
              'Nodes': ['ctl01', 'ntp01'], 'Also In': ['ntp']}],
            json.loads(app.stdout.getvalue()))

    def test_wait_success(self):
        report = test_progress.RUNNING_REPORT
        done = dict(report, groups={
            g: dict(e, status='success') for g, e in
            report['groups'].items()})
        status, app, api = self._run(
            ['deploy_site', '--wait', '-f', 'json', '--poll-interval', '0'],
            {('POST', 'actions'): site_action('pending', None, None),
             ('GET', 'actions/%s' % U1): [
                 site_action('running', None, report),
                 site_action('complete', 'success', done)]})
        self.assertEqual(0, status)
        rows = [r for r in json.loads(app.stdout.getvalue())
                if r['Node'] is None]
        self.assertEqual(['ntp', 'ctl', 'cmp'], [r['Group'] for r in rows])
        self.assertEqual({'success'}, {r['Status'] for r in rows})
        progress_lines = app.stderr.getvalue().splitlines()
        self.assertEqual('deploy_site %s started' % U1, progress_lines[0])
        self.assertTrue(progress_lines[1].startswith(
            'running | groups 1/3 | nodes 1/4 | current: ctl |'),
            progress_lines)
        self.assertEqual('Action %s: complete (success)' % U1,
                         progress_lines[-1])

    def test_wait_failure_exits_non_zero(self):
        status, app, _api = self._run(
            ['deploy_site', '--wait'],
            {('POST', 'actions'): site_action('pending', None, None),
             ('GET', 'actions/%s' % U1): site_action(
                 'failed', 'failed', test_progress.FAILED_REPORT)})
        self.assertEqual(1, status)
        table = app.stdout.getvalue()
        self.assertIn('| ntp   |       | True     | failed      | '
                      'prepare_criteria_not_met | 0         | 1      |',
                      table)
        self.assertIn('| ntp   | ntp01 |          | failure     |', table)
        self.assertIn('Action %s: failed (failed)' % U1,
                      app.stderr.getvalue())

    def test_wait_timeout(self):
        # --wait [<time-out>] as ironicclient's.
        clock = iter(range(0, 1000, 10))
        self.useFixture(fixtures.MonkeyPatch(
            'baremetal_orch.osc.progress.time.monotonic',
            lambda: next(clock)))
        e = self.assertRaises(
            exceptions.CommandError, self._run,
            ['deploy_site', '--wait', '15'],
            {('POST', 'actions'): site_action('pending', None, None),
             ('GET', 'actions/%s' % U1): site_action('running', None,
                                                     None)})
        self.assertIn('action show %s' % U1, str(e))
        self.assertIn('15', str(e))

    def test_one_wait_style(self):
        # --wait N only, as every command of the plugin and ironicclient:
        # no second spelling of the time-out.
        for argv in (['deploy_site', '--timeout', '15'],
                     ['deploy_site', '--wait', '--timeout', '15']):
            api = fakes.FakeClient()
            e = self.assertRaises(SystemExit, fakes.run,
                                  action.CreateAction, argv, api)
            self.assertEqual(2, e.code, argv)
            self.assertEqual([], api.calls)


class TestShowAction(base.TestCase):

    def show(self, *argv, doc=None):
        doc = doc or dict(
            site_action('failed', 'failed', test_report.SITE_REPORT),
            task_uuid=U2)
        api = fakes.FakeClient({('GET', 'actions/%s' % U1): doc,
                                ('GET', 'tasks/%s' % U2):
                                test_report.SITE_TREE})
        _status, app, api = fakes.run(action.ShowAction,
                                      [U1] + list(argv), api)
        return app.stdout.getvalue(), api

    def test_table_sums_the_report_up(self):
        out, api = self.show()
        lines = out.splitlines()
        self.assertEqual(
            ['groups: 4 (3 failed, 1 success)',
             'ntp: failed (prepare_criteria_not_met), 0/1 nodes '
             'succeeded; missed minimum_successful_nodes: needed 1, '
             'actual 0'],
            field_values(out)['report'].split('\n')[:2])
        self.assertNotIn('{', out)
        # A readable table, not one line of JSON.
        self.assertLess(max(len(line) for line in lines), 160)
        self.assertEqual([('GET', 'actions/%s' % U1)],
                         [c[:2] for c in api.calls])

    def test_json_keeps_the_api_structure(self):
        running = dict(site_action('running', None,
                                   test_report.SITE_REPORT),
                       finished_at=None, dry_run=False)
        out, _api = self.show('-f', 'json', doc=running)
        doc = json.loads(out)
        self.assertEqual(test_report.SITE_REPORT, doc['report'])
        self.assertIsNone(doc['result'])
        self.assertIsNone(doc['finished_at'])
        self.assertIs(False, doc['dry_run'])

    def test_report_table(self):
        out, api = self.show('--report')
        rows = [[cell.strip() for cell in line.split('|')[1:-1]]
                for line in out.splitlines() if line.startswith('|')]
        self.assertEqual(
            [['Group', 'Node', 'Critical', 'Status', 'Reason', 'Succeeded',
              'Failed', 'Misses'],
             ['ntp', '', 'True', 'failed', 'prepare_criteria_not_met', '0',
              '1', 'minimum_successful_nodes: needed 1, actual 0'],
             ['ntp', 'ntp01', '', 'failure', test_report.NTP_REASON, '', '',
              ''],
             ['mon', '', 'False', 'success', '', '2', '0', '']],
            rows[:4])
        self.assertEqual([('GET', 'actions/%s' % U1),
                          ('GET', 'tasks/%s' % U2)],
                         [c[:2] for c in api.calls])
        self.assertEqual({'tree': 'true'}, api.calls[1][3])

    def test_report_json(self):
        out, _api = self.show('--report', '-f', 'json')
        rows = json.loads(out)
        self.assertEqual(
            {'Group': 'ntp', 'Node': None, 'Critical': True,
             'Status': 'failed', 'Reason': 'prepare_criteria_not_met',
             'Succeeded': [], 'Failed': ['ntp01'],
             'Misses': [test_report.MISS]}, rows[0])
        self.assertEqual(
            {'Group': 'ntp', 'Node': 'ntp01', 'Critical': None,
             'Status': 'failure', 'Reason': test_report.NTP_REASON,
             'Succeeded': None, 'Failed': None, 'Misses': None}, rows[1])
        mon = [r for r in rows if r['Group'] == 'mon' and not r['Node']]
        self.assertEqual([None], [r['Reason'] for r in mon])
        self.assertEqual(
            ['ntp01', 'mon01', 'mon02', 'cmp01', 'ctl01', 'ctl01'],
            [r['Node'] for r in rows if r['Node']])

    def test_report_without_the_task_tree(self):
        doc = dict(site_action('failed', 'failed', test_report.SITE_REPORT),
                   task_uuid=U2)
        api = fakes.FakeClient({
            ('GET', 'actions/%s' % U1): doc,
            ('GET', 'tasks/%s' % U2): client.ApiError(
                403, detail='Access was denied to this resource.')})
        logs = self.useFixture(fixtures.FakeLogger())
        _status, app, _api = fakes.run(action.ShowAction,
                                       [U1, '--report', '-f', 'json'], api)
        rows = json.loads(app.stdout.getvalue())
        self.assertEqual(('ntp01', 'failure', None),
                         (rows[1]['Node'], rows[1]['Status'],
                          rows[1]['Reason']))
        self.assertIn('Access was denied', logs.output)

    def test_labels_report_json(self):
        labels = {'uuid': U1, 'name': 'update_labels', 'state': 'failed',
                  'result': 'failed', 'task_uuid': U2,
                  'report': {'requested': ['a', 'b'], 'relabeled': ['a'],
                             'not_relabeled': ['b'],
                             'errors': {'b': 'kube said no'}}}
        out, api = self.show('--report', '-f', 'json', doc=labels)
        self.assertEqual(
            [{'Node': 'a', 'Status': 'relabeled', 'Error': None},
             {'Node': 'b', 'Status': 'failed', 'Error': 'kube said no'}],
            json.loads(out))
        self.assertEqual(1, len(api.calls))


PROGRESS = {'phases': {'prepare': {'done': 3, 'failed': 1,
                                   'in_flight': 0, 'pending': 0},
                       'deploy': {'done': 1, 'failed': 0, 'in_flight': 2,
                                  'pending': 1}},
            'eta': 250.0}


def steered(state, reason=None, doc_progress=None, name='deploy_site',
            uuid=U1, result=None, report=None):
    return dict(site_action(state, result, report), uuid=uuid, name=name,
                state_reason=reason, progress=doc_progress)


def field_values(out):
    """``{field: value}`` of a ShowOne table; a value spanning several
    lines is joined with newlines."""
    values = {}
    field = None
    for line in out.splitlines():
        if not line.startswith('|'):
            continue
        cells = [c.strip() for c in line.split('|')[1:-1]]
        if cells[0]:
            field = cells[0]
            values[field] = cells[1]
        elif field:
            values[field] += '\n' + cells[1]
    return values


class TestSteering(base.TestCase):
    """pause, resume, abort, retry and what action show says of them."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'baremetal_orch.osc.progress.time.sleep', lambda s: None))

    def test_pause_shows_the_action(self):
        api = fakes.FakeClient({('POST', 'actions/%s/control' % U1):
                                steered('pausing', 'change freeze',
                                        PROGRESS)})
        status, app, api = fakes.run(
            action.PauseAction, [U1, '--reason', 'change freeze'], api)
        self.assertEqual(0, status)
        values = field_values(app.stdout.getvalue())
        self.assertEqual(('pausing', 'change freeze'),
                         (values['state'], values['state_reason']))
        self.assertEqual(
            'prepare: 3 done, 1 failed, 0 in flight, 0 pending\n'
            'deploy: 1 done, 0 failed, 2 in flight, 1 pending\n'
            'eta: 4m 10s', values['progress'])
        self.assertEqual([req('POST', 'actions/%s/control' % U1,
                              {'verb': 'pause',
                               'reason': 'change freeze'})], api.calls)

    def test_json_is_the_api_document(self):
        for cmd, verb in ((action.ResumeAction, 'resume'),
                          (action.AbortAction, 'abort')):
            doc = steered('running', None, PROGRESS)
            api = fakes.FakeClient({('POST', 'actions/%s/control' % U1):
                                    doc})
            _status, app, api = fakes.run(cmd, [U1, '-f', 'json'], api)
            out = json.loads(app.stdout.getvalue())
            self.assertEqual(PROGRESS, out['progress'])
            self.assertIsNone(out['state_reason'])
            self.assertEqual({'verb': verb}, api.calls[0][2])

    def test_show_tells_why_and_when(self):
        doc = steered('paused', 'outside_window',
                      {'phases': {}, 'eta': None})
        api = fakes.FakeClient({('GET', 'actions/%s' % U1): doc})
        _status, app, _api = fakes.run(action.ShowAction, [U1], api)
        values = field_values(app.stdout.getvalue())
        self.assertEqual(('paused', 'outside_window', 'eta: unknown'),
                         (values['state'], values['state_reason'],
                          values['progress']))

    def test_a_refused_verb_is_an_error(self):
        api = fakes.FakeClient({('POST', 'actions/%s/control' % U1):
                                client.ApiError(
                                    409, code='baremetal_orch.action.'
                                    'conflict', detail='Cannot pause '
                                    'action %s: it is complete' % U1)})
        e = self.assertRaises(exceptions.CommandError, fakes.run,
                              action.PauseAction, [U1], api)
        self.assertEqual('Cannot pause action %s: it is complete (HTTP '
                         '409, baremetal_orch.action.conflict)' % U1,
                         str(e))

    def test_retry_shows_the_new_action(self):
        api = fakes.FakeClient({('POST', 'actions'): steered(
            'pending', name='retry', uuid=U2)})
        _status, app, _api = fakes.run(action.RetryAction,
                                       [U1, '-f', 'json'], api)
        out = json.loads(app.stdout.getvalue())
        self.assertEqual((U2, 'retry', 'pending'),
                         (out['uuid'], out['name'], out['state']))

    def test_retry_wait_follows_through_a_pause(self):
        report = test_progress.RUNNING_REPORT
        done = dict(report, groups={
            g: dict(e, status='success') for g, e in
            report['groups'].items()})
        api = fakes.FakeClient({
            ('POST', 'actions'): steered('pending', name='retry', uuid=U2),
            ('GET', 'actions/%s' % U2): [
                steered('paused', 'change freeze', PROGRESS, 'retry', U2,
                        report=report),
                steered('running', None, PROGRESS, 'retry', U2,
                        report=report),
                steered('complete', None, dict(PROGRESS, eta=0), 'retry',
                        U2, 'success', done)]})
        status, app, api = fakes.run(
            action.RetryAction, [U1, '--wait', '--poll-interval', '0',
                                 '-f', 'json'], api)
        self.assertEqual(0, status)
        lines = app.stderr.getvalue().splitlines()
        self.assertEqual('retry %s started' % U2, lines[0])
        self.assertTrue(lines[1].startswith(
            'paused: change freeze | groups 1/3 | nodes 1/4 | current: ctl '
            '| eta 4m 10s |'), lines)
        self.assertTrue(lines[2].startswith('running | '), lines)
        self.assertEqual('Action %s: complete (success)' % U2, lines[-1])
        rows = json.loads(app.stdout.getvalue())
        self.assertEqual(['ntp', 'ctl', 'cmp'],
                         [r['Group'] for r in rows if r['Node'] is None])
        self.assertEqual(['actions', 'actions/%s' % U2],
                         [c[1] for c in api.calls[:2]])

    def test_aborted_retry_exits_non_zero(self):
        api = fakes.FakeClient({
            ('POST', 'actions'): steered('pending', name='retry', uuid=U2),
            ('GET', 'actions/%s' % U2): steered(
                'cancelled', 'operator abort', name='retry', uuid=U2,
                result='failed', report=test_progress.FAILED_REPORT)})
        status, app, _api = fakes.run(action.RetryAction, [U1, '--wait'],
                                      api)
        self.assertEqual(1, status)
        self.assertIn('Action %s: cancelled (failed): operator abort' % U2,
                      app.stderr.getvalue())


class TestTaskTree(base.TestCase):

    def test_tree_rows(self):
        rows = task.tree_rows(test_progress.RUNNING_TREE)
        self.assertEqual(['deploy_site',
                          '├── ntp',
                          '├── ctl',
                          '│   ├── prepare',
                          '│   │   ├── ctl01',
                          '│   │   └── ctl02',
                          '│   └── deploy',
                          '│       ├── ctl01',
                          '│       └── ctl02',
                          '└── cmp'], [label for label, _t in rows])

    def run_tree(self, *argv):
        api = fakes.FakeClient({('GET', 'tasks/%s' % U1):
                                test_progress.RUNNING_TREE})
        _status, app, _api = fakes.run(task.ShowTask, [U1, '--tree'] +
                                       list(argv), api)
        return app.stdout.getvalue()

    def test_table_draws_the_tree(self):
        lines = self.run_tree().splitlines()
        self.assertIn('| │   └── deploy ', lines[9])

    def test_json_is_the_nested_tree_of_the_api(self):
        doc = json.loads(self.run_tree('-f', 'json'))
        self.assertEqual(test_progress.RUNNING_TREE, doc)
        self.assertEqual(['prepare', 'deploy'],
                         [t['name'] for t in doc['subtasks'][1]['subtasks']])

    def test_yaml_is_the_nested_tree_of_the_api(self):
        doc = yaml.safe_load(self.run_tree('-f', 'yaml'))
        self.assertEqual(test_progress.RUNNING_TREE, doc)

    def test_value_keeps_a_row_per_task(self):
        # A row per task, its plain name: no tree drawing for scripts.
        for fmt in ('value', 'csv'):
            lines = self.run_tree('-f', fmt, '-c', 'Task').splitlines()
            if fmt == 'csv':
                lines = [line.strip('"') for line in lines[1:]]
            self.assertEqual(10, len(lines), fmt)
            self.assertEqual('ctl02', lines[8], fmt)
            for line in lines:
                self.assertFalse(set(line) & set('├└│─'), line)


class TestStrategyGraph(base.TestCase):

    DOCUMENT = {'metadata': {'name': 's1'}, 'data': {'groups': [
        {'name': 'a', 'critical': True, 'depends_on': []},
        {'name': 'b', 'critical': False, 'depends_on': ['a']}]}}

    def _api(self):
        return fakes.FakeClient({
            ('GET', 'deployment_strategies/s1'): {
                'name': 's1', 'document': self.DOCUMENT},
            ('GET', 'actions/%s' % U1): site_action('failed', 'failed', {
                'groups': {'a': {'status': 'failed'},
                           'b': {'status': 'pending'}}})})

    def test_dot_on_stdout(self):
        _status, app, _api = fakes.run(strategy.GraphStrategy, ['s1'],
                                       self._api())
        out = app.stdout.getvalue()
        self.assertTrue(out.startswith('digraph "s1" {'), out)
        self.assertIn('"a" -> "b";', out)

    def test_dot_file_coloured_by_action(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'x.dot')
        _status, app, api = fakes.run(
            strategy.GraphStrategy, ['s1', '--action', U1, '--output',
                                     path], self._api())
        with open(path) as f:
            text = f.read()
        self.assertIn('fillcolor="red"', text)
        self.assertIn('fillcolor="grey"', text)
        self.assertEqual('', app.stdout.getvalue())
        self.assertEqual(['deployment_strategies/s1', 'actions/%s' % U1],
                         [c[1] for c in api.calls])

    def test_dot_of_a_paused_action(self):
        api = self._api()
        api.responses[('GET', 'actions/%s' % U1)] = steered(
            'paused', 'change freeze', report={'groups': {
                'a': {'status': 'success'}, 'b': {'status': 'pending'}}})
        _status, app, _api = fakes.run(
            strategy.GraphStrategy, ['s1', '--action', U1], api)
        out = app.stdout.getvalue()
        self.assertIn('"b" [label="b\\npending, paused: 0/0 nodes", '
                      'fillcolor="lightblue", style="rounded,filled,bold"];',
                      out)

    def test_svg_needs_graphviz(self):
        self.useFixture(fixtures.EnvironmentVariable('PATH', '/nonexistent'))
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'x.svg')
        e = self.assertRaises(exceptions.CommandError, fakes.run,
                              strategy.GraphStrategy,
                              ['s1', '--output', path], self._api())
        self.assertIn('Graphviz', str(e))
        self.assertFalse(os.path.exists(path))


class TestStrategyShow(base.TestCase):

    def test_groups_in_document_order(self):
        api = fakes.FakeClient({('GET', 'deployment_strategies/s1'): {
            'name': 's1', 'document': TestStrategyGraph.DOCUMENT}})
        _status, app, _api = fakes.run(strategy.ShowStrategy,
                                       ['s1', '-f', 'json'], api)
        doc = json.loads(app.stdout.getvalue())
        self.assertEqual(['a', 'b'], doc['groups'])
        self.assertEqual(['a'], doc['critical_groups'])
        self.assertEqual(['a -> b'], doc['dependencies'])
        self.assertEqual(TestStrategyGraph.DOCUMENT, doc['document'])
