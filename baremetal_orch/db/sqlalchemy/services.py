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
"""Conductor service records and their heartbeats."""

import datetime

from oslo_utils import timeutils
import sqlalchemy as sa

from baremetal_orch.common import exception
from baremetal_orch.db.sqlalchemy import api
from baremetal_orch.db.sqlalchemy import models


def register_service(host, shard_key=None, conductor_group=None,
                     binary='baremetal-orch-conductor'):
    """Create or refresh the record of a starting service."""
    now = timeutils.utcnow()
    with api.writer() as session:
        svc = session.query(models.Service).filter_by(
            host=host).one_or_none()
        if svc is None:
            svc = models.Service(host=host, binary=binary, forced_down=False,
                                 disabled=False)
            session.add(svc)
        svc.shard_key = shard_key
        svc.conductor_group = conductor_group
        svc.last_seen_at = now
        session.flush()
    return get_service(host)


def heartbeat(host):
    with api.writer() as session:
        result = session.execute(
            sa.update(models.Service).where(models.Service.host == host)
            .values(last_seen_at=timeutils.utcnow()))
        if result.rowcount != 1:
            raise exception.ServiceNotFound(host=host)


def _get_service(session, host, lock=False):
    query = session.query(models.Service).filter_by(host=host)
    svc = (query.with_for_update() if lock else query).one_or_none()
    if svc is None:
        raise exception.ServiceNotFound(host=host)
    return svc


def locked_service(host):
    """:func:`~.api.locked_row` of the service ``host``."""
    return api.locked_row(_get_service, host)


def get_service(host):
    with api.reader() as session:
        return _get_service(session, host)


def list_services():
    with api.reader() as session:
        return session.query(models.Service).order_by(
            models.Service.host).all()


def update_service(host, values):
    with api.writer() as session:
        svc = _get_service(session, host)
        for key, value in values.items():
            setattr(svc, key, value)
        svc.updated_at = timeutils.utcnow()
        session.flush()
        session.expire(svc)
    return get_service(host)


def is_alive(svc, timeout, now=None):
    """Whether a service record has a fresh heartbeat and is usable."""
    if svc.forced_down or svc.last_seen_at is None:
        return False
    now = now or timeutils.utcnow()
    last = svc.last_seen_at.replace(tzinfo=None)
    return now - last <= datetime.timedelta(seconds=timeout)


def live_services(timeout):
    """Services that heartbeat, are not forced down and not disabled."""
    return [s for s in list_services()
            if is_alive(s, timeout) and not s.disabled]


def move_node_to_service(node_uuid, source, destination,
                         release_source_lock=False):
    """Re-home a node and its deployment record on ``destination``.

    Both rows change in ONE transaction: afterwards either the node's
    ``conductor`` and the ``conductor`` of its non-deleted deployment
    record (if it has one) both name ``destination``, or neither changed.

    The node must still be owned by ``source`` (None: by no service) and
    have at most one non-deleted deployment record when the transaction
    runs; otherwise NodeMoveRefused is raised and nothing changes. With
    ``release_source_lock`` a reservation held by ``source`` (a dead
    service's lock) is released in the same transaction.

    :returns: the uuid of the deployment record that moved, or None.
    """
    with api.writer() as session:
        _move_node_row(session, node_uuid, source, destination,
                       release_source_lock)
        return _move_deployment_rows(session, node_uuid, destination)


def _move_node_row(session, node_uuid, source, destination, release_lock):
    node = models.Node
    owned = (node.conductor == source if source is not None
             else node.conductor.is_(None))
    values = {'conductor': destination, 'updated_at': timeutils.utcnow()}
    if release_lock and source is not None:
        values['reservation'] = sa.case(
            (node.reservation == source, sa.null()),
            else_=node.reservation)
    result = session.execute(sa.update(node)
                             .where(node.uuid == node_uuid, owned)
                             .values(**values))
    if result.rowcount != 1:
        raise exception.NodeMoveRefused(
            node=node_uuid, reason='it was deleted or its owning service '
            'changed from %s meanwhile' % source)


def _move_deployment_rows(session, node_uuid, destination):
    record = models.Deployment
    uuids = session.execute(
        sa.select(record.uuid)
        .where(record.node_uuid == node_uuid, record.deleted.is_(False))
        .with_for_update()).scalars().all()
    if len(uuids) > 1:
        raise exception.NodeMoveRefused(
            node=node_uuid, reason='it has %d non-deleted deployment '
            'records: %s' % (len(uuids), ', '.join(sorted(uuids))))
    if not uuids:
        return None
    session.execute(sa.update(record).where(record.uuid == uuids[0])
                    .values(conductor=destination,
                            updated_at=timeutils.utcnow()))
    return uuids[0]
