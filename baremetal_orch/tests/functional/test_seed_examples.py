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
"""The deployment-grouping specification's example runs, through the REST
API of a running all-in-one service (real HTTP, sqlite)."""

import os
import subprocess
import sys

import fixtures
import testtools

from baremetal_orch import demo
from baremetal_orch.tests.functional import base
from baremetal_orch_testing import services

EXAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'etc',
                        'baremetal-orch', 'examples')


class TestSeedExamples(base.FunctionalTestCase):

    def _service(self, failures=()):
        tmp = self.log_dir
        port = services.free_port()
        conf = services.write_config(
            os.path.join(tmp, 'aio.conf'), services.base_sections(
                tmp, port, 'sqlite:///%s' % os.path.join(tmp, 'a.sqlite'),
                DEFAULT={'host': 'aio'}))
        proc = self.start_process(['baremetal-orch', '--config-file', conf])
        endpoint = 'http://127.0.0.1:%d' % port
        self.wait_for_http(endpoint + '/v1', status=200, process=proc,
                           timeout=90)
        client = services.Client(endpoint)
        for node in demo.load_site(EXAMPLES, failures):
            client.post('/v1/nodes', json=node, status=201)
        with open(os.path.join(EXAMPLES, 'deployment-strategy.yaml'),
                  'rb') as f:
            client.post('/v1/deployment_strategies', data=f.read(),
                        headers={'Content-Type': 'application/yaml'},
                        status=201)
        return client

    def _deploy(self, client):
        action = client.post('/v1/actions', json={'name': 'deploy_site'},
                             status=201).json()
        return client.wait_for_action(action['uuid'], timeout=300)

    def _groups(self, action):
        return {g: (e['status'], e['reason'])
                for g, e in action['report']['groups'].items()}

    def test_all_succeed_dry_run_and_task_tree(self):
        client = self._service()
        plan = client.post('/v1/actions', status=200, json={
            'name': 'deploy_site', 'dry_run': True}).json()['plan']
        self.assertEqual(['ntp01'], plan['groups']['ntp-node']['nodes'])
        self.assertEqual(['ntp-node'],
                         plan['groups']['control-nodes']['depends_on'])
        self.assertEqual([], client.get('/v1/actions',
                                        status=200).json()['actions'])
        action = self._deploy(client)
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']))
        self.assertEqual({'success'}, set(action['report']['nodes'].values()))
        order = action['report']['order']
        self.assertLess(order.index('ntp-node'),
                        order.index('control-nodes'))
        for compute in ('compute-nodes-1', 'compute-nodes-2'):
            self.assertLess(order.index('control-nodes'),
                            order.index(compute))
        tree = client.get('/v1/tasks/%s?tree=true' % action['task_uuid'],
                          status=200).json()
        groups = {t['name']: t for t in tree['subtasks']}
        self.assertEqual(5, len(groups))
        control = groups['control-nodes']
        self.assertEqual(['prepare', 'deploy'],
                         [p['name'] for p in control['subtasks']])
        self.assertEqual({'ctl01', 'ctl02', 'ctl03', 'ctl04'},
                         {n['name'] for n in control['subtasks'][0][
                             'subtasks']})

    def test_ntp_prepare_fails(self):
        client = self._service(['ntp-prepare-fails'])
        action = self._deploy(client)
        self.assertEqual(('failed', 'failed'),
                         (action['state'], action['result']))
        self.assertEqual({
            'ntp-node': ('failed', 'prepare_criteria_not_met'),
            'control-nodes': ('failed', 'dependency_failed'),
            'compute-nodes-1': ('failed', 'dependency_failed'),
            'compute-nodes-2': ('failed', 'dependency_failed'),
            'monitoring-nodes': ('success', None)}, self._groups(action))
        nodes = action['report']['nodes']
        self.assertEqual('failure', nodes['ntp01'])
        self.assertEqual('not_started', nodes['ctl01'])
        self.assertEqual('success', nodes['mon01'])

    def test_compute_nodes_2_deploy_fails(self):
        client = self._service(['compute-nodes-2-deploy-fails'])
        action = self._deploy(client)
        self.assertEqual(('complete', 'success_with_failures'),
                         (action['state'], action['result']))
        groups = self._groups(action)
        self.assertEqual(('failed', 'deploy_criteria_not_met'),
                         groups['compute-nodes-2'])
        for name in ('ntp-node', 'control-nodes', 'monitoring-nodes',
                     'compute-nodes-1'):
            self.assertEqual(('success', None), groups[name])

    def test_control_misses_90_percent_skips_its_deploy(self):
        client = self._service(['control-misses-90-percent'])
        action = self._deploy(client)
        self.assertEqual(('failed', 'failed'),
                         (action['state'], action['result']))
        control = action['report']['groups']['control-nodes']
        self.assertEqual(('failed', 'prepare_criteria_not_met'),
                         (control['status'], control['reason']))
        misses = {m['criterion'] for m in control['misses']}
        self.assertIn('percent_successful_nodes', misses)
        # Its prepared nodes were never deployed.
        nodes = action['report']['nodes']
        self.assertEqual('prepared', nodes['ctl01'])
        self.assertEqual('failure', nodes['ctl02'])
        doc = client.get('/v1/nodes/ctl01', status=200).json()
        self.assertEqual('available', doc['provision_state'])


