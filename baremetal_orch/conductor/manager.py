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
"""The conductor's RPC endpoint: thin, it locks nodes and delegates."""

import threading

import futurist
from futurist import waiters
from oslo_config import cfg
from oslo_log import log
import oslo_messaging as messaging
from oslo_utils import excutils
from oslo_utils import timeutils

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.common import states
from baremetal_orch.conductor import admission
from baremetal_orch.conductor import control
from baremetal_orch.conductor import node_work
from baremetal_orch.conductor import periodics
from baremetal_orch.conductor import provisioning
from baremetal_orch.conductor import recovery
from baremetal_orch.conductor import rpcapi
from baremetal_orch.conductor import taskmanager
from baremetal_orch.db import api as dbapi
from baremetal_orch.flows import dispatcher
from baremetal_orch.flows import engine
from baremetal_orch.ironic import peers as ironic_peers
from baremetal_orch.ironic import sync as ironic_sync
from baremetal_orch.notifications import notify
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import node as node_obj
from baremetal_orch.objects import service as service_obj

CONF = cfg.CONF
LOG = log.getLogger(__name__)


class ConductorManager:
    """The methods the API and other conductors call over RPC."""

    # Version 1.0: Initial version
    RPC_API_VERSION = '1.0'
    target = messaging.Target(version=RPC_API_VERSION)

    def __init__(self, host=None):
        self.host = host or CONF.host
        self.executor = None
        self.periodics = None
        self.actions = None
        self.node_work = None
        self.ironic_sync = None
        #: Set once del_host began: no new background work is taken.
        self.stopping = False
        self._inflight = set()
        self._inflight_lock = threading.Lock()

    # Life cycle ------------------------------------------------------------

    def prepare_host(self):
        """Make the endpoint able to serve calls (before the RPC server
        starts listening); idempotent."""
        if self.executor is None:
            self.executor = futurist.ThreadPoolExecutor(
                max_workers=CONF.conductor.workers)
            self.actions = engine.ActionEngines(
                self.host, dispatcher.NodeDispatcher(
                    rpcapi.ConductorAPI(own=self)))
            self.node_work = node_work.NodeWork(self.host, self._spawn)
            self.periodics = periodics.Periodics(self)
            engine.warm_up()
            # What this host's previous life left (nodes in a working
            # state, locks) is cleared before the RPC server delivers
            # anything: a message that waited in the queue must not start
            # work that this recovery would then fail out from under it.
            ctx = orch_context.get_admin_context()
            recovery.recover_host(ctx, self.host, self.host)
            dbapi.clear_reservations(self.host)

    def init_host(self):
        """Register the service and start working.

        Call it once the RPC server listens: from the moment the service
        record looks alive, other processes send it work.
        """
        self.prepare_host()
        ctx = orch_context.get_admin_context()
        service_obj.Service.register(
            ctx, self.host, shard_key=CONF.ironic.shard_key,
            conductor_group=CONF.ironic.conductor_group)
        ironic_peers.warn_deprecated_peer_list(CONF)
        if ironic_sync.enabled(CONF):
            self.ironic_sync = ironic_sync.SyncJob(self.host, ctx)
            self.periodics.extra_jobs.append(
                ('ironic_sync', CONF.conductor.sync_interval,
                 self.ironic_sync))
            self._spawn(self.ironic_sync)  # the start-up sync
        self.periodics.start()
        self.actions.resume_own(ctx)
        # The consoles this conductor had enabled before it stopped.
        self._spawn(self.restore_consoles, ctx)
        LOG.info('Conductor %s started (shard %s, conductor group %s)',
                 self.host, CONF.ironic.shard_key,
                 CONF.ironic.conductor_group)

    def del_host(self, wait=True, timeout=None):
        """Stop: no new background work; the periodic tasks end; the node
        work running now finishes (``wait``, at most ``timeout`` seconds).

        What is left (an action's next groups, work past the timeout) is
        resumable: the next start of this host, or a peer taking it over,
        resumes it from the database, as after a crash.
        """
        self.stopping = True
        if self.periodics:
            self.periodics.stop()
        if self.actions:
            self.actions.stop()
        if self.node_work:
            self.node_work.stop()
        if self.executor:
            if wait:
                with self._inflight_lock:
                    inflight = list(self._inflight)
                done, left = waiters.wait_for_all(inflight, timeout)
                if left:
                    LOG.warning('Conductor %s stops with %d node work(s) '
                                'still running after %ss; they resume at '
                                'the next start or on a peer', self.host,
                                len(left), timeout)
            self.executor.shutdown(wait=False)
        LOG.info('Conductor %s stopped', self.host)

    def _spawn(self, func, *args, **kwargs):
        if self.stopping:
            # As if this process had ended before the work began: the
            # work is resumed (its task row is still pending).
            LOG.info('Conductor %s is stopping: %s not started', self.host,
                     getattr(func, '__name__', func))
            return None
        future = self.executor.submit(func, *args, **kwargs)
        with self._inflight_lock:
            self._inflight.add(future)
        future.add_done_callback(self._forget)
        return future

    def _forget(self, future):
        with self._inflight_lock:
            self._inflight.discard(future)

    # Node states -----------------------------------------------------------

    @messaging.expected_exceptions(exception.BaremetalOrchException)
    def do_provisioning_action(self, context, node_uuid, target):
        """PUT /v1/nodes/{ident}/states/provision: validate and lock now,
        run the driver in the background."""
        event = states.VERBS.get(target)
        if event is None:
            raise exception.InvalidParameterValue(
                reason='Unknown provision target %s' % target)
        timeout = (CONF.conductor.deploy_timeout if event == 'deploy'
                   else CONF.conductor.prepare_timeout)
        with taskmanager.acquire(context, node_uuid, self.host,
                                 purpose=target) as task:
            task.driver.validate(task.node)
            nxt = provisioning.check_transition(task.node, event)
            if nxt in states.WORKING_STATES:
                provisioning.begin(context, task.node, event)
            # else a stable transition: made once the driver succeeded.
            task.hand_over()
            self._spawn(self._run_provision, context, task, event, timeout)

    def _run_provision(self, context, task, event, timeout):
        try:
            instance_info = task.node.instance_info if event == 'deploy' \
                else None
            provisioning.run(context, task, event, timeout, instance_info)
        except Exception:
            # Recorded on the node by provisioning.run (last_error).
            pass
        finally:
            task.release()

    @messaging.expected_exceptions(exception.BaremetalOrchException)
    def set_maintenance(self, context, node_uuid, enabled, reason=None):
        with taskmanager.acquire(context, node_uuid, self.host,
                                 purpose='maintenance') as task:
            node = task.node
            task.driver.set_maintenance(node, enabled, reason)
            node.maintenance = enabled
            node.maintenance_reason = reason if enabled else None
            node.save()
            return node

    @messaging.expected_exceptions(exception.BaremetalOrchException)
    def set_console(self, context, node_uuid, enabled):
        with taskmanager.acquire(context, node_uuid, self.host,
                                 purpose='console') as task:
            node = task.node
            notify.console(context, node, 'set', 'start')
            try:
                task.driver.set_console(node, enabled)
            except Exception as e:
                notify.console(context, node, 'set', 'error', exc=e)
                raise
            node.console_enabled = enabled
            node.save()
            notify.console(context, node, 'set', 'end')
            return node

    def restore_consoles(self, context, dead_host=None):
        """Re-enable consoles: console_restore notifications.

        :param dead_host: None at start-up: the consoles of this
            conductor's nodes. On a take-over, the consoles of the nodes of
            ``dead_host`` that this conductor now serves.
        """
        owner = dead_host or self.host
        alive = None
        # Only the nodes with a console on: a conductor of thousands of
        # nodes built an object of each at its start to find them.
        for node in node_obj.Node.list(context, filters={
                'conductor': owner, 'console_enabled': True}):
            if dead_host is not None:
                alive = alive if alive is not None else set(
                    rpcapi.live_hosts())
                if rpcapi.pick_host(node.uuid, alive,
                                    shard=node.shard) != self.host:
                    continue
            notify.console(context, node, 'restore', 'start')
            try:
                provisioning_driver = taskmanager.provisioning.get_driver(
                    node.driver)
                provisioning_driver.set_console(node, True)
            except Exception as e:
                LOG.warning('Could not restore the console of node %s: %s',
                            node.ident, e)
                notify.console(context, node, 'restore', 'error', exc=e)
                continue
            notify.console(context, node, 'restore', 'end')

    # Actions ---------------------------------------------------------------

    @messaging.expected_exceptions(exception.BaremetalOrchException)
    def admit_action(self, context, uuid, name, parameters, dry_run=False):
        """POST /v1/actions: check, create and start an action.

        :returns: the Action, or ``{"plan": ...}`` for a dry run.
        """
        if dry_run:
            if name == action_obj.UPDATE_LABELS:
                raise exception.InvalidAction(
                    reason='dry_run is only supported by site actions')
            return {'plan': admission.plan(context, name, parameters)}
        admitted = admission.admit(context, uuid, name, parameters,
                                   self.host)
        try:
            self.actions.start(context, admitted.action, site=admitted.site)
        except Exception:
            # An admission that fails leaves nothing behind: no pending
            # action, no running task, no held node.
            with excutils.save_and_reraise_exception():
                LOG.warning('Action %s could not start; removing it',
                            uuid, exc_info=True)
                admission.discard(uuid)
        return admitted.action

    def sweep_pending_actions(self, context):
        """Remove this conductor's actions left ``pending`` (not running
        here) for more than ``[conductor]pending_action_timeout`` seconds:
        a crash or an error between the rows of their admission and start
        left them holding their nodes. Returns their uuids."""
        timeout = CONF.conductor.pending_action_timeout
        running = self.actions.running()
        swept = []
        for action in action_obj.Action.list(
                context, filters={'state': [action_obj.PENDING],
                                  'conductor': self.host}):
            if (action.uuid in running or not timeutils.is_older_than(
                    action.created_at, timeout)):
                continue
            # Only while it is still pending: one that started meanwhile
            # is left alone.
            if admission.discard(action.uuid, only_pending=True):
                LOG.warning('Removed action %s, pending since %s and not '
                            'running: its start never completed',
                            action.uuid, action.created_at)
                swept.append(action.uuid)
        return swept

    @messaging.expected_exceptions(exception.BaremetalOrchException)
    def control_action(self, context, uuid, verb, reason=None):
        """POST /v1/actions/{uuid}/control: pause, resume or abort."""
        return control.take(context, uuid, verb, reason)

    def abort_nodes(self, context, node_uuids):
        """Abort what Ironic holds in a wait state for these nodes (cast
        by an aborted action's conductor to the nodes' owner)."""
        self._spawn(provisioning.abort_nodes, context, list(node_uuids))

    def run_nodes_phase(self, context, action_uuid, items, phase,
                        params=None):
        """Prepare or deploy a batch of nodes of an action (cast by the
        action's conductor to the nodes' owner): ``items`` is
        ``[(task uuid, node uuid)]``; the outcomes go to the task rows."""
        self._spawn(self.node_work.run, context, action_uuid,
                    [tuple(i) for i in items], phase, params or {})
