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
"""Base class of the tests that talk to :mod:`.fake_ironic`."""

from requests_mock.contrib import fixture as rm_fixture

from baremetal_orch.ironic import outage
from baremetal_orch.ironic import throttle
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.ironic import fake_ironic


class IronicTestCase(base.TestCase):
    """A fake Ironic at ``fake_ironic.ENDPOINT`` and a noauth config."""

    def setUp(self):
        super().setUp()
        # Process-wide records of the Ironic endpoint: one per test.
        outage.reset()
        throttle.reset()
        self.addCleanup(outage.reset)
        self.addCleanup(throttle.reset)
        self.config(group='ironic', auth_type='none',
                    endpoint_override=fake_ironic.ENDPOINT,
                    api_retry_interval=0, poll_interval=0.05,
                    outage_tolerance=0)
        self.ironic = fake_ironic.FakeIronic().install(
            self.useFixture(rm_fixture.Fixture()))
