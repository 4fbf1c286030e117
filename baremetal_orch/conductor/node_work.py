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
"""Node work: the prepare or deploy phase of a batch of an action's nodes.

The one lane of node work. The action's conductor sends the nodes of a
group's phase to their owners in batches
(:class:`baremetal_orch.flows.dispatcher.NodeDispatcher`; one node is a
batch of one); the outcome of each node goes to its task row. A batch
costs a bounded number of transactions: its task rows are started and
its nodes' locks taken (one conditional UPDATE) in one, each state change
of the nodes together is one UPDATE, their deployment records are written
together, and the locks are released with the outcomes of their tasks and
the nodes' last state change in one transaction. The driver calls, the
only per-node round trips, run side by side (up to
``[conductor]max_concurrent_nodes`` per phase).

Two things a node may wait for are branches of the same lane, per node:

* a node locked by another operation waits for its lock (until the
  phase's deadline), then does the work as a batch of one;
* in a phase that waits for the nodes' signals (``wait_for_signal``), a
  deployed node keeps its lock until its final signal, and its task ends
  then, without holding up the rest of the batch.

Work that may no longer start when it reaches its conductor (the action
was paused or aborted while the work travelled, or while its node waited
for its lock) is given back: its task is ``pending`` again, the lock
released, and its phase sends it again once the action may start work.
Work already running (sent twice, or resumed) goes on.

Crash safety: a task is ``success`` only in the transaction that releases
its node's lock after the work; a node a killed conductor left in a
working state is failed out by recovery and its work sent again; work
sent twice finds its task ended under the lock and does nothing.
"""

from concurrent import futures
import contextlib
import functools
import threading
import time

from oslo_config import cfg
from oslo_log import log

from baremetal_orch.common import exception
from baremetal_orch.common import states
from baremetal_orch.common import statuses
from baremetal_orch.conductor import provisioning
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import groups
from baremetal_orch.drivers import provisioning as drivers
from baremetal_orch.flows import dispatcher
from baremetal_orch.flows import steering
from baremetal_orch.notifications import notify
from baremetal_orch.objects import deployment as deployments
from baremetal_orch.objects import event as event_obj
from baremetal_orch.objects import node as node_obj

CONF = cfg.CONF
LOG = log.getLogger(__name__)

#: Seconds between two tries at the lock of a node another operation holds.
LOCK_RETRY = 0.2


