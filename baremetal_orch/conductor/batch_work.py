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
"""The phase of many nodes of one action at once (RPC API 1.2).

What :class:`~baremetal_orch.conductor.node_work.NodeWork` does for one
node, done for a batch of a group's nodes with a bounded number of
transactions: their task rows are started in one, their locks taken in one
conditional UPDATE, each state change of the nodes together is one UPDATE,
their deployment records are written together, and the locks are released
with the outcomes of their tasks in one transaction. The driver calls, the
only per-node round trips, run side by side (up to
``[conductor]max_concurrent_nodes``).

The crash-safety is the one-node path's: a task is ``success`` only in the
transaction that releases its node's lock after the work; a node that a
killed conductor left in a working state is failed out by recovery and its
work sent again; work sent twice finds its task ended. A node locked by
another operation, and a phase that waits for the nodes' signals, go the
one-node path (which waits for the lock, or for the signal).
"""

from concurrent import futures
import threading

from oslo_config import cfg
from oslo_log import log

from baremetal_orch.common import exception
from baremetal_orch.common import states
from baremetal_orch.common import statuses
from baremetal_orch.conductor import provisioning
from baremetal_orch.db import api as dbapi
from baremetal_orch.drivers import provisioning as drivers
from baremetal_orch.flows import dispatcher
from baremetal_orch.objects import deployment as deployments
from baremetal_orch.objects import node as node_obj

CONF = cfg.CONF
LOG = log.getLogger(__name__)


class BatchWork:
    """Prepares or deploys a batch of nodes of one action."""

    def __init__(self, host, single, spawn):
        """:param single: the one-node :class:`NodeWork`.
        :param spawn: runs a callable in the background (the manager's).
        """
        self.host = host
        self.single = single
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
        """:param items: ``[(task uuid, node uuid)]``."""
        try:
            self._run(context, action_uuid, items, phase, params)
        finally:
            # The outcomes of the batch are committed (the nodes sent one
            # by one wake their phase themselves): the phase waiting for
            # them here looks now.
            dispatcher.ENDED.ended([t for t, _n in items])

    def _run(self, context, action_uuid, items, phase, params):
        previous = dbapi.start_tasks([t for t, _n in items],
                                     dispatcher.FINAL_TASK_STATUSES)
        todo = {n: t for t, n in items if t in previous}
        if not todo:
            return
        if params.get('wait_for_signal'):
            self._one_by_one(context, action_uuid, todo, phase, params)
            return
        locked = node_obj.Node.reserve_many(context, list(todo), self.host)
        # Held by another operation: the one-node path waits for the lock.
        self._one_by_one(context, action_uuid, {
            n: t for n, t in todo.items() if n not in locked}, phase, params)
        again = [todo[n] for n in locked
                 if previous[todo[n]] == statuses.RUNNING]
        if again:
            # Sent twice or resumed: the other copy may have done the work
            # while this one came; it is done under the lock, so it shows.
            ended = {t for t, s in dbapi.get_task_statuses(again).items()
                     if s in dispatcher.FINAL_TASK_STATUSES}
            if ended:
                dbapi.release_nodes([n for n in locked
                                     if todo[n] in ended], self.host)
                locked = {n: node for n, node in locked.items()
                          if todo[n] not in ended}
        if locked:
            self._batch(context, action_uuid, todo, locked, phase, params)

    def _one_by_one(self, context, action_uuid, todo, phase, params):
        for node_uuid, task_uuid in todo.items():
            self.spawn(self.single.run_node_phase, context, action_uuid,
                       task_uuid, node_uuid, phase, params)

    def _batch(self, context, action_uuid, todo, locked, phase, params):
        nodes = list(locked.values())
        failed = {}
        pool = self.pool()
        try:
            nodes = self._validate(nodes, failed)
            if phase == 'prepare':
                self._prepare(context, nodes, failed, pool)
            else:
                self._deploy(context, nodes, action_uuid, failed, pool)
                self._add_group([n for n in nodes if n.uuid not in failed],
                                params.get('group'))
        except Exception as e:
            LOG.exception('%s of %d nodes failed', phase, len(nodes))
            for node in nodes:
                failed.setdefault(node.uuid, e)
        for node_uuid, exc in failed.items():
            LOG.info('%s of node %s failed: %s', phase, node_uuid, exc)
        # Success is written with the locks' release, in one transaction.
        dbapi.release_nodes(
            list(locked), self.host,
            succeeded=[todo[n] for n in locked if n not in failed],
            failed={todo[n]: str(e) for n, e in failed.items()})

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

    def _prepare(self, context, nodes, failed, pool):
        """manage then provide, skipping what is done (as
        :func:`provisioning.prepare` for each node)."""
        timeout = CONF.conductor.prepare_timeout
        work = [n for n in nodes
                if n.provision_state not in provisioning.PREPARED_STATES]
        for event, from_states in (
                ('manage', (states.ENROLL,)),
                ('provide', (states.MANAGEABLE, states.CLEANFAIL))):
            failed.update(provisioning.run_many(
                context, [n for n in work if n.uuid not in failed and
                          n.provision_state in from_states],
                event, timeout, self.host, pool))
        for node in work:
            if (node.uuid not in failed and node.provision_state not in
                    provisioning.PREPARED_STATES):
                failed[node.uuid] = exception.ProvisioningFailed(
                    node=node.ident, reason='node is %s, cannot prepare it'
                    % node.provision_state)

    def _deploy(self, context, nodes, action_uuid, failed, pool):
        """Deploy the nodes not active yet, each with a new deployment
        record (as :func:`provisioning.deploy` for each node)."""
        work = [n for n in nodes if n.provision_state != states.ACTIVE]
        if not work:
            return
        made = deployments.create_many(work, action_uuid, self.host)
        infos = {node.uuid: deployments.instance_info(node, record, token)
                 for node, (record, token) in zip(work, made)}
        failed.update(provisioning.run_many(
            context, work, 'deploy', CONF.conductor.deploy_timeout,
            self.host, pool, infos))

    def _add_group(self, nodes, group):
        """Add ``group`` to the nodes' deployed groups: one UPDATE per
        distinct list of groups the nodes had."""
        if not group:
            return
        by_groups = {}
        for node in nodes:
            groups = tuple(node.deployed_groups or ())
            if group not in groups:
                by_groups.setdefault(groups, []).append(node)
        for groups, same in by_groups.items():
            node_obj.Node.save_many(same, self.host, {
                'deployed_groups': list(groups) + [group]})
