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
"""A running all-in-one service (``baremetal-orch``) as a fixture.

The embedded default (sqlite, ``noauth``, the fake driver, loopback) plus
the options a test gives, with its log in a ``log_file`` the test can read
from any offset: what leaves the service through its log is checked as
much as what leaves it over HTTP.
"""

import os
import subprocess
import sys

import fixtures

from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing import helpers
from baremetal_orch_testing import services


class AllInOne(fixtures.Fixture):
    """``baremetal-orch --config-file F`` until cleanUp.

    :param sections: ``{section: {option: value}}`` over the defaults.
    """

    def __init__(self, sections=None, start_timeout=120):
        super().__init__()
        self.sections = sections or {}
        self.start_timeout = start_timeout

    def _setUp(self):
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.port = func_fixtures.free_port()
        self.log_path = os.path.join(self.dir, 'baremetal-orch.log')
        self.output_path = os.path.join(self.dir, 'output.log')
        self.db_path = os.path.join(self.dir, 'aio.sqlite')
        sections = services.base_sections(
            self.dir, self.port, 'sqlite:///%s' % self.db_path,
            DEFAULT={'host': 'aio', 'log_file': self.log_path})
        for section, options in self.sections.items():
            sections.setdefault(section, {}).update(options)
        self.config_path = services.write_config(
            os.path.join(self.dir, 'baremetal-orch.conf'), sections)
        exe = os.path.join(os.path.dirname(sys.executable), 'baremetal-orch')
        with open(self.output_path, 'ab') as out:
            self.process = subprocess.Popen(
                [exe, '--config-file', self.config_path],
                stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, cwd=self.dir,
                start_new_session=True)
        self.log = func_fixtures.LogFile(self.log_path, limit=4 << 20)
        self.output = func_fixtures.LogFile(self.output_path)
        # What the ready-wait shows when the service exits early.
        self.process.log = self.output
        self.addCleanup(self.output.save)
        self.addCleanup(self.log.save)
        self.addCleanup(func_fixtures.stop_process, self.process, 5)
        self.url = 'http://127.0.0.1:%d' % self.port
        self.wait_until_answering()

    def wait_until_answering(self, timeout=None):
        """Return once its API answers 200 on ``/v1``.

        :raises helpers.ProcessError: (a RuntimeError) when it exits first
            or does not answer within ``timeout`` (default: start_timeout).
        """
        helpers.wait_for_http(self.url + '/v1', timeout or self.start_timeout,
                              status=200, process=self.process, interval=0.2,
                              request_timeout=10)

    def log_size(self):
        try:
            return os.path.getsize(self.log_path)
        except FileNotFoundError:
            return 0

    def log_since(self, offset):
        """What the service logged from byte ``offset`` on."""
        try:
            with open(self.log_path, 'rb') as f:
                f.seek(offset)
                return f.read()
        except FileNotFoundError:
            return b''

    def all_output(self):
        """Every byte of its log file and of its stdout/stderr."""
        return self.log_since(0) + self._read(self.output_path)

    @staticmethod
    def _read(path):
        try:
            with open(path, 'rb') as f:
                return f.read()
        except FileNotFoundError:
            return b''

    def log_details(self):
        return {'baremetal-orch.log': self.log.content(),
                'baremetal-orch output': self.output.content()}
