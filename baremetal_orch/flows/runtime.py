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
"""The live state of a running site action, shared by its flow's atoms.

An :class:`ActionRuntime` couples the pure rules
(:class:`~baremetal_orch.deployment.site.SiteDeployment`) with the I/O: the
task rows of the tree, the per-node work sent to the conductors that own the
nodes, the checkpoints that make the action resumable.
"""

import threading
import time

from oslo_config import cfg
from oslo_log import log
from oslo_utils import timeutils

from baremetal_orch.db import api as dbapi
from baremetal_orch.notifications import notify
from baremetal_orch.objects import event as event_obj

CONF = cfg.CONF
LOG = log.getLogger(__name__)

_RUNTIMES = {}
_LOCK = threading.Lock()

FINAL_TASK_STATUSES = ('success', 'failed')


def register(runtime):
    with _LOCK:
        _RUNTIMES[runtime.action_uuid] = runtime


def unregister(action_uuid):
    with _LOCK:
        _RUNTIMES.pop(action_uuid, None)


def get(action_uuid):
    with _LOCK:
        return _RUNTIMES[action_uuid]


class GroupSlots:
    """At most ``[conductor]max_concurrent_groups`` groups at once, handed
    out in the plan's order (:meth:`SiteDeployment.startable_groups`).

    :meth:`start` takes a slot and starts the group in the site's rules in
    one step, so the start order is the order slots were granted.
    start/release are idempotent per group, so a resumed flow that
    re-enters a group's deploy does not take a second slot.
    """

    #: Seconds between two looks at the rules while waiting (a safety net:
    #: every release wakes the waiters).
    recheck_interval = 1.0

    def __init__(self, size, site):
        self._cond = threading.Condition()
        self._size = size
        self._site = site
        self._holders = set()
        self._startable = None

    def _may_start(self, group):
        free = self._size - len(self._holders)
        if free < 1:
            return False
        if self._site.group_status(group)['status'] != 'pending':
            # Started before (a resumed flow): a free slot is enough.
            return True
        if self._startable is None:
            # Computed once per change, shared by every waiter.
            self._startable = set(self._site.startable_groups(free))
        return group in self._startable

    def start(self, group):
        """Wait for ``group``'s turn and a free slot, then start it."""
        with self._cond:
            if group in self._holders:
                return
            while not self._may_start(group):
                if not self._cond.wait(self.recheck_interval):
                    self._startable = None
            self._site.start(group)
            self._holders.add(group)
            self._startable = None
            self._cond.notify_all()

    def release(self, group):
        with self._cond:
            self._holders.discard(group)
            # A group's end may make others ready: every waiter looks again.
            self._startable = None
            self._cond.notify_all()


