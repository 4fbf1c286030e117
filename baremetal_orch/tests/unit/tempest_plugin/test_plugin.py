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
"""The tempest plugin's packaging and the gate runner's pure parts.

tempest itself is not installed here (it runs from its own venv, see
``tox -e tempest``): the plugin's modules are read, not imported.
"""

import ast
import configparser
import importlib.metadata
import os
import types
import uuid

import fixtures

from baremetal_orch.tests import base
from baremetal_orch.tests.functional import tempest_gate

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..',
                                    '..', '..'))
PLUGIN = os.path.join(REPO, 'baremetal_orch_tempest_plugin')


def plugin_modules():
    for root, _, files in os.walk(PLUGIN):
        for name in sorted(files):
            if name.endswith('.py'):
                path = os.path.join(root, name)
                with open(path) as f:
                    yield path, ast.parse(f.read(), path)


class TestPackaging(base.TestCase):

    def test_entry_point_names_the_plugin_class(self):
        setup = configparser.RawConfigParser()
        setup.read(os.path.join(REPO, 'setup.cfg'))
        self.assertIn('baremetal_orch_tempest_plugin',
                      setup.get('files', 'packages').split())
        name, _, target = setup.get(
            'entry_points', 'tempest.test_plugins').strip().partition(' = ')
        module, _, cls = target.partition(':')
        path = os.path.join(REPO, *module.split('.')) + '.py'
        with open(path) as f:
            tree = ast.parse(f.read())
        classes = {n.name: n for n in tree.body
                   if isinstance(n, ast.ClassDef)}
        self.assertIn(cls, classes)
        methods = {n.name for n in classes[cls].body
                   if isinstance(n, ast.FunctionDef)}
        self.assertLessEqual({'load_tests', 'register_opts',
                              'get_opt_lists', 'get_service_clients'},
                             methods)
        # The installed metadata says the same (what tempest reads).
        points = [ep for ep in importlib.metadata.distribution(
            tempest_gate.DIST).entry_points
            if ep.group == 'tempest.test_plugins']
        self.assertEqual([(name, target)],
                         [(ep.name, ep.value) for ep in points])

    def test_idempotent_ids_are_unique_uuids(self):
        seen = {}
        tests = 0
        for path, tree in plugin_modules():
            for node in ast.walk(tree):
                if not (isinstance(node, ast.FunctionDef)
                        and node.name.startswith('test_')):
                    continue
                tests += 1
                ids = [d.args[0].value for d in node.decorator_list
                       if isinstance(d, ast.Call)
                       and getattr(d.func, 'attr', '') == 'idempotent_id']
                self.assertEqual(1, len(ids), '%s %s' % (path, node.name))
                uuid.UUID(ids[0])
                self.assertNotIn(ids[0], seen, node.name)
                seen[ids[0]] = node.name
        self.assertGreater(tests, 20)

    def test_plugin_does_not_import_the_service(self):
        # It runs in tempest's venv, where the service is not installed.
        for path, tree in plugin_modules():
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or '']
                for name in names:
                    self.assertFalse(
                        name == 'baremetal_orch'
                        or name.startswith('baremetal_orch.'),
                        '%s imports %s' % (path, name))


class TestGateRunner(base.TestCase):

    def test_plugin_site_exposes_the_entry_point(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        site = tempest_gate.plugin_site(os.path.join(tmp, 'site'))
        found = [ep for dist in importlib.metadata.distributions(
            path=[site]) for ep in dist.entry_points
            if ep.group == 'tempest.test_plugins']
        self.assertEqual(
            ['baremetal_orch_tempest_plugin.plugin:'
             'BaremetalOrchTempestPlugin'], [ep.value for ep in found])
        self.assertEqual(
            os.path.realpath(PLUGIN),
            os.path.realpath(os.path.join(site,
                                          'baremetal_orch_tempest_plugin')))

    def test_plugin_site_refuses_a_missing_entry_point(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        dist = importlib.metadata.distribution(tempest_gate.DIST)
        stripped = types.SimpleNamespace(
            version=dist.version,
            entry_points=[ep for ep in dist.entry_points
                          if ep.group != 'tempest.test_plugins'])
        self.useFixture(fixtures.MockPatchObject(
            tempest_gate.importlib.metadata, 'distribution',
            return_value=stripped))
        exc = self.assertRaises(tempest_gate.GateError,
                                tempest_gate.plugin_site, tmp)
        self.assertIn('tempest.test_plugins', str(exc))

    def test_tempest_conf(self):
        keystone = types.SimpleNamespace(admin_password='pw',
                                         auth_url='http://127.0.0.1:5/v3')
        parser = configparser.RawConfigParser()
        parser.read_string(tempest_gate.tempest_conf(keystone, '/w', '/d'))
        self.assertEqual('all', parser.get('auth', 'admin_system'))
        self.assertEqual('true', parser.get('auth',
                                            'use_dynamic_credentials'))
        self.assertEqual('http://127.0.0.1:5/v3',
                         parser.get('identity', 'uri_v3'))
        self.assertEqual('true', parser.get('service_available',
                                            'baremetal_orch'))
        self.assertEqual('true', parser.get('enforce_scope',
                                            'baremetal_orch'))
        self.assertEqual('/d', parser.get('baremetal_orch',
                                          'fake_configdrive_dir'))
        self.assertEqual('true', parser.get('baremetal_orch',
                                            'ironic_backend'))
        # No service tempest would try to use besides ours.
        for service in ('nova', 'neutron', 'glance', 'cinder', 'swift'):
            self.assertEqual('false', parser.get('service_available',
                                                 service))
