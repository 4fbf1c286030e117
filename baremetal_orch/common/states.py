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
"""The provision state machine of a node, built on automaton.

The states and verbs follow Ironic's, so an operator who knows Ironic reads
them without a glossary. Working states (verifying, cleaning, deploying,
deleting) are entered by a verb and left by ``done`` or ``fail``.
"""

import functools

from automaton import exceptions as automaton_exc
from automaton import machines

ENROLL = 'enroll'
VERIFYING = 'verifying'
MANAGEABLE = 'manageable'
CLEANING = 'cleaning'
CLEANFAIL = 'clean failed'
AVAILABLE = 'available'
DEPLOYING = 'deploying'
DEPLOYFAIL = 'deploy failed'
ACTIVE = 'active'
DELETING = 'deleting'
ERROR = 'error'

#: Verbs accepted by PUT /v1/nodes/{ident}/states/provision.
VERBS = {
    'manage': 'manage',
    'provide': 'provide',
    'active': 'deploy',
    'deleted': 'delete',
}

#: Working states: a conductor is acting on the node.
WORKING_STATES = frozenset([VERIFYING, CLEANING, DEPLOYING, DELETING])

#: Stable states with the state a working state is heading for.
TARGETS = {
    VERIFYING: MANAGEABLE,
    CLEANING: AVAILABLE,
    DEPLOYING: ACTIVE,
    DELETING: AVAILABLE,
}

FAILURE_STATES = frozenset([CLEANFAIL, DEPLOYFAIL, ERROR])

#: States whose node may be deleted from the inventory.
DELETE_ALLOWED_STATES = frozenset(
    [ENROLL, MANAGEABLE, AVAILABLE, CLEANFAIL, DEPLOYFAIL, ERROR])

_TRANSITIONS = (
    # (start, end, event)
    (ENROLL, VERIFYING, 'manage'),
    (MANAGEABLE, VERIFYING, 'manage'),
    (VERIFYING, MANAGEABLE, 'done'),
    (VERIFYING, ENROLL, 'fail'),
    (MANAGEABLE, CLEANING, 'provide'),
    (CLEANFAIL, CLEANING, 'provide'),
    (CLEANING, AVAILABLE, 'done'),
    (CLEANING, CLEANFAIL, 'fail'),
    # As in Ironic: back to manageable without a working state (a
    # stable transition: provision_set.success).
    (CLEANFAIL, MANAGEABLE, 'manage'),
    (AVAILABLE, MANAGEABLE, 'manage'),
    (AVAILABLE, DEPLOYING, 'deploy'),
    (DEPLOYFAIL, DEPLOYING, 'deploy'),
    (DEPLOYING, ACTIVE, 'done'),
    (DEPLOYING, DEPLOYFAIL, 'fail'),
    (ACTIVE, DELETING, 'delete'),
    (DEPLOYFAIL, DELETING, 'delete'),
    (ERROR, DELETING, 'delete'),
    (DELETING, CLEANING, 'done'),
    (DELETING, ERROR, 'fail'),
)


def _build():
    machine = machines.FiniteMachine()
    for state in (ENROLL, VERIFYING, MANAGEABLE, CLEANING, CLEANFAIL,
                  AVAILABLE, DEPLOYING, DEPLOYFAIL, ACTIVE, DELETING, ERROR):
        machine.add_state(state, terminal=False)
    for start, end, event in _TRANSITIONS:
        machine.add_transition(start, end, event)
    machine.freeze()
    return machine


_MACHINE = _build()


def new_machine(state):
    """A copy of the provision state machine positioned at ``state``."""
    machine = _MACHINE.copy(shallow=True)
    machine.initialize(state)
    return machine


@functools.lru_cache(maxsize=None)
def next_state(state, event):
    """The state ``event`` leads to from ``state``, or None if illegal
    (remembered: the machine never changes, and each node of a batch asks
    it at every step)."""
    machine = new_machine(state)
    try:
        machine.process_event(event)
    except automaton_exc.NotFound:
        return None
    return machine.current_state


def target_of(state):
    """The target provision state of a node in ``state``, or None."""
    return TARGETS.get(state)