class TestAllInOneCommand(base.FunctionalTestCase):
    """``baremetal-orch --site-dir ...`` as the README runs it, in a home
    of its own: the database every command finds by default."""

    def run_command(self, *argv, expect=0):
        port = services.free_port()
        conf = services.write_config(
            os.path.join(self.log_dir, 'port-%d.conf' % port),
            {'api': {'port': port}})
        env = dict(os.environ, HOME=self.home)
        env.pop('XDG_DATA_HOME', None)
        command = argv[0]
        result = subprocess.run(
            [os.path.join(os.path.dirname(sys.executable), command),
             '--config-file', conf] + list(argv[1:]),
            capture_output=True, text=True, env=env, timeout=300,
            cwd=self.log_dir)
        self.addDetail('%s-%d' % (command, port),
                       testtools.content.text_content(
                           result.stdout + result.stderr))
        self.assertEqual(expect, result.returncode, result.stderr[-2000:])
        return result

    def test_readme_command_and_failure_on_a_used_database(self):
        self.home = self.useFixture(fixtures.TempDir()).path
        out = self.run_command('baremetal-orch', '--site-dir', EXAMPLES,
                               '--exit-when-done').stdout.splitlines()
        summary = [line for line in out if line.startswith('Action ')]
        self.assertEqual(1, len(summary), out)
        self.assertTrue(summary[0].endswith('complete (success)'), out)
        # The groups ran one at a time in the dry run's order.
        first = out.index(summary[0]) + 2
        self.assertEqual(['monitoring-nodes', 'ntp-node', 'control-nodes',
                          'compute-nodes-1', 'compute-nodes-2'],
                         [line.split()[0] for line in out[first:first + 5]])
        database = os.path.join(self.home, '.local', 'share',
                                'baremetal-orch', 'baremetal-orch.sqlite')
        self.assertTrue(os.path.exists(database))
        # The manage command finds the same database.
        self.assertEqual('0003_action_steering', self.run_command(
            'baremetal-orch-manage', 'db', 'version').stdout.strip())
        # A failure case on nodes already deployed is refused, not ignored.
        refused = self.run_command(
            'baremetal-orch', '--site-dir', EXAMPLES, '--exit-when-done',
            '--failure', 'ntp-prepare-fails', expect=2)
        self.assertIn('Use a fresh database', refused.stderr)
        self.assertIn(database, refused.stderr)
        self.assertNotIn('complete (success)', refused.stdout)

    def test_manage_names_a_database_it_cannot_open(self):
        self.home = self.useFixture(fixtures.TempDir()).path
        result = self.run_command('baremetal-orch-manage', 'db', 'version',
                                  expect=1)
        self.assertIn('Cannot open the database sqlite:///%s' % os.path.join(
            self.home, '.local', 'share', 'baremetal-orch',
            'baremetal-orch.sqlite'), result.stderr)
