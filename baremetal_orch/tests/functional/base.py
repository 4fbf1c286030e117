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
"""Base class of the functional tests (real processes and services).

:class:`FunctionalTestCase` adds to the unit tests' base (a clean
``cfg.CONF`` per test, ``self.config(...)``):

* :meth:`~FunctionalTestCase.start_process` runs a command (a
  ``baremetal-orch-*`` service, usually) in the background, its output in a
  log file that is attached to the test when it fails, and stops it on
  cleanUp;
* :meth:`~FunctionalTestCase.wait_for_http` polls a URL with a deadline;
* :meth:`~FunctionalTestCase.use_class_fixture` sets a fixture up once for
  a whole class (Keystone starts in seconds, not milliseconds).

A fixture with a ``log_details()`` method (``{name: Content}``) gets its logs
attached to every test that fails while using it.
"""

import os
import subprocess
import sys

import fixtures

from baremetal_orch.tests import base
from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing import helpers


class FunctionalTestCase(base.TestCase):
    """Base of the functional tests."""

    # Fixtures set up by use_class_fixture, per class.
    _class_fixtures = ()

    def setUp(self):
        super().setUp()
        for fixture in type(self)._class_fixtures:
            self._attach_logs_on_failure(fixture)

    # --- fixtures --------------------------------------------------------

    @classmethod
    def use_class_fixture(cls, fixture):
        """Set ``fixture`` up for every test of the class; return it.

        Call from ``setUpClass``; the fixture is cleaned up after the last
        test of the class (``addClassCleanup``), and its logs are attached
        to the tests that fail::

            @classmethod
            def setUpClass(cls):
                super().setUpClass()
                cls.keystone = cls.use_class_fixture(
                    keystone.KeystoneFixture())
        """
        fixture.setUp()  # on failure it cleans up after itself
        cls.addClassCleanup(fixture.cleanUp)
        cls._class_fixtures = tuple(cls._class_fixtures) + (fixture,)
        cls.addClassCleanup(cls._forget_class_fixture, fixture)
        return fixture

    @classmethod
    def _forget_class_fixture(cls, fixture):
        cls._class_fixtures = tuple(f for f in cls._class_fixtures
                                    if f is not fixture)

    def useFixture(self, fixture):
        """Like testtools' useFixture, attaching its logs on failure."""
        fixture = super().useFixture(fixture)
        self._attach_logs_on_failure(fixture)
        return fixture

    def _attach_logs_on_failure(self, fixture):
        if not hasattr(fixture, 'log_details'):
            return

        def attach(exc_info):
            if exc_info[0] is self.skipException:
                return
            for name, detail in fixture.log_details().items():
                self.addDetail(name, detail)

        self.addOnException(attach)

    # --- background processes ----------------------------------------------

    @property
    def log_dir(self):
        """A directory for this test's process logs (made on first use)."""
        if getattr(self, '_log_dir', None) is None:
            self._log_dir = self.useFixture(fixtures.TempDir()).path
        return self._log_dir

    def start_process(self, argv, env=None, log_name=None, cwd=None):
        """Run ``argv`` in the background until the test ends.

        :param argv: the command; a bare ``baremetal-orch-*`` name is looked
            up beside the running interpreter (the project's venv) first.
        :param env: variables added to (a copy of) the environment.
        :param log_name: the name of its log file and test detail (default:
            the command's base name).
        :returns: the :class:`subprocess.Popen`; its output (stdout and
            stderr) goes to ``proc.log_path``.
        """
        argv = list(argv)
        local = os.path.join(os.path.dirname(sys.executable), argv[0])
        if os.sep not in argv[0] and os.path.exists(local):
            argv[0] = local
        log_name = log_name or os.path.basename(argv[0])
        path = os.path.join(self.log_dir, '%s.log' % log_name)
        log = func_fixtures.LogFile(path)
        full_env = dict(os.environ)
        full_env.update(env or {})
        with open(path, 'ab') as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT,
                                    env=full_env, cwd=cwd or self.log_dir,
                                    start_new_session=True)
        proc.log_path = path
        proc.log = log
        # Last in, first out: the process stops, then its log is saved,
        # then the log directory goes.
        self.addCleanup(log.save)
        self.addCleanup(func_fixtures.stop_process, proc)

        def attach(exc_info):
            if exc_info[0] is not self.skipException:
                self.addDetail(log_name, log.content())

        self.addOnException(attach)
        return proc

    def wait_for_http(self, url, timeout=30, status=None, process=None,
                      interval=0.1):
        """:func:`helpers.wait_for_http`: poll ``url`` until it answers.

        :param process: a process from :meth:`start_process` whose early
            exit stops the wait with its log in the error.
        """
        return helpers.wait_for_http(url, timeout, status, process,
                                     interval)
