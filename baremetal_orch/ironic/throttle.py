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
follows Ironic's answers, as TCP's congestion window follows losses:

* an accepted request adds ``1 / window`` (one more slot per window of
  acceptances), or a whole slot before the first refusal (slow start);
* a refusal halves the window, never below the requests Ironic has just
  shown it holds (the ones in flight), and never below one;
* after a refusal, no request is sent for a hold-off (doubling up to
  :data:`MAX_HOLD` seconds) unless one of this process's own requests
  ends first: then Ironic has a free slot for sure;
* ``cap`` (``[ironic]max_concurrent_provisioning``) bounds it.

One conductor alone keeps Ironic full with about one refusal per window
of deploys (its probe for a larger limit). Conductors sharing an Ironic
each hold what Ironic accepted from them and probe as slowly, so they
converge without a storm of 503s.

The waiting nodes form a FIFO queue; a refused node goes back to its head.
The module is pure: time comes from the ``clock`` given.
"""

import collections
import math
import threading
import time

#: The window before the first refusal, without a cap.
INITIAL = 4.0
#: The first hold-off after a refusal, in seconds; it doubles.
FIRST_HOLD = 0.5
#: The longest hold-off.
MAX_HOLD = 8.0
#: The multiplicative decrease.
DECREASE = 0.5

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

    def limit(self):
        """The requests allowed in flight now."""
        limit = max(1, math.floor(self.size))
        return min(limit, self.cap) if self.cap else limit

    def held(self):
        """Seconds left of the hold-off after a refusal (0: none)."""
        if self._hold_until is None:
            return 0.0
        return max(0.0, self._hold_until - self._clock())

    def can_send(self):
        return self.in_flight < self.limit() and not self.held()

    def sent(self):
        """A request leaves: it holds a slot."""
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def accepted(self):
        """Ironic accepted a request (its slot stays taken)."""
        self.size += 1.0 if self.slow_start else 1.0 / self.size
        if self.cap:
            self.size = min(self.size, float(self.cap))
        self._hold = FIRST_HOLD
        self._hold_until = None

    def refused(self):
        """Ironic refused a request with its concurrency limit: the
        request gives its slot back."""
        self.in_flight -= 1
        self.refusals += 1
        self.slow_start = False
        self.size = max(1.0, float(self.in_flight), self.size * DECREASE)
        self._hold_until = self._clock() + self._hold
        self._hold = min(MAX_HOLD, self._hold * 2)

    def released(self, freed=True):
        """A request's work ended (or the request failed otherwise).

        :param freed: whether Ironic had accepted it (its end frees a
            slot in Ironic, which lifts the hold-off).
        """
        self.in_flight -= 1
        if freed:
            self._hold_until = None


class Slot:
    """A place in flight, given by :meth:`Throttle.acquire`."""

    def __init__(self, throttle, queued):
        self._throttle = throttle
        #: Seconds the request waited in the queue.
        self.queued = queued
        self.accepted = False
        self.done = False

    def accept(self):
        """Ironic accepted the request."""
        if not self.accepted:
            self.accepted = True
            self._throttle._accepted()

    def refuse(self):
        """Ironic refused the request for its limit: back in the queue
        (at its head) with :meth:`Throttle.acquire` again."""
        self.done = True
        self._throttle._refused()

    def release(self):
        """The request's work ended; idempotent."""
        if not self.done:
            self.done = True
            self._throttle._released(self.accepted)

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
                    held = self.window.held()
                    self._cond.wait(held if held else None)
                self._queue.popleft()
                self.window.sent()
                # The next in the queue may fit too.
                self._cond.notify_all()
            except BaseException:
                self._queue.remove(ticket)
                self._cond.notify_all()
                raise
        return Slot(self, self._clock() - start)

    def _accepted(self):
        with self._cond:
            self.window.accepted()
            self._cond.notify_all()

    def _refused(self):
        with self._cond:
            self.window.refused()
            self._cond.notify_all()

    def _released(self, freed):
        with self._cond:
            self.window.released(freed)
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
