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
"""Steering a running action: which control applies when, free of I/O.

An action's steering is three columns -- its ``state``, the ``control``
its flow must carry out (null, ``pause`` or ``abort``) and its
``state_reason`` -- read here as one *position*::

                 pause                    drained
    running -----------------> pausing ------------> paused
       ^  ^  <-----------------   |                    |
       |  |        resume         |                    |
       |  +-------------------------------------------+ resume
       |                          | abort              | abort
       | window_opened            v                    v
    window  --------------------> aborting <-----------+
    (paused, outside_window)  abort       (the flow ends it cancelled)
       |
       +-- pause --> paused (an explicit pause outlives the window)

``running --abort--> aborting`` and ``running --window_closed--> window``
complete the picture. The verbs of ``POST /v1/actions/{uuid}/control``
are ``pause``, ``resume`` and ``abort``; ``drained``, ``window_closed``
and ``window_opened`` are the flow's own events. A verb that does not
apply is a :class:`~baremetal_orch.common.exception.Conflict` naming the
state. While ``aborting`` the action shows the state it had; the flow
ends it ``cancelled``.
"""

import collections

from automaton import exceptions as automaton_exc
from automaton import machines

from baremetal_orch.common import exception
from baremetal_orch.common import statuses

PAUSE = 'pause'
RESUME = 'resume'
ABORT = 'abort'
#: The verbs an operator may send.
VERBS = (PAUSE, RESUME, ABORT)
#: The flow's own events.
DRAINED = 'drained'
WINDOW_CLOSED = 'window_closed'
WINDOW_OPENED = 'window_opened'

#: ``state_reason`` of an action paused by its maintenance windows.
OUTSIDE_WINDOW = 'outside_window'

# Positions (the machine's states).
RUNNING = 'running'
PAUSING = 'pausing'
PAUSED = 'paused'
WINDOW = 'window'
ABORTING = 'aborting'

_TRANSITIONS = (
    (RUNNING, PAUSING, PAUSE),
    (RUNNING, ABORTING, ABORT),
    (RUNNING, WINDOW, WINDOW_CLOSED),
    (PAUSING, RUNNING, RESUME),
    (PAUSING, ABORTING, ABORT),
    (PAUSING, PAUSED, DRAINED),
    (PAUSED, RUNNING, RESUME),
    (PAUSED, ABORTING, ABORT),
    (WINDOW, PAUSED, PAUSE),
    (WINDOW, ABORTING, ABORT),
    (WINDOW, RUNNING, WINDOW_OPENED),
)


def _build():
    machine = machines.FiniteMachine()
    for position in (RUNNING, PAUSING, PAUSED, WINDOW, ABORTING):
        machine.add_state(position)
    for start, end, event in _TRANSITIONS:
        machine.add_transition(start, end, event)
    machine.freeze()
    return machine


_MACHINE = _build()

#: The three columns of an action's steering.
Steering = collections.namedtuple('Steering',
                                  ['state', 'control', 'state_reason'])


def position(steering):
    """The machine's position of ``steering``, or None when no control
    applies (pending or ended)."""
    if steering.state not in (statuses.RUNNING, statuses.PAUSING,
                              statuses.PAUSED):
        return None
    if steering.control == ABORT:
        return ABORTING
    if steering.state == statuses.PAUSED and steering.control is None:
        return WINDOW
    return {statuses.RUNNING: RUNNING, statuses.PAUSING: PAUSING,
            statuses.PAUSED: PAUSED}[steering.state]


def describe(steering):
    """Where the action is, in words: what a refused control names."""
    return _describe(steering, position(steering))


def _describe(steering, where):
    if where == ABORTING:
        return 'it is being aborted'
    if where == WINDOW:
        return ('it is paused outside its maintenance windows and resumes '
                'by itself when the next one opens')
    return 'it is %s' % steering.state


def apply(steering, event, reason=None):
    """The steering after ``event``.

    :param steering: a :class:`Steering` as read.
    :param event: a verb or one of the flow's events.
    :param reason: the control's reason, kept in ``state_reason``.
    :returns: the new :class:`Steering`.
    :raises: Conflict naming the state when ``event`` does not apply.
    """
    where = position(steering)
    if where is None:
        raise exception.Conflict(reason='cannot %s the action: it is %s'
                                 % (event, steering.state))
    machine = _MACHINE.copy(shallow=True)
    machine.initialize(where)
    try:
        machine.process_event(event)
    except automaton_exc.NotFound:
        raise exception.Conflict(reason='cannot %s the action: %s' % (
            event, _describe(steering, where)))
    target = machine.current_state
    if target == RUNNING:
        return Steering(statuses.RUNNING, None, None)
    if target == PAUSING:
        return Steering(statuses.PAUSING, PAUSE, reason)
    if target == PAUSED:
        return Steering(statuses.PAUSED, PAUSE,
                        steering.state_reason if event == DRAINED
                        else reason)
    if target == WINDOW:
        return Steering(statuses.PAUSED, None, OUTSIDE_WINDOW)
    return Steering(steering.state, ABORT, reason)


def may_start_work(steering):
    """Whether new node work (a group, a phase, a node) may start."""
    return position(steering) in (RUNNING, None)


def is_aborting(steering):
    return steering.control == ABORT