class ActionRuntime:
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
        self.slots = GroupSlots(CONF.conductor.max_concurrent_groups, site)
        self._save_lock = threading.Lock()

    # Checkpoints -----------------------------------------------------------

    def checkpoint(self):
        """Save the rules' state and the report (resumable, visible)."""
        with self._save_lock:
            dbapi.update_action(self.action_uuid, {
                'progress': {'site': self.site.to_dict(),
                             'group_tasks': self.group_tasks},
                'report': self.site.report()})

    def _group_task(self, group, **values):
        dbapi.update_task(self.group_tasks[group], values)

    # Events ----------------------------------------------------------------

    def _group_started(self, group):
        event_obj.Event.record(
            event_obj.GROUP_STARTED, resource_uuid=self.group_tasks[group],
            action_uuid=self.action_uuid,
            message='group %s started' % group,
            details={'group': group, 'nodes': len(self.site.nodes(group)),
                     'position': self.site.order().index(group)})

    def _groups_finished(self, groups):
        report = self.site.report()['groups']
        events = []
        for group in groups:
            entry = report[group]
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

    # Deciders --------------------------------------------------------------

    def decide(self, group):
        if self.site.can_run(group):
            return True
        skipped = self.site.skip_blocked()
        for name in skipped:
            self._group_task(name, status='failed',
                             reason='dependency_failed',
                             finished_at=timeutils.utcnow())
        self.checkpoint()
        self._groups_finished(skipped)
        return False

    # Phases ----------------------------------------------------------------

    def run_prepare(self, group):
        if not self.decide(group):
            return {}
        first = group not in self.site.order()
        self.slots.start(group)
        if first:
            self._group_task(group, status='running',
                             started_at=timeutils.utcnow())
            self._group_started(group)
        targets = self.site.prepare_targets(group)
        self.checkpoint()
        notify.group(self.context, self.action, group, 'prepare', 'start')
        return self._run_phase(group, 'prepare', targets,
                               CONF.conductor.prepare_timeout)

    def check_prepare(self, group, results):
        result = self.site.finish_prepare(group, results or {})
        self.checkpoint()
        notify.group(self.context, self.action, group, 'prepare',
                     'end' if result.ok else 'error',
                     report=self.site.report()['groups'][group])
        return bool(result.ok)

    def run_deploy(self, group, prepare_ok):
        status = self.site.group_status(group)
        if not prepare_ok or status['status'] != 'running':
            return {}
        self.slots.start(group)
        targets = self.site.deploy_targets(group)
        self.checkpoint()
        notify.group(self.context, self.action, group, 'deploy', 'start')
        return self._run_phase(group, 'deploy', targets,
                               CONF.conductor.deploy_timeout)

    def check_deploy(self, group, results):
        try:
            status = self.site.group_status(group)
            if status['status'] == 'running' and status['phase'] == 'deploy':
                result = self.site.finish_deploy(group, results or {})
                notify.group(self.context, self.action, group, 'deploy',
                             'end' if result.ok else 'error',
                             report=self.site.report()['groups'][group])
            status = self.site.group_status(group)
            self._group_task(group, status=status['status'],
                             reason=status['reason'],
                             finished_at=timeutils.utcnow())
            self.checkpoint()
            self._groups_finished([group])
            return status['status']
        finally:
            self.slots.release(group)

    def _run_phase(self, group, phase, names, timeout):
        """Send the nodes to their conductors and wait for their outcome.

        A phase that overruns its timeout fails the group with ``timeout``;
        nodes still in flight count as failed.
        """
        phase_task = self._phase_task(group, phase)
        if not names:
            dbapi.update_task(phase_task, {'status': 'success',
                                           'finished_at': timeutils.utcnow()})
            return {}
        results = self.dispatcher.run(
            self, phase_task, phase, names, timeout,
            params={'group': group,
                    'wait_for_signal': self.site.strategy.group(
                        group).wait_for_signal})
        if results.timed_out:
            self.site.fail(group, 'timeout', results=results.done)
            dbapi.update_task(phase_task, {
                'status': 'failed', 'reason': 'timeout',
                'finished_at': timeutils.utcnow()})
            self._group_task(group, status='failed', reason='timeout',
                             finished_at=timeutils.utcnow())
            self.checkpoint()
            return {}
        failed = sorted(n for n, ok in results.done.items() if not ok)
        dbapi.update_task(phase_task, {
            'status': 'failed' if failed else 'success',
            'reason': ('failed nodes: %s' % ', '.join(failed)
                       if failed else None),
            'finished_at': timeutils.utcnow()})
        return results.done

    def _phase_task(self, group, phase):
        """The phase's task row: found again when a flow is resumed."""
        parent = self.group_tasks[group]
        for row in dbapi.list_tasks(parent_uuid=parent, kind='phase'):
            if row.name == phase:
                return row.uuid
        return dbapi.create_task({
            'parent_uuid': parent, 'action_uuid': self.action_uuid,
            'kind': 'phase', 'name': phase, 'status': 'running',
            'started_at': timeutils.utcnow()})


class PhaseResults:
    def __init__(self, done, timed_out):
        self.done = done
        self.timed_out = timed_out


