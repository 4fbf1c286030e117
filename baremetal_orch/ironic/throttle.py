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
"""A queue in front of Ironic's concurrency limits.

Ironic refuses a provision request with a 503 ("The concurrent action
limit for provisioning has been reached") once ``[conductor]
max_concurrent_deploy`` nodes deploy (``max_concurrent_clean`` for
cleaning); it never queues. A refused node is not a failed node: it waits
here for a slot and asks again.

:class:`Window` keeps, per Ironic endpoint and kind of work, how many
provision requests this process may have in flight (a request is in
flight from the moment it is sent until the node's wait ends). The window
follows Ironic's answers:

* before the first refusal, each accepted request adds a slot (slow
  start);
* a refusal sets the window to the requests Ironic has just shown it
  holds for this process (the ones still in flight, never fewer than
  one): the limit last met. No request is sent for a hold-off
  (:data:`FIRST_HOLD`, doubling up to :data:`MAX_HOLD`) unless one of
  this process's own requests ends first: then Ironic has a free slot
  for sure;
* with the window full and requests queued, one request beyond it (a
  probe) goes once the hold-off is over. Accepted, the window takes its
  slot and the next probe may go at once, so a conductor takes up the
  slots another conductor (or another client of Ironic) gave back
  within the longest hold-off, not one slot per window of deploys;
  refused, the hold-off doubles;
* ``cap`` (``[ironic]max_concurrent_provisioning``) bounds it; no probe
  goes past it.

One conductor alone keeps Ironic full with at most one refused probe per
hold-off. Conductors sharing an Ironic each hold what Ironic accepted
from them and probe as slowly, so they converge without a storm of 503s,
and whichever still has nodes queued takes over the slots the others
leave.

The waiting nodes form a FIFO queue; a refused node goes back to its head.
The module is pure: time comes from the ``clock`` given.
"""

import collections
import math
import threading
import time

#: The window before the first refusal, without a cap.
INITIAL = 4.0
#: The first hold-off after a refusal, in seconds; it doubles up to the
#: longest, :data:`HOLD_SHARE` of how long Ironic's work lasts, between
#: :data:`FIRST_HOLD` and :data:`MAX_HOLD` (:data:`START_MAX_HOLD` before
#: any work ended). With Ironic full, a conductor with queued requests
#: sends at most one refused probe per longest hold-off, and takes up a
#: slot freed elsewhere at most that late: a few percent of a deploy.
FIRST_HOLD = 0.5
HOLD_SHARE = 1.0 / 8
START_MAX_HOLD = 1.0
MAX_HOLD = 60.0
#: The weight of the newest duration in the mean of how long work lasts.
LASTING_WEIGHT = 0.2

#: Kinds of work Ironic limits separately.
DEPLOY = 'deploy'
CLEAN = 'clean'
#: Provision targets, by the Ironic limit they count against
#: (``max_concurrent_deploy`` or ``max_concurrent_clean``).
KINDS = {'active': DEPLOY, 'rebuild': DEPLOY,
         'provide': CLEAN, 'deleted': CLEAN, 'clean': CLEAN}


class Window:
    """The provision requests one process may have in flight at one
    Ironic, for one kind of work. Not thread-safe: :class:`Throttle`
    holds the lock.

    :param cap: the most requests in flight; None for no bound.
    :param clock: a monotonic clock.
    """

    def __init__(self, cap=None, clock=time.monotonic):
        self.cap = cap
        self._clock = clock
        self.size = float(min(INITIAL, cap) if cap else INITIAL)
        self.in_flight = 0
        #: The most requests ever in flight (tests, benchmarks).
        self.peak = 0
        self.refusals = 0
        self.slow_start = True
        self._hold = FIRST_HOLD
        self._hold_until = None
        # When the next probe may go (None: at once); whether one is out.
        self._probe_at = None
        self._probing = False
        #: How long accepted work lasts in Ironic (a moving mean, in
        #: seconds; None until some ended).
        self.lasting = None

    def max_hold(self):
        """The longest hold-off: a share of how long work lasts."""
        if self.lasting is None:
            return START_MAX_HOLD
        return min(MAX_HOLD, max(FIRST_HOLD, self.lasting * HOLD_SHARE))

    def limit(self):
        """The requests allowed in flight now, without a probe."""
        limit = max(1, math.floor(self.size))
        return min(limit, self.cap) if self.cap else limit

    def held(self):
        """Seconds left of the hold-off after a refusal (0: none)."""
        if self._hold_until is None:
            return 0.0
        return max(0.0, self._hold_until - self._clock())

    def _may_probe(self):
        return not (self.slow_start or self._probing or
                    (self.cap and self.in_flight >= self.cap))

    def can_send(self):
        """Whether a request may go now: within the window, or as the
        one probe past it."""
        if self.held():
            return False
        if self.in_flight < self.limit():
            return True
        return self._may_probe() and (self._probe_at is None or
                                      self._clock() >= self._probe_at)

    def wait_time(self):
        """Seconds until time alone may let a request go (None: only an
        answer or a release can)."""
        held = self.held()
        if held:
            return held
        if (self.in_flight >= self.limit() and self._may_probe() and
                self._probe_at is not None):
            return max(0.0, self._probe_at - self._clock())
        return None

    def sent(self):
        """A request leaves: it holds a slot.

        :returns: whether it is a probe (past the window).
        """
        probe = self.in_flight >= self.limit()
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        self._probing = self._probing or probe
        return probe

    def accepted(self, probe=False):
        """Ironic accepted a request (its slot stays taken)."""
        if self.slow_start:
            self.size += 1.0
        if probe:
            # Ironic had room: the window takes the slot and the next
            # probe may go at once.
            self.size = max(self.size, float(self.in_flight))
            self._probing = False
            self._probe_at = None
        if self.cap:
            self.size = min(self.size, float(self.cap))
        if self.slow_start or probe:
            self._hold = FIRST_HOLD
        self._hold_until = None

    def refused(self, probe=False):
        """Ironic refused a request with its concurrency limit: the
        request gives its slot back."""
        self.in_flight -= 1
        self.refusals += 1
        self.slow_start = False
        self.size = max(1.0, min(self.size, float(self.in_flight)))
        self._hold_until = self._probe_at = self._clock() + self._hold
        self._hold = min(self.max_hold(), self._hold * 2)
        if probe:
            self._probing = False

    def released(self, freed=True, probe=False, lasted=None):
        """A request's work ended (or the request failed otherwise).

        :param freed: whether Ironic had accepted it (its end frees a
            slot in Ironic, which lifts the hold-off).
        :param probe: a probe that got no answer of Ironic's.
        :param lasted: seconds from Ironic's acceptance to the end.
        """
        self.in_flight -= 1
        if freed:
            self._hold_until = None
        if probe:
            self._probing = False
        if lasted is not None:
            self.lasting = lasted if self.lasting is None else (
                LASTING_WEIGHT * lasted +
                (1 - LASTING_WEIGHT) * self.lasting)


