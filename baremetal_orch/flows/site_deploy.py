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
"""deploy_site and update_site as a taskflow graph flow (seed 000).

One linear sub-flow per group — prepare, check the criteria, deploy, check
the criteria — linked by the groups' ``depends_on``. A link carries a
decider: a group whose dependency failed is never attempted (its sub-flow is
ignored, nothing is reverted) and the rules of
:mod:`baremetal_orch.deployment.site` record it as ``dependency_failed``.

The flow is built from plain data by :func:`flow_factory`, so taskflow can
rebuild it from its persisted details when another conductor resumes the
action. The atoms reach the live state of their action (the
SiteDeployment, the node dispatcher) through
:mod:`baremetal_orch.flows.runtime`.
"""

from taskflow.patterns import graph_flow
from taskflow.patterns import linear_flow
from taskflow import task

from baremetal_orch.flows import runtime as runtime_mod

FACTORY = 'baremetal_orch.flows.site_deploy.flow_factory'


class _GroupAtom(task.Task):
    """An atom of one group; its name is '<step>:<group>'."""

    def __init__(self, step, group, **kwargs):
        self.group = group
        super().__init__(name='%s:%s' % (step, group), **kwargs)


class PreparePhase(_GroupAtom):
    """Prepare the group's not-yet-started nodes; returns {node: ok}."""

    def __init__(self, group):
        super().__init__('prepare', group,
                         provides='prepare_results:%s' % group)

    def execute(self, action_uuid):
        return runtime_mod.get(action_uuid).run_prepare(self.group)


class CheckPrepare(_GroupAtom):
    """Record the prepare results and check the group's criteria."""

    def __init__(self, group):
        super().__init__('check_prepare', group,
                         rebind={'results': 'prepare_results:%s' % group},
                         provides='prepare_ok:%s' % group)

    def execute(self, action_uuid, results):
        return runtime_mod.get(action_uuid).check_prepare(self.group, results)


class DeployPhase(_GroupAtom):
    """Deploy the group's prepared nodes (none when prepare missed)."""

    def __init__(self, group):
        super().__init__('deploy', group,
                         rebind={'prepare_ok': 'prepare_ok:%s' % group},
                         provides='deploy_results:%s' % group)

    def execute(self, action_uuid, prepare_ok):
        return runtime_mod.get(action_uuid).run_deploy(self.group, prepare_ok)


class CheckDeploy(_GroupAtom):
    """Record the deploy results; the group ends."""

    def __init__(self, group):
        super().__init__('check_deploy', group,
                         rebind={'results': 'deploy_results:%s' % group},
                         provides='group_status:%s' % group)

    def execute(self, action_uuid, results):
        return runtime_mod.get(action_uuid).check_deploy(self.group, results)


class _Decider:
    """Decider of the link into ``group``: run it only when all of its
    dependencies succeeded; otherwise record ``dependency_failed``."""

    def __init__(self, action_uuid, group):
        self.action_uuid = action_uuid
        self.group = group

    def __call__(self, history):
        return runtime_mod.get(self.action_uuid).decide(self.group)


def flow_factory(action_uuid, groups, dependencies):
    """The graph flow of an action.

    :param groups: group names, in document order.
    :param dependencies: {group: [groups it depends on]}.
    """
    flow = graph_flow.Flow('site:%s' % action_uuid)
    subflows = {}
    for name in groups:
        sub = linear_flow.Flow('group:%s' % name)
        sub.add(PreparePhase(name), CheckPrepare(name), DeployPhase(name),
                CheckDeploy(name))
        subflows[name] = sub
        flow.add(sub)
    for name in groups:
        for dep in dependencies.get(name, ()):
            flow.link(subflows[dep], subflows[name],
                      decider=_Decider(action_uuid, name),
                      decider_depth='FLOW')
    return flow
