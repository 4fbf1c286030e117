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
"""The plugin loads nothing of the server into an ``openstack`` process.

Every ``openstack`` command, whatever its service, imports the plugin
module (osc reads its options); the commands' modules are imported when a
``baremetal orch`` command runs. Checked in a new interpreter with
``python -X importtime``, as an operator would.
"""

import configparser
import os
import subprocess
import sys

from baremetal_orch.tests import base

SETUP_CFG = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..',
                         'setup.cfg')

#: Top-level packages of the server that the CLI must not import.
SERVER_LIBRARIES = ('oslo_service', 'oslo_db', 'oslo_messaging',
                    'oslo_policy', 'oslo_versionedobjects', 'pecan',
                    'taskflow', 'eventlet', 'futurist', 'sqlalchemy',
                    'alembic', 'cotyledon', 'tooz')


def imported_modules(code):
    """The modules ``python -X importtime -c code`` imports."""
    proc = subprocess.run([sys.executable, '-X', 'importtime', '-c', code],
                          capture_output=True, text=True, check=False,
                          timeout=300)
    if proc.returncode:
        raise AssertionError(proc.stderr)
    modules = set()
    for line in proc.stderr.splitlines():
        if line.startswith('import time:') and line.count('|') == 2:
            name = line.rsplit('|', 1)[1].strip()
            if name != 'imported package':
                modules.add(name)
    return modules


def forbidden(modules):
    """The server's modules among ``modules``."""
    return sorted(m for m in modules
                  if m.split('.')[0] in SERVER_LIBRARIES
                  or (m.startswith('baremetal_orch.')
                      and not m.startswith('baremetal_orch.osc')))


class TestPluginImports(base.TestCase):

    def test_plugin_module(self):
        modules = imported_modules('import baremetal_orch.osc.plugin')
        self.assertIn('baremetal_orch.osc.plugin', modules)
        self.assertIn('keystoneauth1', modules)
        self.assertEqual([], forbidden(modules))

    def test_command_modules(self):
        parser = configparser.ConfigParser()
        parser.read(SETUP_CFG)
        targets = parser['entry_points']['openstack.baremetal_orch.v1']
        command_modules = sorted({line.split('=', 1)[1].strip().split(':')[0]
                                  for line in targets.strip().splitlines()})
        self.assertIn('baremetal_orch.osc.v1.action', command_modules)
        modules = imported_modules('; '.join(
            'import %s' % m for m in command_modules))
        self.assertEqual([], sorted(set(command_modules) - modules))
        self.assertEqual([], forbidden(modules))

    def test_the_check_sees_a_server_import(self):
        # The check itself: a server module's imports are caught.
        self.assertIn('oslo_messaging',
                      forbidden(imported_modules(
                          'import baremetal_orch.common.rpc')))
