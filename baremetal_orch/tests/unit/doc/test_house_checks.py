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
"""The checks CI runs and the guides a newcomer reads match the tree.

Every console script is in README's process list and has its section in
``cli/services.rst``; ``.ci/run`` runs the lint and every Sphinx build
(with ``-W``); the builds that import nothing of the package skip its
install; README's check commands name the constraints file (offline);
the split install guide copies the files pip installs under the virtual
environment's ``etc/``, not a checkout's.
"""

import ast
import configparser
import os
import re
import shlex

from baremetal_orch.tests import base

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..',
                                    '..', '..'))
#: The tox envs that keep the house green, as .ci/run runs them.
HOUSE_ENVS = {'pep8', 'docs', 'api-ref', 'releasenotes'}
#: The Sphinx builds, and the trees whose conf.py they read.
SPHINX_ENVS = {'docs': 'doc', 'api-ref': 'api-ref',
               'releasenotes': 'releasenotes'}
CONSTRAINTS = 'TOX_CONSTRAINTS_FILE=$PWD/upper-constraints.txt'


def _read(*parts):
    with open(os.path.join(REPO, *parts)) as f:
        return f.read()


def _config(*parts):
    config = configparser.RawConfigParser()
    config.read(os.path.join(REPO, *parts))
    return config


def console_scripts():
    setup = _config('setup.cfg')
    return [line.split('=')[0].strip() for line in
            setup.get('entry_points', 'console_scripts').splitlines()
            if line.strip()]


def data_files():
    """The paths, relative to the install prefix, of setup.cfg's
    data_files (globs left out)."""
    setup = _config('setup.cfg')
    files = set()
    target = None
    for line in setup.get('files', 'data_files').splitlines():
        if not line.strip():
            continue
        if '=' in line:
            target, _sep, line = (p.strip() for p in line.partition('='))
        for source in line.split():
            if '*' not in source:
                files.add(os.path.join(target, os.path.basename(source)))
    return files


class TestProcessList(base.TestCase):

    def test_every_console_script_is_documented(self):
        readme = _read('README.rst')
        services = _read('doc', 'source', 'cli', 'services.rst')
        scripts = console_scripts()
        self.assertIn('baremetal-orch-listener', scripts)
        for name in scripts:
            self.assertRegex(readme, r'(?m)^``%s(``| )' % re.escape(name),
                             'README.rst process list: %s' % name)
            self.assertRegex(services, r'(?m)^%s\n=+$' % re.escape(name),
                             'cli/services.rst: %s' % name)


class TestCI(base.TestCase):

    def test_ci_runs_the_lint_and_every_docs_build(self):
        match = re.search(r'(?m)^for env in ([^;]+); do\n'
                          r'\s+if ! \S*tox -e "\$env"', _read('.ci', 'run'))
        self.assertIsNotNone(match, '.ci/run runs no loop of tox envs')
        self.assertEqual(HOUSE_ENVS, set(match.group(1).split()))
        tox = _config('tox.ini')
        pep8 = tox.get('testenv:pep8', 'commands')
        for tool in ('ruff check', 'flake8', 'bandit', 'doc8'):
            self.assertIn(tool, pep8)
        for env in SPHINX_ENVS:
            command = tox.get('testenv:%s' % env, 'commands')
            self.assertIn('sphinx-build', command, env)
            self.assertIn('-W', shlex.split(command), env)

    def test_docs_builds_that_import_nothing_skip_the_install(self):
        tox = _config('tox.ini')
        for env in ('api-ref', 'releasenotes'):
            section = 'testenv:%s' % env
            self.assertEqual('True', tox.get(section, 'skip_install'), env)
            self.assertEqual('-r{toxinidir}/doc/requirements.txt',
                             tox.get(section, 'deps').strip(), env)
            tree = ast.parse(_read(SPHINX_ENVS[env], 'source', 'conf.py'))
            imported = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    imported |= {a.name for a in node.names}
                elif isinstance(node, ast.ImportFrom):
                    imported.add(node.module or '')
            self.assertEqual(
                set(), {m for m in imported
                        if m.split('.')[0].startswith('baremetal_orch')},
                env)

    def test_readme_runs_the_checks_offline(self):
        lines = [line for line in _read('README.rst').splitlines()
                 if line.startswith('    ') and ' tox -e ' in line]
        self.assertTrue(lines)
        envs = set()
        for line in lines:
            self.assertIn(CONSTRAINTS, line)
            envs |= set(re.search(r' tox -e (\S+)', line).group(1)
                        .split(','))
        self.assertEqual(set(), HOUSE_ENVS - envs)


class TestInstallGuide(base.TestCase):

    def test_split_guide_copies_what_pip_installs(self):
        text = _read('doc', 'source', 'install', 'split.rst').replace(
            '\\\n', ' ')
        venv = re.search(r'python3 -m venv (\S+)', text).group(1)
        installed = data_files()
        self.assertIn('etc/baremetal-orch/baremetal-orch.conf.sample',
                      installed)
        copies = [shlex.split(line)[1:] for line in text.splitlines()
                  if line.strip().startswith('cp ')]
        self.assertTrue(copies)
        for source, _target in copies:
            self.assertTrue(source.startswith(venv + '/'), source)
            self.assertIn(os.path.relpath(source, venv), installed)