class NodeWork:
    """Prepares or deploys batches of nodes for the actions of any
    conductor.

    :param host: this conductor.
    :param spawn: runs a callable in the background (the manager's).
    """

    def __init__(self, host, spawn):
        self.host = host
        self.spawn = spawn
        #: ``(size, pool)``, the largest last.
        self._pools = []
        self._lock = threading.Lock()

    def pool(self):
        """The threads of the driver calls of every batch, made once and
        reused: the dispatcher keeps at most max_concurrent_nodes nodes of
        a phase in flight, and max_concurrent_groups phases run at once.

        Limits raised by a reload (SIGHUP) get a larger pool; the smaller
        one is left to the batches that use it.
        (The standard library's pool: futurist's idle workers poll their
        queue, delaying a shutdown by up to a second.)
        """
        size = (CONF.conductor.max_concurrent_nodes *
                CONF.conductor.max_concurrent_groups)
        with self._lock:
            if not self._pools or self._pools[-1][0] < size:
                self._pools.append((size, futures.ThreadPoolExecutor(
                    max_workers=size, thread_name_prefix='node-phase')))
            return self._pools[-1][1]

    def stop(self):
        with self._lock:
            for _size, pool in self._pools:
                pool.shutdown(wait=False)

    def run(self, context, action_uuid, items, phase, params):
        """Do ``phase`` for a batch of nodes of ``action_uuid``.

        :param items: ``[(task uuid, node uuid)]``.
        :param params: ``group``, ``deadline`` (seconds the phase allows)
            and ``wait_for_signal``.
        """
        # {task uuid: status} committed here, and the tasks a branch of
        # their own ends later (a lock or a signal to wait for).
        outcomes, later = {}, set()
        try:
            self._run(context, action_uuid, items, phase, params, outcomes,
                      later)
        finally:
            # The outcomes committed here go to the phase waiting for them
            # in this process; a task ended some other way goes without
            # its status, which the phase then reads.
            dispatcher.ENDED.ended({t: outcomes.get(t) for t, _n in items
                                    if t not in later})

    def _run(self, context, action_uuid, items, phase, params, outcomes,
             later):
        # Asked before anything is taken: a failed read leaves nothing
        # started nor locked.
        holding = not steering.may_start_work(action_uuid)
        previous, rows = dbapi.start_batch(items, self.host,
                                           statuses.TASK_FINAL_STATUSES)
        todo = {n: t for t, n in items if t in previous}
        if not todo:
            return
        locked = node_obj.Node.from_rows(context, rows)
        fresh = [n for n, t in todo.items() if previous[t] == statuses.PENDING]
        if fresh and holding:
            # Paused (or aborted) while the work travelled: what this call
            # started goes back unstarted; what was running already (sent
            # twice, or resumed) goes on.
            back = {n: todo.pop(n) for n in fresh}
            self._give_back(list(locked.keys() & back), back.values(),
                            outcomes)
            locked = {n: node for n, node in locked.items() if n in todo}
        deadline = time.monotonic() + float(params.get('deadline') or 60)
        for node_uuid, task_uuid in todo.items():
            if node_uuid not in locked:
                later.add(task_uuid)
                self.spawn(self._when_unlocked, context, action_uuid,
                           task_uuid, node_uuid, phase, params, deadline,
                           previous[task_uuid] == statuses.PENDING)
        locked = self._not_ended(todo, locked, previous)
        if locked:
            self._batch(context, action_uuid, todo, locked, phase, params,
                        outcomes, later)

    def _give_back(self, nodes, tasks, outcomes):
        """Release ``nodes`` and put ``tasks`` back to ``pending``: work
        not started because the action may not start any now. Their
        phase sends them again once it may (:data:`statuses.PENDING` is
        their outcome)."""
        dbapi.release_nodes(nodes, self.host, unstarted=tasks)
        outcomes.update(dict.fromkeys(tasks, statuses.PENDING))

    def _not_ended(self, todo, locked, previous):
        """The locked nodes whose task has not ended: a copy sent twice,
        or resumed, may find the other copy did the work while it came;
        that work was done under the lock, so it shows now."""
        again = [todo[n] for n in locked
                 if previous[todo[n]] == statuses.RUNNING]
        if not again:
            return locked
        ended = {t for t, s in dbapi.get_task_statuses(again).items()
                 if s in statuses.TASK_FINAL_STATUSES}
        if ended:
            dbapi.release_nodes([n for n in locked if todo[n] in ended],
                                self.host)
        return {n: node for n, node in locked.items()
                if todo[n] not in ended}

    def _when_unlocked(self, context, action_uuid, task_uuid, node_uuid,
                       phase, params, deadline, fresh):
        """The branch of a node another operation holds: wait for its
        lock until the phase's deadline, then work on it alone. Work
        started by this send (``fresh``) is given back while it waits,
        once the action may not start work (paused, aborted)."""
        todo = {node_uuid: task_uuid}
        outcomes, later = {}, set()
        try:
            while True:
                if fresh and not steering.may_start_work(action_uuid):
                    self._give_back([], [task_uuid], outcomes)
                    return
                locked = node_obj.Node.reserve_many(context, [node_uuid],
                                                    self.host)
                if locked:
                    break
                if time.monotonic() > deadline:
                    raise exception.NodeLocked(node=node_uuid,
                                               host='another operation')
                time.sleep(LOCK_RETRY)
            locked = self._not_ended(todo, locked,
                                     {task_uuid: statuses.RUNNING})
            if locked:
                self._batch(context, action_uuid, todo, locked, phase,
                            params, outcomes, later)
        except Exception as e:
            LOG.info('%s of node %s failed: %s', phase, node_uuid, e)
            dbapi.release_nodes([], self.host, failed={task_uuid: str(e)})
            outcomes[task_uuid] = statuses.FAILED
        finally:
            if task_uuid not in later:  # else its signal's branch ends it
                dispatcher.ENDED.ended({task_uuid: outcomes.get(task_uuid)})

    def _batch(self, context, action_uuid, todo, locked, phase, params,
               outcomes, later):
        # While the nodes are in flight, an outage of their backend (an
        # Ironic endpoint) is an event on the action (once per outage).
        with self._outages(action_uuid, list(locked.values())):
            self._work(context, action_uuid, todo, locked, phase, params,
                       outcomes, later)

    @staticmethod
    def _outages(action_uuid, nodes):
        by_driver, stack = {}, contextlib.ExitStack()
        for node in nodes:
            by_driver.setdefault(node.driver, []).append(node)
        for name, same in by_driver.items():
            try:
                driver = drivers.get_driver(name)
            except exception.InvalidParameterValue as e:
                # Its nodes fail their validation, which says why.
                LOG.debug('No outage watch for driver %s: %s', name, e)
                continue
            stack.enter_context(driver.outages(action_uuid, same, (
                functools.partial(event_obj.ironic_outage, action_uuid))))
        return stack

    def _work(self, context, action_uuid, todo, locked, phase, params,
              outcomes, later):
        """The phase of the ``locked`` nodes; their locks are released
        with the outcomes of their tasks, added to ``outcomes`` once
        committed (those waiting for a signal keep theirs until it comes:
        their tasks go to ``later``)."""
        nodes = list(locked.values())
        failed, signals, deployed = {}, {}, []
        # The nodes whose driver call for ``event`` succeeded: their
        # transition ends in the transaction that releases them (one
        # write less a phase).
        event = 'provide' if phase == groups.PREPARE else 'deploy'
        ended = []
        try:
            nodes = self._validate(nodes, failed)
            if phase == groups.PREPARE:
                ended = self._prepare(context, nodes, failed)
            else:
                made, ended = self._deploy(context, nodes, action_uuid,
                                           failed)
                if params.get('wait_for_signal'):
                    signals = self._signals(nodes, made, action_uuid,
                                            failed)
                deployed = [n for n in nodes if n.uuid not in failed
                            and n.uuid not in signals]
        except Exception as e:
            LOG.exception('%s of %d nodes failed', phase, len(nodes))
            for node in nodes:
                failed.setdefault(node.uuid, e)
            signals, deployed = {}, []
        for node_uuid, exc in failed.items():
            LOG.info('%s of node %s failed: %s', phase, node_uuid, exc)
        done = [n for n in locked if n not in signals or n in failed]
        succeeded = [todo[n] for n in done if n not in failed]
        # Success is written with the locks' release, in one transaction,
        # with the nodes' last state change and the group the deployed
        # nodes now carry; the notifications of the state changes once
        # committed.
        with dbapi.transaction():
            moves = provisioning.end_many(ended, event, self.host)
            self._add_group(deployed, params.get('group'))
            dbapi.release_nodes(
                done, self.host, succeeded=succeeded,
                failed={todo[n]: str(e) for n, e in failed.items()})
        provisioning.notify_moves(context, moves)
        outcomes.update(dict.fromkeys(succeeded, statuses.SUCCESS))
        outcomes.update(dict.fromkeys((todo[n] for n in failed),
                                      statuses.FAILED))
        # A node waiting for its signal waits from its committed state.
        for node in nodes:
            if node.uuid in signals and node.uuid not in failed:
                later.add(todo[node.uuid])
                self.spawn(self._until_signal, context, node,
                           signals[node.uuid], todo[node.uuid], params)

    @staticmethod
    def _validate(nodes, failed):
        ok = []
        for node in nodes:
            try:
                drivers.get_driver(node.driver).validate(node)
                ok.append(node)
            except Exception as e:
                failed[node.uuid] = e
        return ok

    def _prepare(self, context, nodes, failed):
        """manage then provide, skipping what is done.

        :returns: the nodes whose provide succeeded, for
            :func:`.provisioning.end_many`.
        """
        timeout = CONF.conductor.prepare_timeout
        work = [n for n in nodes
                if n.provision_state not in provisioning.PREPARED_STATES]
        failed.update(provisioning.run_many(
            context, [n for n in work if n.provision_state == states.ENROLL],
            'manage', timeout, self.host, self.pool()))
        provide = [n for n in work if n.uuid not in failed and
                   n.provision_state in (states.MANAGEABLE,
                                         states.CLEANFAIL)]
        sent = {n.uuid for n in provide}
        for node in work:
            if node.uuid not in failed and node.uuid not in sent:
                failed[node.uuid] = exception.ProvisioningFailed(
                    node=node.ident, reason='node is %s, cannot prepare it'
                    % node.provision_state)
        more, provided = provisioning.start_many(
            context, provide, 'provide', timeout, self.host, self.pool())
        failed.update(more)
        return provided

    def _deploy(self, context, nodes, action_uuid, failed):
        """Deploy the nodes not active yet, each with a new deployment
        record; a node already active is not deployed again.

        :returns: ``({node uuid: record}, deployed)``: the records made,
            and the nodes whose deploy succeeded, for
            :func:`.provisioning.end_many`.
        """
        work = [n for n in nodes if n.provision_state != states.ACTIVE]
        if not work:
            return {}, []
        made = deployments.create_many(work, action_uuid, self.host)
        infos = {node.uuid: deployments.instance_info(node, record, token)
                 for node, (record, token) in zip(work, made)}
        more, deployed = provisioning.start_many(
            context, work, 'deploy', CONF.conductor.deploy_timeout,
            self.host, self.pool(), infos)
        failed.update(more)
        return ({node.uuid: record for node, (record, _t) in zip(work, made)},
                deployed)

    @staticmethod
    def _signals(nodes, made, action_uuid, failed):
        """``{node uuid: record}`` whose final signal the phase waits for:
        the records this phase made and, for a node already active, its
        record of this action (a resumed phase). A node whose last
        deployment by another action ended badly fails; one whose last
        deployment ended well keeps that verdict."""
        records = {}
        for node in nodes:
            if node.uuid in failed:
                continue
            record = made.get(node.uuid)
            if record is None:
                record = deployments.current(node.uuid)
                if record is not None and record.action_uuid != action_uuid:
                    if (record.final
                            and record.status != deployments.COMPLETE):
                        failed[node.uuid] = exception.ProvisioningFailed(
                            node=node.ident, reason='its last deployment '
                            '%s ended %s: %s' % (record.uuid, record.status,
                                                 record.status_reason))
                    record = None
            if record is not None:
                records[node.uuid] = record
        return records

    def _until_signal(self, context, node, record, task_uuid, params):
        """The branch of a deployed node that waits for its final signal,
        holding its lock; its task ends with the signal's verdict."""
        status = None
        try:
            try:
                record = deployments.wait_for_final(
                    record.uuid, CONF.conductor.signal_timeout,
                    context=context)
            except exception.ProvisioningTimeout:
                notify.signal(context, deployments.Deployment.get(
                    context, record.uuid), deployments.FAILED,
                    component=notify.CONDUCTOR_SERVICE)
                raise
            if record.status != deployments.COMPLETE:
                raise exception.ProvisioningFailed(
                    node=node.ident,
                    reason=record.status_reason or 'deployment %s'
                    % record.status)
            self._add_group([node], params.get('group'))
        except Exception as e:
            LOG.info('deploy of node %s failed: %s', node.uuid, e)
            dbapi.release_nodes([node.uuid], self.host,
                                failed={task_uuid: str(e)})
            status = statuses.FAILED
        else:
            dbapi.release_nodes([node.uuid], self.host,
                                succeeded=[task_uuid])
            status = statuses.SUCCESS
        finally:
            dispatcher.ENDED.ended({task_uuid: status})

    def _add_group(self, nodes, group):
        """Add ``group`` to the nodes' deployed groups (nodes this
        conductor holds): one UPDATE per distinct list of groups the nodes
        had."""
        if not group:
            return
        by_groups = {}
        for node in nodes:
            had = tuple(node.deployed_groups or ())
            if group not in had:
                by_groups.setdefault(had, []).append(node)
        for had, same in by_groups.items():
            node_obj.Node.save_many(same, self.host, {
                'deployed_groups': list(had) + [group]})
