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

"""deployment/ stays pure: no database, driver, RPC or API imports."""

import ast
import os

import baremetal_orch.deployment
from baremetal_orch.tests import base

FORBIDDEN = ('baremetal_orch.api', 'baremetal_orch.conductor',
             'baremetal_orch.db', 'baremetal_orch.drivers',
             'baremetal_orch.flows', 'baremetal_orch.ironic',
             'baremetal_orch.objects', 'sqlalchemy', 'oslo_messaging',
             'taskflow', 'openstack', 'kubernetes', 'time')


class TestPurity(base.TestCase):

    def test_no_io_imports(self):
        root = os.path.dirname(baremetal_orch.deployment.__file__)
        checked = 0
        for name in sorted(os.listdir(root)):
            if not name.endswith('.py'):
                continue
            with open(os.path.join(root, name)) as f:
                tree = ast.parse(f.read(), name)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    modules = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    modules = [node.module or '']
                else:
                    continue
                for module in modules:
                    for bad in FORBIDDEN:
                        self.assertFalse(
                            module == bad or module.startswith(bad + '.'),
                            '%s imports %s' % (name, module))
            checked += 1
        self.assertGreaterEqual(checked, 7)
