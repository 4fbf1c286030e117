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
"""The REAL ``openstack baremetal orch`` CLI against a REAL service.

Each test starts the all-in-one ``baremetal-orch`` (temporary sqlite,
``rpc_transport = none``, fake driver) on a free port and runs the
``openstack`` command of this venv (python-openstackclient with our plugin
found through its entry points) as subprocesses:

* without Keystone: ``openstack --os-auth-type none --os-endpoint URL``;
* with a real Keystone (:class:`TestWithKeystone`): password auth, the
  endpoint found in the catalog under ``baremetal-orchestration``.

One node is created with the CLI (each ``openstack`` run costs seconds of
imports); the rest of the example site, and the look-ups that only feed
the next command, go through the REST API directly.
"""

import json
import os
import subprocess
import sys
import uuid

from testtools import content
import yaml

from baremetal_orch.tests.functional import base
from baremetal_orch.tests.unit.osc import test_graph
from baremetal_orch_testing.fixtures import keystone
from baremetal_orch_testing import services

EXAMPLES = os.path.abspath(os.path.join(
    os.path.dirname(__file__), '..', '..', '..', 'etc', 'baremetal-orch',
    'examples'))
STRATEGY = os.path.join(EXAMPLES, 'deployment-strategy.yaml')
GROUPS = ('ntp-node', 'monitoring-nodes', 'control-nodes',
          'compute-nodes-1', 'compute-nodes-2')
EDGES = {('ntp-node', 'control-nodes'), ('control-nodes', 'compute-nodes-1'),
         ('control-nodes', 'compute-nodes-2')}
CLI_TIMEOUT = 300
FAKE_DURATION = 0.05


def table_rows(text):
    """The rows of a cliff table (header first), cells stripped."""
    return [[cell.strip() for cell in line.strip()[1:-1].split('|')]
            for line in text.splitlines() if line.startswith('|')]


REPORT_HEADER = ['Group', 'Node', 'Critical', 'Status', 'Reason',
                 'Succeeded', 'Failed', 'Misses']


def group_rows(text):
    """``{group: [critical, status, reason, succeeded, failed, misses]}``
    of a report table (its group rows: those without a node)."""
    rows = table_rows(text)
    if rows[0] != REPORT_HEADER:
        raise AssertionError('not a report table: %s' % rows[0])
    return {r[0]: r[2:] for r in rows[1:] if r[0] and not r[1]}


class CLITestCase(base.FunctionalTestCase):
    """An all-in-one service and a way to run the CLI against it."""

    def start_service(self, **sections):
        tmp = self.log_dir
        port = services.free_port()
        conf = services.base_sections(
            tmp, port, 'sqlite:///%s' % os.path.join(tmp, 'osc.sqlite'),
            DEFAULT={'host': 'osc-aio', 'rpc_transport': 'none'},
            fake_driver={'default_duration': FAKE_DURATION}, **sections)
        path = services.write_config(os.path.join(tmp, 'osc.conf'), conf)
        proc = self.start_process(['baremetal-orch', '--config-file', path])
        self.endpoint = 'http://127.0.0.1:%d' % port
        self.wait_for_http(self.endpoint + '/', status=200, process=proc,
                           timeout=120)
        self.api = services.Client(self.endpoint)
        self._cli_runs = 0

    def openstack_argv(self):
        return ['--os-auth-type', 'none', '--os-endpoint', self.endpoint]

    def cli(self, *args, status=0, options=(), env=None):
        """Run ``openstack <auth> OPTIONS baremetal orch ARGS``; return it.

        :param options: more global options of ``openstack``.
        :param env: more environment variables.
        """
        binary = os.path.join(os.path.dirname(sys.executable), 'openstack')
        if not os.path.exists(binary):
            self.skipTest('python-openstackclient is not installed beside '
                          '%s' % sys.executable)
        env = dict({k: v for k, v in os.environ.items()
                    if not k.startswith('OS_')}, **(env or {}))
        argv = [binary] + self.openstack_argv() + list(options)
        argv += ['baremetal', 'orch'] + list(args)
        proc = subprocess.run(argv, capture_output=True, text=True,
                              env=env, timeout=CLI_TIMEOUT, check=False)
        self._cli_runs += 1
        name = 'cli-%02d %s' % (self._cli_runs, ' '.join(args[:3]))
        self.addDetail(name, content.text_content(
            '$ %s\nexit status %s\n--- stdout\n%s--- stderr\n%s' % (
                ' '.join(argv), proc.returncode, proc.stdout, proc.stderr)))
        if status is not None:
            self.assertEqual(status, proc.returncode,
                             'openstack %s: %s' % (' '.join(args),
                                                   proc.stderr))
        return proc

    def cli_json(self, *args, **kwargs):
        return json.loads(self.cli(*(args + ('-f', 'json')),
                                   **kwargs).stdout)

    def create_site(self, via_cli=('ntp01',), failures=()):
        """Create the example site; return the node names.

        The nodes named in ``via_cli`` are created with the CLI, the rest
        with the REST API; ``failures`` maps node names to a
        ``fake_fail_phase``.
        """
        with open(os.path.join(EXAMPLES, 'site.yaml')) as f:
            site = yaml.safe_load(f)['nodes']
        for node in site:
            info = dict(node.get('driver_info') or {})
            if node['name'] in failures:
                info['fake_fail_phase'] = failures[node['name']]
            if node['name'] in via_cli:
                argv = ['node', 'create', '--driver', 'fake',
                        '--name', node['name'],
                        '--rack-name', node['rack_name']]
                for tag in node['tags']:
                    argv += ['--tag', tag]
                for key, value in node['labels'].items():
                    argv += ['--label', '%s=%s' % (key, value)]
                for key, value in info.items():
                    argv += ['--driver-info', '%s=%s' % (key, value)]
                doc = self.cli_json(*argv)
                self.assertEqual((node['name'], node['tags'], info,
                                  'enroll'),
                                 (doc['name'], doc['tags'],
                                  doc['driver_info'],
                                  doc['provision_state']))
            else:
                self.api.post('/v1/nodes', status=201,
                              json=dict(node, driver_info=info))
        return [n['name'] for n in site]


