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

"""The decision logic of a site deployment, free of I/O.

:class:`SiteDeployment` holds the state of one ``deploy_site`` or
``update_site`` action: the status of every group and of every unique node.
An executor (the taskflow wiring, a test, a benchmark) drives it group by
group, one at a time or several side by side; every method is thread-safe.

Life of a group::

    pending --start()--> running/prepare --finish_prepare(ok)--> running/deploy
        |                      |                                      |
      skip()          finish_prepare(miss)                     finish_deploy()
        v                      v                                      v
    failed          failed (prepare_criteria_not_met)    success | failed
    (dependency_failed)                             (deploy_criteria_not_met)

and ``fail(group, 'timeout')`` from any non-final state.

Nodes (UUIDs in an action; the tracker names them):
:meth:`SiteDeployment.prepare_targets` claims the group's ``not_started`` nodes
that no other group claims (the first group to run takes a shared node);
prepared nodes stay claimed by the group that prepared them until its deploy is
over, so two groups running side by side never handle the same node.
:meth:`SiteDeployment.deploy_targets` claims the group's ``prepared`` nodes
(also those another group prepared but could not deploy, so no node is
stranded). Criteria are evaluated on the group's FULL node set, counting
earlier outcomes: for prepare a node counts when ``prepared`` or ``success``,
for deploy when ``success``; a node in flight in another group, never started,
or failed counts as not successful.
"""

import threading

from baremetal_orch.common import exception
from baremetal_orch.deployment import criteria as criteria_mod
from baremetal_orch.deployment import groups
from baremetal_orch.deployment import progress as progress_mod
from baremetal_orch.deployment import report as report_mod
from baremetal_orch.deployment import strategy as strategy_mod
from baremetal_orch.deployment import tracker as tracker_mod

_COUNTS = {groups.PREPARE: (tracker_mod.PREPARED, tracker_mod.SUCCESS),
           groups.DEPLOY: (tracker_mod.SUCCESS,)}
_DONE = {groups.PREPARE: tracker_mod.PREPARED,
         groups.DEPLOY: tracker_mod.SUCCESS}
_VALID = {groups.PREPARE: tracker_mod.NOT_STARTED,
          groups.DEPLOY: tracker_mod.PREPARED}
_FORMAT_VERSION = 5


def _conflict(group, why):
    return exception.Conflict(reason='group %s %s' % (group, why))


