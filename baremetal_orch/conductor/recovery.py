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
"""Recovery of the nodes a dead (or restarted) conductor was working on.

A node left in a working state (verifying, cleaning, deploying, deleting)
under the lock of a conductor that died is failed out of it, with a
last_error naming the conductor, and its lock released; the failure states
accept the verb again, so a resumed action redoes the interrupted step.
"""

from oslo_log import log

from baremetal_orch.common import exception
from baremetal_orch.common import states
from baremetal_orch.conductor import provisioning
from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import node as node_obj

LOG = log.getLogger(__name__)


def recover_host(context, dead_host, my_host, heartbeat_timeout=None):
    """Fail the interrupted work of ``dead_host``; release its locks.

    :param heartbeat_timeout: recovering another conductor: a lock is
        taken only while ``dead_host``'s heartbeat is still this stale.
    :returns: the uuids of the nodes failed out of a working state.
    """
    recovered = []
    for node in node_obj.Node.list(context,
                                   filters={'reservation': dead_host}):
        if not dbapi.steal_reservation(node.uuid, dead_host, my_host,
                                       heartbeat_timeout):
            continue
        try:
            node.refresh()
            if node.provision_state in states.WORKING_STATES:
                node.last_error = ('conductor %s stopped while the node was '
                                   '%s' % (dead_host, node.provision_state))
                provisioning.begin(context, node, 'fail')
                recovered.append(node.uuid)
                LOG.warning('Node %s: %s', node.ident, node.last_error)
        except exception.BaremetalOrchException as e:
            LOG.warning('Could not recover node %s: %s', node.ident, e)
        finally:
            dbapi.release_node(node.uuid, my_host)
    return recovered
