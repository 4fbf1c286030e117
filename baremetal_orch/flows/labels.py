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
"""update_labels: a targeted action relabelling Kubernetes nodes.

One atom per target node in an unordered taskflow flow, persisted like the
site flows. A node that fails is reported and the others keep their new
labels (partial update, no rollback); the action fails when any node
failed. A targeted action never marks the site as deployed.

The atoms get the action (:class:`LabelsRuntime`) through taskflow's
storage, as the transient value ``runtime``; :func:`begin`,
:func:`restore` and :func:`finish` are this kind of action's part of
:mod:`baremetal_orch.flows.engine`.
"""

import concurrent.futures
import threading

from oslo_config import cfg
from oslo_log import log
from oslo_utils import timeutils
from taskflow.patterns import unordered_flow
from taskflow import task

from baremetal_orch.common import statuses
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import labels as labels_mod
from baremetal_orch.drivers import labels as label_drivers
from baremetal_orch.notifications import notify
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import event as event_obj
from baremetal_orch.objects import node as node_obj

CONF = cfg.CONF
LOG = log.getLogger(__name__)

_DRIVER = None
_DRIVER_LOCK = threading.Lock()


def get_driver():
    """The label driver of this service, loaded once per driver name."""
    global _DRIVER
    with _DRIVER_LOCK:
        if _DRIVER is None or _DRIVER[0] != CONF.labels.driver:
            _DRIVER = (CONF.labels.driver, label_drivers.get_driver())
        return _DRIVER[1]


def wanted_labels(node):
    """The full label set of a node: its labels plus the generated ones."""
    generated = labels_mod.generated_labels(
        rack_name=node.rack_name, shard=node.shard,
        groups=node.deployed_groups or ())
    return labels_mod.full_label_set(node.labels or {}, generated)


class LabelsRuntime:
    """What the atoms of an update_labels action need."""

    def __init__(self, context, action):
        self.context = context
        self.action = action
        self.action_uuid = action.uuid


class RelabelNode(task.Task):
    """Apply the full label set of one node; returns True or False."""

    def __init__(self, node_uuid, task_uuid):
        self.node_uuid = node_uuid
        self.task_uuid = task_uuid
        super().__init__(name='relabel:%s' % node_uuid)

    def execute(self, runtime):
        context, action = runtime.context, runtime.action
        dbapi.update_task(self.task_uuid, {'status': statuses.RUNNING,
                                           'started_at': timeutils.utcnow()})
        node = node_obj.Node.get(context, self.node_uuid)
        labels = wanted_labels(node)
        notify.labels(context, action, node, 'start')
        try:
            diff = get_driver().apply(node.name or node.uuid, labels)
        except Exception as e:
            LOG.warning('Relabelling node %s failed: %s', node.ident, e)
            dbapi.update_task(self.task_uuid, {
                'status': statuses.FAILED, 'reason': str(e),
                'finished_at': timeutils.utcnow()})
            event_obj.Event.record(
                event_obj.NODE_FAILED, resource_uuid=node.uuid,
                action_uuid=action.uuid,
                message='labels of node %s failed: %s' % (node.ident, e),
                details={'node': node.name, 'phase': 'labels',
                         'reason': str(e)})
            notify.labels(context, action, node, 'error', exc=e)
            return False
        node.applied_labels = labels
        node.save()
        dbapi.update_task(self.task_uuid, {
            'status': statuses.SUCCESS, 'details': diff.to_dict(),
            'finished_at': timeutils.utcnow()})
        notify.labels(context, action, node, 'end', diff=diff)
        return True


def flow_factory(action_uuid, targets):
    """:param targets: [[node uuid, task uuid], ...]."""
    flow = unordered_flow.Flow('labels:%s' % action_uuid)
    for node_uuid, task_uuid in targets:
        flow.add(RelabelNode(node_uuid, task_uuid))
    return flow


def factory_args(runtime):
    return [runtime.action_uuid, runtime.action.progress['targets']]


def executor(runtime):
    return concurrent.futures.ThreadPoolExecutor(
        max_workers=CONF.conductor.max_concurrent_nodes,
        thread_name_prefix='labels')


def begin(context, action, host, dispatcher, site=None):
    """Start a pending update_labels action: one task per target node."""
    nodes = [node_obj.Node.get(context, ident)
             for ident in action.parameters['target_nodes']]
    now = timeutils.utcnow()
    root = dbapi.create_task({'action_uuid': action.uuid, 'kind': 'action',
                              'name': action.name, 'status': statuses.RUNNING,
                              'started_at': now})
    task_uuids = dbapi.create_tasks([
        {'action_uuid': action.uuid, 'parent_uuid': root, 'kind': 'node',
         'name': n.name or n.uuid, 'node_uuid': n.uuid} for n in nodes])
    targets = [[n.uuid, t] for n, t in zip(nodes, task_uuids)]
    action.state = action_obj.RUNNING
    action.task_uuid = root
    action.started_at = now
    action.conductor = host
    action.progress = dict(action.progress or {}, targets=targets)
    action.save()
    event_obj.action_started(action, nodes=len(targets))
    notify.action(context, action, 'start')
    return LabelsRuntime(context, action)


def restore(context, action, dispatcher):
    return LabelsRuntime(context, action)


def finish(runtime, error=None):
    context = runtime.context
    action = action_obj.Action.get(context, runtime.action_uuid)
    rows = dbapi.list_tasks(action_uuid=action.uuid, kind='node')
    relabeled = sorted(r.name for r in rows if r.status == statuses.SUCCESS)
    failed = {r.name: r.reason for r in rows if r.status != statuses.SUCCESS}
    ok = not failed and error is None
    now = timeutils.utcnow()
    dbapi.update_task(action.task_uuid, {
        'status': statuses.SUCCESS if ok else statuses.FAILED,
        'finished_at': now,
        'reason': None if ok else 'nodes not relabeled: %s'
        % ', '.join(sorted(failed)) or str(error)})
    action.report = {'requested': list(action.parameters['target_nodes']),
                     'relabeled': relabeled,
                     'not_relabeled': sorted(failed),
                     'errors': failed}
    action.state = action_obj.COMPLETE if ok else action_obj.FAILED
    action.result = statuses.SUCCESS if ok else statuses.FAILED
    action.finished_at = now
    event_obj.action_finished(action, error)
    notify.action(context, action, 'end' if ok else 'error', exc=error)
