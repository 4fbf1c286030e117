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
"""Requirements match the imports, and tox installs under constraints.

Every third-party module the product imports (``baremetal_orch`` without
its tests) comes from a distribution ``requirements.txt`` names, and every
distribution it names is imported by the product (or listed below with
the reason it is needed anyway). The tests' own imports come from
``requirements.txt`` or ``test-requirements.txt``.
"""

import ast
import configparser
import importlib.metadata
import os
import re
import sys

from baremetal_orch.tests import base

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..',
                                    '..'))
PACKAGE = os.path.join(REPO, 'baremetal_orch')
TESTS = os.path.join(PACKAGE, 'tests')
#: What the tests and the benchmarks share (not shipped).
TESTING = os.path.join(os.path.dirname(PACKAGE), 'baremetal_orch_testing')

#: Required but never imported by name, and why.
NOT_IMPORTED = {
    'pbr': 'the build (setup.py, pyproject.toml) and version',
    'redis': "taskflow's Redis jobboard ([taskflow]jobboard_backend_driver)",
    'kazoo': "taskflow's ZooKeeper jobboard "
             "([taskflow]jobboard_backend_driver)",
}
#: The optional drivers' libraries: setup.cfg extras, not requirements.
EXTRAS = {'kubernetes': {'kubernetes'}, 'redis': {'redis'},
          'zookeeper': {'kazoo'}}
#: Test requirements used without an import, and why.
TEST_NOT_IMPORTED = {
    'coverage': 'tox -e cover runs it',
    'stestr': 'the test runner',
    'PyMySQL': 'the MariaDB driver of oslo.db (mysql+pymysql URLs)',
    'psycopg2-binary': 'the PostgreSQL driver of oslo.db',
    'python-openstackclient': 'the openstack command the OSC tests run',
}


def canonical(name):
    return re.sub(r'[-_.]+', '-', name).lower()


def requirement_names(filename):
    with open(os.path.join(REPO, filename)) as f:
        return _names(f)


def _names(lines):
    names = set()
    for line in lines:
        line = line.split('#')[0].strip()
        if line:
            names.add(canonical(re.split(r'[<>=!;\[ ]', line)[0]))
    return names


def extras_names():
    """{extra: distribution names} of setup.cfg's [extras]."""
    setup = configparser.RawConfigParser()
    setup.read(os.path.join(REPO, 'setup.cfg'))
    return {extra: _names(setup.get('extras', extra).splitlines())
            for extra in setup.options('extras')}


def imported_modules(root, exclude=None):
    """Top-level names of the absolute imports of the .py files."""
    modules = set()
    for path, dirs, files in os.walk(root):
        if exclude and path.startswith(exclude):
            continue
        for name in files:
            if not name.endswith('.py'):
                continue
            with open(os.path.join(path, name)) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    modules.update(a.name.split('.')[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    modules.add(node.module.split('.')[0])
    return modules


def distributions(modules, local=()):
    """{distribution: modules} of the third-party ``modules`` (not the
    standard library's, ours, nor the ``local`` packages of the checkout)."""
    owners = importlib.metadata.packages_distributions()
    found = {}
    for module in modules - set(sys.stdlib_module_names) - {
            'baremetal_orch'} - set(local):
        for dist in owners.get(module, ['<no distribution for %s>'
                                        % module]):
            found.setdefault(canonical(dist), set()).add(module)
    return found


class TestRequirements(base.TestCase):

    def test_optional_libraries_are_extras(self):
        extras = extras_names()
        self.assertEqual(EXTRAS, extras)
        base_requirements = requirement_names('requirements.txt')
        for extra, names in extras.items():
            self.assertEqual(set(), names & base_requirements,
                             '%s: an extra and a requirement' % extra)
        # What the product checks at start-up is what setup.cfg installs.
        from baremetal_orch.common import extras as product_extras
        self.assertEqual(
            EXTRAS, {extra: {canonical(dist)} for extra, (dist, _m)
                     in product_extras.EXTRAS.items()})

    def test_product_imports_are_required_and_requirements_imported(self):
        required = requirement_names('requirements.txt')
        for names in extras_names().values():
            required |= names
        used = distributions(imported_modules(PACKAGE, exclude=TESTS))
        self.assertEqual(set(), set(used) - required,
                         'imported but not in requirements.txt')
        unused = required - set(used) - {canonical(n) for n in NOT_IMPORTED}
        self.assertEqual(set(), unused,
                         'in requirements.txt but never imported')

    def test_test_imports_are_required(self):
        # Tox installs every extra for the tests.
        required = (requirement_names('requirements.txt')
                    | requirement_names('test-requirements.txt'))
        for names in extras_names().values():
            required |= names
        # tools/ and baremetal_orch_testing are the checkout's own (the
        # benchmarks whose pure logic the unit tests check, the fixtures
        # both share), not distributions.
        used = distributions(
            imported_modules(TESTS) | imported_modules(TESTING),
            local=('tools', 'baremetal_orch_testing'))
        # The real Keystone the fixtures serve runs in a venv of its own:
        # its module is named in a generated file, not imported here.
        used.pop('keystone', None)
        self.assertEqual(set(), set(used) - required)
        tests_only = requirement_names('test-requirements.txt') - set(used)
        self.assertEqual(
            set(), tests_only - {canonical(n) for n in TEST_NOT_IMPORTED},
            'in test-requirements.txt but never used')
        self.assertEqual(set(), requirement_names('requirements.txt')
                         & requirement_names('test-requirements.txt'),
                         'listed twice')


class TestConstraints(base.TestCase):

    def test_tox_takes_constraints_and_ci_pins_them(self):
        tox = configparser.RawConfigParser()
        tox.read(os.path.join(REPO, 'tox.ini'))
        self.assertEqual(
            '{env:TOX_CONSTRAINTS_FILE:https://releases.openstack.org/'
            'constraints/upper/master}',
            tox.get('testenv', 'constraints').strip())
        self.assertEqual('py3,pep8', tox.get('tox', 'envlist'))
        with open(os.path.join(REPO, '.ci', 'run')) as f:
            self.assertIn('export TOX_CONSTRAINTS_FILE="$PWD/'
                          'upper-constraints.txt"', f.read())
        pins = {}
        with open(os.path.join(REPO, 'upper-constraints.txt')) as f:
            for line in f:
                line = line.split('#')[0].strip()
                if line:
                    name, _, version = line.partition('===')
                    self.assertTrue(version, line)
                    pins[canonical(name)] = version
        # Every requirement is pinned; the project itself is not (it would
        # refuse its own development version).
        for filename in ('requirements.txt', 'test-requirements.txt',
                         os.path.join('doc', 'requirements.txt')):
            self.assertEqual(set(), requirement_names(filename) - set(pins),
                             filename)
        for extra, names in extras_names().items():
            self.assertEqual(set(), names - set(pins), extra)
        # Tox installs them all (the tests cover every driver).
        self.assertEqual(sorted(EXTRAS),
                         tox.get('testenv', 'extras').split())
        self.assertNotIn('baremetal-orch', pins)
