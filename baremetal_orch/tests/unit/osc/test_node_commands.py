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
"""``node`` commands: from the command line to the requests they make."""

import json

import fixtures
from osc_lib import exceptions

from baremetal_orch.osc import client
from baremetal_orch.osc.v1 import node
from baremetal_orch.osc.v1 import node_state
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.osc import fakes

U1 = '11111111-2222-3333-4444-555555555555'


def req(method, path, body=None, params=None):
    return (method, path, body, params or {})


def calls(api):
    return [c[:4] for c in api.calls]


class TestRequests(base.TestCase):

    # (command, argv, answers, requests)
    CASES = [
        (node.CreateNode,
         ['--driver', 'fake', '--name', 'n1', '--rack-name', 'r1',
          '--tag', 'a', '--tag', 'b',
          '--label', 'k=1', '--driver-info', 'fake_duration=0.5',
          '--driver-info', 'fake_fail_phase=prepare', '--extra',
          'x={"y": 1}'], {},
         [req('POST', 'nodes', {
             'driver': 'fake', 'name': 'n1', 'rack_name': 'r1',
             'tags': ['a', 'b'], 'labels': {'k': '1'},
             'driver_info': {'fake_duration': 0.5,
                             'fake_fail_phase': 'prepare'},
             'extra': {'x': {'y': 1}}})]),
        (node.CreateNode,
         ['--driver', 'ironic', '--uuid', U1, '--ironic-uuid', U1,
          '--shard', 's1', '--conductor-group', 'g1', '--owner', 'p1',
          '--chassis-uuid', U1, '--instance-info', 'image=img'], {},
         [req('POST', 'nodes', {
             'driver': 'ironic', 'uuid': U1, 'ironic_uuid': U1,
             'shard': 's1', 'conductor_group': 'g1', 'owner': 'p1',
             'chassis_uuid': U1, 'instance_info': {'image': 'img'}})]),
        (node.ListNode, [], {}, [req('GET', 'nodes')]),
        (node.ListNode,
         ['--long', '--provision-state', 'active', '--maintenance',
          '--shard', 'a', '--shard', 'b', '--tag', 'x', '--tag', 'y',
          '--unsharded', '--driver', 'fake', '--conductor-group', 'g',
          '--rack-name', 'r', '--conductor', 'c', '--owner', 'o',
          '--limit', '5', '--marker', 'm', '--sort', 'name:desc'], {},
         [req('GET', 'nodes', params={
             'detail': 'true', 'provision_state': 'active',
             'maintenance': 'true', 'shard': 'a,b', 'tag': 'x,y',
             'sharded': 'false', 'driver': 'fake', 'conductor_group': 'g',
             'rack_name': 'r', 'conductor': 'c', 'owner': 'o', 'limit': 5,
             'marker': 'm', 'sort_key': 'name', 'sort_dir': 'desc'})]),
        (node.ListNode, ['--fields', 'uuid', 'shard', '--no-maintenance',
                         '--sharded'], {},
         [req('GET', 'nodes', params={'fields': 'uuid,shard',
                                      'maintenance': 'false',
                                      'sharded': 'true'})]),
        (node.ShowNode, ['n1'], {}, [req('GET', 'nodes/n1')]),
        (node.ShowNode, ['n1', '--fields', 'name', 'tags'], {},
         [req('GET', 'nodes/n1', params={'fields': 'name,tags'})]),
        (node.SetNode,
         ['n1', '--name', 'n2', '--label', 'a/b=c', '--driver-info',
          'fake_duration=1', '--shard', 's2'], {},
         [req('PATCH', 'nodes/n1', [
             {'op': 'add', 'path': '/name', 'value': 'n2'},
             {'op': 'add', 'path': '/shard', 'value': 's2'},
             {'op': 'add', 'path': '/driver_info/fake_duration',
              'value': 1},
             {'op': 'add', 'path': '/labels/a~1b', 'value': 'c'}])]),
        (node.SetNode, ['n1', '--tag', 'new', '--tag', 'old'],
         {('GET', 'nodes/n1'): {'tags': ['old']}},
         [req('GET', 'nodes/n1', params={'fields': 'tags'}),
          req('PATCH', 'nodes/n1', [
              {'op': 'add', 'path': '/tags', 'value': ['old', 'new']}])]),
        (node.UnsetNode,
         ['n1', '--name', '--rack-name', '--label', 'a', '--extra', 'x',
          '--driver-info', 'fake_fail_phase'], {},
         [req('PATCH', 'nodes/n1', [
             {'op': 'remove', 'path': '/name'},
             {'op': 'remove', 'path': '/rack_name'},
             {'op': 'remove', 'path': '/driver_info/fake_fail_phase'},
             {'op': 'remove', 'path': '/extra/x'},
             {'op': 'remove', 'path': '/labels/a'}])]),
        (node.UnsetNode, ['n1', '--tag', 'old'],
         {('GET', 'nodes/n1'): {'tags': ['old', 'keep']}},
         [req('GET', 'nodes/n1', params={'fields': 'tags'}),
          req('PATCH', 'nodes/n1', [
              {'op': 'replace', 'path': '/tags', 'value': ['keep']}])]),
        (node.DeleteNode, ['a', 'b'], {},
         [req('DELETE', 'nodes/a'), req('DELETE', 'nodes/b')]),
        (node_state.ManageNode, ['a', 'b'], {},
         [req('PUT', 'nodes/a/states/provision', {'target': 'manage'}),
          req('PUT', 'nodes/b/states/provision', {'target': 'manage'})]),
        (node_state.ProvideNode, ['a'], {},
         [req('PUT', 'nodes/a/states/provision', {'target': 'provide'})]),
        (node_state.DeployNode, ['a'], {},
         [req('PUT', 'nodes/a/states/provision', {'target': 'active'})]),
        (node_state.UndeployNode, ['a'], {},
         [req('PUT', 'nodes/a/states/provision', {'target': 'deleted'})]),
        (node_state.SetMaintenance, ['a', '--reason', 'disk swap'], {},
         [req('PUT', 'nodes/a/maintenance', {'reason': 'disk swap'})]),
        (node_state.SetMaintenance, ['a'], {},
         [req('PUT', 'nodes/a/maintenance', {})]),
        (node_state.UnsetMaintenance, ['a'], {},
         [req('DELETE', 'nodes/a/maintenance')]),
        (node_state.EnableConsole, ['a'], {},
         [req('PUT', 'nodes/a/states/console', {'enabled': True})]),
        (node_state.DisableConsole, ['a'], {},
         [req('PUT', 'nodes/a/states/console', {'enabled': False})]),
        (node.FilterNode,
         ['--selector', 'node_tags=control,ntp; rack_names=rack03',
          '--selector', '{"node_labels": ["a:b"]}',
          '--selector', 'node_names=', '--all'], {},
         [req('POST', 'nodes/filter', {'selectors': [
             {'node_tags': ['control', 'ntp'], 'rack_names': ['rack03']},
             {'node_labels': ['a:b']}, {'node_names': []}]})]),
        (node.FilterNode, [], {},
         [req('POST', 'nodes/filter', {'selectors': []})]),
    ]

    def test_table(self):
        for cmd, argv, answers, expected in self.CASES:
            api = fakes.FakeClient(answers)
            fakes.run(cmd, argv, api)
            self.assertEqual(expected, calls(api), (cmd.__name__, argv))