class TestWithoutKeystone(CLITestCase):

    def setUp(self):
        super().setUp()
        self.start_service()

    def test_deploy_site(self):
        names = self.create_site()
        listed = self.cli_json('node', 'list')
        self.assertEqual(sorted(names), sorted(n['Name'] for n in listed))
        self.assertEqual({'UUID', 'Name', 'Provision State', 'Maintenance'},
                         set(listed[0]))
        self.assertEqual(['ctl01', 'ctl02', 'ctl03', 'ctl04', 'ntp01'],
                         [r[0] for r in table_rows(self.cli(
                             'node', 'filter', '--selector',
                             'node_tags=control;rack_names=rack03',
                             '--selector', 'node_names=ntp01').stdout)[1:]])
        # A criterion after a "," is refused, not taken for a tag.
        wrong = self.cli('node', 'filter', '--selector',
                         'node_tags=compute,rack_names=rack01', status=1)
        self.assertIn("'rack_names=rack01' looks like the criterion "
                      "rack_names", wrong.stderr)
        self.assertIn('--selector "node_tags=compute;rack_names=rack01"',
                      wrong.stderr)
        self.assertEqual('', wrong.stdout)

        strategy = self.cli_json('strategy', 'create', STRATEGY)
        self.assertEqual('deployment-strategy', strategy['name'])
        self.assertEqual(set(GROUPS), set(strategy['groups']))

        run = self.cli('action', 'create', 'deploy_site', '--strategy',
                       'deployment-strategy', '--wait',
                       '--poll-interval', '0.2')
        by_group = group_rows(run.stdout)
        self.assertEqual(set(GROUPS), set(by_group))
        self.assertEqual(['True', 'success', '', '4', '0', ''],
                         by_group['control-nodes'])
        self.assertEqual({'success'}, {r[1] for r in by_group.values()})
        progress = run.stderr.splitlines()
        self.assertTrue(progress[0].startswith('deploy_site '), progress)
        self.assertIn('complete (success) | groups 5/5 | nodes 16/16',
                      run.stderr)
        self.assertTrue(progress[-1].endswith(': complete (success)'),
                        progress)

        actions = self.cli_json('action', 'list')
        self.assertEqual([('deploy_site', 'complete', 'success')],
                         [(a['Name'], a['State'], a['Result'])
                          for a in actions])
        action_uuid = actions[0]['UUID']
        api_action = self.api.get('/v1/actions/%s' % action_uuid,
                                  status=200).json()
        task_uuid = api_action['task_uuid']

        # action show: a summary in the table, the API's report in JSON.
        shown = {r[0]: r[1] for r in table_rows(self.cli(
            'action', 'show', action_uuid).stdout)[1:]}
        self.assertEqual('groups: 5 (5 success)', shown['report'])
        doc = self.cli_json('action', 'show', action_uuid)
        self.assertEqual(api_action['report'], doc['report'])
        self.assertEqual(('complete', 'success', False),
                         (doc['state'], doc['result'], doc['dry_run']))
        # action show --report: a row per group and per node, API values.
        rows = self.cli_json('action', 'show', action_uuid, '--report')
        groups = [r for r in rows if r['Node'] is None]
        self.assertEqual(api_action['report']['order'],
                         [r['Group'] for r in groups])
        self.assertEqual({None}, {r['Reason'] for r in groups})
        self.assertEqual({'success'}, {r['Status'] for r in rows})
        control = [r for r in groups if r['Group'] == 'control-nodes'][0]
        self.assertEqual((True, [], []), (control['Critical'],
                                          control['Failed'],
                                          control['Misses']))
        self.assertEqual(api_action['report']['groups']['control-nodes'][
            'succeeded_nodes'], control['Succeeded'])
        self.assertEqual(
            sorted((g, n) for g, e in api_action['report']['groups'].items()
                   for n in e['nodes']),
            sorted((r['Group'], r['Node']) for r in rows if r['Node']))

        dot = os.path.join(self.log_dir, 'x.dot')
        self.cli('strategy', 'graph', 'deployment-strategy', '--output', dot)
        with open(dot) as f:
            nodes, edges = test_graph.parse_dot(f.read())
        self.assertEqual(set(GROUPS), set(nodes))
        self.assertEqual(EDGES, set(edges))
        coloured = self.cli('strategy', 'graph', 'deployment-strategy',
                            '--action', action_uuid).stdout
        nodes, _ = test_graph.parse_dot(coloured)
        self.assertEqual({'green'}, {n['fillcolor'] for n in nodes.values()})

        # The table draws the tree; JSON is the API's nested tree.
        rows = table_rows(self.cli('task', 'show', task_uuid,
                                   '--tree').stdout)
        labels = [r[0] for r in rows[1:]]
        self.assertEqual('deploy_site', labels[0])
        for group in GROUPS:
            self.assertIn(group, [label.split(' ')[-1] for label in labels])
        self.assertIn('│   ├── prepare', labels)
        # -f value: each task's name, no tree drawing.
        plain = self.cli('task', 'show', task_uuid, '--tree', '-f', 'value',
                         '-c', 'Task').stdout.splitlines()
        self.assertEqual(len(labels), len(plain))
        self.assertEqual([label.split(' ')[-1] for label in labels], plain)
        self.assertIn('prepare', plain)
        tree = self.cli_json('task', 'show', task_uuid, '--tree')
        self.assertEqual(self.api.get('/v1/tasks/%s?tree=true' % task_uuid,
                                      status=200).json(), tree)
        self.assertEqual(set(GROUPS),
                         {g['name'] for g in tree['subtasks']})
        nodes_done = [n for g in tree['subtasks'] for p in g['subtasks']
                      for n in p['subtasks']]
        self.assertEqual(32, len(nodes_done))  # prepare + deploy, 16 nodes
        self.assertEqual({('node', 'success')},
                         {(n['kind'], n['status']) for n in nodes_done})

        missing = self.cli('node', 'show', 'no-such-node', status=1)
        self.assertIn('Node no-such-node could not be found', missing.stderr)
        self.assertIn('HTTP 404', missing.stderr)

    def test_failing_site(self):
        self.create_site(failures={'ntp01': 'prepare'})
        self.cli('strategy', 'create', STRATEGY)
        run = self.cli('action', 'create', 'deploy_site', '--wait',
                       '--poll-interval', '0.2', status=1)
        by_group = group_rows(run.stdout)
        self.assertEqual(['True', 'failed', 'prepare_criteria_not_met', '0',
                          '1', 'minimum_successful_nodes: needed 1, '
                          'actual 0'], by_group['ntp-node'])
        for group in ('control-nodes', 'compute-nodes-1', 'compute-nodes-2'):
            self.assertEqual(['failed', 'dependency_failed'],
                             by_group[group][1:3], group)
        self.assertEqual('success', by_group['monitoring-nodes'][1])
        self.assertIn(': failed (failed)', run.stderr)
        # The nodes of the skipped groups are not counted as done.
        self.assertIn('failed (failed) | groups 5/5 | nodes 4/16 '
                      '(12 not started) |', run.stderr)

        action_uuid = self.api.get('/v1/actions',
                                   status=200).json()['actions'][0]['uuid']
        rows = self.cli_json('action', 'show', action_uuid, '--report')
        ntp = [r for r in rows if r['Group'] == 'ntp-node']
        self.assertEqual(
            {'Group': 'ntp-node', 'Node': None, 'Critical': True,
             'Status': 'failed', 'Reason': 'prepare_criteria_not_met',
             'Succeeded': [], 'Failed': ['ntp01'],
             'Misses': [{'criterion': 'minimum_successful_nodes',
                         'needed': 1, 'actual': 0}]}, ntp[0])
        self.assertEqual([('ntp01', 'failure')],
                         [(r['Node'], r['Status']) for r in ntp[1:]])
        self.assertIn('fake failure injected in the prepare phase',
                      ntp[1]['Reason'])
        summary = {r[0]: r[1] for r in table_rows(self.cli(
            'action', 'show', action_uuid).stdout)[1:]}
        self.assertEqual('groups: 5 (4 failed, 1 success)',
                         summary['report'])
        nodes, _ = test_graph.parse_dot(self.cli(
            'strategy', 'graph', 'deployment-strategy', '--action',
            action_uuid).stdout)
        self.assertEqual('red', nodes['ntp-node']['fillcolor'])
        self.assertEqual('green', nodes['monitoring-nodes']['fillcolor'])
        # A skipped group is drawn apart from the failed one.
        for group in ('control-nodes', 'compute-nodes-1', 'compute-nodes-2'):
            self.assertEqual('lightgrey', nodes[group]['fillcolor'], group)
        self.assertIn('prepare_criteria_not_met',
                      nodes['ntp-node']['label'])

    def test_latest_api_version(self):
        root = self.api.get('/', status=200).json()
        maximum = root['default_version']['version']
        for how in ({'options': ('--os-baremetal-orch-api-version',
                                 'latest', '--debug')},
                    {'options': ('--debug',),
                     'env': {'OS_BAREMETAL_ORCH_API_VERSION': 'latest'}}):
            run = self.cli('shard', 'list', '-f', 'json', **how)
            self.assertEqual([], json.loads(run.stdout), how)
            self.assertIn('OpenStack-API-Version: baremetal-orchestration %s'
                          % maximum, run.stderr)
            self.assertIn('using %s' % maximum, run.stderr)


