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

"""Progress and ETA of a site deployment, free of I/O
(doc/source/admin/steering.rst, "Progress and ETA").

:class:`Durations` keeps the durations the action measured (seconds a
node's prepare or deploy took, per group and phase); the runtime records
one per node that ended and the :class:`~.site.SiteDeployment` persists
them. :func:`phase_counts` counts the nodes of each phase, :func:`eta`
estimates the seconds left, :func:`summary` gives the action's
``progress`` document::

    {"phases": {"prepare": {"done": N, "failed": N, "in_flight": N,
                            "pending": N},
                "deploy": {...}},
     "eta": <seconds> | None}
"""

import math
import statistics
import threading

from baremetal_orch.common import exception
from baremetal_orch.deployment import groups
from baremetal_orch.deployment import tracker as tracker_mod

PHASES = (groups.PREPARE, groups.DEPLOY)
#: Durations kept per group and phase: the median of the last ones.
KEEP = 50

_ENDED = (groups.SUCCESS, groups.FAILED)


def _check_phase(phase):
    if phase not in PHASES:
        raise exception.InvalidParameterValue(
            reason='unknown phase %r (expected one of %s)'
            % (phase, ', '.join(PHASES)))


class Durations:
    """The node durations of one action, per group and phase.

    Bounded: the last :data:`KEEP` of each group and phase are kept, so
    the medians follow the recent pace of a long action. Thread-safe.
    """

    def __init__(self, keep=KEEP):
        self._keep = keep
        self._samples = {}
        self._lock = threading.Lock()

    def record(self, group, phase, seconds):
        """Record that one node of ``group`` took ``seconds`` in ``phase``
        (negative clock steps count as 0)."""
        _check_phase(phase)
        seconds = float(seconds)
        if not math.isfinite(seconds):
            raise exception.InvalidParameterValue(
                reason='a duration is a finite number of seconds, not %r'
                % seconds)
        with self._lock:
            kept = self._samples.setdefault(group, {}).setdefault(phase, [])
            kept.append(max(seconds, 0.0))
            del kept[:-self._keep]

    def __bool__(self):
        with self._lock:
            return any(kept for by_phase in self._samples.values()
                       for kept in by_phase.values())

    def median(self, group, phase):
        """The median duration of ``phase`` for ``group``.

        A group without a measurement of its own in the phase takes the
        median over all groups of that phase, then over everything
        measured; None when nothing was measured.
        """
        _check_phase(phase)
        with self._lock:
            own = self._samples.get(group, {}).get(phase)
            if own:
                return statistics.median(own)
            pooled = [s for by_phase in self._samples.values()
                      for s in by_phase.get(phase, ())]
            if not pooled:
                pooled = [s for by_phase in self._samples.values()
                          for kept in by_phase.values() for s in kept]
            return statistics.median(pooled) if pooled else None

    def to_dict(self):
        """``{group: {phase: [milliseconds, ...]}}``, JSON-serializable:
        whole milliseconds, a few bytes each (the checkpoints of a running
        action write them, and at full precision they were most of what
        a checkpoint wrote, and of its CPU: 18 characters a float)."""
        with self._lock:
            return {g: {p: [round(s * 1000) for s in kept]
                        for p, kept in by_phase.items()}
                    for g, by_phase in self._samples.items()}

    @classmethod
    def from_dict(cls, data, keep=KEEP):
        """Rebuild from :meth:`to_dict` output (None: nothing measured)."""
        durations = cls(keep)
        for group, by_phase in (data or {}).items():
            for phase, kept in by_phase.items():
                for milliseconds in kept:
                    durations.record(group, phase, milliseconds / 1000)
        return durations


def _claimed_in_flight(site, statuses, claims):
    """Nodes claimed by a running group in the phase that takes their
    status (prepare: ``not_started``, deploy: ``prepared``)."""
    found = set()
    for name, group in claims.items():
        state = site.group_status(group)
        if state['status'] != groups.RUNNING:
            continue
        wanted = (tracker_mod.NOT_STARTED if state['phase'] == groups.PREPARE
                  else tracker_mod.PREPARED)
        if statuses.get(name) == wanted:
            found.add(name)
    return found


