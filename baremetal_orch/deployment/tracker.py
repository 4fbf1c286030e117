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

"""The unique status of every node of a site deployment.

Each node has one status for the whole action: ``not_started``,
``prepared``, ``success`` or ``failure``. A node is sent to a phase only
when its status is the one that phase accepts (prepare: ``not_started``,
deploy: ``prepared``), so a node shared by several groups is never sent
twice.

When groups run side by side, *claims* make sure a node is handled by
exactly one group at a time: :meth:`NodeTracker.claim` atomically hands the
nodes that have the wanted status and are not claimed by another group to
the calling group, which releases them when it is done with them.

The tracker also remembers which ``failure`` nodes had passed prepare
(were ``prepared`` or ``success`` when they failed): they failed their
deploy, the others their prepare (what progress counts per phase).

A node is an identifier (in an action, the node's UUID, resolved at
admission). Its name, as admission saw it, is kept for what is shown:
:meth:`NodeTracker.name_of` (a node with no name given is named by its
identifier), and :meth:`NodeTracker.by_name` orders nodes by it.
"""

import threading

from baremetal_orch.common import exception
from baremetal_orch.common import statuses

NOT_STARTED = statuses.NOT_STARTED
PREPARED = statuses.PREPARED
SUCCESS = statuses.SUCCESS
FAILURE = statuses.FAILURE
STATUSES = statuses.NODE_STATUSES

#: A status as :meth:`NodeTracker.to_dict` writes it: one character.
_CODES = {NOT_STARTED: 'n', PREPARED: 'p', SUCCESS: 's', FAILURE: 'f'}
_STATUS_OF = {code: status for status, code in _CODES.items()}
#: The byte of each status's character, as :attr:`NodeTracker._codes`
#: holds it.
_BYTES = {status: ord(code) for status, code in _CODES.items()}


def _check_status(status):
    if status not in STATUSES:
        raise exception.InvalidParameterValue(
            reason='unknown node status %r (expected one of %s)'
            % (status, ', '.join(STATUSES)))


class NodeTracker:
    """Thread-safe status and claims of the nodes of one action."""

    def __init__(self, all_nodes, statuses=None, names=None):
        """Track ``all_nodes``, all ``not_started`` unless given.

        :param statuses: optional ``{node: status}`` initial statuses; the
            nodes it lists are tracked too.
        :param names: optional ``{node: name}``, the names shown.
        """
        self._names = dict(names or {})
        self._lock = threading.Lock()
        self._status = dict.fromkeys(all_nodes, NOT_STARTED)
        for node, status in (statuses or {}).items():
            _check_status(status)
            self._status[node] = status
        self._claims = {}
        self._failed_after_prepare = set()
        #: The nodes in the order :meth:`to_dict` writes them (sorted).
        self._order = sorted(self._status)
        self._position = {node: i for i, node in enumerate(self._order)}
        #: The statuses as :meth:`to_dict` writes them, one byte a node in
        #: that order, kept by :meth:`mark`: a checkpoint copies them
        #: instead of looking up every node (about a millisecond at
        #: 10,000 nodes, at every checkpoint).
        self._codes = bytearray(_BYTES[self._status[node]]
                                for node in self._order)

    def _known(self, node):
        if node not in self._status:
            raise exception.NodeNotFound(node=node)

    def name_of(self, node):
        """The name ``node`` is shown by."""
        return self._names.get(node, node)

    def names(self):
        """A copy of ``{node: name}`` for the nodes given a name."""
        return dict(self._names)

    def by_name(self, nodes):
        """``nodes`` without duplicates, ordered by name."""
        return sorted(set(nodes), key=lambda n: (self.name_of(n), n))

    def claim(self, group, nodes, valid_status):
        """Claim for ``group`` the ``nodes`` it may handle now.

        :returns: the nodes (in the order given, without duplicates) whose
            status is ``valid_status`` and that no other group claims; they
            are now claimed by ``group``. Nodes this group already claims
            are returned again, so a retried step gets the same nodes.
        """
        _check_status(valid_status)
        taken = []
        with self._lock:
            for node in dict.fromkeys(nodes):
                self._known(node)
                if self._status[node] != valid_status:
                    continue
                owner = self._claims.get(node)
                if owner is None or owner == group:
                    self._claims[node] = group
                    taken.append(node)
        return taken

    def release(self, group, nodes=None):
        """Release the claims ``group`` holds on ``nodes`` (None: all)."""
        with self._lock:
            if nodes is None:
                nodes = list(self._claims)
            for node in nodes:
                if self._claims.get(node) == group:
                    del self._claims[node]

    def claimed_by(self, group):
        """The nodes claimed by ``group``, sorted."""
        with self._lock:
            return sorted(n for n, g in self._claims.items() if g == group)

    def owner(self, node):
        """The group claiming ``node``, or None."""
        with self._lock:
            self._known(node)
            return self._claims.get(node)

    def claims(self):
        """A copy of ``{node: group}`` for every claimed node."""
        with self._lock:
            return dict(self._claims)

    def mark(self, node, status):
        """Set the status of ``node``."""
        _check_status(status)
        with self._lock:
            self._known(node)
            before = self._status[node]
            self._status[node] = status
            self._codes[self._position[node]] = _BYTES[status]
            if status != FAILURE:
                self._failed_after_prepare.discard(node)
            elif before in (PREPARED, SUCCESS):
                self._failed_after_prepare.add(node)

    def failed_after_prepare(self):
        """The ``failure`` nodes that had passed prepare, sorted."""
        with self._lock:
            return sorted(self._failed_after_prepare)

    def status(self, node):
        """The status of ``node``."""
        with self._lock:
            self._known(node)
            return self._status[node]

    def statuses(self):
        """A copy of ``{node: status}`` for every node."""
        with self._lock:
            return dict(self._status)

    def to_dict(self):
        """A JSON-serializable snapshot, a few bytes a node however large
        the site: the statuses as one character a node, in the order of
        the sorted nodes; the claims (``{group: [position]}``) and the
        failures after prepare as positions in that order. The names,
        which do not change, are not in it."""
        with self._lock:
            claims = {}
            for node, group in self._claims.items():
                claims.setdefault(group, []).append(self._position[node])
            return {'statuses': self._codes.decode('ascii'),
                    'claims': {g: sorted(p) for g, p in claims.items()},
                    'failed_after_prepare': sorted(
                        self._position[n] for n in self._failed_after_prepare)}

    @classmethod
    def from_dict(cls, data, names):
        """Rebuild a tracker from :meth:`to_dict` output and the names
        (``{node: name}``) of EVERY node it tracked."""
        order = sorted(names)
        codes = data['statuses']
        if len(codes) != len(order) or not set(codes) <= set(_STATUS_OF):
            raise exception.InvalidParameterValue(
                reason='node statuses of %d nodes do not fit the %d nodes '
                       'of the action' % (len(codes), len(order)))
        tracker = cls(order, statuses={
            node: _STATUS_OF[code] for node, code in zip(order, codes)},
            names=names)
        try:
            for group, positions in data['claims'].items():
                for i in positions:
                    tracker._claims[order[i]] = group
            tracker._failed_after_prepare.update(
                order[i] for i in data['failed_after_prepare'])
        except IndexError:
            raise exception.InvalidParameterValue(
                reason='a claim or a failure names a node the action does '
                       'not have')
        return tracker
