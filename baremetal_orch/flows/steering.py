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
"""What the flow of a running action reads of its steering.

The rules are :mod:`baremetal_orch.deployment.control`; the truth is the
action's row (``state``, ``control``, ``state_reason``), so a pause or an
abort survives the conductor: the one that resumes or takes the action
over reads it again. :class:`ActionSteering` reads the row at most every
:attr:`ActionSteering.REFRESH` seconds while work asks, and at once when
the control was taken in this process (:func:`wake`). It makes the flow's
own moves: ``pausing`` to ``paused`` once nothing is in flight, and the
maintenance windows' pauses.

Time spent paused does not count against the phase timeouts:
:meth:`ActionSteering.paused_seconds` is what the phases add to their
deadlines.
"""

import threading
import time

from oslo_log import log
from oslo_utils import timeutils

from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import control
from baremetal_orch.deployment import windows as windows_mod
from baremetal_orch.notifications import notify
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import event as event_obj

LOG = log.getLogger(__name__)

_REGISTRY = {}
_REGISTRY_LOCK = threading.Lock()


def wake(action_uuid):
    """Have the running flow of ``action_uuid`` in this process read its
    steering now (a control was just stored)."""
    with _REGISTRY_LOCK:
        steering = _REGISTRY.get(action_uuid)
    if steering is not None:
        steering.wake()


def may_start_work(action_uuid):
    """Whether new node work of ``action_uuid`` may start: as the action's
    flow in this process sees it, or else as the action's row says (node
    work of another conductor's action)."""
    with _REGISTRY_LOCK:
        steering = _REGISTRY.get(action_uuid)
    if steering is not None:
        return steering.may_start()
    return control.may_start_work(
        control.Steering(*dbapi.steering_of(action_uuid)))


class ActionSteering:
    """The steering of one running action, as its flow sees it."""

    #: Seconds between two reads of the action's row while work asks.
    REFRESH = 0.25

    def __init__(self, context, action):
        self.context = context
        self.action_uuid = action.uuid
        self._cond = threading.Condition()
        self._current = control.Steering(action.state, action.control,
                                         action.state_reason)
        self._read_at = time.monotonic()
        # Read (and the windows looked at) before the first work starts.
        self._stale = True
        self._in_flight = {}
        self._listeners = set()
        windows = (action.parameters or {}).get('windows')
        self._windows = windows_mod.parse(windows) if windows else ()
        #: Seconds paused so far, and since when (monotonic) if paused.
        self._paused_total = 0.0
        self._paused_since = (None if control.may_start_work(self._current)
                              else time.monotonic())

    # Registry --------------------------------------------------------------

    def __enter__(self):
        with _REGISTRY_LOCK:
            _REGISTRY[self.action_uuid] = self
        return self

    def __exit__(self, *exc):
        with _REGISTRY_LOCK:
            if _REGISTRY.get(self.action_uuid) is self:
                del _REGISTRY[self.action_uuid]

    # Reading ---------------------------------------------------------------

    def wake(self):
        with self._cond:
            self._stale = True
            self._cond.notify_all()
            listeners = list(self._listeners)
        for event in listeners:
            event.set()

    def listen(self, event):
        """Set ``event`` (a :class:`threading.Event`) on every control
        taken in this process: a phase waiting for its nodes looks at
        once."""
        with self._cond:
            self._listeners.add(event)

    def unlisten(self, event):
        with self._cond:
            self._listeners.discard(event)

    def current(self):
        """The :class:`~baremetal_orch.deployment.control.Steering`, read
        again when due."""
        with self._cond:
            due = (self._stale or
                   time.monotonic() - self._read_at >= self.REFRESH)
        if due:
            self._refresh()
        with self._cond:
            return self._current

    def _refresh(self):
        steering = control.Steering(*dbapi.steering_of(self.action_uuid))
        with self._cond:
            self._stale = False
            self._read_at = time.monotonic()
        steering = self._flow_moves(steering)
        with self._cond:
            was_going = control.may_start_work(self._current)
            self._current = steering
            going = control.may_start_work(steering)
            now = time.monotonic()
            if was_going and not going:
                self._paused_since = now
            elif going and not was_going and self._paused_since:
                self._paused_total += now - self._paused_since
                self._paused_since = None
            self._cond.notify_all()

    def _flow_moves(self, steering):
        """The moves the flow makes itself: drained, windows."""
        where = control.position(steering)
        event = None
        if where == control.PAUSING and not self.in_flight():
            event = control.DRAINED
        elif where in (control.RUNNING, control.WINDOW) and self._windows:
            inside = windows_mod.state_at(self._windows,
                                          timeutils.utcnow(True)).inside
            if where == control.RUNNING and not inside:
                event = control.WINDOW_CLOSED
            elif where == control.WINDOW and inside:
                event = control.WINDOW_OPENED
        if event is None:
            return steering
        new = control.apply(steering, event)
        if not dbapi.steer_action(self.action_uuid,
                                  (steering.state, steering.control),
                                  new._asdict()):
            # A control came in between: read it next time.
            with self._cond:
                self._stale = True
            return steering
        self._record(event, new)
        return new

    def _record(self, event, steering):
        LOG.info('Action %s: %s (%s)', self.action_uuid, steering.state,
                 event)
        action = action_obj.Action.get(self.context, self.action_uuid)
        if event == control.DRAINED:
            notify.action_control(self.context, action, control.PAUSE,
                                  'end', reason=steering.state_reason)
            return
        event_obj.action_steered(
            action, event_obj.ACTION_PAUSED
            if event == control.WINDOW_CLOSED else event_obj.ACTION_RESUMED,
            reason=control.OUTSIDE_WINDOW, requester='windows')

    # Asking ----------------------------------------------------------------

    def may_start(self):
        """Whether new node work may start now."""
        return control.may_start_work(self.current())

    def aborting(self):
        return control.is_aborting(self.current())

    def wait(self, timeout=None):
        """Wait until new work may start or the action is aborted, at most
        ``timeout`` seconds. Returns whether new work may start."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            steering = self.current()
            if control.may_start_work(steering) or \
                    control.is_aborting(steering):
                return control.may_start_work(steering)
            left = self.REFRESH if end is None else min(
                self.REFRESH, end - time.monotonic())
            if left <= 0:
                return False
            with self._cond:
                if not self._stale:
                    self._cond.wait(left)

    def paused_seconds(self):
        """Seconds this flow has spent paused so far."""
        with self._cond:
            total = self._paused_total
            if self._paused_since is not None:
                total += time.monotonic() - self._paused_since
            return total

    # What is in flight -----------------------------------------------------

    def set_in_flight(self, key, count):
        """``count`` nodes of ``key`` (a phase) are in flight; once none is
        while pausing, the action is paused."""
        with self._cond:
            if count:
                self._in_flight[key] = count
            else:
                self._in_flight.pop(key, None)
            drained = not self._in_flight and \
                self._current.state == action_obj.PAUSING
            if drained:
                self._stale = True
        if drained:
            self.current()

    def in_flight(self):
        with self._cond:
            return sum(self._in_flight.values())
