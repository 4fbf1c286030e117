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
"""The steering rules (deployment/control.py) as a table: which control
applies in which state, and what it leads to."""

from baremetal_orch.common import exception
from baremetal_orch.deployment import control
from baremetal_orch.tests import base

S = control.Steering
RUNNING = S('running', None, None)
PAUSING = S('pausing', 'pause', 'why')
PAUSED = S('paused', 'pause', 'why')
WINDOW = S('paused', None, 'outside_window')
ABORTING = S('running', 'abort', 'stop')
ABORTING_PAUSED = S('paused', 'abort', 'stop')


class TestApply(base.TestCase):

    def test_table(self):
        table = [
            # (steering, event, reason, expected steering or the words of
            #  the 409)
            (RUNNING, 'pause', 'r', S('pausing', 'pause', 'r')),
            (RUNNING, 'abort', 'r', S('running', 'abort', 'r')),
            (RUNNING, 'resume', None, 'it is running'),
            (RUNNING, 'window_closed', None,
             S('paused', None, 'outside_window')),
            (RUNNING, 'drained', None, 'it is running'),
            (PAUSING, 'resume', None, S('running', None, None)),
            (PAUSING, 'drained', None, S('paused', 'pause', 'why')),
            (PAUSING, 'pause', None, 'it is pausing'),
            (PAUSING, 'abort', 'r', S('pausing', 'abort', 'r')),
            (PAUSED, 'resume', None, S('running', None, None)),
            (PAUSED, 'pause', None, 'it is paused'),
            (PAUSED, 'abort', 'r', S('paused', 'abort', 'r')),
            (PAUSED, 'window_opened', None, 'it is paused'),
            (WINDOW, 'window_opened', None, S('running', None, None)),
            (WINDOW, 'pause', 'hold', S('paused', 'pause', 'hold')),
            (WINDOW, 'resume', None, 'outside its maintenance windows'),
            (WINDOW, 'abort', 'r', S('paused', 'abort', 'r')),
            (ABORTING, 'pause', None, 'being aborted'),
            (ABORTING, 'resume', None, 'being aborted'),
            (ABORTING, 'abort', None, 'being aborted'),
            (ABORTING_PAUSED, 'resume', None, 'being aborted'),
            (S('pending', None, None), 'pause', None, 'it is pending'),
            (S('complete', None, None), 'resume', None, 'it is complete'),
            (S('cancelled', None, 'x'), 'abort', None, 'it is cancelled'),
        ]
        for steering, event, reason, expected in table:
            name = '%s --%s-->' % (steering, event)
            if isinstance(expected, str):
                e = self.assertRaises(exception.Conflict, control.apply,
                                      steering, event, reason)
                self.assertIn(expected, str(e), name)
            else:
                self.assertEqual(expected,
                                 control.apply(steering, event, reason),
                                 name)

    def test_new_work_starts_only_while_running(self):
        table = [(RUNNING, True), (PAUSING, False), (PAUSED, False),
                 (WINDOW, False), (ABORTING, False),
                 (S('pending', None, None), True)]
        for steering, expected in table:
            self.assertEqual(expected, control.may_start_work(steering),
                             steering)
        self.assertEqual([False, False, False, False, True, True],
                         [control.is_aborting(s) for s in (
                             RUNNING, PAUSING, PAUSED, WINDOW, ABORTING,
                             ABORTING_PAUSED)])
