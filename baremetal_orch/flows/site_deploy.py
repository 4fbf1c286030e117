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
"""deploy_site and update_site as a taskflow flow of group atoms.

Each group is one atom -- its prepare phase, then its deploy phase, each
ending with the check of the group's criteria -- and the atoms run side
by side. When a group may start is decided in one place,
the site's rules
(:meth:`SiteDeployment.startable_groups`, through
:class:`~baremetal_orch.flows.slots.GroupSlots`): the plan's order, the
groups' ``depends_on`` and ``[conductor]max_concurrent_groups``. A group
whose dependency did not succeed is never started: the rules fail it with
``dependency_failed`` (:meth:`SiteRuntime.skip_blocked`) and its atom
ends without doing anything.

The flow is built from plain data by :func:`flow_factory`, so taskflow can
rebuild it from its persisted details when another conductor resumes the
action. The atoms reach the action's live state (:class:`SiteRuntime`)
through taskflow's storage: the engine injects it, transient, as
``runtime``.

:func:`begin`, :func:`restore` and :func:`finish` are this kind of
action's part of :mod:`baremetal_orch.flows.engine`.
"""

import concurrent.futures

from oslo_config import cfg
from oslo_log import log
from oslo_utils import timeutils
from taskflow.patterns import unordered_flow
from taskflow import task

from baremetal_orch.common import statuses
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import control
from baremetal_orch.deployment import groups
from baremetal_orch.deployment import site as site_mod
from baremetal_orch.flows import runtime as runtime_mod
from baremetal_orch.notifications import notify
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import event as event_obj

CONF = cfg.CONF
LOG = log.getLogger(__name__)

FACTORY = 'baremetal_orch.flows.site_deploy.flow_factory'


class GroupAtom(task.Task):
    """A group: its prepare phase, then its deploy phase, each ending
    with the check of the group's criteria; returns the group's status.

    One atom a group, not one a phase: where a resumed group goes on is
    the rules' state (:meth:`SiteRuntime.prepare` keeps a recorded
    verdict), so a second atom would only add taskflow's saves between
    the phases, on the group's critical path.
    """

    def __init__(self, group):
        self.group = group
        super().__init__(name='group:%s' % group,
                         provides='group_status:%s' % group)

    def execute(self, runtime):
        return runtime.guard(runtime.run_group, self.group)


def flow_factory(action_uuid, names):
    """The flow of an action: one atom per group, side by side.

    :param names: group names, in document order.
    """
    flow = unordered_flow.Flow('site:%s' % action_uuid)
    for name in names:
        flow.add(GroupAtom(name))
    return flow


def factory_args(runtime):
    return [runtime.action_uuid, list(runtime.site.strategy.names())]


def executor(runtime):
    """Threads of the flow. One worker per group at least: a group is one
    atom, so atoms waiting for a group slot can never starve the group
    that holds it."""
    return concurrent.futures.ThreadPoolExecutor(
        max_workers=len(runtime.site.strategy.groups) + 1,
        thread_name_prefix='flow')


def begin(context, action, host, dispatcher, site=None):
    """Start a pending site action: its task tree, its state, its events.

    :param site: the :class:`SiteDeployment` admission built, when this
        process admitted the action; else rebuilt from the snapshot
        admission stored with it (and the state a retry starts from).
    :returns: the :class:`SiteRuntime`.
    """
    progress = action.progress or {}
    if site is None:
        site = site_mod.SiteDeployment.from_dict(
            action.parameters['snapshot'], progress.get('site'))
    now = timeutils.utcnow()
    root = dbapi.create_task({
        'action_uuid': action.uuid, 'kind': 'action', 'name': action.name,
        'status': statuses.RUNNING, 'started_at': now})
    # In the plan's order: groups never started are listed that way.
    plan = site.strategy.topological_order()
    group_tasks = dict(zip(plan, dbapi.create_tasks([
        {'action_uuid': action.uuid, 'parent_uuid': root,
         'kind': 'group', 'name': name} for name in plan])))
    action.state = action_obj.RUNNING
    action.task_uuid = root
    action.started_at = now
    action.conductor = host
    runtime = runtime_mod.SiteRuntime(context, action, site, dispatcher,
                                      group_tasks, root)
    # The progress is shown from the start, also of an action paused
    # before its first group.
    action.progress = dict(progress, site=site.to_dict(),
                           group_tasks=group_tasks,
                           summary=runtime.summary())
    action.save()
    event_obj.action_started(action, groups=len(plan),
                             nodes=len(site.tracker.statuses()))
    notify.action(context, action, 'start')
    return runtime


def restore(context, action, dispatcher):
    """The runtime of a running site action, from its last checkpoint."""
    progress = action.progress or {}
    site = site_mod.SiteDeployment.from_dict(action.parameters['snapshot'],
                                             progress['site'])
    return runtime_mod.SiteRuntime(context, action, site, dispatcher,
                                   progress['group_tasks'], action.task_uuid)


def finish(runtime, error=None):
    """Record the end of the action: its state, result, report, events."""
    site = runtime.site
    runtime.skip_blocked()
    state, result = site.outcome()
    aborted = runtime.steering.aborting()
    if error is not None or state == groups.STATE_RUNNING:
        state, result = action_obj.FAILED, statuses.FAILED
    elif aborted:
        state, result = action_obj.CANCELLED, statuses.FAILED
    runtime.checkpoint(fresh=True)
    now = timeutils.utcnow()
    dbapi.update_task(runtime.root_task, {
        'status': (statuses.SUCCESS if state == action_obj.COMPLETE
                   else statuses.FAILED),
        'finished_at': now, 'reason': str(error) if error else result})
    action = action_obj.Action.get(runtime.context, runtime.action_uuid)
    action.state = state
    action.result = result
    action.finished_at = now
    # It no longer changes: stored, as what an ended action shows.
    action.report = site.report()
    if action.control != control.ABORT:
        # A pause or a window no longer applies to an ended action.
        action.state_reason = None
    action.control = None
    event_obj.action_finished(action, error)
    if aborted:
        notify.action_control(runtime.context, action, control.ABORT, 'end',
                              reason=action.state_reason)
    notify.action(runtime.context, action,
                  'end' if state == action_obj.COMPLETE else 'error',
                  exc=error)
    LOG.info('Action %s ended %s (%s)', action.uuid, state, result)
