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
"""The all-in-one process: its interpreter's thread switch interval."""

import sys

from baremetal_orch.cmd import aio
from baremetal_orch.tests import base


class TestSwitchInterval(base.TestCase):

    def setUp(self):
        super().setUp()
        before = sys.getswitchinterval()
        self.addCleanup(sys.setswitchinterval, before)

    def test_the_default_is_a_millisecond(self):
        sys.setswitchinterval(0.005)
        aio._switch_interval()
        self.assertAlmostEqual(0.001, sys.getswitchinterval())

    def test_a_reload_applies_the_option(self):
        # SIGHUP: the service's reset() reads the option again.
        aio._switch_interval()
        self.config(thread_switch_interval=0.004)
        aio.AllInOneService(api=None).reset()
        self.assertAlmostEqual(0.004, sys.getswitchinterval())
