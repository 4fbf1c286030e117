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
"""Move a node to another conductor service, with the guards of the Ironic
shards specification.

This is what ``baremetal-orch-manage node move NODE --service HOST`` runs
(the analogue of ``nova-manage ironic-compute-node-move``). The guards, in
the specification's order, each with its own exception and exit code:

====  ========================  ==========================================
exit  exception                 refused when
====  ========================  ==========================================
3     NodeToMoveNotFound        no node has this uuid (or name)
4     NodeNotIronic             the node's driver is not ``ironic``
5     SourceServiceActive       the service owning the node is neither
                                forced down nor disabled
6     DestinationUnusable       the destination service does not exist or
                                is forced down
7     TooManyDeployments        the node has more than one non-deleted
                                deployment record
8     MoveRaced                 the node changed owner, or got another
                                deployment record, between the checks and
                                the move (nothing moved; check again)
====  ========================  ==========================================

A node that no service owns, or whose owning service has no record any
more, may always move. The node's ``conductor`` and the ``conductor`` of
its deployment record (if any) change in one database transaction
(``move_node_to_service`` of the database API); a
lock the old service left on the node is released with it when that
service is forced down or gone. A destination that serves another shard or
conductor group than the node's is allowed, with a warning: the
specification moves nodes between shards by changing the shard in Ironic
first.
"""

import dataclasses

from oslo_log import log

from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi

LOG = log.getLogger(__name__)

IRONIC_DRIVER = 'ironic'


class NodeToMoveNotFound(exception.NodeMoveRefused):
    code = 'baremetal_orch.node.move_refused.not_found'
    exit_code = 3
    _msg_fmt = 'Node %(node)s cannot be moved: there is no such node.'


class NodeNotIronic(exception.NodeMoveRefused):
    code = 'baremetal_orch.node.move_refused.not_ironic'
    exit_code = 4
    _msg_fmt = ('Node %(node)s cannot be moved: its driver is %(driver)s; '
                'only Ironic-backed nodes (driver ironic) move between '
                'services.')


class SourceServiceActive(exception.NodeMoveRefused):
    code = 'baremetal_orch.node.move_refused.source_active'
    exit_code = 5
    _msg_fmt = ('Node %(node)s cannot be moved: its service %(host)s is '
                'neither forced down nor disabled. Stop that service, then '
                'run "baremetal-orch-manage service force-down %(host)s" '
                '(or "service disable %(host)s") and try again.')


class DestinationUnusable(exception.NodeMoveRefused):
    code = 'baremetal_orch.node.move_refused.destination'
    exit_code = 6
    _msg_fmt = ('Node %(node)s cannot be moved: the destination service '
                '%(host)s %(reason)s.')


class TooManyDeployments(exception.NodeMoveRefused):
    code = 'baremetal_orch.node.move_refused.deployments'
    exit_code = 7
    _msg_fmt = ('Node %(node)s cannot be moved: it has %(count)d non-deleted '
                'deployment records (%(uuids)s); at most one may move with '
                'it.')


class MoveRaced(exception.NodeMoveRefused):
    code = 'baremetal_orch.node.move_refused.raced'
    exit_code = 8
    _msg_fmt = ('Node %(node)s was not moved: %(reason)s. Nothing changed; '
                'check the node and try again.')


#: Every refusal, in the order the guards run.
REFUSALS = (NodeToMoveNotFound, NodeNotIronic, SourceServiceActive,
            DestinationUnusable, TooManyDeployments, MoveRaced)


@dataclasses.dataclass(frozen=True)
class MoveResult:
    """What :func:`move_node` did."""

    node_uuid: str
    source: str
    destination: str
    deployment_uuid: str = None
    warnings: tuple = ()


def _source_service(node):
    """The service record owning ``node``; None when there is none."""
    if node.conductor is None:
        return None
    try:
        return dbapi.get_service(node.conductor)
    except exception.ServiceNotFound:
        return None


def _destination_service(node, host):
    try:
        service = dbapi.get_service(host)
    except exception.ServiceNotFound:
        raise DestinationUnusable(node=node.uuid, host=host,
                                  reason='does not exist')
    if service.forced_down:
        raise DestinationUnusable(node=node.uuid, host=host,
                                  reason='is forced down')
    return service


def _warnings(node, destination):
    found = []
    if destination.shard_key and destination.shard_key != node.shard:
        found.append('node %s is in shard %s but service %s serves shard %s; '
                     'it will not manage the node until the shard matches'
                     % (node.uuid, node.shard, destination.host,
                        destination.shard_key))
    node_group = node.conductor_group or None
    if (destination.conductor_group or None) != node_group:
        found.append('node %s is in conductor group %s but service %s '
                     'serves conductor group %s'
                     % (node.uuid, node.conductor_group, destination.host,
                        destination.conductor_group))
    return tuple(found)


def move_node(node_ident, destination):
    """Re-home a node (and its deployment record) on another service.

    :param node_ident: the node's uuid (or name).
    :param destination: the host of the destination service.
    :returns: a :class:`MoveResult`.
    :raises: one of :data:`REFUSALS` (each a NodeMoveRefused with an
        ``exit_code``); nothing changed then.
    """
    try:
        node = dbapi.get_node(node_ident)
    except exception.NodeNotFound:
        raise NodeToMoveNotFound(node=node_ident)
    if node.driver != IRONIC_DRIVER:
        raise NodeNotIronic(node=node.uuid, driver=node.driver)
    source = _source_service(node)
    if source is not None and not (source.forced_down or source.disabled):
        raise SourceServiceActive(node=node.uuid, host=source.host)
    target = _destination_service(node, destination)
    records = dbapi.list_deployments({'node_uuid': node.uuid})
    if len(records) > 1:
        raise TooManyDeployments(
            node=node.uuid, count=len(records),
            uuids=', '.join(sorted(r.uuid for r in records)))
    # A lock held by a service that is forced down (or has no record) is
    # stale: release it with the move so the new owner can lock the node.
    release = node.conductor is not None and (source is None
                                              or source.forced_down)
    try:
        moved = dbapi.move_node_to_service(node.uuid, node.conductor,
                                           destination,
                                           release_source_lock=release)
    except exception.NodeMoveRefused as e:
        if isinstance(e, REFUSALS):
            raise
        raise MoveRaced(node=node.uuid, reason=e.kwargs.get('reason', e))
    result = MoveResult(node_uuid=node.uuid, source=node.conductor,
                        destination=destination, deployment_uuid=moved,
                        warnings=_warnings(node, target))
    LOG.info('Moved node %s from service %s to %s (deployment record %s)',
             result.node_uuid, result.source, destination, moved)
    return result
