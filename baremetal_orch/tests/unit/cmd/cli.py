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
"""Run a command's ``main(argv)`` in-process, as its console script would.

:class:`CommandFixture` parses the real command line with oslo.config (the
test base had parsed an empty one), captures stdout and stderr, turns
argparse's SystemExit into an exit code, and afterwards leaves ``cfg.CONF``
and the root logger as it found them (without the command's sub-command
option, which would make every later ``CONF([])`` demand a command).
"""

import collections
import io
import logging
import os
import sys

import fixtures
from oslo_config import cfg

CONF = cfg.CONF

Outcome = collections.namedtuple('Outcome', 'code stdout stderr')


class CommandFixture(fixtures.Fixture):
    """``run(*argv)`` → Outcome(code, stdout, stderr) of ``module.main``.

    :param module: a command module with ``main(argv)`` and
        ``COMMAND_OPT``.
    """

    def __init__(self, module):
        super().__init__()
        self.module = module

    def _setUp(self):
        root = logging.getLogger()
        handlers, level = root.handlers[:], root.level

        def restore_logging():
            root.handlers[:] = handlers
            root.setLevel(level)

        self.addCleanup(restore_logging)
        self.addCleanup(self._forget_command)
        tmp = self.useFixture(fixtures.TempDir()).path
        # An empty file: no configuration file of the machine leaks in.
        self.config_file = os.path.join(tmp, 'empty.conf')
        open(self.config_file, 'w').close()

    def _forget_command(self):
        CONF.clear()
        CONF.unregister_opt(self.module.COMMAND_OPT)

    def run(self, *argv):
        # The command parses its own command line: forget the last one.
        CONF.clear()
        stdout, stderr = io.StringIO(), io.StringIO()
        real = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = stdout, stderr
        try:
            code = self.module.main(['--config-file', self.config_file]
                                    + [str(a) for a in argv])
        except SystemExit as e:
            code = e.code
        finally:
            sys.stdout, sys.stderr = real
        return Outcome(code, stdout.getvalue(), stderr.getvalue())
