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
"""Running actions in a conductor: start, resume, take over, node work."""

import concurrent.futures
import contextlib
import threading
import time

from oslo_config import cfg
from oslo_log import log
from oslo_utils import timeutils
from taskflow import engines
from taskflow.persistence import models as tf_models

from baremetal_orch.common import exception
from baremetal_orch.conductor import deployments
from baremetal_orch.conductor import provisioning
from baremetal_orch.conductor import rpcapi as rpcapi_mod
from baremetal_orch.conductor import taskmanager
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import site as site_mod
from baremetal_orch.deployment import strategy as strategy_mod
from baremetal_orch.flows import persistence
from baremetal_orch.flows import runtime as runtime_mod
from baremetal_orch.flows import site_deploy
from baremetal_orch.notifications import notify
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import event as event_obj

CONF = cfg.CONF
LOG = log.getLogger(__name__)

SITE_ACTIONS = (action_obj.DEPLOY_SITE, action_obj.UPDATE_SITE)


def resolve_groups(strategy):
    """{group: [node names]} with one indexed query per group."""
    return {g.name: dbapi.resolve_selectors(g.selectors)
            for g in strategy.groups}


class ActionRunner:
    """Runs the actions of one conductor, each flow in its own thread."""

    def __init__(self, manager):
        self.manager = manager
        self.host = manager.host
        self.rpcapi = rpcapi_mod.ConductorAPI()
        self.dispatcher = runtime_mod.NodeDispatcher(self.rpcapi)
        self._threads = {}
        self._lock = threading.Lock()

    # Starting, resuming, taking over ---------------------------------------

    def start(self, context, action_uuid):
        action = action_obj.Action.get(context, action_uuid)
        if action.state != action_obj.PENDING:
            return
        self._refuse_if_busy(context, action)
        if action.name in SITE_ACTIONS:
            self._start_site(context, action)
        else:
            from baremetal_orch.flows import labels as labels_flow
            labels_flow.start(self, context, action)

    @staticmethod
    def _held_nodes(action):
        """The names of the nodes an action holds (as the API counts them:
        its resolved groups, or its target nodes)."""
        params = action.parameters or {}
        if action.name == action_obj.UPDATE_LABELS:
            return set(params.get('target_nodes') or ())
        site = (action.progress or {}).get('site')
        if site:
            groups = site.get('group_nodes', {})
        elif params.get('strategy'):
            groups = resolve_groups(strategy_mod.parse(params['strategy']))
        else:
            return set()
        return {name for names in groups.values() for name in names}

    def _refuse_if_busy(self, context, action):
        """Fail ``action`` and raise NodesBusy (409) when an active action
        created before it holds some of its nodes.

        The API refuses such an action before creating it, but two requests
        at the same instant both pass that check (drill R5): of two
        overlapping actions, the first created runs and the other ends here.
        """
        mine = None
        for other in dbapi.list_active_actions():
            if other.id >= action.id:
                continue
            if mine is None:
                mine = self._held_nodes(action)
            overlap = sorted(mine & self._held_nodes(other))
            if overlap:
                error = exception.NodesBusy(nodes=', '.join(overlap),
                                            action=other.uuid)
                LOG.warning('Action %s refused: %s', action.uuid, error)
                self._fail(context, action.uuid, str(error))
                raise error

    def _start_site(self, context, action):
        strategy = strategy_mod.parse(action.parameters['strategy'])
        site = site_mod.SiteDeployment(strategy, resolve_groups(strategy))
        now = timeutils.utcnow()
        root = dbapi.create_task({
            'action_uuid': action.uuid, 'kind': 'action',
            'name': action.name, 'status': 'running', 'started_at': now})
        # In the plan's order: groups never started are listed that way.
        plan = strategy.topological_order()
        group_tasks = dict(zip(plan, dbapi.create_tasks([
            {'action_uuid': action.uuid, 'parent_uuid': root,
             'kind': 'group', 'name': name} for name in plan])))
        action.state = action_obj.RUNNING
        action.task_uuid = root
        action.started_at = now
        action.conductor = self.host
        action.progress = {'site': site.to_dict(), 'group_tasks': group_tasks}
        action.report = site.report()
        action.save()
        event_obj.action_started(action, groups=len(plan),
                                 nodes=len(site.tracker.statuses()))
        notify.action(context, action, 'start')
        book = tf_models.LogBook(action.uuid, uuid=action.uuid)
        deps = {g.name: list(g.depends_on) for g in strategy.groups}
        executor = self._executor(strategy)
        engine = engines.load_from_factory(
            site_deploy.flow_factory,
            factory_args=[action.uuid, strategy.names(), deps],
            store={'action_uuid': action.uuid},
            backend=persistence.get_backend(), book=book,
            engine='parallel', executor=executor)
        self._launch(context, action, site, group_tasks, root, engine,
                     executor)

    def _executor(self, strategy):
        # One worker per group at least: a group holds at most one running
        # atom, so atoms waiting for a group slot can never starve the
        # group that holds it.
        return concurrent.futures.ThreadPoolExecutor(
            max_workers=len(strategy.groups) + 1,
            thread_name_prefix='flow')

    def resume(self, context, action):
        """Resume a running action from its persisted flow."""
        if action.name not in SITE_ACTIONS:
            from baremetal_orch.flows import labels as labels_flow
            return labels_flow.resume(self, context, action)
        progress = action.progress or {}
        site = site_mod.SiteDeployment.from_dict(progress['site'])
        backend = persistence.get_backend()
        with contextlib.closing(backend.get_connection()) as conn:
            book = conn.get_logbook(action.uuid)
        flow_detail = next(iter(book))
        executor = self._executor(site.strategy)
        engine = engines.load_from_detail(flow_detail, backend=backend,
                                          engine='parallel',
                                          executor=executor)
        LOG.info('Resuming action %s on %s', action.uuid, self.host)
        self._launch(context, action, site, progress['group_tasks'],
                     action.task_uuid, engine, executor)

    def resume_own(self, context):
        """Resume the actions this host ran when it stopped."""
        for action in action_obj.Action.list(
                context, filters={'conductor': self.host,
                                  'state': [action_obj.RUNNING,
                                            action_obj.PENDING]}):
            self._resume_or_start(context, action)

    def take_over(self, context, dead_hosts):
        """Claim and resume the actions of conductors that died."""
        for action in action_obj.Action.list(
                context, filters={'state': [action_obj.RUNNING,
                                            action_obj.PENDING]}):
            if action.conductor not in dead_hosts:
                continue
            if dbapi.claim_action(
                    action.uuid, action.conductor, self.host,
                    heartbeat_timeout=CONF.conductor.heartbeat_timeout):
                LOG.warning('Taking over action %s of dead conductor %s',
                            action.uuid, action.conductor)
                event_obj.Event.record(
                    event_obj.ACTION_TAKEN_OVER, resource_uuid=action.uuid,
                    action_uuid=action.uuid,
                    message='conductor %s took over from dead conductor %s'
                    % (self.host, action.conductor),
                    details={'from': action.conductor, 'to': self.host})
                action.conductor = self.host
                action.obj_reset_changes(['conductor'])
                self._resume_or_start(context, action)

    def _resume_or_start(self, context, action):
        with self._lock:
            if action.uuid in self._threads:
                return
        try:
            if action.state == action_obj.PENDING:
                self.start(context, action.uuid)
            else:
                self.resume(context, action)
        except Exception as e:
            LOG.exception('Could not resume action %s', action.uuid)
            self._fail(context, action.uuid, str(e))

    # Running ---------------------------------------------------------------

    def _launch(self, context, action, site, group_tasks, root, engine,
                executor):
        runtime = runtime_mod.ActionRuntime(context, action, site,
                                            self.dispatcher, group_tasks,
                                            root)
        runtime_mod.register(runtime)
        thread = threading.Thread(
            target=self._run, args=(runtime, engine, executor),
            name='action-%s' % action.uuid, daemon=True)
        with self._lock:
            self._threads[action.uuid] = thread
        thread.start()

    def _run(self, runtime, engine, executor):
        error = None
        try:
            engine.run()
        except Exception as e:
            LOG.exception('Action %s failed', runtime.action_uuid)
            error = e
        finally:
            executor.shutdown(wait=False)
            try:
                self._finish(runtime, error)
            finally:
                runtime_mod.unregister(runtime.action_uuid)
                with self._lock:
                    self._threads.pop(runtime.action_uuid, None)

    def _finish(self, runtime, error=None):
        site = runtime.site
        skipped = site.skip_blocked()
        for group in skipped:
            runtime._group_task(group, status='failed',
                                reason='dependency_failed',
                                finished_at=timeutils.utcnow())
        runtime._groups_finished(skipped)
        state, result = site.outcome()
        if error is not None or state == site_mod.STATE_RUNNING:
            state, result = action_obj.FAILED, 'failed'
        runtime.checkpoint()
        now = timeutils.utcnow()
        dbapi.update_task(runtime.root_task, {
            'status': 'success' if state == action_obj.COMPLETE
            else 'failed', 'finished_at': now,
            'reason': str(error) if error else result})
        action = action_obj.Action.get(runtime.context, runtime.action_uuid)
        action.state = state
        action.result = result
        action.finished_at = now
        action.save()
        event_obj.action_finished(action, error)
        notify.action(runtime.context, action,
                      'end' if state == action_obj.COMPLETE else 'error',
                      exc=error)
        LOG.info('Action %s ended %s (%s)', action.uuid, state, result)

    def _fail(self, context, action_uuid, reason):
        dbapi.update_action(action_uuid, {
            'state': action_obj.FAILED, 'result': 'failed',
            'finished_at': timeutils.utcnow(),
            'report': {'error': reason}})
        event_obj.action_finished(
            action_obj.Action.get(context, action_uuid), reason)

    def wait(self, timeout=None):
        """Wait for every running action (tests, shutdown)."""
        with self._lock:
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(timeout)

    def stop(self):
        """Flows are resumed by the next conductor; nothing to undo."""

    # Per-node work (on the node's owner) ------------------------------------

    def run_node_phase(self, context, action_uuid, task_uuid, node_uuid,
                       phase, params):
        previous = dbapi.start_task(task_uuid,
                                    runtime_mod.FINAL_TASK_STATUSES)
        if previous is None:
            return
        deadline = time.monotonic() + float(params.get('deadline') or 60)
        try:
            while True:
                try:
                    with taskmanager.acquire(context, node_uuid, self.host,
                                             purpose=phase) as task:
                        if previous == 'running' and self._task_ended(
                                task_uuid):
                            # Sent twice: the other copy did the work
                            # while this one waited for the lock.
                            return
                        self._node_phase(context, task, action_uuid, phase,
                                         params)
                        # Success is written with the lock's release.
                        task.record_on_release(task_uuid, {
                            'status': 'success',
                            'finished_at': timeutils.utcnow()})
                    break
                except exception.NodeLocked:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
        except Exception as e:
            LOG.info('%s of node %s failed: %s', phase, node_uuid, e)
            dbapi.update_task(task_uuid, {
                'status': 'failed', 'reason': str(e),
                'finished_at': timeutils.utcnow()})

    @staticmethod
    def _task_ended(task_uuid):
        status = dbapi.get_task_statuses([task_uuid]).get(task_uuid)
        return status in runtime_mod.FINAL_TASK_STATUSES

    def _node_phase(self, context, task, action_uuid, phase, params):
        task.driver.validate(task.node)
        if phase == 'prepare':
            provisioning.prepare(context, task,
                                 CONF.conductor.prepare_timeout)
            return
        node = task.node
        wait = params.get('wait_for_signal')
        record = None
        if node.provision_state != provisioning.states.ACTIVE:
            record, token = deployments.create(node, action_uuid, self.host)
            info = deployments.instance_info(node, record, token)
            provisioning.deploy(context, task, CONF.conductor.deploy_timeout,
                                info)
        elif wait:
            # Already active: a resumed phase waits for the record of this
            # action; a later run keeps the verdict of the last signal.
            record = deployments.current(node.uuid)
            if record is not None and record.action_uuid != action_uuid:
                if record.final and record.status != deployments.COMPLETE:
                    raise exception.ProvisioningFailed(
                        node=node.ident, reason='its last deployment %s '
                        'ended %s: %s' % (record.uuid, record.status,
                                          record.status_reason))
                record = None
        if wait and record is not None:
            record = deployments.wait_for_final(
                record.uuid, CONF.conductor.signal_timeout,
                context=context)
            if record.status != deployments.COMPLETE:
                raise exception.ProvisioningFailed(
                    node=node.ident,
                    reason=record.status_reason or 'deployment %s'
                    % record.status)
        group = params.get('group')
        if group and group not in (node.deployed_groups or []):
            node.deployed_groups = list(node.deployed_groups or []) + [group]
            node.save()
