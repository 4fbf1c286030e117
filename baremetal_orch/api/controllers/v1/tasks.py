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
"""/v1/tasks/{uuid}?tree=true: the task tree of an action."""

import pecan
from pecan import rest

from baremetal_orch.api import utils
from baremetal_orch.common import exception
from baremetal_orch.common import policy
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import task as task_obj

FIELDS = ('uuid', 'kind', 'name', 'status', 'reason', 'node_uuid',
          'parent_uuid', 'action_uuid', 'created_at', 'started_at',
          'finished_at', 'updated_at')


def to_dict(task):
    return utils.record_doc(task, FIELDS)


def _start_order(action_uuid):
    """The groups of an action in the order they started; empty when the
    action is gone."""
    try:
        action = action_obj.Action.get(utils.context(), action_uuid)
    except exception.ActionNotFound:
        return []
    return action_obj.started_groups(action)


def tree(root):
    """The task and its subtasks, nested, from ONE query of the action's
    tasks (no query per level). Groups come in the order they started, as
    in the action's report; those never started follow in the plan's
    order."""
    rows = task_obj.Task.list(utils.context(), action_uuid=root.action_uuid)
    children = {}
    for row in rows:
        children.setdefault(row.parent_uuid, []).append(row)
    started = {name: i for i, name in enumerate(
        _start_order(root.action_uuid))}
    for siblings in children.values():
        siblings.sort(key=lambda r: (
            started.get(r.name, len(started)) if r.kind == 'group' else 0,
            r.id))

    def build(row):
        doc = to_dict(row)
        doc['subtasks'] = [build(c) for c in children.get(row.uuid, ())]
        return doc
    return build(root)


class TasksController(rest.RestController):
    """/v1/tasks"""

    @pecan.expose('json')
    def get_one(self, uuid):
        ctx = utils.context()
        policy.authorize('baremetal_orch:action:get', ctx)
        utils.check_uuid(uuid, 'task uuid')
        row = task_obj.Task.get(ctx, uuid)
        if utils.bool_param('tree', pecan.request.GET.get('tree')):
            return tree(row)
        doc = to_dict(row)
        doc['subtasks'] = [r.uuid for r in task_obj.Task.list(
            ctx, parent_uuid=row.uuid)]
        return doc
