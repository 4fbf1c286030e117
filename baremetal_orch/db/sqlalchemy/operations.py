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
"""Deployment strategies, actions, tasks, events and deployment records."""

import contextlib
import functools

from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from baremetal_orch.common import exception
from baremetal_orch.common import statuses
from baremetal_orch.db.sqlalchemy import api
from baremetal_orch.db.sqlalchemy import models

ACTIVE_ACTION_STATES = statuses.ACTION_ACTIVE_STATES


# Strategies ----------------------------------------------------------------

def create_strategy(name, document):
    try:
        with api.writer() as session:
            row = models.Strategy(name=name, document=document)
            session.add(row)
            session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.DuplicateName(resource='deployment strategy',
                                      name=name)
    return get_strategy(name)


def get_strategy(name):
    with api.reader() as session:
        row = session.query(models.Strategy).filter_by(
            name=name).one_or_none()
        if row is None:
            raise exception.StrategyNotFound(name=name)
        return row


def list_strategies(limit=None, marker=None, sort_key=None, sort_dir=None):
    with api.reader() as session:
        return api.paginate(session, session.query(models.Strategy),
                            models.Strategy, limit, marker, sort_key or 'name',
                            sort_dir, marker_field='name')


def destroy_strategy(name):
    with api.writer() as session:
        row = session.query(models.Strategy).filter_by(
            name=name).one_or_none()
        if row is None:
            raise exception.StrategyNotFound(name=name)
        session.delete(row)


# Actions -------------------------------------------------------------------

def create_action(values):
    values = dict(values)
    values.setdefault('uuid', uuidutils.generate_uuid())
    values.setdefault('state', 'pending')
    try:
        with api.writer() as session:
            row = models.Action(**values)
            session.add(row)
            session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.Conflict(reason='action %s already exists'
                                 % values['uuid'])
    return get_action(values['uuid'])


@contextlib.contextmanager
def admitting(node_uuids, retried=None):
    """The write transaction of an admission: it first locks the rows of
    the nodes the action would hold (SELECT ... FOR UPDATE, in the order of
    their UUIDs, so two admissions take them in one order; on sqlite the
    write lock) and the row of the action it retries. An admission that
    overlaps waits until this one commits or rolls back, so its checks see
    the action this one creates. Reads and writes through the database API
    inside the block join it; an exception rolls it back.
    """
    with api.writer() as session:
        uuids = sorted(node_uuids)
        if uuids:
            session.execute(
                sa.select(models.Node.id).where(models.Node.uuid.in_(uuids))
                .order_by(models.Node.uuid).with_for_update()).all()
        if retried is not None:
            session.execute(
                sa.select(models.Action.id)
                .where(models.Action.uuid == retried)
                .with_for_update()).all()
        yield


def discard_action(uuid, only_pending=False):
    """Remove an action that never ran and every row its start wrote (its
    tasks and events), in one transaction; with ``only_pending``, only
    while it is still pending. True when it was removed."""
    with api.writer() as session:
        stmt = sa.delete(models.Action).where(models.Action.uuid == uuid)
        if only_pending:
            stmt = stmt.where(models.Action.state == 'pending')
        if not session.execute(stmt).rowcount:
            return False
        session.execute(sa.delete(models.Task).where(
            models.Task.action_uuid == uuid))
        session.execute(sa.delete(models.Event).where(
            models.Event.action_uuid == uuid))
        return True


def get_action(uuid):
    with api.reader() as session:
        row = session.query(models.Action).filter_by(uuid=uuid).one_or_none()
        if row is None:
            raise exception.ActionNotFound(action=uuid)
        return row


def update_action(uuid, values, reload=True):
    """Update an action with one UPDATE; returns the row read again, or
    None with ``reload=False`` (a checkpoint of a running flow: its
    report and progress are not read back)."""
    with api.writer() as session:
        result = _update_row(session, models.Action.__table__, uuid, values)
        if result.rowcount != 1:
            raise exception.ActionNotFound(action=uuid)
    return get_action(uuid) if reload else None


def list_actions(filters=None, limit=None, marker=None, sort_key=None,
                 sort_dir=None):
    with api.reader() as session:
        query = api.apply_filters(session.query(models.Action),
                                  models.Action, filters,
                                  ('state', 'name', 'conductor', 'owner'))
        return api.paginate(session, query, models.Action, limit, marker,
                            sort_key, sort_dir)


def list_actions_to_take(dead_hosts, unheld_since):
    """The active actions a live conductor may claim: those of the
    conductors ``dead_hosts``, and those no conductor held since before
    ``unheld_since``."""
    unheld = sa.and_(
        models.Action.conductor.is_(None),
        sa.func.coalesce(models.Action.updated_at,
                         models.Action.created_at) < unheld_since)
    with api.reader() as session:
        return session.query(models.Action).filter(
            models.Action.state.in_(ACTIVE_ACTION_STATES),
            sa.or_(models.Action.conductor.in_(sorted(dead_hosts)),
                   unheld)).order_by(models.Action.id).all()


