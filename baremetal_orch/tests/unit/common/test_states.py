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
"""The provision state machine: the whole transition table."""

import itertools

import testscenarios

from baremetal_orch.common import states
from baremetal_orch.tests import base

load_tests = testscenarios.load_tests_apply_scenarios

ALL_STATES = (states.ENROLL, states.VERIFYING, states.MANAGEABLE,
              states.CLEANING, states.CLEANFAIL, states.AVAILABLE,
              states.DEPLOYING, states.DEPLOYFAIL, states.ACTIVE,
              states.DELETING, states.ERROR)
ALL_EVENTS = ('manage', 'provide', 'deploy', 'delete', 'done', 'fail')

#: The expected table, written out independently of states._TRANSITIONS.
LEGAL = {
    ('enroll', 'manage'): 'verifying',
    ('manageable', 'manage'): 'verifying',
    ('verifying', 'done'): 'manageable',
    ('verifying', 'fail'): 'enroll',
    ('manageable', 'provide'): 'cleaning',
    ('clean failed', 'provide'): 'cleaning',
    ('cleaning', 'done'): 'available',
    ('cleaning', 'fail'): 'clean failed',
    ('clean failed', 'manage'): 'manageable',
    ('available', 'manage'): 'manageable',
    ('available', 'deploy'): 'deploying',
    ('deploy failed', 'deploy'): 'deploying',
    ('deploying', 'done'): 'active',
    ('deploying', 'fail'): 'deploy failed',
    ('active', 'delete'): 'deleting',
    ('deploy failed', 'delete'): 'deleting',
    ('error', 'delete'): 'deleting',
    ('deleting', 'done'): 'cleaning',
    ('deleting', 'fail'): 'error',
}


class TestTransitionTable(base.TestCase):
    """Every (state, event) pair.

    Legal ones lead where the table says, all others are refused.
    """

    scenarios = [
        ('%s-%s' % (state.replace(' ', '_'), event),
         {'state': state, 'event': event,
          'expected': LEGAL.get((state, event))})
        for state, event in itertools.product(ALL_STATES, ALL_EVENTS)]

    def test_next_state(self):
        self.assertEqual(self.expected,
                         states.next_state(self.state, self.event))


def events_from(state):
    """The events the machine accepts in ``state``, sorted."""
    return sorted(e for e in ALL_EVENTS
                  if states.next_state(state, e) is not None)


class TestStates(base.TestCase):

    def test_illegal_examples(self):
        for state, event in (('enroll', 'deploy'), ('enroll', 'provide'),
                             ('active', 'deploy'), ('active', 'manage'),
                             ('available', 'delete'),
                             ('deploying', 'deploy'),
                             ('manageable', 'deploy')):
            self.assertIsNone(states.next_state(state, event),
                              '%s on %s' % (event, state))

    def test_events_from(self):
        self.assertEqual(['manage'], events_from('enroll'))
        self.assertEqual(['deploy', 'manage'],
                         events_from('available'))
        self.assertEqual(['delete', 'deploy'],
                         events_from('deploy failed'))
        self.assertEqual(['delete'], events_from('active'))
        self.assertEqual(['done', 'fail'], events_from('deploying'))
        self.assertEqual(['manage', 'provide'],
                         events_from('clean failed'))
        for state in ALL_STATES:
            expected = sorted(e for (s, e) in LEGAL if s == state)
            self.assertEqual(expected, events_from(state), state)

    def test_every_state_is_reachable_from_enroll(self):
        seen = {states.ENROLL}
        frontier = [states.ENROLL]
        while frontier:
            state = frontier.pop()
            for event in events_from(state):
                nxt = states.next_state(state, event)
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        self.assertEqual(set(ALL_STATES), seen)

    def test_working_states_have_targets_and_exits(self):
        for state in states.WORKING_STATES:
            self.assertIsNotNone(states.target_of(state), state)
            self.assertEqual(['done', 'fail'], events_from(state))
        for state in set(ALL_STATES) - states.WORKING_STATES:
            self.assertIsNone(states.target_of(state), state)
            self.assertNotIn('done', events_from(state))

    def test_verbs(self):
        self.assertEqual({'manage': 'manage', 'provide': 'provide',
                          'active': 'deploy', 'deleted': 'delete'},
                         states.VERBS)

    def test_delete_allowed_states_exclude_working_and_active(self):
        self.assertFalse(states.DELETE_ALLOWED_STATES &
                         (states.WORKING_STATES | {states.ACTIVE}))

    def test_machine_copies_are_independent(self):
        one = states.new_machine(states.ENROLL)
        two = states.new_machine(states.ENROLL)
        one.process_event('manage')
        self.assertEqual(states.VERIFYING, one.current_state)
        self.assertEqual(states.ENROLL, two.current_state)
        self.assertEqual(states.VERIFYING,
                         states.next_state(states.ENROLL, 'manage'))
