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
"""The node records of Ironic-backed nodes, as the Ironic sync reads and
writes them: in bulk, as plain dicts, with compare-and-set updates.

Records are dicts of :data:`RECORD_COLUMNS`. Writers raise
``oslo_db.exception.DBDuplicateEntry`` when a name or uuid is taken; the
sync then retries row by row.
"""

import sqlalchemy as sa

from baremetal_orch.db.sqlalchemy import api
from baremetal_orch.db.sqlalchemy import models

#: The driver of the records the sync manages.
DRIVER = 'ironic'
#: Rows per IN (...) list of one query.
CHUNK = 500
#: The columns a sync writes, besides ``conductor`` and ``updated_at``.
SYNCED = ('name', 'provision_state', 'target_provision_state',
          'power_state', 'maintenance', 'maintenance_reason', 'shard',
          'conductor_group', 'last_error')
#: The columns of a record.
RECORD_COLUMNS = ('id', 'uuid', 'ironic_uuid', 'conductor',
                  'reservation') + SYNCED


def _chunks(items, size=CHUNK):
    items = list(items)
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _select(session, *criteria):
    node = models.Node
    columns = [getattr(node, c) for c in RECORD_COLUMNS]
    stmt = sa.select(*columns).where(node.driver == DRIVER,
                                     node.ironic_uuid.isnot(None), *criteria)
    return [dict(row._mapping) for row in session.execute(stmt)]


def records_in_scope(host, shard, group):
    """The records a sync of ``host`` may touch: its own, and those of its
    shard and conductor group (all of them without either)."""
    node = models.Node
    scope = []
    if shard:
        scope.append(node.shard == shard)
    if group:
        scope.append(sa.func.lower(node.conductor_group) == group)
    criteria = [sa.or_(node.conductor == host, sa.and_(*scope))] if scope \
        else []
    with api.reader() as session:
        return _select(session, *criteria)


def records_by_ironic_uuid(uuids):
    """The records of these Ironic node uuids."""
    found = []
    with api.reader() as session:
        for chunk in _chunks(uuids):
            found.extend(_select(session,
                                 models.Node.ironic_uuid.in_(chunk)))
    return found


def node_ids_by(column, values):
    """``{value: node id}`` of the nodes (any driver) whose ``column``
    (``name`` or ``uuid``) is one of ``values``."""
    node = models.Node
    taken = {}
    with api.reader() as session:
        for chunk in _chunks(values):
            for value, node_id in session.execute(
                    sa.select(getattr(node, column), node.id)
                    .where(getattr(node, column).in_(chunk))):
                taken[value] = node_id
    return taken


def insert_records(rows):
    """Insert node rows (dicts of node columns) in one statement."""
    with api.writer() as session:
        session.execute(sa.insert(models.Node.__table__), rows)


def _update_statement():
    node = models.Node.__table__
    values = {c: sa.bindparam('v_' + c) for c in SYNCED}
    values.update(conductor=sa.bindparam('v_conductor'),
                  updated_at=sa.bindparam('v_updated_at'))
    return (sa.update(node)
            .where(node.c.id == sa.bindparam('w_id'),
                   node.c.reservation.is_(None),
                   sa.func.coalesce(node.c.conductor, '') ==
                   sa.bindparam('w_conductor'),
                   node.c.provision_state == sa.bindparam('w_state'),
                   node.c.maintenance == sa.bindparam('w_maintenance'))
            .values(**values))


def update_records(updates, host, now):
    """Write the synced values of records, each only if its row is still
    as read (same owner, state and maintenance, unlocked).

    :param updates: ``[(record, {column of SYNCED: value})]``.
    :param host: the service that now owns them.
    :returns: how many rows changed.
    """
    params = []
    for record, values in updates:
        row = {'v_' + k: v for k, v in values.items()}
        row.update(v_conductor=host, v_updated_at=now, w_id=record['id'],
                   w_conductor=record['conductor'] or '',
                   w_state=record['provision_state'],
                   w_maintenance=record['maintenance'])
        params.append(row)
    with api.writer() as session:
        result = session.execute(_update_statement(), params)
        return (result.rowcount if result.supports_sane_multi_rowcount()
                else len(params))
