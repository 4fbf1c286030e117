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
"""baremetal-orch-manage db, service, shard and strategy, in-process on a
migrated sqlite database (``node move`` is in test_manage_node_move)."""

import copy
import datetime
import json
import os

import fixtures
from oslo_config import cfg
from oslo_utils import timeutils
import yaml

from baremetal_orch.cmd import manage
from baremetal_orch.db import api as dbapi
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.cmd import cli

CONF = cfg.CONF

EXAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..',
                        'etc', 'baremetal-orch', 'examples')


def _rows(table):
    """The data rows of a prettytable as lists of stripped cells."""
    rows = [[c.strip() for c in line.strip('|').split('|')]
            for line in table.splitlines() if line.startswith('|')]
    return rows[0], rows[1:]


class ManageTestCase(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.cli = self.useFixture(cli.CommandFixture(manage))

    def manage(self, *argv):
        return self.cli.run(*argv)


class TestCommandLine(ManageTestCase):

    def test_argument_names_are_not_option_names(self):
        # oslo.config refuses CONF.command.<x> when x is a registered
        # option: every sub-command argument must be readable.
        out = self.manage('service', 'disable', 'nope', '--reason', 'r')
        self.assertEqual((1, 'Service nope could not be found.\n'),
                         (out.code, out.stderr.splitlines(True)[-1]))

    def test_usage_errors_exit_2(self):
        for argv in ([], ['db'], ['node', 'move', 'x'], ['service', 'kick'],
                     ['strategy', 'validate']):
            self.assertEqual(2, self.manage(*argv).code, argv)

    def test_stdout_is_only_the_result(self):
        out = self.manage('db', 'version')
        self.assertEqual('0003_action_steering\n', out.stdout)


class TestDb(ManageTestCase):

    def _fresh_database(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'fresh.sqlite')
        self.config(group='database', connection='sqlite:///%s' % path)
        sqla_api.reset_engine()

    def test_version_of_a_migrated_database(self):
        out = self.manage('db', 'version')
        self.assertEqual((0, '0003_action_steering'),
                         (out.code, out.stdout.strip()))

    def test_upgrade_an_empty_database(self):
        self._fresh_database()
        out = self.manage('db', 'version')
        self.assertEqual(0, out.code)
        self.assertIn('None (no schema', out.stdout)
        out = self.manage('db', 'upgrade')
        self.assertEqual(
            (0, 'Database upgraded to 0003_action_steering.\n'),
            (out.code, out.stdout))
        self.assertEqual('0003_action_steering',
                         self.manage('db', 'version').stdout.strip())
        # The tables exist: a service can be registered and listed.
        dbapi.register_service('after-upgrade')
        self.assertIn('after-upgrade', self.manage('service', 'list').stdout)

    def test_upgrade_to_a_revision(self):
        self._fresh_database()
        out = self.manage('db', 'upgrade', '--revision', '0001_initial')
        self.assertEqual(0, out.code)
        self.assertEqual('0001_initial',
                         self.manage('db', 'version').stdout.strip())

    def test_upgrade_to_an_unknown_revision_fails(self):
        self._fresh_database()
        out = self.manage('db', 'upgrade', '--revision', '9999_nope')
        self.assertEqual(1, out.code)
        self.assertIn('9999_nope', out.stderr)


class TestService(ManageTestCase):

    def setUp(self):
        super().setUp()
        self.config(group='conductor', heartbeat_timeout=60)
        dbapi.register_service('cond-a', shard_key='s1',
                               conductor_group='g1')
        dbapi.register_service('cond-b')
        dbapi.update_service('cond-b', {
            'last_seen_at': timeutils.utcnow() - datetime.timedelta(
                seconds=120)})

    def test_list(self):
        out = self.manage('service', 'list')
        self.assertEqual(0, out.code)
        header, rows = _rows(out.stdout)
        self.assertEqual(['Host', 'Binary', 'Shard key', 'Conductor group',
                          'Alive', 'Forced down', 'Disabled',
                          'Disabled reason', 'Last seen'], header)
        by_host = {r[0]: dict(zip(header, r)) for r in rows}
        self.assertEqual({'cond-a', 'cond-b'}, set(by_host))
        self.assertEqual(('s1', 'g1', 'True'),
                         (by_host['cond-a']['Shard key'],
                          by_host['cond-a']['Conductor group'],
                          by_host['cond-a']['Alive']))
        self.assertEqual('False', by_host['cond-b']['Alive'])

    def test_force_down_and_unset(self):
        out = self.manage('service', 'force-down', 'cond-a')
        self.assertEqual((0, 'Service cond-a is forced down.\n'),
                         (out.code, out.stdout))
        self.assertTrue(dbapi.get_service('cond-a').forced_down)
        header, rows = _rows(self.manage('service', 'list').stdout)
        row = [dict(zip(header, r)) for r in rows if r[0] == 'cond-a'][0]
        self.assertEqual(('False', 'True'),
                         (row['Alive'], row['Forced down']))
        out = self.manage('service', 'force-down', 'cond-a', '--unset')
        self.assertEqual(0, out.code)
        self.assertFalse(dbapi.get_service('cond-a').forced_down)

    def test_disable_with_reason_and_enable(self):
        out = self.manage('service', 'disable', 'cond-a', '--reason',
                          'moving shard s1')
        self.assertEqual((0, 'Service cond-a is disabled.\n'),
                         (out.code, out.stdout))
        row = dbapi.get_service('cond-a')
        self.assertEqual((True, 'moving shard s1'),
                         (row.disabled, row.disabled_reason))
        out = self.manage('service', 'enable', 'cond-a')
        self.assertEqual(0, out.code)
        row = dbapi.get_service('cond-a')
        self.assertEqual((False, None), (row.disabled, row.disabled_reason))

    def test_unknown_host(self):
        for argv in (['force-down', 'nope'], ['force-down', 'nope',
                                              '--unset'],
                     ['enable', 'nope'], ['disable', 'nope']):
            out = self.manage('service', *argv)
            self.assertEqual((1, ''), (out.code, out.stdout), argv)
            self.assertIn('Service nope could not be found.', out.stderr)


class TestShard(ManageTestCase):

    def test_list(self):
        for i, shard in enumerate(['s1', 's1', None, 's2']):
            self.create_node(name='n%d' % i, shard=shard)
        dbapi.register_service('cond-1', shard_key='s1')
        dbapi.register_service('cond-1b', shard_key='s1')
        dbapi.register_service('cond-3', shard_key='s3')
        dbapi.register_service('cond-all')
        dbapi.register_service('retired', shard_key='s1')
        dbapi.update_service('retired', {'forced_down': True})
        out = self.manage('shard', 'list')
        self.assertEqual(0, out.code)
        header, rows = _rows(out.stdout)
        self.assertEqual(['Shard', 'Nodes', 'Services'], header)
        self.assertEqual([['s1', '2', 'cond-1, cond-1b'],
                          ['s2', '1', ''],
                          ['s3', '0', 'cond-3'],
                          [manage.NO_SHARD, '1', 'cond-all']], rows)


class TestStrategyValidate(ManageTestCase):

    def setUp(self):
        super().setUp()
        with open(os.path.join(EXAMPLES, 'deployment-strategy.yaml')) as f:
            self.document = yaml.safe_load(f)
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def _write(self, content, name='strategy.yaml'):
        path = os.path.join(self.tmp, name)
        with open(path, 'w') as f:
            f.write(content if isinstance(content, str)
                    else yaml.safe_dump(content))
        return path

    def _group(self, doc, name):
        return [g for g in doc['data']['groups'] if g['name'] == name][0]

    def test_valid_yaml_prints_the_order(self):
        out = self.manage('strategy', 'validate',
                          os.path.join(EXAMPLES, 'deployment-strategy.yaml'))
        self.assertEqual(0, out.code, out.stderr)
        self.assertEqual([
            'Deployment strategy deployment-strategy is valid. Groups in '
            'dependency order:',
            '1. monitoring-nodes',
            '2. ntp-node',
            '3. control-nodes (after ntp-node)',
            '4. compute-nodes-1 (after control-nodes)',
            '5. compute-nodes-2 (after control-nodes)'],
            out.stdout.splitlines())

    def test_valid_json(self):
        path = self._write(json.dumps(self.document), 'strategy.json')
        out = self.manage('strategy', 'validate', path)
        self.assertEqual(0, out.code, out.stderr)
        self.assertIn('1. monitoring-nodes', out.stdout)

    def test_invalid_documents_name_the_offender(self):
        def cycle(doc):
            self._group(doc, 'ntp-node')['depends_on'] = ['compute-nodes-1']

        def unknown(doc):
            self._group(doc, 'ntp-node')['depends_on'] = ['nowhere']

        def self_dep(doc):
            self._group(doc, 'ntp-node')['depends_on'] = ['ntp-node']

        def duplicate(doc):
            doc['data']['groups'].append(copy.deepcopy(
                self._group(doc, 'ntp-node')))

        def no_critical(doc):
            del self._group(doc, 'monitoring-nodes')['critical']

        def percent(doc):
            self._group(doc, 'control-nodes')['success_criteria'][
                'percent_successful_nodes'] = 101

        cases = [
            (cycle, ['cycle', 'control-nodes', 'compute-nodes-1',
                     'ntp-node']),
            (unknown, ['ntp-node', 'nowhere']),
            (self_dep, ['ntp-node', 'itself']),
            (duplicate, ['duplicate', 'ntp-node']),
            (no_critical, ['critical']),
            (percent, ['control-nodes', 'percent_successful_nodes']),
        ]
        for mutate, words in cases:
            doc = copy.deepcopy(self.document)
            mutate(doc)
            path = self._write(doc)
            out = self.manage('strategy', 'validate', path)
            self.assertEqual((1, ''), (out.code, out.stdout),
                             mutate.__name__)
            for word in words:
                self.assertIn(word, out.stderr, mutate.__name__)
            self.assertTrue(out.stderr.startswith(path + ': '))

    def test_cycle_names_only_the_groups_on_it(self):
        doc = copy.deepcopy(self.document)
        self._group(doc, 'ntp-node')['depends_on'] = ['control-nodes']
        out = self.manage('strategy', 'validate', self._write(doc))
        self.assertEqual(1, out.code)
        self.assertIn('control-nodes, ntp-node', out.stderr)
        self.assertNotIn('compute-nodes-1', out.stderr)

    def test_unreadable_or_malformed_files(self):
        out = self.manage('strategy', 'validate',
                          os.path.join(self.tmp, 'missing.yaml'))
        self.assertEqual(1, out.code)
        self.assertIn('Cannot read', out.stderr)
        path = self._write('data: [unclosed\n')
        out = self.manage('strategy', 'validate', path)
        self.assertEqual(1, out.code)
        # The file once, then its line and column, as compilers say it.
        self.assertEqual(
            '%s, line 2, column 1: not valid YAML: while parsing a flow '
            'sequence; expected \',\' or \']\', but got \'<stream end>\''
            % path, out.stderr.strip())
        self.assertNotIn('byte string', out.stderr)
        # A syntax error deeper in the file: its line.
        path = self._write('schema: x\nmetadata:\n  name: s\n'
                           'data:\n  groups:\n    - name: a\n'
                           '      critical: true\n     bad: indent\n')
        out = self.manage('strategy', 'validate', path)
        self.assertEqual(1, out.code)
        self.assertIn('%s, line 8, column 6' % path, out.stderr)
        out = self.manage('strategy', 'validate', self._write('- a\n- b\n'))
        self.assertEqual(1, out.code)
        self.assertIn('must be a map', out.stderr)
