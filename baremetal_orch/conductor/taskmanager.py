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
"""Node locks: two operations on one node never interleave.

A lock is the node row's ``reservation`` column, taken with a conditional
UPDATE, so it holds across threads, processes and conductors. A conductor
that starts again releases the locks it held before it died.
"""

import contextlib

from oslo_log import log

from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.drivers import provisioning
from baremetal_orch.objects import node as node_obj

LOG = log.getLogger(__name__)


class NodeTask:
    """A locked node with its driver."""

    def __init__(self, context, node, host):
        self.context = context
        self.node = node
        self.host = host
        self.driver = provisioning.get_driver(node.driver)
        self._released = False
        self._handed_over = False
        self._outcome = None

    def record_on_release(self, task_uuid, values):
        """Update the task row ``task_uuid`` with ``values`` in the same
        transaction that releases the lock (when the work succeeded)."""
        self._outcome = (task_uuid, values)

    def release(self):
        if not self._released:
            dbapi.release_node(self.node.uuid, self.host, task=self._outcome)
            self._released = True

    def hand_over(self):
        """Keep the lock after the ``with`` block: the caller now owns it
        and must call release() when its background work ends."""
        self._handed_over = True


@contextlib.contextmanager
def acquire(context, node_ident, host, purpose=''):
    """Lock a node; NodeLocked (409) when another operation holds it."""
    try:
        row = dbapi.reserve_node(node_ident, host)
    except exception.NodeLocked:
        LOG.debug('Node %s is locked, cannot %s', node_ident, purpose)
        raise
    node = node_obj.Node._from_db_object(context, node_obj.Node(), row)
    task = NodeTask(context, node, host)
    try:
        yield task
    except BaseException:
        task._outcome = None
        task.release()
        raise
    if not task._handed_over:
        task.release()
