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
"""The node work of a group in batches: a bounded number of statements for
any number of nodes (locks, state changes, task rows, deployment records).

Each function is one transaction. The per-node functions
(:func:`~baremetal_orch.db.sqlalchemy.inventory.reserve_node`,
:func:`~baremetal_orch.db.sqlalchemy.operations.start_task` ...) keep the
same semantics for one node.
"""

from oslo_utils import timeutils
import sqlalchemy as sa

from baremetal_orch.db.sqlalchemy import api
from baremetal_orch.db.sqlalchemy import inventory
from baremetal_orch.db.sqlalchemy import models


def start_tasks(uuids, final_statuses):
    """Mark the tasks running unless they ended.

    :returns: ``{uuid: previous}`` for the tasks not ended: ``'pending'``
        when this call started it, ``'running'`` when it was running
        already (sent twice, or resumed). Ended and unknown tasks are left
        out.
    """
    uuids = list(uuids)
    if not uuids:
        return {}
    now = timeutils.utcnow()
    with api.writer() as session:
        returning = session.bind.dialect.update_returning
        fresh = set()
        if returning:
            # One statement in the common case, where every task is
            # pending: the UPDATE says which it started.
            fresh = {uuid for (uuid,) in session.execute(
                _start_pending(uuids, now).returning(models.Task.uuid))}
        rest = [uuid for uuid in uuids if uuid not in fresh]
        # The others' statuses (MariaDB, and sqlite before 3.35, have no
        # UPDATE ... RETURNING: all of them, before the UPDATE).
        unended = {} if not rest else {
            uuid: status for uuid, status in session.execute(
                sa.select(models.Task.uuid, models.Task.status)
                .where(models.Task.uuid.in_(rest))
                .with_for_update())
            if status not in final_statuses}
        if not returning:
            fresh = {uuid for uuid, status in unended.items()
                     if status == 'pending'}
            if fresh:
                session.execute(_start_pending(list(fresh), now))
    previous = dict.fromkeys(unended, 'running')
    previous.update(dict.fromkeys(fresh, 'pending'))
    return previous


def _start_pending(uuids, now):
    """The UPDATE that starts the pending tasks among ``uuids``."""
    return (sa.update(models.Task)
            .where(models.Task.uuid.in_(uuids),
                   models.Task.status == 'pending')
            .values(status='running', started_at=now, updated_at=now)
            .execution_options(synchronize_session=False))


def start_batch(items, host, final_statuses):
    """:func:`start_tasks` and :func:`reserve_nodes` of a batch of node
    work, in one transaction.

    :param items: ``[(task uuid, node uuid)]``.
    :returns: ``(previous, nodes)``: what :func:`start_tasks` answers, and
        what :func:`reserve_nodes` answers of the nodes whose task has not
        ended.
    """
    with api.writer() as session:
        previous = start_tasks([t for t, _n in items], final_statuses)
        free = _lock_free(session, [n for t, n in items if t in previous],
                          host)
    return previous, _locked_rows(free)


def node_refs(uuids):
    """What sending nodes to their conductors needs of them: rows with
    ``uuid``, ``name``, ``conductor`` and ``shard`` (no tags, labels nor
    JSON columns) of the nodes among ``uuids``."""
    uuids = list(uuids)
    if not uuids:
        return []
    with api.reader() as session:
        return session.execute(
            sa.select(models.Node.uuid, models.Node.name,
                      models.Node.conductor, models.Node.shard)
            .where(models.Node.uuid.in_(uuids))).all()


def ended_tasks(parent_uuid, final_statuses):
    """``{uuid: status}`` of the ended children of a task: what a phase
    polls for (one indexed query; no row while its nodes work)."""
    with api.reader() as session:
        return dict(session.execute(
            sa.select(models.Task.uuid, models.Task.status)
            .where(models.Task.parent_uuid == parent_uuid,
                   models.Task.status.in_(list(final_statuses)))).all())


def reserve_nodes(uuids, host):
    """Lock for ``host`` the nodes among ``uuids`` that nobody holds, in
    one conditional UPDATE.

    :returns: the locked nodes as :func:`inventory.list_node_dicts` makes
        them; the nodes held by someone else (or unknown) are left out.
    """
    with api.writer() as session:
        free = _lock_free(session, uuids, host)
    return _locked_rows(free)


