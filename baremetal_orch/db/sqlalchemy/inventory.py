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
"""Nodes, ports and chassis."""


from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy import orm

from baremetal_orch.common import exception
from baremetal_orch.db.sqlalchemy import api
from baremetal_orch.db.sqlalchemy import models

NODE_FILTERS = ('driver', 'provision_state', 'maintenance', 'conductor',
                'shard', 'conductor_group', 'rack_name', 'owner',
                'ironic_uuid', 'chassis_id', 'reservation', 'console_enabled')


# Nodes ---------------------------------------------------------------------

def _set_tags_labels(node, tags=None, labels=None):
    if tags is not None:
        node.tags = [models.NodeTag(tag=t) for t in sorted(set(tags))]
    if labels is not None:
        node.labels = [models.NodeLabel(key=k, value=str(v))
                       for k, v in sorted(labels.items())]


def _node_query(session):
    return session.query(models.Node)


def _get_node(session, ident, lock=False):
    """A node row; ``lock`` takes its row lock (``SELECT ... FOR UPDATE``)
    until the transaction ends, so that an update and a delete of the same
    node, or two deletes, do not interleave (MariaDB, PostgreSQL)."""
    query = _node_query(session)
    if lock:
        query = query.with_for_update(of=models.Node)
    if uuidutils.is_uuid_like(ident):
        node = query.filter_by(uuid=ident).one_or_none()
    else:
        node = query.filter_by(name=ident).one_or_none()
    if node is None:
        raise exception.NodeNotFound(node=ident)
    return node


def locked_node(ident):
    """:func:`~.api.locked_row` of the node ``ident`` (uuid or name)."""
    return api.locked_row(_get_node, ident)


def locked_port(uuid):
    return api.locked_row(_get_port, uuid)


def locked_chassis(uuid):
    return api.locked_row(_get_chassis, uuid)


def get_node(ident):
    """A node by uuid or name."""
    with api.reader() as session:
        return _get_node(session, ident)


def get_nodes_by_names(names):
    with api.reader() as session:
        return _node_query(session).filter(
            models.Node.name.in_(list(names))).all()


def create_node(values):
    values = dict(values)
    tags = values.pop('tags', None) or []
    labels = values.pop('labels', None) or {}
    values.setdefault('uuid', uuidutils.generate_uuid())
    node = models.Node(**values)
    _set_tags_labels(node, tags, labels)
    try:
        with api.writer() as session:
            session.add(node)
            session.flush()
    except db_exc.DBDuplicateEntry as e:
        if 'name' in (e.columns or []):
            raise exception.DuplicateName(resource='node', name=values['name'])
        raise exception.Conflict(reason='node %s already exists'
                                 % values['uuid'])
    return get_node(node.uuid)


def update_node(ident, values, expected_reservation=None):
    """Update a node; tags and labels are replaced when given."""
    values = dict(values)
    tags = values.pop('tags', None)
    labels = values.pop('labels', None)
    try:
        with api.writer() as session:
            node = _get_node(session, ident, lock=True)
            for key, value in values.items():
                setattr(node, key, value)
            _set_tags_labels(node, tags, labels)
            node.updated_at = timeutils.utcnow()
            session.flush()
            uuid = node.uuid
            # (See update_port.)
            session.expire(node)
    except db_exc.DBDuplicateEntry:
        raise exception.DuplicateName(resource='node', name=values.get('name'))
    return get_node(uuid)


def destroy_node(ident):
    with api.writer() as session:
        node = _get_node(session, ident, lock=True)
        if api.count(session, models.Port,
                     models.Port.node_id == node.id):
            raise exception.NodeHasPorts(node=ident)
        if node.reservation:
            raise exception.NodeLocked(node=ident, host=node.reservation)
        session.delete(node)


def _filtered(query, filters):
    query = api.apply_filters(query, models.Node, filters, NODE_FILTERS)
    if filters.get('tags'):
        query = query.filter(models.Node.id.in_(
            sa.select(models.NodeTag.node_id).where(
                models.NodeTag.tag.in_(filters['tags']))))
    if filters.get('sharded') is not None:
        column = models.Node.shard
        query = query.filter(column.isnot(None) if filters['sharded']
                             else column.is_(None))
    if filters.get('names'):
        query = query.filter(models.Node.name.in_(filters['names']))
    if filters.get('uuids'):
        query = query.filter(models.Node.uuid.in_(filters['uuids']))
    return query


def list_nodes(filters=None, limit=None, marker=None, sort_key=None,
               sort_dir=None):
    filters = filters or {}
    with api.reader() as session:
        query = _filtered(_node_query(session), filters)
        query = query.options(orm.selectinload(models.Node.tags),
                              orm.selectinload(models.Node.labels))
        return api.paginate(session, query, models.Node, limit, marker,
                            sort_key, sort_dir)


_NODE_COLUMNS = [c for c in models.Node.__table__.columns]


