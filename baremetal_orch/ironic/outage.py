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
"""Riding out an Ironic that does not answer for a while.

An Ironic API restarting behind a load balancer, a conductor restarting,
a listen backlog overflowing under a burst: each looks, from here, like
refused or reset connections, timeouts, or a 5xx from a proxy, while
Ironic itself goes on working. None of them is Ironic's word on a node,
so none fails a node: the request is sent again with a growing delay
(:func:`backoff`) for up to ``[ironic]outage_tolerance`` seconds,
counted per request (so per node and per poll).

:class:`Outage` is the one record per Ironic endpoint of this process: it
logs one line when Ironic stops answering and one when it answers again,
whatever the number of requests that failed in between, and tells the
same to whoever watches the endpoint (:meth:`Outage.watch`): the node
work of an action, which records it as events on the action.
"""

import contextlib
import threading
import time

from oslo_log import log
from oslo_utils import timeutils

LOG = log.getLogger(__name__)

#: The first delay before a request is sent again, in seconds.
FIRST_DELAY = 0.5
#: The longest delay between two tries.
MAX_DELAY = 5.0
#: What a watcher is told (:meth:`Outage.watch`).
STARTED = 'started'
ENDED = 'ended'


def backoff(attempt, first=FIRST_DELAY, most=MAX_DELAY):
    """The delay before try ``attempt`` + 1 (``attempt`` >= 1)."""
    return min(most, first * 2 ** max(0, attempt - 1))


class _Watcher:
    """One key watching an endpoint: its nodes in flight (over all its
    registrations) and how to tell it."""

    def __init__(self, tell):
        self.tell = tell
        self.nodes = 0
        self.registrations = 0


class Outage:
    """Whether an Ironic endpoint answers, as this process saw it last.

    Watchers (:meth:`watch`) are told once per outage: ``tell(STARTED,
    details)`` when it starts (or when they start watching during one),
    and ``tell(ENDED, details)`` when it ends, also those that stopped
    watching meanwhile, so that each start has its end.

    :param name: how to name the endpoint in the log.
    :param clock: a monotonic clock.
    """

    def __init__(self, name, clock=time.monotonic):
        self.name = name
        self._clock = clock
        self._lock = threading.Lock()
        # Held while watchers are told, so that they hear a start before
        # its end; taken before _lock, never inside it.
        self._telling = threading.Lock()
        #: When the current outage started (None while Ironic answers).
        self.since = None
        #: Outages seen (tests, benchmarks).
        self.count = 0
        self._started_at = self._error = None
        #: ``{key: _Watcher}`` of the keys watching now.
        self._watchers = {}
        #: ``{key: _Watcher}`` told of the current outage's start.
        self._told = {}

    def failed(self, error):
        """A request got no answer; log (and tell) the start of an outage
        once."""
        with self._telling:
            with self._lock:
                if self.since is not None:
                    return
                self.since = self._clock()
                self.count += 1
                self._started_at = timeutils.utcnow().isoformat()
                self._error = str(error)
                self._told = dict(self._watchers)
                told = self._starts(self._told)
            LOG.warning('Ironic at %(name)s does not answer (%(error)s): '
                        'requests are sent again until it does, for up to '
                        '[ironic]outage_tolerance seconds each',
                        {'name': self.name, 'error': error})
            self._tell(told)

    def answered(self):
        """Ironic answered a request; log (and tell) the end of an outage
        once."""
        if self.since is None:
            return  # the way of every request while Ironic answers
        with self._telling:
            with self._lock:
                since, self.since = self.since, None
                if since is None:
                    return
                seconds = self._clock() - since
                told, self._told = self._told, {}
                ended_at = timeutils.utcnow().isoformat()
                told = [(watcher, ENDED, {
                    'endpoint': self.name, 'started_at': self._started_at,
                    'ended_at': ended_at, 'duration': round(seconds, 1),
                    # its nodes in flight now (0 once it stopped watching)
                    'nodes': self._watchers.get(key, watcher).nodes})
                    for key, watcher in told.items()]
            LOG.warning('Ironic at %(name)s answers again after %(secs).1f '
                        's', {'name': self.name, 'secs': seconds})
            self._tell(told)

    @contextlib.contextmanager
    def watch(self, key, nodes, tell):
        """Tell ``key`` of the outages of the endpoint while ``nodes``
        (a count) of its nodes are in flight here.

        ``key`` (an action) is told once per outage, however many
        registrations it holds at once; ``tell`` is its first
        registration's.
        """
        with self._telling:
            with self._lock:
                watcher = self._watchers.setdefault(key, _Watcher(tell))
                watcher.nodes += nodes
                watcher.registrations += 1
                told = []
                if self.since is not None and key not in self._told:
                    self._told[key] = watcher
                    told = self._starts({key: watcher})
            self._tell(told)
        try:
            yield
        finally:
            with self._lock:
                watcher.nodes -= nodes
                watcher.registrations -= 1
                if not watcher.registrations:
                    self._watchers.pop(key, None)

    def _starts(self, watchers):
        """What to tell ``watchers`` of the current outage's start (under
        the lock)."""
        return [(watcher, STARTED, {
            'endpoint': self.name, 'error': self._error,
            'started_at': self._started_at, 'nodes': watcher.nodes})
            for watcher in watchers.values()]

    def _tell(self, told):
        for watcher, kind, details in told:
            try:
                watcher.tell(kind, details)
            except Exception:
                # A watcher's failure never fails a request to Ironic.
                LOG.exception('Could not tell of the outage of Ironic at '
                              '%s', self.name)


_OUTAGES = {}
_LOCK = threading.Lock()


def outage_for(endpoint, clock=time.monotonic):
    """The one :class:`Outage` of this process for ``endpoint`` (made
    with ``clock`` by its first caller)."""
    with _LOCK:
        outage = _OUTAGES.get(endpoint)
        if outage is None:
            outage = _OUTAGES[endpoint] = Outage(endpoint, clock)
        return outage


def reset():
    """Forget every endpoint's record (tests)."""
    with _LOCK:
        _OUTAGES.clear()