def _lock_free(session, uuids, host):
    """The UPDATE of :func:`reserve_nodes`: the uuids it locked."""
    uuids = list(uuids)
    if not uuids:
        return []
    dialect = session.bind.dialect
    if dialect.name == 'sqlite' and dialect.update_returning:
        # One writer and no row locks: no order to keep, and the UPDATE
        # says which nodes it locked.
        return [u for (u,) in session.execute(
            _lock(uuids, host).returning(models.Node.uuid))]
    # Row locks taken in the order of the UUIDs, as an admission takes
    # them (operations.admitting): two lockers of the same rows never
    # wait for each other in a circle.
    free = [u for (u,) in session.execute(
        sa.select(models.Node.uuid)
        .where(models.Node.uuid.in_(uuids),
               models.Node.reservation.is_(None))
        .order_by(models.Node.uuid)
        .with_for_update())]
    if free:
        session.execute(_lock(free, host))
    return free


def _lock(uuids, host):
    """The UPDATE that locks for ``host`` the free nodes among ``uuids``."""
    return (sa.update(models.Node)
            .where(models.Node.uuid.in_(uuids),
                   models.Node.reservation.is_(None))
            .values(reservation=host)
            .execution_options(synchronize_session=False))


def _locked_rows(uuids):
    """The rows of nodes just locked, read once the lock is committed:
    nothing else changes them now, and the write lock (sqlite's one
    writer) is not held while they are read."""
    return inventory.list_node_dicts({'uuids': uuids}) if uuids else []


def update_nodes(uuids, host, values):
    """Write the same ``values`` to the nodes ``host`` holds, in one
    UPDATE. :returns: the new updated_at."""
    now = timeutils.utcnow()
    uuids = list(uuids)
    if uuids:
        with api.writer() as session:
            session.execute(
                sa.update(models.Node)
                .where(models.Node.uuid.in_(uuids),
                       models.Node.reservation == host)
                .values(dict(values, updated_at=now))
                .execution_options(synchronize_session=False))
    return now


def release_nodes(uuids, host, succeeded=(), failed=None, unstarted=()):
    """Release the locks ``host`` holds on ``uuids`` and write the
    outcomes of their tasks, in one transaction.

    :param succeeded: task uuids that end ``success``.
    :param failed: ``{task uuid: reason}`` of tasks that end ``failed``.
    :param unstarted: task uuids given back before their work started:
        ``pending`` again, with no start time.
    """
    now = timeutils.utcnow()
    uuids, succeeded, unstarted = list(uuids), list(succeeded), list(
        unstarted)
    with api.writer() as session:
        if uuids:
            session.execute(
                sa.update(models.Node)
                .where(models.Node.uuid.in_(uuids),
                       models.Node.reservation == host)
                .values(reservation=None)
                .execution_options(synchronize_session=False))
        if succeeded:
            session.execute(
                sa.update(models.Task)
                .where(models.Task.uuid.in_(succeeded))
                .values(status='success', finished_at=now, updated_at=now)
                .execution_options(synchronize_session=False))
        for task_uuid, reason in (failed or {}).items():
            session.execute(
                sa.update(models.Task).where(models.Task.uuid == task_uuid)
                .values(status='failed', reason=reason, finished_at=now,
                        updated_at=now)
                .execution_options(synchronize_session=False))
        if unstarted:
            session.execute(
                sa.update(models.Task)
                .where(models.Task.uuid.in_(unstarted),
                       models.Task.status == 'running')
                .values(status='pending', started_at=None, updated_at=now)
                .execution_options(synchronize_session=False))


def create_deployments(rows):
    """New deployment records (dicts of columns, ``uuid`` set); the
    previous records of their nodes are superseded (deleted)."""
    if not rows:
        return
    now = timeutils.utcnow()
    rows = [dict(r, created_at=now, deleted=False, final=False) for r in rows]
    with api.writer() as session:
        session.execute(
            sa.update(models.Deployment)
            .where(models.Deployment.node_uuid.in_(
                [r['node_uuid'] for r in rows]),
                models.Deployment.deleted.is_(False))
            .values(deleted=True)
            .execution_options(synchronize_session=False))
        session.execute(sa.insert(models.Deployment), rows)