def list_node_dicts(filters=None, limit=None, marker=None, sort_key=None,
                    sort_dir=None):
    """Like list_nodes, as plain dicts, in three queries per page.

    The API's list path: no ORM entity nor versioned object per row.
    Each dict has every column, ``chassis_uuid``, ``tags`` and ``labels``.
    """
    filters = filters or {}
    with api.reader() as session:
        query = session.query(*_NODE_COLUMNS, models.Node.chassis_uuid)
        query = _filtered(query, filters)
        rows = api.paginate(session, query, models.Node, limit, marker,
                            sort_key, sort_dir)
        # The columns' names once, not a view of them a row (_asdict).
        names = rows[0]._fields if rows else ()
        return api.add_tags_and_labels(
            session, [dict(zip(names, row)) for row in rows])


def get_node_dict(ident):
    """A node by uuid or name, as :func:`list_node_dicts` makes it."""
    key = 'uuids' if uuidutils.is_uuid_like(ident) else 'names'
    found = list_node_dicts({key: [ident]})
    if not found:
        raise exception.NodeNotFound(node=ident)
    return found[0]


def _ident_clause(ident):
    if uuidutils.is_uuid_like(ident):
        return models.Node.uuid == ident
    return models.Node.name == ident


def reserve_node(ident, host):
    """Lock a node for ``host`` with one conditional UPDATE.

    :returns: the node row. :raises: NodeLocked, NodeNotFound.
    """
    with api.writer() as session:
        result = session.execute(
            sa.update(models.Node)
            .where(_ident_clause(ident), models.Node.reservation.is_(None))
            .values(reservation=host))
        if result.rowcount != 1:
            holder = session.execute(
                sa.select(models.Node.reservation)
                .where(_ident_clause(ident))).first()
            if holder is None:
                raise exception.NodeNotFound(node=ident)
            raise exception.NodeLocked(node=ident, host=holder[0])
        # Read in the same transaction: one BEGIN/COMMIT less per lock.
        return _get_node(session, ident)


def update_node_fields(uuid, values):
    """Update plain columns of a node with one UPDATE (no reload).

    :returns: the new updated_at.
    """
    now = timeutils.utcnow()
    with api.writer() as session:
        result = session.execute(
            sa.update(models.Node).where(models.Node.uuid == uuid)
            .values(updated_at=now, **values))
        if result.rowcount != 1:
            raise exception.NodeNotFound(node=uuid)
    return now


def release_node(ident, host, task=None):
    """Release the lock ``host`` holds on a node (one UPDATE).

    :param task: optionally ``(task_uuid, values)``: a task row updated in
        the same transaction (the outcome of the work done under the lock).
    """
    with api.writer() as session:
        session.execute(
            sa.update(models.Node)
            .where(_ident_clause(ident), models.Node.reservation == host)
            .values(reservation=None)
            .execution_options(synchronize_session=False))
        if task is not None:
            task_uuid, values = task
            session.execute(
                sa.update(models.Task).where(models.Task.uuid == task_uuid)
                .values(dict(values, updated_at=timeutils.utcnow()))
                .execution_options(synchronize_session=False))


def steal_reservation(ident, old_host, new_host, heartbeat_timeout=None):
    """Move a lock from a dead conductor to ``new_host``, atomically.

    :param heartbeat_timeout: when given, only while ``old_host``'s
        heartbeat is older than this many seconds, checked in the same
        UPDATE (a conductor that came back keeps its locks).
    :returns: True when this call took it.
    """
    where = [_ident_clause(ident), models.Node.reservation == old_host]
    if heartbeat_timeout is not None:
        where.append(api.heartbeat_is_stale(old_host, heartbeat_timeout))
    with api.writer() as session:
        result = session.execute(
            sa.update(models.Node).where(*where)
            .values(reservation=new_host)
            .execution_options(synchronize_session=False))
        return result.rowcount == 1


def clear_reservations(host):
    """Release every lock ``host`` holds (a conductor starting again)."""
    with api.writer() as session:
        session.execute(sa.update(models.Node)
                        .where(models.Node.reservation == host)
                        .values(reservation=None))


def _selector_clause(selector):
    clauses = []
    if selector.node_names:
        clauses.append(models.Node.name.in_(list(selector.node_names)))
    if selector.rack_names:
        clauses.append(models.Node.rack_name.in_(list(selector.rack_names)))
    if selector.node_tags:
        clauses.append(models.Node.id.in_(
            sa.select(models.NodeTag.node_id).where(
                models.NodeTag.tag.in_(list(selector.node_tags)))))
    if selector.node_labels:
        clauses.append(models.Node.id.in_(
            sa.select(models.NodeLabel.node_id).where(sa.or_(*[
                sa.and_(models.NodeLabel.key == k,
                        models.NodeLabel.value == str(v))
                for k, v in selector.node_labels]))))
    return sa.and_(*clauses) if clauses else sa.true()


