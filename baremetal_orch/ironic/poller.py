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
"""One listing of the shard answers every node waited on.

A conductor deploying a group waits for many Ironic nodes at once. Asked
one by one, Ironic answers a GET per node and per poll; a group of a
hundred nodes polled every second is a hundred requests a second, and
Ironic's API becomes the bottleneck. :class:`StatePoller` serves every
waiting thread from one scoped listing per poll (``GET /v1/nodes?fields=
...&shard=...``, pages of 1,000) whenever that is cheaper:
:func:`use_listing` decides from the number of nodes waited on and the
size of the shard (one listed node costs Ironic about
:data:`LISTED_PER_GET`-th of a GET of one node).

No thread of its own: the first waiter that needs a poll newer than its
last look sends it (the leader); the others wait for its result. A poll
is new for a waiter when it started after the waiter's previous look, so
each waiter sees every state at most ``[ironic]poll_interval`` late, as
with its own GETs, and Ironic gets one listing per interval.

A node missing from the listing (moved out of the shard, deleted) is
fetched alone, which raises what a GET of it raises. A listing that failed
because Ironic did not answer (the client rode the outage out for
``[ironic]outage_tolerance`` seconds already) fails every waiter of that
poll with its error, rather than sending a GET per node to an Ironic that
does not answer; a listing Ironic refused falls back to the GETs.
"""

import threading
import time

from oslo_log import log

LOG = log.getLogger(__name__)

#: The fields a wait needs (the listing asks only for these).
FIELDS = ('uuid', 'provision_state', 'target_provision_state', 'last_error',
          'maintenance', 'reservation')
#: Listed nodes that cost Ironic about as much as one GET of a node
#: (``tools/benchmarks/ironic_poll_cost.py``, Ironic from PyPI on MariaDB,
#: 1,000 nodes, 2026-11-24: a GET 8.4 ms, a listing of all 1,000 nodes
#: 208 ms, of a 250-node shard 54 ms; 39 listed nodes a GET, median of 5
#: interleaved pairs, 27 to 48).
LISTED_PER_GET = 40
#: Below this many nodes waited on, single GETs are used whatever the
#: shard's size.
MIN_WAITING = 4


def use_listing(waiting, shard_size, listed_per_get=LISTED_PER_GET,
                min_waiting=MIN_WAITING):
    """Whether one listing of the shard is cheaper than a GET per node.

    :param waiting: nodes waited on now.
    :param shard_size: nodes of the last listing, None before the first.
    :returns: True for a listing.
    """
    if waiting < min_waiting:
        return False
    if shard_size is None:
        return True
    return waiting * listed_per_get >= shard_size


class _Poll:
    """One listing: when it started (monotonic; None while it waits for
    its turn) and, once done, its nodes."""

    def __init__(self):
        self.started = None
        self.done = False
        self.nodes = None     # uuid -> node dict; None when it failed
        self.error = None     # the outage that failed it

    def newer_than(self, since):
        # A poll not started yet will start after ``since``.
        return self.started is None or self.started > since


class StatePoller:
    """Serve node states to waiting threads from shared listings.

    :param list_nodes: ``list_nodes(fields)`` -> the scoped node dicts.
    :param get_node: ``get_node(uuid, fields)`` -> one node dict.
    :param spacing: the fewest seconds between the starts of two
        listings (new waiters arriving one after another share one).
    :param clock: a monotonic clock; ``sleep`` its sleep.
    """

    def __init__(self, list_nodes, get_node, spacing=0.0,
                 clock=time.monotonic, sleep=time.sleep):
        self._list_nodes = list_nodes
        self._get_node = get_node
        self._spacing = spacing
        self._clock = clock
        self._sleep = sleep
        self._cond = threading.Condition()
        self._waiting = {}        # uuid -> number of waiters
        self._last = None         # the newest finished _Poll
        self._running = None      # the _Poll in progress
        self._shard_size = None
        #: Requests sent: ``{"list": n, "get": n}`` (tests, debugging).
        self.requests = {'list': 0, 'get': 0}

    # --- who waits ---------------------------------------------------------

    def register(self, uuid):
        with self._cond:
            self._waiting[uuid] = self._waiting.get(uuid, 0) + 1

    def unregister(self, uuid):
        with self._cond:
            left = self._waiting.get(uuid, 0) - 1
            if left > 0:
                self._waiting[uuid] = left
            else:
                self._waiting.pop(uuid, None)

    # --- polls -------------------------------------------------------------

    def node(self, uuid, since=None, get=None):
        """The node as seen by a poll started after ``since``.

        :param since: the value returned by the caller's previous call
            (None for the first: a poll started after this call).
        :param get: ``get(uuid)`` for a node fetched alone (default: a GET
            of :data:`FIELDS`).
        :returns: ``(node dict, since)``; pass ``since`` to the next call.
        """
        now = self._clock()
        since = now if since is None else since
        with self._cond:
            listing = use_listing(len(self._waiting), self._shard_size)
        if listing:
            poll = self._shared_poll(since)
            if poll.error is not None:
                raise poll.error
            if poll.nodes is not None and uuid in poll.nodes:
                return poll.nodes[uuid], poll.started
        # Few nodes waited on; or this one is not in the shard's listing
        # (moved, deleted), or the listing failed: this node alone, with
        # what a GET of it raises.
        now = self._clock()
        with self._cond:
            self.requests['get'] += 1
        if get is not None:
            return get(uuid), now
        return self._get_node(uuid, fields=list(FIELDS)), now

    def _shared_poll(self, since):
        """A finished poll started after ``since``: the newest one, the
        one under way, or one this thread sends now."""
        with self._cond:
            while True:
                last, running = self._last, self._running
                if last is not None and last.started > since:
                    return last
                if running is None:
                    break
                joined = running.newer_than(since)
                while not running.done:
                    self._cond.wait()
                if joined:
                    return running
                # It started before the caller's last look: look again.
            poll = self._running = _Poll()
            self.requests['list'] += 1
            wait = 0.0
            if last is not None:
                wait = last.started + self._spacing - self._clock()
        if wait > 0:
            self._sleep(wait)
        poll.started = self._clock()
        try:
            nodes = self._list_nodes(fields=list(FIELDS))
            poll.nodes = {n['uuid']: n for n in nodes}
        except Exception as exc:
            if getattr(exc, 'outage', False):
                poll.error = exc
            else:
                LOG.warning('Listing the shard\'s nodes failed (%s): each '
                            'node is fetched alone this time', exc)
        with self._cond:
            poll.done = True
            self._running = None
            if poll.nodes is not None:
                self._last = poll
                self._shard_size = len(poll.nodes)
            self._cond.notify_all()
        return poll