class TestWithKeystone(CLITestCase):
    """Password auth; the endpoint comes from the Keystone catalog."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.keystone = cls.use_class_fixture(keystone.KeystoneFixture())

    def setUp(self):
        super().setUp()
        self.start_service(
            api={'auth_strategy': 'keystone'},
            keystone_authtoken=self.keystone.authtoken_options())
        self.keystone.register_service('baremetal-orchestration',
                                       'baremetal-orch-%s'
                                       % uuid.uuid4().hex[:6],
                                       self.endpoint)
        self.user = ('admin', self.keystone.admin_password)

    def openstack_argv(self):
        return ['--os-auth-url', self.keystone.auth_url,
                '--os-identity-api-version', '3',
                '--os-username', self.user[0],
                '--os-password', self.user[1],
                '--os-user-domain-id', 'default',
                '--os-system-scope', 'all',
                '--os-region-name', keystone.REGION,
                '--os-interface', 'public']

    def test_catalog_and_policy(self):
        doc = self.cli_json('node', 'create', '--driver', 'fake',
                            '--name', 'ks-cli-1')
        self.assertEqual('ks-cli-1', doc['name'])
        self.assertEqual(['ks-cli-1'],
                         [n['Name'] for n in self.cli_json('node', 'list')])
        # latest: the root document read through the catalog's endpoint.
        self.assertEqual(['ks-cli-1'], [n['Name'] for n in self.cli_json(
            'node', 'list',
            options=('--os-baremetal-orch-api-version', 'latest'))])
        password = 'pw-%s' % uuid.uuid4().hex[:8]
        reader = 'reader-%s' % uuid.uuid4().hex[:8]
        self.keystone.create_user(reader, password, system_roles=['reader'])
        self.user = (reader, password)
        denied = self.cli('node', 'create', '--driver', 'fake',
                          '--name', 'nope', status=1)
        self.assertIn('HTTP 403', denied.stderr)
        self.assertEqual(['ks-cli-1'],
                         [n['Name'] for n in self.cli_json('node', 'list')])
