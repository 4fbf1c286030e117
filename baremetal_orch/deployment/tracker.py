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


def _check_status(status):
    if status not in STATUSES:
        raise exception.InvalidParameterValue(
            reason='unknown node status %r (expected one of %s)'
            % (status, ', '.join(STATUSES)))


class NodeTracker:
    """Thread-safe status and claims of the nodes of one action."""

    def __init__(self, all_node_names, statuses=None, names=None):
        """Track ``all_node_names``, all ``not_started`` unless given.

        :param statuses: optional ``{name: status}`` initial statuses; names
            it lists are tracked too.
        :param names: optional ``{node: name}``, the names shown.
        """
        self._names = dict(names or {})
        self._lock = threading.Lock()
        self._status = dict.fromkeys(all_node_names, NOT_STARTED)
        for name, status in (statuses or {}).items():
            _check_status(status)
            self._status[name] = status
        self._claims = {}
        self._failed_after_prepare = set()

    def _known(self, name):
        if name not in self._status:
            raise exception.NodeNotFound(node=name)

    def name_of(self, node):
        """The name ``node`` is shown by."""
        return self._names.get(node, node)

    def names(self):
        """A copy of ``{node: name}`` for the nodes given a name."""
        return dict(self._names)

    def by_name(self, nodes):
        """``nodes`` without duplicates, ordered by name."""
        return sorted(set(nodes), key=lambda n: (self.name_of(n), n))

    def claim(self, group, names, valid_status):
        """Claim for ``group`` the ``names`` it may handle now.

        :returns: the names (in the order given, without duplicates) whose
            status is ``valid_status`` and that no other group claims; they
            are now claimed by ``group``. Names this group already claims
            are returned again, so a retried step gets the same nodes.
        """
        _check_status(valid_status)
        taken = []
        with self._lock:
            for name in dict.fromkeys(names):
                self._known(name)
                if self._status[name] != valid_status:
                    continue
                owner = self._claims.get(name)
                if owner is None or owner == group:
                    self._claims[name] = group
                    taken.append(name)
        return taken

    def release(self, group, names=None):
        """Release the claims ``group`` holds on ``names`` (None: all)."""
        with self._lock:
            if names is None:
                names = list(self._claims)
            for name in names:
                if self._claims.get(name) == group:
                    del self._claims[name]

    def claimed_by(self, group):
        """Names claimed by ``group``, sorted."""
        with self._lock:
            return sorted(n for n, g in self._claims.items() if g == group)

    def owner(self, name):
        """The group claiming ``name``, or None."""
        with self._lock:
            self._known(name)
            return self._claims.get(name)

    def claims(self):
        """A copy of ``{name: group}`` for every claimed node."""
        with self._lock:
            return dict(self._claims)

    def mark(self, name, status):
        """Set the status of ``name``."""
        _check_status(status)
        with self._lock:
            self._known(name)
            before = self._status[name]
            self._status[name] = status
            if status != FAILURE:
                self._failed_after_prepare.discard(name)
            elif before in (PREPARED, SUCCESS):
                self._failed_after_prepare.add(name)

    def failed_after_prepare(self):
        """The ``failure`` nodes that had passed prepare, sorted."""
        with self._lock:
            return sorted(self._failed_after_prepare)

    def status(self, name):
        """The status of ``name``."""
        with self._lock:
            self._known(name)
            return self._status[name]

    def statuses(self):
        """A copy of ``{name: status}`` for every node."""
        with self._lock:
            return dict(self._status)

    def to_dict(self):
        """A JSON-serializable snapshot (statuses, claims, failures after
        prepare), but the names, which do not change."""
        with self._lock:
            return {'nodes': dict(self._status),
                    'claims': dict(self._claims),
                    'failed_after_prepare': sorted(
                        self._failed_after_prepare)}

    @classmethod
    def from_dict(cls, data, names=None):
        """Rebuild a tracker from :meth:`to_dict` output and the names
        (``{node: name}``) it was given."""
        tracker = cls((), statuses=data.get('nodes') or {}, names=names)
        for name, group in (data.get('claims') or {}).items():
            tracker._known(name)
            tracker._claims[name] = group
        for name in data.get('failed_after_prepare') or ():
            tracker._known(name)
            tracker._failed_after_prepare.add(name)
        return tracker