class TestArgumentErrors(base.TestCase):

    # (command, argv): the command line is refused before any request
    COMMAND_ERRORS = [
        (node.SetNode, ['n1']),
        (node.UnsetNode, ['n1']),
        (node.FilterNode, ['--selector', 'node_colour=red']),
        (node.FilterNode, ['--selector', 'node_tags']),
        (node.FilterNode, ['--selector', '{"node_tags": ']),
        (node.FilterNode, ['--selector', '{}x']),
    ]
    USAGE_ERRORS = [
        (node.CreateNode, ['--label', 'no-equals-sign']),
        # --driver is required, as in ironicclient (no silent fake node).
        (node.CreateNode, ['--name', 'n1']),
        (node.CreateNode, ['--driver', 'fake', '--label', 'x']),
        (node.ListNode, ['--long', '--fields', 'uuid']),
        (node.ListNode, ['--fields', 'colour']),
        (node.ListNode, ['--maintenance', '--no-maintenance']),
        (node_state.ManageNode, []),
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


class TestSelectorParsing(base.TestCase):

    def test_text_form(self):
        for text, expected in [
                ('node_tags=compute', {'node_tags': ['compute']}),
                ('node_tags=compute;rack_names=rack01',
                 {'node_tags': ['compute'], 'rack_names': ['rack01']}),
                (' node_tags = a , b ; node_labels=role:x ',
                 {'node_tags': ['a', 'b'], 'node_labels': ['role:x']}),
                # A tag may hold "=": only a criterion-like value is refused.
                ('node_tags=compute,env=prod',
                 {'node_tags': ['compute', 'env=prod']}),
                ('node_tags=rack=1', {'node_tags': ['rack=1']})]:
            self.assertEqual(expected, node.parse_selector(text), text)

    def test_an_empty_value_needs_all(self):
        # An unset shell variable (--selector "node_tags=$TAG") would
        # select every node: refused unless --all.
        for text, expected, named in [
                ('node_names=', {'node_names': []}, 'node_names has no'),
                ('node_tags=;rack_names=r1',
                 {'node_tags': [], 'rack_names': ['r1']}, 'node_tags has'),
                ('node_tags= , ', {'node_tags': []}, 'node_tags has'),
                ('', {}, 'no criterion'),
                (' ; ', {}, 'no criterion')]:
            e = self.assertRaises(exceptions.CommandError,
                                  node.parse_selector, text)
            self.assertIn(named, str(e))
            self.assertIn('--all', str(e))
            self.assertEqual(expected,
                             node.parse_selector(text, allow_empty=True))

    def test_filter_with_an_empty_value_sends_nothing(self):
        api = fakes.FakeClient()
        self.assertRaises(exceptions.CommandError, fakes.run,
                          node.FilterNode, ['--selector', 'node_tags='], api)
        self.assertEqual([], api.calls)

    def test_json_form_takes_values_as_they_are(self):
        self.assertEqual({'node_tags': ['compute', 'rack_names=rack01']},
                         node.parse_selector(
                             '{"node_tags": ["compute", '
                             '"rack_names=rack01"]}'))

    def test_a_criterion_after_a_comma_is_refused(self):
        # (selector, the value named, the criterion, the corrected selector)
        for text, value, criterion, fixed in [
                ('node_tags=compute,rack_names=rack01', 'rack_names=rack01',
                 'rack_names', 'node_tags=compute;rack_names=rack01'),
                ('node_tags=compute, node_labels=a:b', 'node_labels=a:b',
                 'node_labels', 'node_tags=compute;node_labels=a:b'),
                ('rack_names=r1,node_names=n1,n2', 'node_names=n1',
                 'node_names', 'rack_names=r1;node_names=n1,n2'),
                # A near miss of a criterion's name.
                ('node_tags=compute,rack_name=rack01', 'rack_name=rack01',
                 'rack_names', 'node_tags=compute;rack_names=rack01'),
                ('node_names=a,node_tag=x', 'node_tag=x', 'node_tags',
                 'node_names=a;node_tags=x')]:
            e = self.assertRaises(exceptions.CommandError,
                                  node.parse_selector, text)
            message = str(e)
            self.assertIn('%r looks like the criterion %s' % (value,
                                                              criterion),
                          message)
            self.assertIn('--selector "%s"' % fixed, message)
            self.assertIn('Separate criteria with ";"', message)
            # The corrected selector is valid and means what was meant.
            self.assertIn(criterion, node.parse_selector(fixed))

    def test_an_unknown_criterion_shows_the_syntax(self):
        e = self.assertRaises(exceptions.CommandError, node.parse_selector,
                              'rack_name=rack01')
        self.assertIn("Invalid selector part 'rack_name=rack01'", str(e))
        self.assertIn('--selector "node_tags=compute;rack_names=rack01"',
                      str(e))

    def test_filter_refuses_before_any_request(self):
        api = fakes.FakeClient()
        self.assertRaises(exceptions.CommandError, fakes.run,
                          node.FilterNode,
                          ['--selector', 'node_tags=compute,'
                           'rack_names=rack01'], api)
        self.assertEqual([], api.calls)


class TestOutput(base.TestCase):

    def test_list_columns(self):
        api = fakes.FakeClient({('GET', 'nodes'): {'nodes': [
            {'uuid': U1, 'name': 'n1', 'provision_state': 'active',
             'maintenance': False}]}})
        _status, app, _api = fakes.run(node.ListNode, ['-f', 'json'], api)
        self.assertEqual([{'UUID': U1, 'Name': 'n1',
                           'Provision State': 'active',
                           'Maintenance': False}],
                         json.loads(app.stdout.getvalue()))

    def test_show_formats_dicts_and_lists(self):
        api = fakes.FakeClient({('GET', 'nodes/n1'): {
            'uuid': U1, 'name': 'n1', 'tags': ['b', 'a'],
            'labels': {'k': 'v'}, 'links': []}})
        _status, app, _api = fakes.run(node.ShowNode, ['n1', '-f', 'json'],
                                       api)
        doc = json.loads(app.stdout.getvalue())
        self.assertEqual(['b', 'a'], doc['tags'])
        self.assertEqual({'k': 'v'}, doc['labels'])
        self.assertNotIn('links', doc)
        _status, app, _api = fakes.run(
            node.ShowNode, ['n1', '-c', 'tags', '-c', 'labels'], api)
        table = app.stdout.getvalue()
        self.assertIn('| tags   | b, a  |', table)
        self.assertIn("| labels | k='v' |", table)

    def test_filter_lists_names(self):
        api = fakes.FakeClient({('POST', 'nodes/filter'): {
            'node_names': ['ctl01', 'ntp01']}})
        _status, app, _api = fakes.run(node.FilterNode, ['-f', 'value'],
                                       api)
        self.assertEqual('ctl01\nntp01\n', app.stdout.getvalue())

    def test_delete_reports_every_failure(self):
        api = fakes.FakeClient({('DELETE', 'nodes/b'): client.ApiError(
            409, detail='Node b cannot be deleted while active')})
        e = self.assertRaises(exceptions.CommandError, fakes.run,
                              node.DeleteNode, ['a', 'b', 'c'], api)
        self.assertIn('Failed to delete 1 of 3 node(s)', str(e))
        self.assertIn('b: Node b cannot be deleted while active', str(e))
        self.assertEqual(['nodes/a', 'nodes/b', 'nodes/c'],
                         [c[1] for c in api.calls])


class TestProvisionWait(base.TestCase):

    def setUp(self):
        super().setUp()
        self.sleeps = []
        self.useFixture(fixtures.MonkeyPatch(
            'baremetal_orch.osc.common.time.sleep', self.sleeps.append))

    def _states(self, *states):
        return fakes.FakeClient({('GET', 'nodes/a'): [
            {'provision_state': s, 'target_provision_state': t,
             'last_error': e} for s, t, e in states]})

    def test_waits_for_the_stable_state(self):
        api = self._states(('verifying', 'manageable', None),
                           ('verifying', 'manageable', None),
                           ('manageable', None, None))
        fakes.run(node_state.ManageNode, ['a', '--wait'], api)
        self.assertEqual(4, len(api.calls))  # PUT + three GETs
        self.assertEqual([0.5, 0.5], self.sleeps)

    def test_failure_state_fails_the_command(self):
        api = self._states(('deploying', 'active', None),
                           ('deploy failed', None, 'boom'))
        e = self.assertRaises(exceptions.CommandError, fakes.run,
                              node_state.DeployNode, ['a', '--wait'], api)
        self.assertIn('a: deploy failed (boom)', str(e))

    def test_timeout(self):
        api = self._states(('cleaning', 'available', None))
        clock = iter(range(0, 1000, 5))
        self.useFixture(fixtures.MonkeyPatch(
            'baremetal_orch.osc.common.time.monotonic',
            lambda: next(clock)))
        e = self.assertRaises(exceptions.CommandError, fakes.run,
                              node_state.ProvideNode, ['a', '--wait', '10'],
                              api)
        self.assertIn('Timed out after 10 seconds', str(e))
