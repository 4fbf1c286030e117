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
"""The live state of a running site action, handed to its flow's atoms.

A :class:`SiteRuntime` couples the pure rules
(:class:`~baremetal_orch.deployment.site.SiteDeployment`) with the I/O: the
task rows of the tree, the per-node work sent to the conductors that own the
nodes (:mod:`.dispatcher`), the events, the checkpoints that make the action
resumable. The engine gives it to the atoms through taskflow's storage, as
the transient value ``runtime``.
"""

import functools
import threading
import time

from oslo_config import cfg
from oslo_log import log
from oslo_utils import timeutils
from oslo_utils import uuidutils

from baremetal_orch.common import statuses
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import groups
from baremetal_orch.deployment import progress as progress_mod
from baremetal_orch.flows import slots as slots_mod
from baremetal_orch.flows import steering as steering_mod
from baremetal_orch.notifications import notify
from baremetal_orch.objects import event as event_obj

CONF = cfg.CONF
LOG = log.getLogger(__name__)


class SiteRuntime:
    """The state of one site action while a conductor runs its flow."""

    poll_interval = 0.05

    def __init__(self, context, action, site, dispatcher, group_tasks,
                 root_task):
        self.context = context
        self.action = action
        self.action_uuid = action.uuid
        self.site = site
        self.dispatcher = dispatcher
        self.group_tasks = group_tasks
        self.root_task = root_task
        self.slots = slots_mod.GroupSlots(
            lambda: CONF.conductor.max_concurrent_groups, site)
        self._save_lock = threading.Lock()
        #: What the last checkpoint wrote.
        self._last = None
        #: Pause, resume, abort and the maintenance windows.
        self.steering = steering_mod.ActionSteering(context, action)
        #: The phases running now: {phase task: (phase, in flight, done)}.
        self._live = {}
        self._live_lock = threading.Lock()
        self._saved_at = time.monotonic()
        #: (when, what) of the last progress summary computed.
        self._summary_at = None
        #: {group: the write that ends its phase's task row}.
        self._phase_ends = {}
        #: Groups whose deploy claims the checkpoint of their prepare's
        #: results saved.
        self._deploy_claimed = set()
        #: Groups this runtime started: their phases' task rows are its
        #: own to insert (none exist before).
        self._fresh = set()

    # Checkpoints -----------------------------------------------------------

    def checkpoint(self, fresh=False, also=None):
        """Save the rules' state and the report (resumable, visible):
        what changes as the action runs, never its snapshot
        (:meth:`~baremetal_orch.deployment.site.SiteDeployment.snapshot`,
        stored once, at admission).

        The progress summary (nodes per phase, ETA) is computed again at
        most every :attr:`SUMMARY_INTERVAL` seconds, or now with
        ``fresh`` (the action's end).

        Each caller saves a snapshot taken under the save lock, unless it
        equals the last one saved (of the groups of a layer that end
        together, the first queued behind a save writes what all changed).

        The report is not written: it is a view of the rules' state,
        shown from it (:func:`~baremetal_orch.objects.action.public_report`)
        and stored once the action ended (:func:`.site_deploy.finish`).

        :param also: ``also()``, the other writes of the step (its group's
            task row, its events), made in the checkpoint's transaction.
        """
        # Computed before the save lock: the summary is a view, and other
        # groups' checkpoints need not wait for it.
        summary = self._summary(fresh)
        with self._save_lock:
            values = {'progress': {'site': self.site.to_dict(),
                                   'group_tasks': self.group_tasks,
                                   'summary': summary}}
            self._saved_at = time.monotonic()
            changed = values != self._last
            with dbapi.transaction():
                if also is not None:
                    also()
                if changed:
                    dbapi.update_action(self.action_uuid, values,
                                        reload=False)
            if changed:
                self._last = values

    #: Seconds between two checkpoints a running phase writes for its
    #: progress (the phases' ends write theirs at once).
    PROGRESS_INTERVAL = 5.0

    #: Seconds a computed progress summary is written again as it is.
    SUMMARY_INTERVAL = 1.0

    def _summary(self, fresh):
        now = time.monotonic()
        if (fresh or self._summary_at is None or
                now - self._summary_at[0] >= self.SUMMARY_INTERVAL):
            self._summary_at = (now, self.summary())
        return self._summary_at[1]

    def summary(self):
        """The action's public progress: nodes per phase, the ETA."""
        with self._live_lock:
            live = list(self._live.values())
        in_flight = set()
        ended = {}
        for phase, uuids, done in live:
            in_flight.update(uuids)
            ended.setdefault(phase, {}).update(done)
        return progress_mod.summary(
            self.site, in_flight, CONF.conductor.max_concurrent_nodes,
            CONF.conductor.max_concurrent_groups, ended=ended)

    def phase_update(self, phase_task, phase, in_flight, done):
        """What a running phase has in flight (node UUIDs) and has ended
        (``{uuid: ok}``); ``done`` None once the phase is over. Writes a
        checkpoint at most every :attr:`PROGRESS_INTERVAL` seconds."""
        with self._live_lock:
            if done is None:
                self._live.pop(phase_task, None)
            else:
                self._live[phase_task] = (phase, list(in_flight),
                                          dict(done))
        self.steering.set_in_flight(phase_task, len(in_flight))
        if (done is not None and time.monotonic() - self._saved_at >
                self.PROGRESS_INTERVAL):
            self.checkpoint()

    def node_ended(self, group, phase, seconds):
        """A node ended ``phase`` in ``seconds``: what the ETA learns
        from."""
        self.site.durations.record(group, phase, seconds)

    def _group_task(self, group, **values):
        dbapi.update_task(self.group_tasks[group], values)

    def _failed_row(self, group, reason):
        """``also`` of the checkpoint that fails a started group: its task
        row says so in the transaction of the state that does (its event
        follows at its check)."""
        return lambda: self._group_task(
            group, status=statuses.FAILED, reason=reason,
            finished_at=timeutils.utcnow())

    # Events ----------------------------------------------------------------

    def _group_started(self, group):
        self._group_task(group, status=statuses.RUNNING,
                         started_at=timeutils.utcnow())
        event_obj.Event.record(
            event_obj.GROUP_STARTED, resource_uuid=self.group_tasks[group],
            action_uuid=self.action_uuid,
            message='group %s started' % group,
            details={'group': group, 'nodes': len(self.site.nodes(group)),
                     'position': self.site.order().index(group)})

    def _groups_finished(self, groups):
        """The task rows and ``group.finished`` events of ended groups."""
        events = []
        for group in groups:
            entry = self.site.group_report(group)
            self._group_task(group, status=entry['status'],
                             reason=entry['reason'],
                             finished_at=timeutils.utcnow())
            events.append({
                'event_type': event_obj.GROUP_FINISHED,
                'resource_uuid': self.group_tasks[group],
                'action_uuid': self.action_uuid,
                'message': 'group %s ended %s%s' % (
                    group, entry['status'],
                    ' (%s)' % entry['reason'] if entry['reason'] else ''),
                'details': {
                    'group': group, 'status': entry['status'],
                    'reason': entry['reason'],
                    'critical': entry['critical'],
                    'nodes': len(entry['nodes']),
                    'succeeded': len(entry['succeeded_nodes']),
                    'failed': len(entry['failed_nodes']),
                    'misses': entry.get('misses') or []}})
        if events:
            event_obj.Event.record_many(events)

    # Groups that can no longer run -------------------------------------

    def skip_blocked(self):
        """Fail, with ``dependency_failed``, every group a failed group
        blocks; once the action is aborted, fail every pending group with
        ``aborted``. Their atoms, waiting for a slot, end at once.
        """
        if self.steering.aborting():
            ended = [g for g in self.site.strategy.topological_order()
                     if self.site.group_status(g)['status'] ==
                     statuses.PENDING and self.site.abort(g)]
        else:
            ended = self.site.skip_blocked()
        if ended:
            self.checkpoint(also=functools.partial(self._groups_finished,
                                                   ended))
            self.slots.wake()
        return ended

    def _may_go_on(self, group):
        """Wait while the action is paused; False once it is aborted
        (the group then ended, failed with ``aborted``)."""
        if self.steering.wait():
            return True
        self._abort(group)
        return False

    def _abort(self, group, results=None):
        if self.site.abort(group, results):
            if self._started(group):
                self.checkpoint(also=self._failed_row(group, groups.ABORTED))
            else:
                # Its atom records nothing more, and no check of its
                # will end the groups after it: they end now.
                self.checkpoint(also=functools.partial(
                    self._groups_finished, [group]))
                self.skip_blocked()

    def _notify(self, group, phase, status):
        # The report (every node of the group, named) only for a
        # notification that is sent.
        if notify.group_sent(phase, status):
            notify.group(self.context, self.action, group, phase, status,
                         report=self.site.group_report(group))

    def _started(self, group):
        return group in self.site.order()

    def guard(self, step, group, *args):
        """Run ``step`` of ``group``'s atom. A step that raises fails
        the flow: the groups waiting for a slot then end at once instead
        of holding the flow open."""
        try:
            return step(group, *args)
        except BaseException:
            self.slots.close()
            raise

    # Phases ----------------------------------------------------------------

    def run_group(self, group):
        """The group's prepare phase, then its deploy phase, each ending
        with the check of its criteria: the group's status (the one atom
        of a group)."""
        prepare_ok = self.prepare(group)
        return self.check_deploy(group, self.run_deploy(group, prepare_ok))

    def prepare(self, group):
        """The group's prepare phase, then the check of its criteria:
        whether the group goes on to deploy. A flow resumed after the
        check was recorded keeps its verdict."""
        status = self.site.group_status(group)
        if self._started(group) and (
                status['status'] != statuses.RUNNING or
                status['phase'] != groups.PREPARE):
            return status['status'] in (statuses.RUNNING, statuses.SUCCESS)
        return self.check_prepare(group, self.run_prepare(group))

    def run_prepare(self, group):
        first = not self._started(group)
        if not (self._may_go_on(group) and self.slots.start(group) and
                self._may_go_on(group)):
            return {}
        targets = self.site.prepare_targets(group)
        self.checkpoint(also=(lambda: self._group_started(group))
                        if first else None)
        if first:
            self._fresh.add(group)
        self._notify(group, groups.PREPARE, 'start')
        return self._run_phase(group, groups.PREPARE, targets,
                               CONF.conductor.prepare_timeout)

    def check_prepare(self, group, results):
        if not self._started(group):
            return False
        result = self.site.finish_prepare(group, results or {})
        if result.ok and self.steering.may_start():
            # The deploy's claims are saved with the prepare's results:
            # one checkpoint between the phases, not two.
            self.site.deploy_targets(group)
            self._deploy_claimed.add(group)
        self.checkpoint(also=self._with_phase_end(group))
        self._notify(group, groups.PREPARE, 'end' if result.ok else 'error')
        return bool(result.ok)

    def run_deploy(self, group, prepare_ok):
        status = self.site.group_status(group)
        if not prepare_ok or status['status'] != statuses.RUNNING:
            return {}
        if not self._may_go_on(group):
            return {}
        self.slots.start(group)
        targets = self.site.deploy_targets(group)
        if group in self._deploy_claimed:
            self._deploy_claimed.discard(group)
        else:
            self.checkpoint()
        self._notify(group, groups.DEPLOY, 'start')
        return self._run_phase(group, groups.DEPLOY, targets,
                               CONF.conductor.deploy_timeout)

    def check_deploy(self, group, results):
        try:
            status = self.site.group_status(group)
            if not self._started(group):
                # Ended before its start (skipped or aborted), recorded
                # then.
                return status['status']
            if (status['status'] == statuses.RUNNING
                    and status['phase'] == groups.DEPLOY):
                result = self.site.finish_deploy(group, results or {})
                self._notify(group, groups.DEPLOY,
                             'end' if result.ok else 'error')
            status = self.site.group_status(group)
            self.checkpoint(also=self._with_phase_end(group, (
                functools.partial(self._groups_finished, [group]))))
            if status['status'] != statuses.SUCCESS:
                self.skip_blocked()
            return status['status']
        finally:
            self.slots.release(group)

    def _run_phase(self, group, phase, uuids, timeout):
        """Send the nodes (``uuids``) to their conductors and wait for
        their outcome (``{uuid: ok}``).

        A phase that overruns its timeout fails the group with ``timeout``;
        nodes still in flight count as failed.
        """
        phase_task, row = self._phase_task(group, phase)
        if not uuids:
            values = {'status': statuses.SUCCESS,
                      'finished_at': timeutils.utcnow()}
            if row is None:
                dbapi.update_task(phase_task, values)
            else:
                dbapi.create_task(dict(row, **values))
            return {}
        spec = self.site.strategy.group(group)
        keep_going = None
        if spec.fail_fast:
            keep_going = functools.partial(self.site.can_still_succeed,
                                           group)
        results = self.dispatcher.run(
            self, phase_task, phase, uuids, timeout,
            params={'group': group,
                    'wait_for_signal': spec.wait_for_signal},
            keep_going=keep_going, phase_row=row)
        if self.steering.aborting():
            self._abort(group, dict(results.done,
                                    **dict.fromkeys(results.unstarted)))
            dbapi.update_task(phase_task, {
                'status': statuses.FAILED, 'reason': groups.ABORTED,
                'finished_at': timeutils.utcnow()})
            return {}
        if results.timed_out:
            self.site.fail(group, groups.TIMEOUT, results=results.done)
            dbapi.update_task(phase_task, {
                'status': statuses.FAILED, 'reason': groups.TIMEOUT,
                'finished_at': timeutils.utcnow()})
            self.checkpoint(also=self._failed_row(group, groups.TIMEOUT))
            return {}
        name = self.site.tracker.name_of
        failed = sorted(name(u) for u, ok in results.done.items() if not ok)
        reasons = []
        if failed:
            reasons.append('failed nodes: %s' % ', '.join(failed))
        if results.unstarted:
            reasons.append('not started (fail_fast): %s' % ', '.join(
                sorted(map(name, results.unstarted))))
        # Written by the checkpoint that records the results.
        self._phase_ends[group] = functools.partial(
            dbapi.update_task, phase_task, {
                'status': statuses.FAILED if reasons else statuses.SUCCESS,
                'reason': '; '.join(reasons) or None,
                'finished_at': timeutils.utcnow()})
        # Never started: None, so the rules leave their status as it was.
        return dict(results.done, **dict.fromkeys(results.unstarted))

    def _phase_task(self, group, phase):
        """The phase's task row: ``(uuid, None)`` when it exists (a
        resumed flow), else ``(uuid, row)``, the row to insert with its
        nodes' rows."""
        parent = self.group_tasks[group]
        if group not in self._fresh:
            # Started before this runtime (a resumed flow): its rows may be.
            for row in dbapi.list_tasks(parent_uuid=parent, kind='phase'):
                if row.name == phase:
                    return row.uuid, None
        row = {'uuid': uuidutils.generate_uuid(), 'parent_uuid': parent,
               'action_uuid': self.action_uuid, 'kind': 'phase',
               'name': phase, 'status': statuses.RUNNING,
               'started_at': timeutils.utcnow()}
        return row['uuid'], row

    def _with_phase_end(self, group, also=None):
        """``also`` of the checkpoint that records a phase's results, with
        the end of the phase's task row."""
        end = self._phase_ends.pop(group, None)
        return also if end is None else (
            lambda: (end(), also is not None and also()))