class NodeDispatcher:
    """Sends per-node work to the owning conductors and collects outcomes
    from the task rows they write.

    Work sent to a conductor that dies is sent again to the node's new
    owner once the dead one's heartbeat is stale (the node work is
    idempotent and its lock is recovered from the dead conductor).
    """

    def __init__(self, rpcapi):
        self.rpcapi = rpcapi

    def _send(self, runtime, task_uuid, node, phase, params, timeout,
              alive=None):
        try:
            host = self.rpcapi.host_for_node(node, alive)
            self.rpcapi.run_node_phase(
                runtime.context, host, runtime.action_uuid, task_uuid,
                node.uuid, phase, dict(params, deadline=timeout))
            return host
        except Exception as e:
            LOG.warning('Could not send node %s to its conductor: %s',
                        node.name, e)
            return None

    def _resend_orphans(self, runtime, inflight, phase, params, timeout,
                        statuses, sent_at):
        """Send again the work of nodes whose conductor is gone, and the
        work that no conductor started within ``heartbeat_timeout`` (the
        message was lost: a broker that restarted drops what its queues
        held). Work sent twice is harmless: the copy that finds the task
        running waits for the node's lock, then sees the task ended."""
        alive = set(self.rpcapi.live_hosts())
        stale = time.monotonic() - CONF.conductor.heartbeat_timeout
        for task_uuid, (name, node, host) in list(inflight.items()):
            if host not in alive:
                LOG.warning('Conductor %s of node %s is gone; sending the '
                            '%s again', host, name, phase)
                dbapi.update_task(task_uuid, {'status': 'pending'})
            elif (statuses.get(task_uuid) == 'pending' and
                    sent_at.get(task_uuid, stale) < stale):
                LOG.warning('Conductor %s did not start the %s of node %s '
                            'within %s s; sending it again', host, phase,
                            name, CONF.conductor.heartbeat_timeout)
            else:
                continue
            sent_at[task_uuid] = time.monotonic()
            inflight[task_uuid] = (name, node, self._send(
                runtime, task_uuid, node, phase, params, timeout))

    @staticmethod
    def _record_failures(runtime, phase, params, failures):
        """One ``node.failed`` event per (node, reason)."""
        event_obj.Event.record_many({
            'event_type': event_obj.NODE_FAILED,
            'resource_uuid': node.uuid, 'action_uuid': runtime.action_uuid,
            'message': '%s of node %s failed: %s' % (
                phase, node.name or node.uuid, reason),
            'details': {'node': node.name, 'group': params.get('group'),
                        'phase': phase, 'reason': reason}}
            for node, reason in failures)

    def run(self, runtime, phase_task, phase, names, timeout, params):
        nodes = {n.name: n for n in dbapi.get_nodes_by_names(names)}
        existing = {t.node_uuid: t for t in dbapi.list_tasks(
            parent_uuid=phase_task, kind='node')}
        done = {}
        pending = []
        for name in names:
            node = nodes.get(name)
            if node is None:
                done[name] = False
                continue
            row = existing.get(node.uuid)
            if row is not None and row.status in FINAL_TASK_STATUSES:
                done[name] = row.status == 'success'
            else:
                pending.append((name, node, row.uuid if row else None))
        # Task rows of the nodes never sent yet: one INSERT for all.
        fresh = [i for i, (_n, _node, uuid) in enumerate(pending)
                 if uuid is None]
        uuids = dbapi.create_tasks([
            {'parent_uuid': phase_task, 'action_uuid': runtime.action_uuid,
             'kind': 'node', 'name': pending[i][0],
             'node_uuid': pending[i][1].uuid} for i in fresh])
        for i, uuid in zip(fresh, uuids):
            pending[i] = (pending[i][0], pending[i][1], uuid)
        pending.reverse()
        inflight = {}
        sent_at = {}
        limit = CONF.conductor.max_concurrent_nodes
        deadline = time.monotonic() + timeout
        next_check = time.monotonic() + CONF.conductor.heartbeat_interval
        while pending or inflight:
            alive = self.rpcapi.live_hosts() if pending else None
            while pending and len(inflight) < limit:
                name, node, task_uuid = pending.pop()
                host = self._send(runtime, task_uuid, node, phase, params,
                                  timeout, alive)
                inflight[task_uuid] = (name, node, host)
                sent_at[task_uuid] = time.monotonic()
            if time.monotonic() > deadline:
                for task_uuid in inflight:
                    dbapi.update_task(task_uuid, {
                        'status': 'failed', 'reason': 'timeout',
                        'finished_at': timeutils.utcnow()})
                self._record_failures(runtime, phase, params, [
                    (node, 'timeout') for _n, node, _h in inflight.values()])
                return PhaseResults(done, True)
            time.sleep(runtime.poll_interval)
            statuses = dbapi.get_task_statuses(list(inflight))
            failed = []
            for task_uuid, status in statuses.items():
                if status in FINAL_TASK_STATUSES:
                    name, node, _host = inflight.pop(task_uuid)
                    done[name] = status == 'success'
                    if status != 'success':
                        failed.append((node, task_uuid))
            if failed:
                self._record_failures(runtime, phase, params, [
                    (node, dbapi.get_task(task_uuid).reason)
                    for node, task_uuid in failed])
            if time.monotonic() > next_check:
                next_check = time.monotonic() + \
                    CONF.conductor.heartbeat_interval
                self._resend_orphans(runtime, inflight, phase, params,
                                     timeout, statuses, sent_at)
        return PhaseResults(done, False)
