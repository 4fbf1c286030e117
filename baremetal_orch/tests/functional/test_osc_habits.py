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
"""The REAL ``openstack`` command as an ironicclient user types it.

Multi-key ``--sort``, ``Deleted node ...``, plain ``-f value``, ``node
create`` without ``--driver``, ``--wait [<time-out>]``, ``node filter``
with an empty criterion, and ``strategy graph --output`` by suffix, each
against a real all-in-one service.
"""

import os
import shutil
import uuid

from baremetal_orch.tests.functional import test_osc

U_LOW = '00000000-0000-4000-8000-%012d'


class TestIronicclientHabits(test_osc.CLITestCase):

    def setUp(self):
        super().setUp()
        self.start_service()

    def node(self, name, **fields):
        body = dict({'name': name, 'driver': 'fake'}, **fields)
        return self.api.post('/v1/nodes', status=201, json=body).json()

    def test_sort_value_and_delete(self):
        # Two nodes share a rack: name:desc then uuid:asc orders them.
        for i, (name, rack) in enumerate([('n1', 'r1'), ('n2', 'r2'),
                                          ('n3', 'r2'), ('n4', 'r1')]):
            self.node(name, rack_name=rack, uuid=U_LOW % (9 - i),
                      tags=['a', 'b'])
        run = self.cli('node', 'list', '--sort', 'rack_name:desc,uuid:asc',
                       '--long', '-f', 'value', '-c', 'Name')
        self.assertEqual(['n3', 'n2', 'n4', 'n1'], run.stdout.split())
        run = self.cli('node', 'list', '--sort', 'rack_name:up',
                       status=1)
        self.assertIn("'up' is not a sort direction", run.stderr)

        # -f value: plain text, no Python list representation.
        run = self.cli('node', 'show', 'n1', '-f', 'value', '-c', 'tags')
        self.assertEqual('a, b\n', run.stdout)

        run = self.cli('node', 'delete', 'n1', 'n2')
        self.assertEqual('Deleted node n1\nDeleted node n2\n', run.stdout)
        self.assertEqual(['n3', 'n4'], sorted(
            n['name'] for n in self.api.get(
                '/v1/nodes', status=200).json()['nodes']))

    def test_create_needs_a_driver_and_wait_takes_a_timeout(self):
        run = self.cli('node', 'create', '--name', 'x', status=2)
        self.assertIn('--driver', run.stderr)
        self.assertEqual([], self.api.get('/v1/nodes', status=200).json()[
            'nodes'])
        self.cli('node', 'create', '--driver', 'fake', '--name', 'x')
        # ironicclient's --wait [<time-out>].
        self.cli('node', 'manage', 'x', '--wait', '120')
        # One style in the plugin: no action create --wait --timeout N.
        run = self.cli('action', 'create', 'deploy_site', '--wait',
                       '--timeout', '5', status=2)
        self.assertIn('unrecognized arguments: --timeout', run.stderr)
        self.assertEqual('manageable', self.api.get(
            '/v1/nodes/x', status=200).json()['provision_state'])

    def test_filter_refuses_an_empty_criterion(self):
        self.node('f1', tags=['compute'])
        self.node('f2', tags=['storage'])
        # As --selector "node_tags=$TAG" with TAG unset would type it.
        run = self.cli('node', 'filter', '--selector', 'node_tags=',
                       status=1)
        self.assertIn('node_tags has no value', run.stderr)
        self.assertIn('--all', run.stderr)
        self.assertEqual('', run.stdout)
        run = self.cli('node', 'filter', '--selector', 'node_tags=',
                       '--all', '-f', 'value')
        self.assertEqual(['f1', 'f2'], sorted(run.stdout.split()))
        run = self.cli('node', 'filter', '--selector', 'node_tags=compute',
                       '-f', 'value')
        self.assertEqual(['f1'], run.stdout.split())

    def test_graph_writes_what_the_suffix_says(self):
        self.cli('strategy', 'create', test_osc.STRATEGY)
        out = os.path.join(self.log_dir, 'graph-%s' % uuid.uuid4().hex[:6])
        self.cli('strategy', 'graph', 'deployment-strategy', '--output',
                 out + '.dot')
        with open(out + '.dot') as f:
            self.assertTrue(f.read().startswith('digraph '))
        run = self.cli('strategy', 'graph', 'deployment-strategy',
                       '--output', out + '.txt', status=1)
        self.assertIn('.dot or .gv', run.stderr)
        self.assertFalse(os.path.exists(out + '.txt'))
        for fmt, magic in (('png', b'\x89PNG'), ('svg', b'<?xml')):
            path = '%s.%s' % (out, fmt)
            if shutil.which('dot'):
                self.cli('strategy', 'graph', 'deployment-strategy',
                         '--output', path)
                with open(path, 'rb') as f:
                    self.assertTrue(f.read().startswith(magic), fmt)
            else:
                # No DOT text under a .png name: a clear error, no file.
                run = self.cli('strategy', 'graph', 'deployment-strategy',
                               '--output', path, status=1)
                self.assertIn('Graphviz "dot" is not installed', run.stderr)
                self.assertFalse(os.path.exists(path), fmt)
