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
"""The work of an action on one node, done by the conductor that owns it.

The action's conductor sends each node of a phase here
(:class:`baremetal_orch.flows.dispatcher.NodeDispatcher`); the outcome goes
to the node's task row. The work is idempotent: a copy sent twice finds the
task ended under the node's lock and does nothing.
"""

import time

from oslo_config import cfg
from oslo_log import log
from oslo_utils import timeutils

from baremetal_orch.common import exception
from baremetal_orch.conductor import provisioning
from baremetal_orch.conductor import taskmanager
from baremetal_orch.db import api as dbapi
from baremetal_orch.flows import dispatcher
from baremetal_orch.notifications import notify
from baremetal_orch.objects import deployment as deployments

CONF = cfg.CONF
LOG = log.getLogger(__name__)


class NodeWork:
    """Prepares and deploys nodes for the actions of any conductor."""

    def __init__(self, host):
        self.host = host

    def run_node_phase(self, context, action_uuid, task_uuid, node_uuid,
                       phase, params):
        try:
            self._run_node_phase(context, action_uuid, task_uuid, node_uuid,
                                 phase, params)
        finally:
            # Committed (or ended before): the phase waiting for it here
            # looks now.
            dispatcher.ENDED.ended([task_uuid])

    def _run_node_phase(self, context, action_uuid, task_uuid, node_uuid,
                        phase, params):
        previous = dbapi.start_task(task_uuid,
                                    dispatcher.FINAL_TASK_STATUSES)
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
        return status in dispatcher.FINAL_TASK_STATUSES

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
        group = params.get('group')
        if group and group not in (node.deployed_groups or []):
            node.deployed_groups = list(node.deployed_groups or []) + [group]
            node.save()
