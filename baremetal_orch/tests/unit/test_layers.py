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
"""The shape of the house (doc/source/admin/architecture.rst), kept by
reading every module's imports:

* the API uses objects and ``conductor/rpcapi.py``: no ``db`` and no other
  conductor or flows module under ``api/``;
* SQL lives under ``db/``: nothing else imports SQLAlchemy or
  ``db/sqlalchemy/``, and ``db/api.py`` declares every function of the
  modules it gathers;
* ``common/`` is the bottom floor: it imports no other package of the
  service;
* no two modules import each other, directly or through others;
* modules stay readable: under 500 lines;
* the flows and the conductor name states, statuses and results with the
  constants of ``common/statuses.py``, never with a bare string.

(``deployment/`` staying free of I/O is kept by its own test.)
"""

import ast
import os
import re

import fixtures

import baremetal_orch
from baremetal_orch.common import statuses
from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base

ROOT = os.path.dirname(baremetal_orch.__file__)
PACKAGE = 'baremetal_orch'
MAX_LINES = 500
#: The words of :mod:`baremetal_orch.common.statuses`.
STATUS_WORDS = frozenset(
    statuses.ACTION_STATES + statuses.ACTION_RESULTS
    + statuses.TASK_STATUSES + statuses.NODE_STATUSES)
#: Where a string names a state, status or result.
STATUS_NAMES = frozenset(['state', 'status', 'result'])


def product_modules():
    """{module name: path} of every module of the service (no tests)."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames
                       if d not in ('tests', '__pycache__', 'alembic')]
        for name in filenames:
            if not name.endswith('.py'):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3]
            module = rel.replace(os.sep, '.')
            if module.endswith('.__init__'):
                module = module[:-len('.__init__')]
            found[module] = path
    return found


def imports_of(path, module, modules):
    """The modules ``path`` imports at its top level (not inside
    functions), as absolute names. ``from a import b`` is ``a.b`` when
    that is a module of the service, else ``a``."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split('.')
                base_pkg = '.'.join(parts[:len(parts) - node.level])
                prefix = base_pkg + ('.' + node.module if node.module
                                     else '')
            else:
                prefix = node.module or ''
            for alias in node.names:
                full = '%s.%s' % (prefix, alias.name)
                names.add(full if full in modules else prefix)
    return names


def status_literals(path):
    """``line: word`` of every bare status word used as one in ``path``:
    compared with something, the value of a ``status``/``state``/
    ``result`` key, keyword or attribute, or a member of a tuple or set of
    such words (``('success', 'failed')``)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = []

    def word(node):
        return (isinstance(node, ast.Constant)
                and node.value in STATUS_WORDS)

    def note(node):
        found.append('%d: %s' % (node.lineno, node.value))

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in [node.left] + node.comparators:
                if word(operand):
                    note(operand)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if (isinstance(key, ast.Constant)
                        and key.value in STATUS_NAMES and word(value)):
                    note(value)
        elif isinstance(node, ast.keyword):
            if node.arg in STATUS_NAMES and word(node.value):
                note(node.value)
        elif isinstance(node, ast.Assign):
            named = any(isinstance(t, ast.Attribute)
                        and t.attr in STATUS_NAMES for t in node.targets)
            if named and word(node.value):
                note(node.value)
        elif isinstance(node, (ast.Tuple, ast.Set)):
            if node.elts and all(word(e) for e in node.elts):
                for element in node.elts:
                    note(element)
        elif isinstance(node, ast.IfExp):
            for branch in (node.body, node.orelse):
                if word(branch):
                    note(branch)
    return sorted(set(found))


#: The provisioning driver's methods that move a node's provision state.
PROVISION_CALLS = frozenset(['manage', 'provide', 'deploy', 'undeploy',
                             'call_many'])


def outside_doc_references(path):
    """Line numbers of ``path`` that point to a design document outside
    the tree (``DESIGN``) instead of the docs in doc/source."""
    with open(path) as f:
        return [number for number, line in enumerate(f, 1)
                if re.search(r'\bDESIGN\b', line)]


def driver_call_sites(path):
    """``line: how`` of every place ``path`` calls a provisioning driver
    to move a node: ``getattr`` on what ``get_driver`` returned, or one
    of :data:`PROVISION_CALLS` on it (directly, or through a name bound
    to it)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)

    def from_get_driver(node):
        return (isinstance(node, ast.Call) and (
            getattr(node.func, 'attr', None) == 'get_driver' or
            getattr(node.func, 'id', None) == 'get_driver'))

    bound = {target.id for node in ast.walk(tree)
             if isinstance(node, ast.Assign) and from_get_driver(node.value)
             for target in node.targets if isinstance(target, ast.Name)}

    def driver(node):
        return from_get_driver(node) or (
            isinstance(node, ast.Name) and node.id in bound)

    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == 'getattr' and node.args and
                driver(node.args[0])):
            found.append('%d: getattr' % node.lineno)
        elif (isinstance(node, ast.Attribute) and
                node.attr in PROVISION_CALLS and driver(node.value)):
            # Called there, or handed on to be called (a pool's submit).
            found.append('%d: %s' % (node.lineno, node.attr))
    return sorted(found)