class SiteDeployment:
    """State and rules of one site deployment action."""

    def __init__(self, strategy, group_nodes, node_status=None,
                 retry_of=None, node_names=None):
        """Start a deployment.

        :param strategy: a parsed
            :class:`~baremetal_orch.deployment.strategy.Strategy`.
        :param group_nodes: ``{group: [nodes]}`` for EVERY group of the
            strategy (the selectors resolved against the site).
        :param node_status: optional ``{node: status}`` to start from.
        :param retry_of: the uuid of the action this one retries
            (:mod:`.retry`), kept in :meth:`report` and :meth:`to_dict`.
        :param node_names: ``{node: name}``, the names the tracker shows.
        """
        strategy.check_group_nodes(group_nodes)
        names = strategy.names()
        self.strategy = strategy
        self.retry_of = retry_of
        self._tracker = tracker_mod.NodeTracker(sorted(
            {u for g in names for u in group_nodes[g]}), node_status,
            node_names)
        self._nodes = {n: tuple(self._tracker.by_name(group_nodes[n]))
                       for n in names}
        self._topo = strategy.topological_order()
        self._groups = {n: groups.GroupState() for n in names}
        self._order = []
        #: The node durations measured (:class:`.progress.Durations`).
        self.durations = progress_mod.Durations()
        self._lock = threading.RLock()

    # Queries ---------------------------------------------------------------

    @property
    def tracker(self):
        """The :class:`~baremetal_orch.deployment.tracker.NodeTracker`."""
        return self._tracker

    def _state(self, group):
        try:
            return self._groups[group]
        except KeyError:
            raise exception.InvalidParameterValue(
                reason='unknown group %s' % group)

    def nodes(self, group):
        """The full node set of ``group``, sorted."""
        self._state(group)
        return list(self._nodes[group])

    def group_status(self, group):
        """``{"status", "phase", "reason", "misses"}`` of ``group``."""
        with self._lock:
            state = self._state(group)
            return {'status': state.status, 'phase': state.phase,
                    'reason': state.reason,
                    'misses': [m.to_dict() for m in state.misses]}

    def order(self):
        """Groups in the order they started."""
        with self._lock:
            return list(self._order)

    def can_run(self, group):
        """True when every dependency of ``group`` succeeded."""
        with self._lock:
            self._state(group)
            return all(self._groups[d].status == groups.SUCCESS
                       for d in self.strategy.group(group).depends_on)

    def dependency_failed(self, group):
        """True when a dependency of ``group`` failed."""
        with self._lock:
            self._state(group)
            return any(self._groups[d].status == groups.FAILED
                       for d in self.strategy.group(group).depends_on)

    def ready_groups(self):
        """Pending groups whose dependencies all succeeded."""
        with self._lock:
            return [g for g in self._topo
                    if self._groups[g].status == groups.PENDING
                    and self.can_run(g)]

    def is_done(self):
        """True when every group succeeded or failed."""
        with self._lock:
            return all(s.status in (groups.SUCCESS, groups.FAILED)
                       for s in self._groups.values())

    def can_still_succeed(self, group, done):
        """Whether the criteria of ``group``'s running phase can still
        hold if every node that has not failed succeeds (what a
        ``fail_fast`` group asks before it starts another node).

        :param done: ``{node: bool}``, the outcomes of the phase so far.
        """
        with self._lock:
            statuses = self._tracker.statuses()
            nodes = self._nodes[group]
            failed = sum(1 for n in nodes
                         if statuses[n] == tracker_mod.FAILURE
                         or done.get(n) is False)
            return criteria_mod.reachable(
                self.strategy.group(group).success_criteria, len(nodes),
                failed)

    def startable_groups(self, free_slots):
        """The pending groups that may take the ``free_slots`` free group
        slots now: the first ready groups in the plan's order (topological,
        ties broken by document order), so one slot takes the order of
        the dry run, and more slots that same priority."""
        if free_slots < 1:
            return []
        with self._lock:
            return self.ready_groups()[:free_slots]

    # Transitions ---------------------------------------------------------

    def skip(self, group):
        """Mark ``group`` failed because a dependency failed."""
        with self._lock:
            state = self._state(group)
            if (state.status == groups.FAILED
                    and state.reason == groups.DEPENDENCY_FAILED):
                return
            if (state.status != groups.PENDING
                    or not self.dependency_failed(group)):
                raise _conflict(group, 'cannot be skipped: it is %s and its '
                                'dependencies did not fail' % state.status)
            state.status = groups.FAILED
            state.reason = groups.DEPENDENCY_FAILED

    def skip_blocked(self):
        """Skip every group that can no longer run, transitively.

        :returns: the groups skipped, in topological order.
        """
        skipped = []
        with self._lock:
            for group in self._topo:
                if (self._groups[group].status == groups.PENDING
                        and self.dependency_failed(group)):
                    self.skip(group)
                    skipped.append(group)
        return skipped

    def start(self, group):
        """Start ``group`` (its prepare phase); idempotent while running."""
        with self._lock:
            state = self._state(group)
            if state.status == groups.RUNNING:
                return
            if state.status != groups.PENDING:
                raise _conflict(group, 'has already %s' % (
                    'succeeded' if state.status == groups.SUCCESS
                    else 'failed'))
            if not self.can_run(group):
                raise _conflict(group, 'cannot start before its '
                                'dependencies succeed')
            state.status = groups.RUNNING
            state.phase = groups.PREPARE
            self._order.append(group)

    def _targets(self, group, phase):
        with self._lock:
            state = self._state(group)
            if state.status == groups.FAILED:
                return []
            if state.status != groups.RUNNING or state.phase != phase:
                raise _conflict(group, 'is not in its %s phase' % phase)
            return self._tracker.claim(group, self._nodes[group],
                                       _VALID[phase])

    def prepare_targets(self, group):
        """Claim and return the nodes ``group`` must prepare now.

        Its ``not_started`` nodes that no other group claims; calling it
        again returns the same nodes. Empty once the group failed.
        """
        return self._targets(group, groups.PREPARE)

    def deploy_targets(self, group):
        """Claim and return the nodes ``group`` must deploy now.

        Its ``prepared`` nodes that no other group claims; nodes that failed
        prepare are never deployed. Empty once the group failed.
        """
        return self._targets(group, groups.DEPLOY)

    def _apply(self, group, phase, results):
        """Record per-node results of ``phase`` for the group's claims.

        Claimed nodes missing from ``results`` become ``failure``; a node
        whose result is None was never started (a ``fail_fast`` group
        stopped first): it keeps its status and is no longer claimed.
        """
        claimed = self._tracker.claimed_by(group)
        unknown = sorted(set(results) - set(claimed))
        if unknown:
            raise _conflict(group, 'reported results for nodes it does not '
                            'handle: %s' % ', '.join(unknown))
        unstarted = [n for n in claimed
                     if n in results and results[n] is None]
        self._tracker.release(group, unstarted)
        for name in claimed:
            if name in unstarted:
                continue
            ok = bool(results.get(name, False))
            self._tracker.mark(name, _DONE[phase] if ok
                               else tracker_mod.FAILURE)

    def _evaluate(self, group, phase):
        statuses = self._tracker.statuses()
        nodes = self._nodes[group]
        succeeded = sum(1 for n in nodes if statuses[n] in _COUNTS[phase])
        misses = criteria_mod.evaluate(
            self.strategy.group(group).success_criteria, len(nodes),
            succeeded)
        return groups.PhaseResult(ok=not misses, misses=tuple(misses),
                                  phase=phase, total=len(nodes),
                                  succeeded=succeeded)

    def _finish(self, group, phase, results, reason):
        with self._lock:
            state = self._state(group)
            if phase in state.results:
                return state.results[phase]
            if state.status == groups.FAILED:
                # Late results after a timeout: the nodes are failed.
                return groups.PhaseResult(ok=False, phase=phase)
            if state.status != groups.RUNNING or state.phase != phase:
                raise _conflict(group, 'is not in its %s phase' % phase)
            self._apply(group, phase, results)
            result = self._evaluate(group, phase)
            state.results[phase] = result
            failures = [n for n in self._tracker.claimed_by(group)
                        if self._tracker.status(n) == tracker_mod.FAILURE]
            self._tracker.release(group, failures)
            if not result.ok:
                state.status = groups.FAILED
                state.reason = reason
                state.misses = list(result.misses)
                self._tracker.release(group)
            elif phase == groups.PREPARE:
                state.phase = groups.DEPLOY
            else:
                state.status = groups.SUCCESS
                self._tracker.release(group)
            return result

    def finish_prepare(self, group, results):
        """Record prepare results and evaluate the group's criteria.

        :param results: ``{node: bool}`` for the nodes of
            :meth:`prepare_targets`; a claimed node missing is failed, one
            whose result is None was never started and keeps its status.
        :returns: a :class:`~.groups.PhaseResult`. When not ok, the group
            failed with ``prepare_criteria_not_met`` and its deploy is
            skipped. Calling it again returns the recorded result.
        """
        return self._finish(group, groups.PREPARE, results,
                            groups.PREPARE_CRITERIA_NOT_MET)

    def finish_deploy(self, group, results):
        """Record deploy results; the group succeeds or fails.

        As :meth:`finish_prepare`, with ``deploy_criteria_not_met``.
        """
        return self._finish(group, groups.DEPLOY, results,
                            groups.DEPLOY_CRITERIA_NOT_MET)

    def fail(self, group, reason, results=None):
        """Fail ``group`` for ``reason`` (typically ``timeout``).

        :param results: optional ``{node: bool}`` for claimed nodes that
            finished the current phase before the failure.
        Every node still claimed by the group (in flight) becomes
        ``failure``; all its claims are released. Failing a failed group
        again does nothing.
        """
        if reason not in groups.REASONS:
            raise exception.InvalidParameterValue(
                reason='unknown group failure reason %r (expected one of %s)'
                % (reason, ', '.join(groups.REASONS)))
        with self._lock:
            state = self._state(group)
            if state.status == groups.FAILED:
                return
            if state.status == groups.SUCCESS:
                raise _conflict(group, 'has already succeeded')
            claimed = self._tracker.claimed_by(group)
            results = results or {}
            unknown = sorted(set(results) - set(claimed))
            if unknown:
                raise _conflict(group, 'reported results for nodes it does '
                                'not handle: %s' % ', '.join(unknown))
            for name in claimed:
                if results.get(name) and state.phase:
                    self._tracker.mark(name, _DONE[state.phase])
                else:
                    self._tracker.mark(name, tracker_mod.FAILURE)
            self._tracker.release(group)
            state.status = groups.FAILED
            state.reason = reason

    def abort(self, group, results=None):
        """Fail a group the action's abort stopped, with ``aborted``: a
        running one records ``results`` of its phase first (None: never
        started), then fails as :meth:`fail` does; an ended one is left
        alone. Returns whether the group was failed."""
        with self._lock:
            state = self._state(group)
            if state.status in (groups.SUCCESS, groups.FAILED):
                return False
            if state.status == groups.RUNNING and results:
                self._apply(group, state.phase, results)
            self.fail(group, groups.ABORTED, results={
                n: ok for n, ok in (results or {}).items()
                if ok is not None})
            return True

    # Results ---------------------------------------------------------------

    def outcome(self):
        """``(state, result)`` of the action.

        ``('running', None)`` until every group is done; then
        ``('failed', 'failed')`` when a critical group failed,
        ``('complete', 'success_with_failures')`` when another group or any
        node failed, else ``('complete', 'success')``.
        """
        with self._lock:
            if not self.is_done():
                return groups.STATE_RUNNING, None
            failed = [g for g, s in self._groups.items()
                      if s.status == groups.FAILED]
            if any(self.strategy.group(g).critical for g in failed):
                return groups.STATE_FAILED, groups.RESULT_FAILED
            statuses = self._tracker.statuses().values()
            if failed or tracker_mod.FAILURE in statuses:
                return (groups.STATE_COMPLETE,
                        groups.RESULT_SUCCESS_WITH_FAILURES)
            return groups.STATE_COMPLETE, groups.RESULT_SUCCESS

    def plan(self):
        """The dry-run plan (:func:`.report.build_plan`), by name."""
        return report_mod.build_plan(self.strategy, self._nodes,
                                     self._tracker.name_of)

    def report(self):
        """The action report (:func:`.report.build_report`), by name.

        A group's ``succeeded_nodes`` are the nodes counted successful for
        the phase it reached (``prepared`` or ``success`` while it prepares
        or when it failed its prepare, else ``success``); ``failed_nodes``
        are its nodes with status ``failure``.
        """
        with self._lock:
            statuses = self._tracker.statuses()
            entries = {name: self._entry(name, statuses)
                       for name in self._topo}
            return report_mod.build_report(self._order, entries, statuses,
                                           retry_of=self.retry_of,
                                           name_of=self._tracker.name_of)

    def group_report(self, group):
        """The entry of ``group`` in :meth:`report`, by name: what its
        events and notifications say, without the whole report's cost."""
        with self._lock:
            self._state(group)
            status = self._tracker.status
            entry = self._entry(group, {n: status(n)
                                        for n in self._nodes[group]})
            return report_mod.named_entry(entry, self._tracker.name_of)

    def _entry(self, name, statuses):
        state = self._groups[name]
        ok = _COUNTS[state.phase or groups.DEPLOY]
        nodes = self._nodes[name]
        return report_mod.group_entry(
            state.status, self.strategy.group(name).critical, state.reason,
            nodes, [n for n in nodes if statuses[n] in ok],
            [n for n in nodes if statuses[n] == tracker_mod.FAILURE],
            state.misses)

    # Persistence -----------------------------------------------------------

    def snapshot(self):
        """What it runs on, fixed at admission and stored once with the
        action: the strategy document, the groups' node sets, the names
        of the nodes. :meth:`to_dict` is what changes as it runs."""
        return {'strategy': self.strategy.to_document(),
                'group_nodes': {g: list(n) for g, n in self._nodes.items()},
                'nodes': {n: self._tracker.name_of(n)
                          for n in self._tracker.statuses()}}

    def to_dict(self):
        """The JSON-serializable state: with the :meth:`snapshot`,
        :meth:`from_dict` rebuilds it exactly."""
        with self._lock:
            data = {'version': _FORMAT_VERSION,
                    'tracker': self._tracker.to_dict(),
                    'order': list(self._order),
                    'groups': {g: s.to_dict()
                               for g, s in self._groups.items()},
                    'durations': self.durations.to_dict()}
            if self.retry_of:
                data['retry_of'] = self.retry_of
            return data

    @classmethod
    def from_dict(cls, snapshot, data=None):
        """Rebuild a deployment from its :meth:`snapshot` and its
        :meth:`to_dict` state (None: as it starts)."""
        site = cls(strategy_mod.parse(snapshot['strategy']),
                   snapshot['group_nodes'], node_names=snapshot['nodes'],
                   retry_of=(data or {}).get('retry_of'))
        if data is None:
            return site
        if data.get('version') != _FORMAT_VERSION:
            raise exception.InvalidParameterValue(
                reason='unsupported site deployment state version %r'
                % data.get('version'))
        site._tracker = tracker_mod.NodeTracker.from_dict(
            data['tracker'], snapshot['nodes'])
        site._order = list(data['order'])
        site._groups = {g: groups.GroupState.from_dict(s)
                        for g, s in data['groups'].items()}
        site.durations = progress_mod.Durations.from_dict(
            data.get('durations'))
        return site