def _selected(columns, selectors, restrict_names=None):
    """The SELECT of ``columns`` of the named nodes ``selectors`` pick, by
    name.

    Semantics of deployment/selectors.py: OR inside a criterion, AND across
    the criteria of one selector, UNION across selectors; an empty list or
    an empty selector picks every node.
    """
    stmt = sa.select(*columns).where(models.Node.name.isnot(None))
    selectors = list(selectors or [])
    if selectors and not any(s.is_empty() for s in selectors):
        stmt = stmt.where(sa.or_(*[_selector_clause(s) for s in selectors]))
    if restrict_names is not None:
        stmt = stmt.where(models.Node.name.in_(list(restrict_names)))
    return stmt.order_by(models.Node.name)


def resolve_selectors(selectors, restrict_names=None):
    """Names of the nodes a selector list picks, in one indexed query."""
    with api.reader() as session:
        return [row[0] for row in session.execute(_selected(
            [models.Node.name], selectors, restrict_names))]


def select_nodes(selectors):
    """``{uuid: name}`` of the nodes a selector list picks (those of
    :func:`resolve_selectors`), in one indexed query."""
    with api.reader() as session:
        return dict(session.execute(_selected(
            [models.Node.uuid, models.Node.name], selectors)).all())


def count_nodes_by_shard():
    with api.reader() as session:
        rows = session.execute(
            sa.select(models.Node.shard, sa.func.count())
            .group_by(models.Node.shard).order_by(models.Node.shard))
        return [(shard, n) for shard, n in rows]


# Ports ---------------------------------------------------------------------

def _get_port(session, uuid, lock=False):
    query = session.query(models.Port).filter_by(uuid=uuid)
    port = (query.with_for_update(of=models.Port) if lock
            else query).one_or_none()
    if port is None:
        raise exception.PortNotFound(port=uuid)
    return port


def get_port(uuid):
    with api.reader() as session:
        return _get_port(session, uuid)


def create_port(values):
    values = dict(values)
    values.setdefault('uuid', uuidutils.generate_uuid())
    port = models.Port(**values)
    try:
        with api.writer() as session:
            session.add(port)
            session.flush()
    except db_exc.DBDuplicateEntry as e:
        if 'uuid' in (e.columns or []):
            raise exception.Conflict(reason='port %s already exists'
                                     % values['uuid'])
        raise exception.Conflict(
            reason='a port with MAC address %s already exists'
            % values.get('address'))
    return get_port(port.uuid)


def update_port(uuid, values):
    try:
        with api.writer() as session:
            port = _get_port(session, uuid, lock=True)
            for key, value in values.items():
                setattr(port, key, value)
            port.updated_at = timeutils.utcnow()
            session.flush()
            # Read again below, maybe in the same (outer) transaction: not
            # what the identity map holds (its node, for one).
            session.expire(port)
    except db_exc.DBDuplicateEntry:
        raise exception.Conflict(
            reason='a port with MAC address %s already exists'
            % values.get('address'))
    return get_port(uuid)


def destroy_port(uuid):
    with api.writer() as session:
        session.delete(_get_port(session, uuid, lock=True))


def list_ports(filters=None, limit=None, marker=None, sort_key=None,
               sort_dir=None):
    filters = filters or {}
    with api.reader() as session:
        query = session.query(models.Port)
        query = api.apply_filters(query, models.Port, filters,
                                  ('node_id', 'address', 'pxe_enabled'))
        if filters.get('owner'):
            query = query.join(models.Port.node).filter(
                models.Node.owner == filters['owner'])
        return api.paginate(session, query, models.Port, limit, marker,
                            sort_key, sort_dir)


# Chassis -------------------------------------------------------------------

def _get_chassis(session, uuid, lock=False):
    query = session.query(models.Chassis).filter_by(uuid=uuid)
    chassis = (query.with_for_update(of=models.Chassis) if lock
               else query).one_or_none()
    if chassis is None:
        raise exception.ChassisNotFound(chassis=uuid)
    return chassis


def get_chassis(uuid):
    with api.reader() as session:
        return _get_chassis(session, uuid)


def create_chassis(values):
    values = dict(values)
    values.setdefault('uuid', uuidutils.generate_uuid())
    chassis = models.Chassis(**values)
    try:
        with api.writer() as session:
            session.add(chassis)
            session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.Conflict(reason='chassis %s already exists'
                                 % values['uuid'])
    return get_chassis(chassis.uuid)


def update_chassis(uuid, values):
    with api.writer() as session:
        chassis = _get_chassis(session, uuid, lock=True)
        for key, value in values.items():
            setattr(chassis, key, value)
        chassis.updated_at = timeutils.utcnow()
        session.flush()
        session.expire(chassis)
    return get_chassis(uuid)


def destroy_chassis(uuid):
    with api.writer() as session:
        chassis = _get_chassis(session, uuid, lock=True)
        if api.count(session, models.Node,
                     models.Node.chassis_id == chassis.id):
            raise exception.ChassisNotEmpty(chassis=uuid)
        session.delete(chassis)


def list_chassis(limit=None, marker=None, sort_key=None, sort_dir=None):
    with api.reader() as session:
        query = session.query(models.Chassis)
        return api.paginate(session, query, models.Chassis, limit, marker,
                            sort_key, sort_dir)