def _within(name, package):
    return name == package or name.startswith(package + '.')


class TestLayers(base.TestCase):

    def setUp(self):
        super().setUp()
        self.modules = product_modules()
        self.imports = {m: imports_of(p, m, self.modules)
                        for m, p in self.modules.items()}
        self.assertGreater(len(self.modules), 100)

    def offenders(self, where, forbidden, allowed=()):
        found = []
        for module, names in sorted(self.imports.items()):
            if not _within(module, where):
                continue
            for name in sorted(names):
                if (any(_within(name, f) for f in forbidden)
                        and not any(_within(name, a) for a in allowed)):
                    found.append('%s imports %s' % (module, name))
        return found

    def test_api_uses_objects_and_rpcapi_only(self):
        self.assertEqual([], self.offenders(
            'baremetal_orch.api',
            ['baremetal_orch.db', 'baremetal_orch.conductor',
             'baremetal_orch.flows', 'baremetal_orch.ironic', 'sqlalchemy',
             'taskflow'],
            allowed=['baremetal_orch.conductor.rpcapi']))

    def test_sql_lives_under_db(self):
        found = []
        for module, names in sorted(self.imports.items()):
            if _within(module, 'baremetal_orch.db'):
                continue
            for name in names:
                if (_within(name, 'sqlalchemy') or
                        _within(name, 'baremetal_orch.db.sqlalchemy')):
                    found.append('%s imports %s' % (module, name))
        self.assertEqual([], found)

    def test_db_api_declares_every_function(self):
        missing = []
        for module in ('inventory', 'operations', 'services',
                       'ironic_records'):
            path = self.modules['baremetal_orch.db.sqlalchemy.' + module]
            with open(path) as f:
                tree = ast.parse(f.read())
            implemented = {n.name for n in tree.body
                           if isinstance(n, ast.FunctionDef)
                           and not n.name.startswith('_')}
            declared = {getattr(value, '__name__', None)
                        for value in vars(dbapi).values()
                        if getattr(value, '__module__', '').endswith(
                            '.' + module)}
            missing.extend('%s.%s' % (module, name)
                           for name in sorted(implemented - declared))
        self.assertEqual([], missing)

    def test_common_is_the_ground_floor(self):
        others = ['baremetal_orch.%s' % name for name in (
            'api', 'cmd', 'conductor', 'db', 'deployment', 'drivers', 'flows',
            'ironic', 'notifications', 'objects', 'osc', 'service')]
        self.assertEqual([], self.offenders('baremetal_orch.common', others))

    def test_no_circles(self):
        graph = {m: {n for n in names if n in self.modules and n != m}
                 for m, names in self.imports.items()}
        # A package's __init__ that hands names on is no edge back.
        circles = []
        state = {}

        def visit(module, path):
            state[module] = 'open'
            for target in sorted(graph[module]):
                if state.get(target) == 'open':
                    circles.append(' -> '.join(
                        path[path.index(target):] + [target]))
                elif target not in state:
                    visit(target, path + [target])
            state[module] = 'done'

        for module in sorted(graph):
            if module not in state:
                visit(module, [module])
        self.assertEqual([], circles)

    def test_modules_stay_small(self):
        large = []
        for module, path in sorted(self.modules.items()):
            with open(path) as f:
                count = sum(1 for _line in f)
            if count > MAX_LINES:
                large.append('%s: %d lines' % (module, count))
        self.assertEqual([], large)

    def test_statuses_are_constants(self):
        found = []
        for module, path in sorted(self.modules.items()):
            if not (_within(module, 'baremetal_orch.flows')
                    or _within(module, 'baremetal_orch.conductor')):
                continue
            found.extend('%s:%s' % (module, where)
                         for where in status_literals(path))
        self.assertEqual([], found)

    def test_comments_point_to_the_docs_in_the_tree(self):
        found = []
        for module, path in sorted(self.modules.items()):
            found.extend('%s:%d' % (module, number)
                         for number in outside_doc_references(path))
        self.assertEqual([], found)

    def test_tests_and_tools_point_to_the_docs_in_the_tree(self):
        repo = os.path.dirname(ROOT)
        found = []
        for top in ('baremetal_orch/tests', 'baremetal_orch_testing',
                    'baremetal_orch_tempest_plugin', 'tools'):
            for dirpath, _dirnames, filenames in os.walk(
                    os.path.join(repo, top)):
                for name in sorted(filenames):
                    path = os.path.join(dirpath, name)
                    if name.endswith('.py') and path != __file__:
                        found.extend(
                            '%s:%d' % (os.path.relpath(path, repo), number)
                            for number in outside_doc_references(path))
        self.assertEqual([], sorted(found))

    def test_outside_doc_references_are_found(self):
        path = self.sample('"""As DESIGN section 12 says."""\n'
                           '# the design (doc/source/admin/steering.rst)\n'
                           'DESIGNATED = 1\n')
        self.assertEqual([1], outside_doc_references(path))

    def sample(self, text):
        """A module holding ``text``, for a rule that must catch it."""
        path = self.useFixture(fixtures.TempDir()).join('sample.py')
        with open(path, 'w') as f:
            f.write(text)
        return path

    def test_one_call_site_of_the_provisioning_driver(self):
        # One lane of node work: every provision-state move of a node goes
        # through conductor/provisioning.py's _driver_calls.
        found = []
        for module, path in sorted(self.modules.items()):
            found.extend('%s:%s' % (module, where)
                         for where in driver_call_sites(path))
        self.assertEqual(1, len(found), found)
        self.assertTrue(found[0].startswith(
            'baremetal_orch.conductor.provisioning:'), found)
        self.assertTrue(found[0].endswith(': call_many'), found)

    def test_driver_call_sites_are_found(self):
        # The rule above must be able to fail: each shape it looks for.
        path = self.sample("drivers.get_driver(node.driver).deploy(n, {}, 1)\n"
                           "driver = drivers.get_driver(name)\n"
                           "driver.provide(node, 1)\n"
                           "getattr(get_driver(name), 'manage')(node, 1)\n"
                           "driver.validate(node)\n"
                           "rpcapi.deploy(node)\n"
                           "pool.submit(driver.call_many, 'deploy', [n])\n")
        self.assertEqual(['1: deploy', '3: provide', '4: getattr',
                          '7: call_many'],
                         driver_call_sites(path))

    def test_status_literals_are_found(self):
        # The rule above must be able to fail: each shape it looks for.
        path = self.sample(
            "if task.status == 'running':\n"
            "    row = {'status': 'failed'}\n"
            "    update(state='complete')\n"
            "    action.result = 'success' if ok else 'failed'\n"
            "FINAL = ('success', 'failed')\n"
            "counts = {'failed': 1}\n")
        self.assertEqual(
            ['1: running', '2: failed', '3: complete', '4: failed',
             '4: success', '5: failed', '5: success'],
            status_literals(path))