def claim_action(uuid, expected_conductor, host, heartbeat_timeout=None):
    """Make ``host`` the conductor of an action, only if it still belongs
    to ``expected_conductor`` (take-over without a race).

    :param heartbeat_timeout: when given, only while
        ``expected_conductor``'s heartbeat is older than this many seconds,
        checked in the same UPDATE: a conductor that restarted in between
        keeps (and resumes) its own actions.
    """
    where = [models.Action.uuid == uuid,
             models.Action.conductor == expected_conductor
             if expected_conductor is not None
             else models.Action.conductor.is_(None)]
    if heartbeat_timeout is not None and expected_conductor is not None:
        where.append(api.heartbeat_is_stale(expected_conductor,
                                            heartbeat_timeout))
    with api.writer() as session:
        result = session.execute(
            sa.update(models.Action).where(*where)
            .values(conductor=host, updated_at=timeutils.utcnow())
            .execution_options(synchronize_session=False))
        return result.rowcount == 1


def steering_of(uuid):
    """``(state, control, state_reason)`` of an action: what a running flow
    reads about twice a second, without its documents."""
    with api.reader() as session:
        row = session.execute(
            sa.select(models.Action.state, models.Action.control,
                      models.Action.state_reason)
            .where(models.Action.uuid == uuid)).one_or_none()
    if row is None:
        raise exception.ActionNotFound(action=uuid)
    return tuple(row)


def steer_action(uuid, expected, values):
    """Change an action's steering only if it is still ``expected``
    (``(state, control)`` as read): a control and the flow's own moves
    (pausing -> paused) never overwrite each other. True when changed."""
    state, control = expected
    where = [models.Action.uuid == uuid, models.Action.state == state,
             models.Action.control == control if control is not None
             else models.Action.control.is_(None)]
    with api.writer() as session:
        result = session.execute(
            sa.update(models.Action).where(*where)
            .values(dict(values, updated_at=timeutils.utcnow()))
            .execution_options(synchronize_session=False))
        return result.rowcount == 1


def list_active_actions():
    return list_actions({'state': list(ACTIVE_ACTION_STATES)})


def active_actions_mentioning(text):
    """The active actions whose parameters contain ``text`` (a node's
    UUID): the candidates that may hold that node, found by the database
    instead of reading every active action's snapshot. The caller checks
    each candidate's held nodes."""
    with api.reader() as session:
        return session.query(models.Action).filter(
            models.Action.state.in_(ACTIVE_ACTION_STATES),
            sa.type_coerce(models.Action.parameters, sa.Text).contains(
                text, autoescape=True)).all()


# Tasks ---------------------------------------------------------------------

def create_task(values):
    values = dict(values)
    values.setdefault('uuid', uuidutils.generate_uuid())
    values.setdefault('status', 'pending')
    with api.writer() as session:
        session.add(models.Task(**values))
    return values['uuid']


def create_tasks(rows):
    """Insert many tasks in one transaction; returns their uuids."""
    rows = [dict(r, uuid=r.get('uuid') or uuidutils.generate_uuid(),
                 status=r.get('status') or 'pending') for r in rows]
    if rows:
        now = timeutils.utcnow()
        # Core's INSERT of the table (not the ORM's bulk path), one for
        # each set of columns the rows give (a phase's row and its nodes'
        # rows).
        by_columns = {}
        for row in rows:
            by_columns.setdefault(tuple(sorted(row)), []).append(
                dict(row, created_at=now))
        with api.writer() as session:
            for same in by_columns.values():
                session.execute(models.Task.__table__.insert(), same)
    return [r['uuid'] for r in rows]


def update_task(uuid, values):
    with api.writer() as session:
        result = _update_row(session, models.Task.__table__, uuid, values)
        if result.rowcount != 1:
            raise exception.TaskNotFound(task=uuid)


def _update_row(session, table, uuid, values):
    """UPDATE ``values`` (and ``updated_at``) of the row of ``table``
    whose uuid is ``uuid``: a Core statement built once for each set of
    columns (a running action writes a few, again and again), not the
    ORM's bulk path built at every call."""
    columns, params = api.update_params(values, timeutils.utcnow())
    return session.execute(_update_by_uuid(table, columns),
                           dict(params, w_uuid=uuid))


@functools.lru_cache(maxsize=128)
def _update_by_uuid(table, columns):
    return (sa.update(table).where(table.c.uuid == sa.bindparam('w_uuid'))
            .values(api.update_values(columns)))


