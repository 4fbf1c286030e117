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
"""The plugin module osc loads, and the entry points of the commands."""

import argparse
import configparser
import importlib
import io
import json
import os
from unittest import mock

from cliff import command as cliff_command
from cliff import commandmanager
import fixtures
from openstackclient import shell as osc_shell
from osc_lib import clientmanager as osc_clientmanager
from osc_lib import exceptions
from requests_mock.contrib import fixture as rm_fixture
from testtools import content

from baremetal_orch.osc import client
from baremetal_orch.osc import plugin
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.osc import test_client

SETUP_CFG = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..',
                         'setup.cfg')

#: Every command of the CLI (the issue's list).
COMMANDS = {
    'node': ('create', 'list', 'show', 'set', 'unset', 'delete', 'manage',
             'provide', 'deploy', 'undeploy', 'maintenance set',
             'maintenance unset', 'console enable', 'console disable',
             'filter'),
    'port': ('create', 'list', 'show', 'set', 'delete'),
    'chassis': ('create', 'list', 'show', 'set', 'delete'),
    'strategy': ('create', 'list', 'show', 'delete', 'validate', 'graph'),
    'action': ('create', 'list', 'show', 'pause', 'resume', 'abort',
               'retry'),
    'task': ('show',),
    'deployment': ('list', 'show'),
    'event': ('list',),
    'service': ('list', 'set'),
    'shard': ('list',),
}


def entry_points(group):
    parser = configparser.ConfigParser()
    parser.read(SETUP_CFG)
    lines = parser['entry_points'][group].strip().splitlines()
    return dict((part.strip() for part in line.split('=', 1))
                for line in lines)


