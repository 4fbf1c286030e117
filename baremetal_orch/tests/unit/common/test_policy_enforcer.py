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
"""A request served while another makes the policy enforcer sees every
rule (seen: one 500, PolicyNotRegistered, in the listener load test)."""

import threading

import fixtures
from oslo_policy import policy as oslo_policy

from baremetal_orch.common import context
from baremetal_orch.common import policy
from baremetal_orch.tests import base


class TestEnforcerMadeOnce(base.TestCase):

    def setUp(self):
        super().setUp()
        policy.reset()
        self.addCleanup(policy.reset)

    def test_a_request_during_the_registration_sees_every_rule(self):
        inside, go = threading.Event(), threading.Event()
        real = oslo_policy.Enforcer.register_defaults

        def slow(enforcer, rules):
            inside.set()
            go.wait(30)
            return real(enforcer, rules)

        self.useFixture(fixtures.MockPatchObject(
            oslo_policy.Enforcer, 'register_defaults', slow))
        maker = threading.Thread(target=policy.get_enforcer)
        maker.start()
        self.assertTrue(inside.wait(30))
        answers = []

        def request():
            try:
                answers.append(policy.check('baremetal_orch:node:get',
                                            context.get_admin_context()))
            except Exception as e:
                answers.append(e)

        other = threading.Thread(target=request)
        other.start()
        other.join(0.5)
        go.set()
        maker.join(30)
        other.join(30)
        self.assertEqual([True], answers)
