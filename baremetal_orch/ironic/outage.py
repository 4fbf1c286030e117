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
whatever the number of requests that failed in between.
"""

import threading
import time

from oslo_log import log

LOG = log.getLogger(__name__)

#: The first delay before a request is sent again, in seconds.
FIRST_DELAY = 0.5
#: The longest delay between two tries.
MAX_DELAY = 5.0


def backoff(attempt, first=FIRST_DELAY, most=MAX_DELAY):
    """The delay before try ``attempt`` + 1 (``attempt`` >= 1)."""
    return min(most, first * 2 ** max(0, attempt - 1))


class Outage:
    """Whether an Ironic endpoint answers, as this process saw it last.

    :param name: how to name the endpoint in the log.
    :param clock: a monotonic clock.
    """

    def __init__(self, name, clock=time.monotonic):
        self.name = name
        self._clock = clock
        self._lock = threading.Lock()
        #: When the current outage started (None while Ironic answers).
        self.since = None
        #: Outages seen (tests, benchmarks).
        self.count = 0

    def failed(self, error):
        """A request got no answer; log the start of an outage once."""
        with self._lock:
            if self.since is not None:
                return
            self.since = self._clock()
            self.count += 1
        LOG.warning('Ironic at %(name)s does not answer (%(error)s): '
                    'requests are sent again until it does, for up to '
                    '[ironic]outage_tolerance seconds each',
                    {'name': self.name, 'error': error})

    def answered(self):
        """Ironic answered a request; log the end of an outage once."""
        with self._lock:
            since, self.since = self.since, None
        if since is not None:
            LOG.warning('Ironic at %(name)s answers again after %(secs).1f '
                        's', {'name': self.name,
                              'secs': self._clock() - since})


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