class Slot:
    """A place in flight, given by :meth:`Throttle.acquire`."""

    def __init__(self, throttle, queued, probe=False):
        self._throttle = throttle
        #: Seconds the request waited in the queue.
        self.queued = queued
        #: Whether it went past the window, as a probe.
        self.probe = probe
        self.accepted = False
        self.done = False
        self._accepted_at = None

    def accept(self):
        """Ironic accepted the request."""
        if not self.accepted:
            self.accepted = True
            self._accepted_at = self._throttle._clock()
            self._throttle._accepted(self.probe)

    def refuse(self):
        """Ironic refused the request for its limit: back in the queue
        (at its head) with :meth:`Throttle.acquire` again."""
        self.done = True
        self._throttle._refused(self.probe)

    def release(self):
        """The request's work ended; idempotent."""
        if not self.done:
            self.done = True
            lasted = None
            if self.accepted:
                lasted = self._throttle._clock() - self._accepted_at
            self._throttle._released(
                self.accepted, self.probe and not self.accepted, lasted)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


class Throttle:
    """A FIFO queue of requests in front of one :class:`Window`.

    :param cap: see :class:`Window`.
    :param clock: a monotonic clock; ``wait(cond, timeout)`` how a waiter
        sleeps (a fake one in tests).
    """

    def __init__(self, cap=None, clock=time.monotonic):
        self.window = Window(cap, clock)
        self._clock = clock
        self._cond = threading.Condition()
        self._queue = collections.deque()

    def set_cap(self, cap):
        with self._cond:
            if cap != self.window.cap:
                self.window.cap = cap
                if cap:
                    self.window.size = min(self.window.size, float(cap))
                self._cond.notify_all()

    def acquire(self, again=False):
        """Wait for a slot; return a :class:`Slot`.

        :param again: the request was refused: it goes to the head of
            the queue.
        """
        start = self._clock()
        ticket = object()
        with self._cond:
            if again:
                self._queue.appendleft(ticket)
            else:
                self._queue.append(ticket)
            try:
                while not (self._queue[0] is ticket and
                           self.window.can_send()):
                    self._cond.wait(self.window.wait_time())
                self._queue.popleft()
                probe = self.window.sent()
                # The next in the queue may fit too.
                self._cond.notify_all()
            except BaseException:
                self._queue.remove(ticket)
                self._cond.notify_all()
                raise
        return Slot(self, self._clock() - start, probe)

    def _accepted(self, probe):
        with self._cond:
            self.window.accepted(probe)
            self._cond.notify_all()

    def _refused(self, probe):
        with self._cond:
            self.window.refused(probe)
            self._cond.notify_all()

    def _released(self, freed, probe, lasted):
        with self._cond:
            self.window.released(freed, probe, lasted)
            self._cond.notify_all()

    def stats(self):
        """``{"window", "in_flight", "peak", "refusals", "queued"}``."""
        with self._cond:
            return {'window': self.window.size,
                    'in_flight': self.window.in_flight,
                    'peak': self.window.peak,
                    'refusals': self.window.refusals,
                    'queued': len(self._queue)}


_THROTTLES = {}
_LOCK = threading.Lock()


def throttle_for(endpoint, kind, cap=None):
    """The one :class:`Throttle` of this process for ``endpoint`` and
    ``kind`` (:data:`DEPLOY`, :data:`CLEAN`), its cap set to ``cap``."""
    with _LOCK:
        throttle = _THROTTLES.get((endpoint, kind))
        if throttle is None:
            throttle = _THROTTLES[(endpoint, kind)] = Throttle(cap)
    throttle.set_cap(cap)
    return throttle


def reset():
    """Forget every throttle (tests)."""
    with _LOCK:
        _THROTTLES.clear()
