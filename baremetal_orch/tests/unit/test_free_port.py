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
"""``free_port``: a port handed to one test worker is no other's.

CI once failed because two workers were given the same port: the
service of one could not bind it, and the other's service answered the
first test's client (``Additional properties are not allowed``).
"""

import os
import socket
import subprocess
import sys

import fixtures

from baremetal_orch.tests import base
from baremetal_orch_testing import helpers

#: A second process that reserves a port and holds it until its stdin
#: closes.
HOLDER = ('import sys\n'
          'from baremetal_orch_testing import helpers\n'
          'print(helpers.free_port(), flush=True)\n'
          'sys.stdin.read()\n')


class TestFreePort(base.TestCase):

    def test_a_port_another_process_holds_is_not_given(self):
        holder = subprocess.Popen([sys.executable, '-c', HOLDER],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.addCleanup(holder.wait)
        self.addCleanup(holder.stdin.close)
        held = int(holder.stdout.readline())
        # Nothing listens on it: the kernel alone would give it again.
        self.assertTrue(helpers._bindable('127.0.0.1', held))
        other = helpers.free_port(candidates=[held] + [
            p for p in helpers.port_candidates() if p != held])
        self.assertNotEqual(held, other)
        self.assertRaises(helpers.ProcessError, helpers.free_port,
                          candidates=[held])
        # Once the holder ends, its port can be given again.
        holder.stdin.close()
        holder.wait()
        self.assertEqual(held, helpers.free_port(candidates=[held]))

    def test_a_port_is_given_once_in_a_process(self):
        port = helpers.free_port()
        self.assertRaises(helpers.ProcessError, helpers.free_port,
                          candidates=[port])

    def test_a_port_in_use_is_skipped(self):
        candidates = helpers.port_candidates()
        listener = socket.socket()
        self.addCleanup(listener.close)
        for busy in candidates:
            try:
                listener.bind(('127.0.0.1', busy))
                break
            except OSError:
                continue
        listener.listen()
        nxt = candidates[candidates.index(busy) + 1:]
        self.assertNotEqual(busy, helpers.free_port(candidates=[busy] + nxt))

    def test_ports_are_below_the_ephemeral_range(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, 'r')
        with open(path, 'w') as f:
            f.write('40000\t60999\n')
        self.assertEqual(40000, helpers._ephemeral_low(path))
        low = helpers._ephemeral_low()
        port = helpers.free_port()
        self.assertLess(port, low)
        self.assertGreaterEqual(port, max(1024, low - 12000))