def phase_counts(site, in_flight=None, ended=None):
    """``{"prepare": {...}, "deploy": {...}}``, each ``{"done", "failed",
    "in_flight", "pending"}``, over the unique nodes of ``site``.

    :param site: a :class:`~.site.SiteDeployment`.
    :param in_flight: names of the nodes handed to a driver now (the
        runtime knows them). None: the nodes claimed by a running group in
        the phase that takes their status (with a group's claims taken at
        once, more than run at a time).

    prepare, over every node:

    * done: ``prepared`` or ``success``, or ``failure`` after it had been
      prepared (it failed its deploy);
    * failed: ``failure`` before it was prepared;
    * in_flight: ``not_started`` and in flight;
    * pending: the other ``not_started`` nodes (also those of groups that
      will not run: they are ``not_started`` in the report too).

    deploy, over every node but those that failed prepare:

    * done: ``success``;
    * failed: ``failure`` after it had been prepared;
    * in_flight: ``prepared`` and in flight;
    * pending: the other ``prepared`` nodes, and the ``not_started`` ones.

    :param ended: ``{phase: {name: ok}}``, the nodes that ended in a
        running phase, which the site records only when the phase ends:
        counted as done or failed already.
    """
    statuses = site.tracker.statuses()
    after = set(site.tracker.failed_after_prepare())
    if in_flight is None:
        in_flight = _claimed_in_flight(site, statuses,
                                       site.tracker.claims())
    in_flight = set(in_flight)
    prepare = dict.fromkeys(('done', 'failed', 'in_flight', 'pending'), 0)
    deploy = dict(prepare)
    ended = ended or {}
    prepared = ended.get(groups.PREPARE) or {}
    deployed = ended.get(groups.DEPLOY) or {}
    for name, status in statuses.items():
        flying = 'in_flight' if name in in_flight else 'pending'
        if status == tracker_mod.NOT_STARTED and name in prepared:
            if prepared[name]:
                prepare['done'] += 1
                deploy['pending'] += 1
            else:
                prepare['failed'] += 1
        elif status == tracker_mod.PREPARED and name in deployed:
            prepare['done'] += 1
            deploy['done' if deployed[name] else 'failed'] += 1
        elif status == tracker_mod.NOT_STARTED:
            prepare[flying] += 1
            deploy['pending'] += 1
        elif status == tracker_mod.PREPARED:
            prepare['done'] += 1
            deploy[flying] += 1
        elif status == tracker_mod.SUCCESS:
            prepare['done'] += 1
            deploy['done'] += 1
        elif name in after:
            prepare['done'] += 1
            deploy['failed'] += 1
        else:
            prepare['failed'] += 1
    return {groups.PREPARE: prepare, groups.DEPLOY: deploy}


def _remaining(site, topo, states):
    """``{group: (nodes to prepare, nodes to deploy)}`` of the groups that
    will still run.

    A node not yet handled is counted once, for the group that will handle
    it: the group claiming it, else the first group in the plan's order
    that will still take it (a pending group, or, for a ``not_started``
    node, one running its prepare; for a ``prepared`` node, any running
    group).
    """
    statuses = site.tracker.statuses()
    claims = site.tracker.claims()
    counts = {g: [0, 0] for g in topo}
    members = {}
    for group in topo:
        for name in site.nodes(group):
            members.setdefault(name, []).append(group)
    members = {name: tuple(groups_of) for name, groups_of in members.items()}

    def takes(group, status):
        state = states[group]
        if state['status'] == groups.PENDING:
            return True
        return state['status'] == groups.RUNNING and (
            status == tracker_mod.PREPARED
            or state['phase'] == groups.PREPARE)

    # The group that takes an unclaimed node depends only on its groups
    # and its status: found once for each such pair.
    takers = {}
    for name, status in statuses.items():
        if status not in (tracker_mod.NOT_STARTED, tracker_mod.PREPARED):
            continue
        owner = claims.get(name)
        if owner is None or owner not in counts:
            key = (members.get(name, ()), status)
            if key not in takers:
                takers[key] = next((g for g in key[0]
                                    if takes(g, status)), None)
            owner = takers[key]
        if owner is None:
            continue
        if status == tracker_mod.NOT_STARTED:
            counts[owner][0] += 1
        counts[owner][1] += 1
    return {g: tuple(c) for g, c in counts.items()}


def eta(site, max_concurrent_nodes, max_concurrent_groups=None):
    """Seconds until the action ends, estimated; None until a node's
    phase was measured (:attr:`~.site.SiteDeployment.durations`).

    Each group that will still run weighs, per phase, ``ceil(remaining /
    max_concurrent_nodes) * median`` (:meth:`Durations.median`: the
    group's own median in that phase, else that of all groups); remaining
    nodes are counted as in :func:`_remaining`, nodes in flight as whole
    ones. Groups that ended, and groups that will not run (a dependency
    failed), weigh 0. The estimate is the longest path through the
    dependencies weighted so (groups with no dependency between them run
    side by side); with ``max_concurrent_groups`` it is at least the total
    weight spread over that many group slots (with 1, the sum).
    """
    if max_concurrent_nodes < 1:
        raise exception.InvalidParameterValue(
            reason='max_concurrent_nodes must be at least 1')
    durations = site.durations
    if not durations:
        return None
    strategy = site.strategy
    topo = strategy.topological_order()
    states = {g: site.group_status(g) for g in topo}
    doomed = set()
    for group in topo:
        state = states[group]
        if state['status'] == groups.PENDING and any(
                states[d]['status'] == groups.FAILED or d in doomed
                for d in strategy.group(group).depends_on):
            doomed.add(group)
    live = [g for g in topo
            if states[g]['status'] not in _ENDED and g not in doomed]
    remaining = _remaining(site, live, states)
    weights = {}
    for group in live:
        to_prepare, to_deploy = remaining[group]
        weights[group] = (
            math.ceil(to_prepare / max_concurrent_nodes)
            * durations.median(group, groups.PREPARE)
            + math.ceil(to_deploy / max_concurrent_nodes)
            * durations.median(group, groups.DEPLOY))
    estimate = strategy.critical_path_bound(weights)
    if max_concurrent_groups:
        estimate = max(estimate,
                       sum(weights.values()) / max_concurrent_groups)
    return round(float(estimate), 1)


def summary(site, in_flight, max_concurrent_nodes,
            max_concurrent_groups=None, ended=None):
    """The action's ``progress``: ``{"phases": phase_counts(...), "eta":
    eta(...)}`` (see both)."""
    return {'phases': phase_counts(site, in_flight, ended),
            'eta': eta(site, max_concurrent_nodes, max_concurrent_groups)}