class TestPluginModule(base.TestCase):

    def test_registered_as_an_osc_extension(self):
        self.assertEqual({'baremetal_orch': 'baremetal_orch.osc.plugin'},
                         entry_points('openstack.cli.extension'))

    def test_names(self):
        self.assertEqual('baremetal_orch', plugin.API_NAME)
        self.assertEqual('os_baremetal_orch_api_version',
                         plugin.API_VERSION_OPTION)
        self.assertIn('1', plugin.API_VERSIONS)
        self.assertIn('1.0', plugin.API_VERSIONS)
        self.assertEqual('baremetal-orchestration', client.SERVICE_TYPE)

    def test_check_api_version(self):
        for version, valid in [('1', True), ('1.0', True), ('1.12', True),
                               ('latest', True), ('1.latest', True),
                               ('2', False), ('2.latest', False),
                               ('1.x', False), ('', False), ('v1', False)]:
            if valid:
                self.assertTrue(plugin.check_api_version(version), version)
            else:
                self.assertRaises(exceptions.CommandError,
                                  plugin.check_api_version, version)

    def test_option_parser(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_BAREMETAL_ORCH_API_VERSION'))
        parser = plugin.build_option_parser(argparse.ArgumentParser())
        self.assertEqual('1', parser.parse_args(
            []).os_baremetal_orch_api_version)
        self.assertEqual('1.0', parser.parse_args(
            ['--os-baremetal-orch-api-version', '1.0']
        ).os_baremetal_orch_api_version)

    def test_option_from_environment(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_BAREMETAL_ORCH_API_VERSION', 'latest'))
        parser = plugin.build_option_parser(argparse.ArgumentParser())
        self.assertEqual('1.latest', parser.parse_args(
            []).os_baremetal_orch_api_version)
        self.assertEqual('1.0', parser.parse_args(
            ['--os-baremetal-orch-api-version', '1.0']
        ).os_baremetal_orch_api_version)

    def test_latest_keeps_the_major_version(self):
        # osc loads the command group named after the text before the
        # first dot: openstack.baremetal_orch.v1, not ...vlatest.
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_BAREMETAL_ORCH_API_VERSION'))
        parser = plugin.build_option_parser(argparse.ArgumentParser())
        value = parser.parse_args(['--os-baremetal-orch-api-version',
                                   'latest']).os_baremetal_orch_api_version
        self.assertEqual('1.latest', value)
        self.assertEqual('1', value.split('.')[0])
        self.assertTrue(plugin.check_api_version(value))
        self.assertTrue(client.is_latest(value))

    def test_make_client(self):
        instance = mock.Mock(region_name='RegionTwo', interface='internal')
        instance._api_version = {'baremetal_orch': '1.0'}
        instance.get_configuration.return_value = {
            'baremetal_orchestration_endpoint_override': 'http://o.test'}
        api = plugin.make_client(instance)
        self.assertIsInstance(api, client.Client)
        self.assertEqual('1.0', api.api_version)
        self.assertIs(instance.session, api.adapter.session)
        self.assertEqual(
            ('baremetal-orchestration', 'RegionTwo', 'internal',
             'http://o.test'),
            (api.adapter.service_type, api.adapter.region_name,
             api.adapter.interface, api.adapter.endpoint_override))


class TestOpenStackShell(base.TestCase):
    """The ``openstack`` command itself, in-process (HTTP mocked)."""

    ENDPOINT = 'http://orch.test:6388'

    def setUp(self):
        super().setUp()
        self.http = self.useFixture(rm_fixture.Fixture())
        self.http.get(self.ENDPOINT + '/', json=test_client.root_document(
            '1.0', '1.4', self.ENDPOINT))
        self.http.get(self.ENDPOINT + '/v1/shards', json={
            'shards': [{'name': 'rack-a', 'count': 3}]})
        for name in list(os.environ):
            if name.startswith('OS_'):
                self.useFixture(fixtures.EnvironmentVariable(name))
        self._commands_of_setup_cfg()

    def _commands_of_setup_cfg(self):
        """The shell knows the commands of this tree's setup.cfg, also
        those an editable install made before they were added."""
        group = 'openstack.baremetal_orch.v1'
        add_group = commandmanager.CommandManager.add_command_group

        def add_command_group(manager, name=None):
            add_group(manager, name)
            if name == group:
                for ep_name, target in entry_points(group).items():
                    module, _sep, attr = target.partition(':')
                    manager.add_command(ep_name.replace('_', ' '), getattr(
                        importlib.import_module(module), attr))
        self.useFixture(fixtures.MonkeyPatch(
            'cliff.commandmanager.CommandManager.add_command_group',
            add_command_group))

    def openstack(self, *argv, env=None):
        """``openstack --os-auth-type none ... ARGV``: (status, stdout)."""
        for name, value in (env or {}).items():
            self.useFixture(fixtures.EnvironmentVariable(name, value))
        # osc caches each plugin's client on its ClientManager class, for
        # the life of the process: one process, one command. Start afresh.
        cache = osc_clientmanager.ClientManager.__dict__[plugin.API_NAME]
        cache._handle = None
        self.addCleanup(setattr, cache, '_handle', None)
        out = io.StringIO()
        err = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', err))
        status = osc_shell.main(['--os-auth-type', 'none', '--os-endpoint',
                                 self.ENDPOINT] + list(argv))
        self.stderr = err.getvalue()
        self.addDetail('stderr', content.text_content(self.stderr))
        return status, out.getvalue()

    def sent_version(self):
        return self.http.last_request.headers.get('OpenStack-API-Version')

    def test_default_version(self):
        status, out = self.openstack('baremetal', 'orch', 'shard', 'list',
                                     '-f', 'json')
        self.assertEqual(0, status)
        self.assertEqual([{'Name': 'rack-a', 'Count': 3}], json.loads(out))
        self.assertEqual('baremetal-orchestration 1.0', self.sent_version())

    def test_latest_option(self):
        status, out = self.openstack('--os-baremetal-orch-api-version',
                                     'latest', 'baremetal', 'orch', 'shard',
                                     'list', '-f', 'json')
        self.assertEqual(0, status)
        self.assertEqual([{'Name': 'rack-a', 'Count': 3}], json.loads(out))
        self.assertEqual('baremetal-orchestration 1.4', self.sent_version())

    def test_latest_from_the_environment(self):
        status, out = self.openstack(
            'baremetal', 'orch', 'shard', 'list', '-f', 'json',
            env={'OS_BAREMETAL_ORCH_API_VERSION': 'latest'})
        self.assertEqual(0, status)
        self.assertEqual([{'Name': 'rack-a', 'Count': 3}], json.loads(out))
        self.assertEqual('baremetal-orchestration 1.4', self.sent_version())

    def test_option_beats_the_environment(self):
        status, _out = self.openstack(
            '--os-baremetal-orch-api-version', '1.0', 'baremetal', 'orch',
            'shard', 'list', env={'OS_BAREMETAL_ORCH_API_VERSION': 'latest'})
        self.assertEqual(0, status)
        self.assertEqual(['/v1/shards'],
                         [r.path for r in self.http.request_history])
        self.assertEqual('baremetal-orchestration 1.0', self.sent_version())

    ACTION = '11111111-2222-3333-4444-555555555555'

    def test_pause(self):
        self.http.post(
            self.ENDPOINT + '/v1/actions/%s/control' % self.ACTION,
            status_code=202, json={
                'uuid': self.ACTION, 'name': 'deploy_site',
                'state': 'pausing', 'state_reason': 'change freeze',
                'progress': {'phases': {}, 'eta': None}})
        status, out = self.openstack(
            'baremetal', 'orch', 'action', 'pause', self.ACTION,
            '--reason', 'change freeze', '-f', 'json')
        self.assertEqual(0, status)
        self.assertEqual(('pausing', 'change freeze'), (
            json.loads(out)['state'], json.loads(out)['state_reason']))
        sent = self.http.last_request
        self.assertEqual(('POST', '/v1/actions/%s/control' % self.ACTION,
                          {'verb': 'pause', 'reason': 'change freeze'}),
                         (sent.method, sent.path, sent.json()))

    def test_a_refused_verb_is_printed(self):
        detail = 'Cannot resume action %s: it is complete' % self.ACTION
        self.http.post(
            self.ENDPOINT + '/v1/actions/%s/control' % self.ACTION,
            status_code=409, json={'errors': [{
                'status': 409, 'code': 'baremetal_orch.action.conflict',
                'title': 'Conflict', 'detail': detail,
                'request_id': 'req-9'}]})
        status, out = self.openstack('baremetal', 'orch', 'action',
                                     'resume', self.ACTION)
        self.assertEqual(1, status)
        self.assertEqual('', out)
        self.assertIn('%s (HTTP 409, baremetal_orch.action.conflict, '
                      'request req-9)' % detail, self.stderr)
        self.assertEqual({'verb': 'resume'},
                         self.http.last_request.json())


class TestEntryPoints(base.TestCase):

    def test_every_command_is_registered(self):
        expected = {'baremetal_orch_%s_%s' % (resource, cmd.replace(' ', '_'))
                    for resource, cmds in COMMANDS.items() for cmd in cmds}
        self.assertEqual(expected,
                         set(entry_points('openstack.baremetal_orch.v1')))

    def test_every_entry_point_loads_a_command(self):
        for name, target in entry_points(
                'openstack.baremetal_orch.v1').items():
            module, _sep, attr = target.partition(':')
            self.assertTrue(module.startswith('baremetal_orch.osc.v1.'),
                            name)
            cls = getattr(importlib.import_module(module), attr)
            self.assertTrue(issubclass(cls, cliff_command.Command), name)
            # A docstring: its first line is the command's help.
            self.assertTrue((cls.__doc__ or '').strip(), name)