def start_task(uuid, final_statuses):
    """Mark a task running unless it already ended.

    :returns: ``'pending'`` when this call started it (one UPDATE, the
        common case); ``'running'`` when it was running already (work sent
        twice, or resumed: the caller checks again under the node's lock);
        None when its status is one of ``final_statuses`` (done already).
    """
    now = timeutils.utcnow()
    with api.writer() as session:
        result = session.execute(
            sa.update(models.Task)
            .where(models.Task.uuid == uuid, models.Task.status == 'pending')
            .values(status='running', started_at=now, updated_at=now)
            .execution_options(synchronize_session=False))
        if result.rowcount == 1:
            return 'pending'
        row = session.execute(sa.select(models.Task.status).where(
            models.Task.uuid == uuid)).first()
        if row is None:
            raise exception.TaskNotFound(task=uuid)
        return None if row[0] in final_statuses else 'running'


def get_task(uuid):
    with api.reader() as session:
        row = session.query(models.Task).filter_by(uuid=uuid).one_or_none()
        if row is None:
            raise exception.TaskNotFound(task=uuid)
        return row


def list_tasks(action_uuid=None, parent_uuid=None, kind=None):
    with api.reader() as session:
        query = api.apply_filters(
            session.query(models.Task), models.Task,
            {'action_uuid': action_uuid, 'parent_uuid': parent_uuid,
             'kind': kind}, ('action_uuid', 'parent_uuid', 'kind'))
        return query.order_by(models.Task.id).all()


def get_task_statuses(uuids):
    """{uuid: status} of the given tasks, in one query."""
    if not uuids:
        return {}
    with api.reader() as session:
        rows = session.execute(
            sa.select(models.Task.uuid, models.Task.status)
            .where(models.Task.uuid.in_(list(uuids))))
        return {uuid: status for uuid, status in rows}


# Events --------------------------------------------------------------------

def create_event(event_type, resource_uuid=None, action_uuid=None,
                 message=None, details=None):
    with api.writer() as session:
        row = models.Event(uuid=uuidutils.generate_uuid(),
                           event_type=event_type,
                           resource_uuid=resource_uuid,
                           action_uuid=action_uuid, message=message,
                           details=details)
        session.add(row)
        session.flush()
        return row


def create_events(rows):
    """Insert many events in one transaction (dicts with the arguments of
    :func:`create_event`); returns their uuids."""
    rows = [dict(r, uuid=r.get('uuid') or uuidutils.generate_uuid(),
                 created_at=timeutils.utcnow()) for r in rows]
    if rows:
        with api.writer() as session:
            session.execute(sa.insert(models.Event), rows)
    return [r['uuid'] for r in rows]


def list_events(filters=None, limit=None, marker=None, sort_key=None,
                sort_dir=None):
    with api.reader() as session:
        query = api.apply_filters(session.query(models.Event), models.Event,
                                  filters, ('resource_uuid', 'action_uuid',
                                            'event_type'))
        return api.paginate(session, query, models.Event, limit, marker,
                            sort_key, sort_dir)


# Deployment records --------------------------------------------------------

def create_deployment(values):
    """A new deployment record; the node's previous ones are deleted."""
    values = dict(values)
    values.setdefault('uuid', uuidutils.generate_uuid())
    values.setdefault('status', 'IN_PROGRESS')
    with api.writer() as session:
        session.execute(sa.update(models.Deployment)
                        .where(models.Deployment.node_uuid ==
                               values['node_uuid'],
                               models.Deployment.deleted.is_(False))
                        .values(deleted=True))
        session.add(models.Deployment(**values))
    return get_deployment(values['uuid'])


def get_deployment(uuid):
    with api.reader() as session:
        row = session.query(models.Deployment).filter_by(
            uuid=uuid).one_or_none()
        if row is None:
            raise exception.DeploymentNotFound(deployment=uuid)
        return row


def update_deployment(uuid, values, only_if_not_final=False):
    """Update a record; with only_if_not_final, atomically refuse a record
    that already got its final signal (SignalAfterFinal)."""
    values = dict(values, updated_at=timeutils.utcnow())
    with api.writer() as session:
        stmt = sa.update(models.Deployment).where(
            models.Deployment.uuid == uuid)
        if only_if_not_final:
            stmt = stmt.where(models.Deployment.final.is_(False))
        result = session.execute(stmt.values(**values))
        if result.rowcount != 1:
            get_deployment(uuid)
            raise exception.SignalAfterFinal(uuid=uuid)
    return get_deployment(uuid)


def list_deployments(filters=None, limit=None, marker=None, sort_key=None,
                     sort_dir=None, include_deleted=False):
    with api.reader() as session:
        query = api.apply_filters(
            session.query(models.Deployment), models.Deployment, filters,
            ('node_uuid', 'action_uuid', 'status', 'conductor'))
        if not include_deleted:
            query = query.filter(models.Deployment.deleted.is_(False))
        return api.paginate(session, query, models.Deployment, limit, marker,
                            sort_key, sort_dir)
