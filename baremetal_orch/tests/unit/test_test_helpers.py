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
"""The tests' helpers exist once (``baremetal_orch_testing/helpers.py``).

No other module of the tests or of ``tools/`` defines a function named as
one of them: a helper that needs another signature forwards to the one
(``base.TestCase.wait_for``, the Ironic fixture's ``wait_for``), it does
not loop again. ``tools/`` and ``baremetal_orch_testing`` share the
fixtures without importing the test tree.
"""

import ast
import os

import fixtures

import baremetal_orch
from baremetal_orch.tests import base
from baremetal_orch_testing import helpers

REPO = os.path.dirname(os.path.dirname(baremetal_orch.__file__))
#: Where tests and the tools that share their fixtures live.
TREES = ('baremetal_orch/tests', 'baremetal_orch_testing', 'tools')
#: The helpers kept once.
ONCE = ('wait_for', 'wait_for_http', 'free_port', 'driver_node')
#: Functions that forward to the one helper, and the helper each calls.
FORWARDERS = {
    ('baremetal_orch/tests/base.py', 'wait_for'): 'wait_for',
    ('baremetal_orch/tests/functional/base.py', 'wait_for_http'):
        'wait_for_http',
    ('baremetal_orch_testing/services.py', 'wait_for'): 'wait_for',
    ('baremetal_orch/tests/functional/test_secret_sweep.py', 'wait_for'):
        'wait_for',
    ('baremetal_orch_testing/fixtures/ironic.py', 'wait_for'):
        'wait_for',
}
HELPERS = os.path.relpath(helpers.__file__, REPO)


def _calls(function):
    """The names of what ``function`` calls (``f()``, ``a.f()``)."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                names.add(func.attr)
            elif isinstance(func, ast.Name):
                names.add(func.id)
    return names


def copies(path, rel, forwarders=FORWARDERS):
    """``rel:line name`` of each function of ``path`` named as a helper
    that is not a known forwarder calling that helper."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if node.name not in ONCE:
            continue
        target = forwarders.get((rel, node.name))
        if target is not None and target in _calls(node):
            continue
        found.append('%s:%d %s' % (rel, node.lineno, node.name))
    return found


def tests_imported(path):
    """The ``baremetal_orch.tests`` modules ``path`` imports."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.extend(n for n in names
                     if n == 'baremetal_orch.tests' or
                     n.startswith('baremetal_orch.tests.'))
    return found


def python_files(trees=TREES):
    for tree in trees:
        for dirpath, dirnames, filenames in os.walk(os.path.join(REPO,
                                                                 tree)):
            dirnames[:] = [d for d in dirnames if d != '__pycache__']
            for name in filenames:
                if name.endswith('.py'):
                    path = os.path.join(dirpath, name)
                    yield path, os.path.relpath(path, REPO)


class TestHelpersOnce(base.TestCase):

    def test_no_second_copy(self):
        found = []
        seen = 0
        for path, rel in python_files():
            seen += 1
            if rel == HELPERS:
                continue
            found.extend(copies(path, rel))
        self.assertGreater(seen, 100)
        self.assertEqual([], found)

    def test_shared_code_does_not_import_the_tests(self):
        found = {}
        for path, rel in python_files(('tools', 'baremetal_orch_testing')):
            imports = tests_imported(path)
            if imports:
                found[rel] = imports
        self.assertEqual({}, found)

    def sample(self, text):
        """A file holding ``text``; its path."""
        path = self.useFixture(fixtures.TempDir()).join('sample.py')
        with open(path, 'w') as f:
            f.write(text)
        return path

    def test_a_test_tree_import_is_found(self):
        path = self.sample("import os\n"
                           "from baremetal_orch.tests.functional import aio\n"
                           "import baremetal_orch.tests.base\n"
                           "from baremetal_orch_testing import helpers\n")
        self.assertEqual(['baremetal_orch.tests.functional',
                          'baremetal_orch.tests.base'],
                         tests_imported(path))

    def test_helpers_define_them(self):
        for name in ONCE:
            self.assertTrue(callable(getattr(helpers, name)), name)

    def test_a_copy_is_found(self):
        # The rule above must be able to fail: a loop of its own, a
        # module-level copy, and a forwarder that stopped forwarding.
        path = self.sample("import socket\n"
                           "def free_port():\n"
                           "    with socket.socket() as s:\n"
                           "        s.bind(('127.0.0.1', 0))\n"
                           "        return s.getsockname()[1]\n"
                           "class T:\n"
                           "    def wait_for(self, predicate):\n"
                           "        while not predicate():\n"
                           "            pass\n"
                           "    def driver_node(self):\n"
                           "        return helpers.driver_node()\n"
                           "    def wait_for_http(self, url):\n"
                           "        return helpers.wait_for(url)\n")
        forwarders = {('s.py', 'driver_node'): 'driver_node',
                      ('s.py', 'wait_for_http'): 'wait_for_http'}
        self.assertEqual(
            ['s.py:12 wait_for_http', 's.py:2 free_port',
             's.py:7 wait_for'],
            sorted(copies(path, 's.py', forwarders)))
