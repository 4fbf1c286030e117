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
"""Per-node work of a phase: sent to the conductors that own the nodes,
collected from the task rows they write.

A node is its UUID here, as everywhere inside an action: the phase's
nodes, its results and what it has in flight are keyed by UUID, and the
rows the work needs are read by UUID. A node's name (the one admission
saw, :meth:`NodeTracker.name_of`) only names its task row, events and
log lines.

A task that node work of this process ended reaches its phase in memory,
with its status (:data:`ENDED`); otherwise the phase looks at its task
rows at its runtime's poll interval. Once every node in flight works in
this process it needs no polling, and looks at the rows only once a
second (:attr:`NodeDispatcher.LOCAL_POLL`), in case of a task ended some
other way.
"""

import threading
import time

from oslo_config import cfg
from oslo_log import log
from oslo_utils import timeutils

from baremetal_orch.common import statuses
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import groups
from baremetal_orch.objects import event as event_obj

CONF = cfg.CONF
LOG = log.getLogger(__name__)


def _name(runtime, uuid):
    """The name node ``uuid`` had at admission (for what is shown)."""
    return runtime.site.tracker.name_of(uuid)


class EndedTasks:
    """Hands a phase of this process the outcomes of the tasks it waits
    for, as node work commits them.

    A phase :meth:`watch`-es its task uuids with a
    :class:`threading.Event` and an inbox (a dict); node work calls
    :meth:`ended` once outcomes are committed, with their statuses where
    it knows them, which go to the inbox, and sets the event. An outcome
    committed by another process reaches neither: that phase still polls
    its task rows.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._events = {}

    def watch(self, task_uuids, event, inbox):
        with self._lock:
            for uuid in task_uuids:
                self._events[uuid] = (event, inbox)

    def forget(self, task_uuids):
        with self._lock:
            for uuid in task_uuids:
                self._events.pop(uuid, None)

    def ended(self, outcomes):
        """``outcomes``: ``{task uuid: its final status, or None when the
        caller does not know it}``, committed."""
        woken = []
        with self._lock:
            for uuid, status in outcomes.items():
                event, inbox = self._events.get(uuid, (None, None))
                if event is not None:
                    inbox[uuid] = status
                    woken.append(event)
        for event in set(woken):
            event.set()

    def take(self, inbox):
        """What arrived in ``inbox`` since the last take (and empty it)."""
        with self._lock:
            arrived = dict(inbox)
            inbox.clear()
        return arrived


#: The one of this process.
ENDED = EndedTasks()


class PhaseResults:
    """What a phase ended with: ``done`` (``{node: bool}``), whether it
    ``timed_out``, and the nodes it never started (``unstarted``)."""

    def __init__(self, done, timed_out, unstarted=()):
        self.done = done
        self.timed_out = timed_out
        self.unstarted = list(unstarted)


class NodeDispatcher:
    """Sends per-node work to the owning conductors and collects outcomes
    from the task rows they write.

    Work sent to a conductor that dies is sent again to the node's new
    owner once the dead one's heartbeat is stale (the node work is
    idempotent and its lock is recovered from the dead conductor).
    """

    #: Seconds between two looks at the task rows while every node in
    #: flight works in this process (its ends wake the phase).
    LOCAL_POLL = 1.0

    def __init__(self, rpcapi):
        self.rpcapi = rpcapi

    def _wait(self, runtime, wakeup, inflight):
        """Until a task of ``inflight`` ends here, or the poll is due."""
        local = all(self.rpcapi.runs_here(host)
                    for _n, _node, host in inflight.values())
        woken = wakeup.wait(self.LOCAL_POLL if local
                            else runtime.poll_interval)
        wakeup.clear()
        return woken

    @staticmethod
    def _ended(phase_task, inbox, woken):
        """``{task uuid: status}`` of the phase's tasks that ended: what
        this process's node work handed over when it woke the phase; the
        task rows (an indexed query that returns nothing while the nodes
        work) when the poll was due, or when an outcome came without its
        status."""
        arrived = ENDED.take(inbox)
        if woken and arrived and None not in arrived.values():
            return arrived
        ended = dbapi.ended_tasks(phase_task, statuses.TASK_FINAL_STATUSES)
        # Work given back unstarted is no ended task: it is not read.
        ended.update((t, s) for t, s in arrived.items()
                     if s == statuses.PENDING and t not in ended)
        return ended

    def _send(self, runtime, batch, phase, params, timeout, alive,
              inflight, sent_at):
        """Send ``batch`` (``[(uuid, node, task uuid)]``): one message per
        conductor; a node is a batch of one."""
        by_host = {}
        for uuid, node, task_uuid in batch:
            try:
                host = self.rpcapi.host_for_node(node, alive)
            except Exception as e:
                LOG.warning('Could not send node %s to its conductor: %s',
                            _name(runtime, uuid), e)
                host = None
            inflight[task_uuid] = (uuid, node, host)
            sent_at[task_uuid] = time.monotonic()
            if host is not None:
                by_host.setdefault(host, []).append((task_uuid, node.uuid))
        for host, items in by_host.items():
            try:
                self.rpcapi.run_nodes_phase(
                    runtime.context, host, runtime.action_uuid, items, phase,
                    dict(params, deadline=timeout))
            except Exception as e:
                LOG.warning('Could not send %d nodes to conductor %s: %s',
                            len(items), host, e)
                for task_uuid, _node_uuid in items:
                    uuid, node, _host = inflight[task_uuid]
                    inflight[task_uuid] = (uuid, node, None)

    def _resend_orphans(self, runtime, inflight, phase, params, timeout,
                        task_statuses, sent_at):
        """Send again the work of nodes whose conductor is gone, and the
        work that no conductor started within ``heartbeat_timeout`` (the
        message was lost: a broker that restarted drops what its queues
        held). Work sent twice is harmless: the copy that finds the task
        running waits for the node's lock, then sees the task ended.

        While the action may not start work, the work not started is not
        sent again: it is returned (``[(uuid, node, task uuid)]``), to be
        sent once the action may (a conductor of another process gives
        back what it receives then)."""
        alive = self.rpcapi.live_hosts()
        stale = time.monotonic() - CONF.conductor.heartbeat_timeout
        again, back = [], []
        holding = not runtime.steering.may_start()
        for task_uuid, (uuid, node, host) in list(inflight.items()):
            if holding and task_statuses.get(task_uuid) == statuses.PENDING:
                del inflight[task_uuid]
                back.append((uuid, node, task_uuid))
                continue
            if host not in alive:
                LOG.warning('Conductor %s of node %s is gone; sending the '
                            '%s again', host, _name(runtime, uuid), phase)
                dbapi.update_task(task_uuid, {'status': statuses.PENDING})
            elif (task_statuses.get(task_uuid) == statuses.PENDING and
                    sent_at.get(task_uuid, stale) < stale):
                LOG.warning('Conductor %s did not start the %s of node %s '
                            'within %s s; sending it again', host, phase,
                            _name(runtime, uuid),
                            CONF.conductor.heartbeat_timeout)
            else:
                continue
            again.append((uuid, node, task_uuid))
        if again:
            self._send(runtime, again, phase, params, timeout, alive,
                       inflight, sent_at)
        return back

    @staticmethod
    def _leave(runtime, phase, params, pending, why):
        """Leave ``pending`` nodes unstarted; returns their UUIDs."""
        uuids = [uuid for uuid, _node, _task in pending]
        LOG.info('Group %s: %s; %d node(s) not started in %s: %s',
                 params.get('group'), why, len(uuids), phase,
                 ', '.join(sorted(_name(runtime, u) for u in uuids)))
        for _uuid, _node, task in pending:
            dbapi.update_task(task, {'reason': 'not started: %s' % why})
        return uuids

    def _abort_in_flight(self, runtime, inflight):
        """Ask each in-flight node's conductor to abort what Ironic
        holds in a wait state (the others finish their step)."""
        by_host = {}
        for uuid, _node, host in inflight.values():
            if host is not None:
                by_host.setdefault(host, []).append(uuid)
        for host, uuids in by_host.items():
            try:
                self.rpcapi.abort_nodes(runtime.context, host, uuids)
            except Exception as e:
                LOG.warning('Could not ask conductor %s to abort %d '
                            'nodes: %s', host, len(uuids), e)

    @staticmethod
    def _record_failures(runtime, phase, params, failures):
        """One ``node.failed`` event per (node UUID, reason)."""
        event_obj.Event.record_many({
            'event_type': event_obj.NODE_FAILED,
            'resource_uuid': uuid, 'action_uuid': runtime.action_uuid,
            'message': '%s of node %s failed: %s' % (
                phase, _name(runtime, uuid), reason),
            'details': {'node': _name(runtime, uuid),
                        'group': params.get('group'),
                        'phase': phase, 'reason': reason}}
            for uuid, reason in failures)

    def run(self, runtime, phase_task, phase, uuids, timeout, params,
            keep_going=None, phase_row=None):
        """Run ``phase`` on the nodes ``uuids``: at most
        ``[conductor]max_concurrent_nodes`` in flight, until all ended or
        ``timeout`` passed.

        :param keep_going: optional ``callable(done)``, asked before more
            nodes are started; once it answers False no further node is
            started (the nodes in flight finish).
        :param phase_row: the row of ``phase_task`` when it is new: it is
            inserted with its nodes' rows.
        :returns: :class:`PhaseResults`, by node UUID.
        """
        nodes = {n.uuid: n for n in dbapi.node_refs(uuids)}
        existing = {} if phase_row else {t.node_uuid: t for t in (
            dbapi.list_tasks(parent_uuid=phase_task, kind='node'))}
        done = {}
        pending = []
        # Nodes a conductor was working on when this flow was resumed:
        # in flight for the action, sent again even while it is paused.
        resumed = set()
        for uuid in uuids:
            node = nodes.get(uuid)
            if node is None:
                done[uuid] = False
                continue
            row = existing.get(uuid)
            if (row is not None
                    and row.status in statuses.TASK_FINAL_STATUSES):
                done[uuid] = row.status == statuses.SUCCESS
            else:
                pending.append((uuid, node, row.uuid if row else None))
                if row is not None and row.status == statuses.RUNNING:
                    resumed.add(row.uuid)
        # Task rows of the nodes never sent yet (and the phase's own, when
        # new): one INSERT for all.
        fresh = [i for i, (_n, _node, uuid) in enumerate(pending)
                 if uuid is None]
        uuids = dbapi.create_tasks(([phase_row] if phase_row else []) + [
            {'parent_uuid': phase_task, 'action_uuid': runtime.action_uuid,
             'kind': 'node', 'name': _name(runtime, pending[i][0]),
             'node_uuid': pending[i][0]} for i in fresh])[
                 1 if phase_row else 0:]
        for i, uuid in zip(fresh, uuids):
            pending[i] = (pending[i][0], pending[i][1], uuid)
        # Taken from the end: the resumed first, then the others in order.
        pending.reverse()
        pending.sort(key=lambda item: item[2] in resumed)
        wakeup, inbox = threading.Event(), {}
        watched = [uuid for _n, _node, uuid in pending]
        ENDED.watch(watched, wakeup, inbox)
        steering = runtime.steering
        steering.listen(wakeup)
        try:
            return self._run(runtime, phase_task, phase, timeout, params,
                             done, pending, (wakeup, inbox), keep_going,
                             resumed)
        finally:
            ENDED.forget(watched)
            steering.unlisten(wakeup)
            runtime.phase_update(phase_task, phase, (), None)

    def _run(self, runtime, phase_task, phase, timeout, params, done,
             pending, watch, keep_going, resumed):
        wakeup, inbox = watch
        steering = runtime.steering
        inflight = {}
        sent_at = {}
        unstarted = []
        aborted = False
        limit = CONF.conductor.max_concurrent_nodes
        # A stall, not a length: the phase times out once none of its
        # nodes has ended for ``timeout`` seconds, not counting the time
        # the action spent paused. Each node's own time in its driver is
        # bounded by the driver (from when Ironic accepts it); a group
        # larger than what runs at once (max_concurrent_nodes, or Ironic's
        # limit with its queue) keeps going while nodes end.
        deadline = time.monotonic() + timeout
        paused_mark = steering.paused_seconds()
        next_check = time.monotonic() + CONF.conductor.heartbeat_interval
        while pending or inflight:
            if steering.aborting():
                # Work given back after the abort is left unstarted too.
                if pending:
                    unstarted += self._leave(runtime, phase, params,
                                             pending,
                                             'the action was aborted')
                    pending = []
                if not aborted:
                    aborted = True
                    self._abort_in_flight(runtime, inflight)
                if not inflight:
                    break
            if pending and keep_going is not None and not keep_going(done):
                unstarted += self._leave(
                    runtime, phase, params, pending,
                    'the group\'s criteria can no longer be met '
                    '(fail_fast)')
                pending = []
                if not inflight:
                    break
            go = steering.may_start()
            if not go and not inflight and not (
                    pending and pending[-1][2] in resumed):
                # Paused with nothing in flight: wait for a resume or an
                # abort, which wakes this at once.
                steering.wait(self.LOCAL_POLL)
                continue
            alive = self.rpcapi.live_hosts() if pending else None
            batch = []
            while (pending and len(inflight) + len(batch) < limit and
                   (go or pending[-1][2] in resumed)):
                batch.append(pending.pop())
            if batch:
                self._send(runtime, batch, phase, params, timeout, alive,
                           inflight, sent_at)
            runtime.phase_update(phase_task, phase,
                                 [u for u, _node, _h in inflight.values()],
                                 done)
            paused = steering.paused_seconds() - paused_mark
            if time.monotonic() - paused > deadline:
                for task_uuid in inflight:
                    dbapi.update_task(task_uuid, {
                        'status': statuses.FAILED, 'reason': groups.TIMEOUT,
                        'finished_at': timeutils.utcnow()})
                self._record_failures(runtime, phase, params, [
                    (uuid, groups.TIMEOUT)
                    for uuid, _node, _h in inflight.values()])
                return PhaseResults(done, True, unstarted)
            woken = self._wait(runtime, wakeup, inflight)
            ended = self._ended(phase_task, inbox, woken)
            failed = []
            for task_uuid, status in ended.items():
                if status == statuses.PENDING:
                    # Given back unstarted: the action may not start work.
                    if task_uuid in inflight:
                        pending.append(inflight.pop(task_uuid)[:2] +
                                       (task_uuid,))
                elif task_uuid in inflight:
                    deadline = time.monotonic() + timeout
                    paused_mark = steering.paused_seconds()
                    uuid, _node, _host = inflight.pop(task_uuid)
                    done[uuid] = status == statuses.SUCCESS
                    runtime.node_ended(
                        params.get('group'), phase,
                        time.monotonic() - sent_at.get(task_uuid, 0))
                    if status != statuses.SUCCESS:
                        failed.append((uuid, task_uuid))
            if failed:
                self._record_failures(runtime, phase, params, [
                    (uuid, dbapi.get_task(task_uuid).reason)
                    for uuid, task_uuid in failed])
            runtime.phase_update(phase_task, phase,
                                 [u for u, _node, _h in inflight.values()],
                                 done)
            if time.monotonic() > next_check:
                next_check = time.monotonic() + \
                    CONF.conductor.heartbeat_interval
                pending += self._resend_orphans(
                    runtime, inflight, phase, params, timeout,
                    dbapi.get_task_statuses(list(inflight)), sent_at)
        return PhaseResults(done, False, unstarted)
