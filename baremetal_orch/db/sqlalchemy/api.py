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
"""Engine, sessions and the query helpers every table module shares."""

import contextlib
import datetime
import os
import threading

from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_utils import timeutils
from osprofiler import sqlalchemy as osprofiler_sqlalchemy
import sqlalchemy as sa
from sqlalchemy.orm import exc as orm_exc

from baremetal_orch.common import exception
from baremetal_orch.db.sqlalchemy import models

CONF = cfg.CONF

_CONTEXT = threading.local()
# Whether the outermost transaction of this thread reads or writes: on
# sqlite a read begins a deferred transaction, a write takes the lock.
_MODE = threading.local()
_SQLITE_WRITE_LOCK = threading.RLock()
_SQLITE = [False]
_FACADE_LOCK = threading.Lock()
_FACADE = None
#: taskflow_backend(): the last engine and its backend.
_TASKFLOW = {}
_TASKFLOW_LOCK = threading.Lock()
#: MySQL's "Incorrect string value" and "Illegal mix of collations".
_MYSQL_TEXT_ERRORS = (1366, 1267)


def _sqlite_setup(engine):
    """SQLite for many threads.

    oslo.db gives a file database a NullPool (a new connection, and its
    PRAGMAs, per transaction) and a deferred BEGIN (a transaction that
    later writes fails at once with "database is locked" when another
    thread wrote meanwhile). Here: a pool of connections in WAL mode with a
    busy timeout, reads in deferred transactions, writes taking the write
    lock when they begin.
    """
    engine.pool = sa.pool.QueuePool(
        engine.pool._creator, pool_size=8, max_overflow=32, timeout=60,
        dialect=engine.dialect)

    @sa.event.listens_for(engine, 'connect')
    def _connect(dbapi_connection, record):
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        if engine.url.database not in (None, '', ':memory:'):
            cursor.execute('PRAGMA journal_mode=WAL')
            # With WAL, NORMAL never corrupts the database; it syncs at
            # checkpoints instead of at every commit.
            cursor.execute('PRAGMA synchronous=NORMAL')
        cursor.execute('PRAGMA busy_timeout=60000')
        cursor.execute('PRAGMA foreign_keys=ON')
        cursor.close()

    for listener in list(engine.dispatch.begin):
        if getattr(listener, '__name__', '') == '_sqlite_emit_begin':
            sa.event.remove(engine, 'begin', listener)

    @sa.event.listens_for(engine, 'begin')
    def _begin(connection):
        if 'in_transaction' not in connection.info:
            mode = getattr(_MODE, 'mode', None)
            if mode is None:
                # A transaction begun outside this module (taskflow's
                # persistence) writes too: it queues on the same lock as
                # ours instead of sleeping in sqlite's busy handler while
                # they hold the database (up to 100 ms a step).
                _SQLITE_WRITE_LOCK.acquire()
                connection.info['write_lock'] = True
            try:
                connection.exec_driver_sql('BEGIN' if mode == 'read'
                                           else 'BEGIN IMMEDIATE')
            except Exception:
                _release(connection.info)
                raise
            connection.info['in_transaction'] = True

    def _release(info):
        if info.pop('write_lock', False):
            _SQLITE_WRITE_LOCK.release()

    for name in ('commit', 'rollback'):
        sa.event.listen(engine, name,
                        lambda connection: _release(connection.info))
    # A connection given back to the pool with its transaction open.
    sa.event.listen(engine.pool, 'reset',
                    lambda _dbapi, record, _state: _release(record.info))


def _options():
    """[database] options; a MySQL connection without a charset uses
    utf8mb4, not oslo.db's utf8 (3 bytes: no emoji, no CJK extension B)."""
    options = dict(CONF.database.items())
    if options.get('connection'):
        url = sa.engine.make_url(options['connection'])
        if url.get_backend_name() == 'mysql' and 'charset' not in url.query:
            options['connection'] = url.update_query_dict(
                {'charset': 'utf8mb4'}).render_as_string(hide_password=False)
    return options


def masked_url(connection=None):
    """``[database]connection`` (or ``connection``) with its password
    masked, for messages."""
    connection = connection or CONF.database.connection
    try:
        return sa.engine.make_url(connection).render_as_string(
            hide_password=True)
    except Exception:
        return '<unparseable [database]connection>'


def sqlite_file(connection=None):
    """The file of a sqlite ``connection`` URL, or None."""
    url = sa.engine.make_url(connection or CONF.database.connection)
    if (url.get_backend_name() == 'sqlite' and
            url.database not in (None, '', ':memory:')):
        return url.database
    return None


def ensure_sqlite_directory(connection=None):
    """Create the directory of a sqlite database file (``db upgrade`` and
    the all-in-one service create the database)."""
    path = sqlite_file(connection)
    if path:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)


def check_connection(engine=None):
    """The engine (``engine`` or the service's), once it connected; a
    database that cannot be opened raises DatabaseUnavailable naming it."""
    url = None
    try:
        if engine is None:
            url = CONF.database.connection
            engine = get_engine()
        url = engine.url.render_as_string(hide_password=False)
        with engine.connect():
            pass
    except (sa.exc.OperationalError, sa.exc.InterfaceError,
            db_exc.DBError) as e:
        reason = (getattr(e, 'orig', None) or
                  getattr(e, 'inner_exception', None) or e)
        raise exception.DatabaseUnavailable(
            url=masked_url(url), reason=str(reason).splitlines()[0])
    return engine


def _check_sqlite_directory(connection):
    path = sqlite_file(connection)
    if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise exception.DatabaseUnavailable(
            url=masked_url(connection),
            reason='the directory %s does not exist; "baremetal-orch-manage '
            'db upgrade" creates the database, or set [database]connection'
            % os.path.dirname(os.path.abspath(path)))


def _facade():
    global _FACADE
    with _FACADE_LOCK:
        if _FACADE is None:
            _check_sqlite_directory(CONF.database.connection)
            facade = enginefacade.transaction_context()
            facade.configure(sqlite_fk=True, **_options())
            engine = facade.writer.get_engine()
            if (engine.url.get_backend_name() == 'sqlite' and
                    engine.url.database not in (None, '', ':memory:')):
                engine.dispose()
                _sqlite_setup(engine)
                _SQLITE[0] = True
            if CONF.profiler.enabled and CONF.profiler.trace_sqlalchemy:
                # The SQL of a traced request, in its osprofiler trace.
                osprofiler_sqlalchemy.add_tracing(sa, engine, 'db')
            _FACADE = facade
        return _FACADE


def reset_engine():
    """Forget the engine (tests, and after the configuration changed)."""
    global _FACADE
    with _FACADE_LOCK:
        if _FACADE is not None:
            try:
                _FACADE.writer.get_engine().dispose()
            except Exception:  # noqa: S110 - best effort on shutdown
                pass
        _FACADE = None
        _SQLITE[0] = False


def get_engine():
    return _facade().writer.get_engine()


def taskflow_backend(engine=None):
    """taskflow's SQL persistence backend, on the service database
    (:mod:`.taskflow_store`).

    The one of the last engine asked for is kept: a new one (its tables'
    metadata) cost each action's start about 30 ms before its first
    group."""
    engine = engine or get_engine()
    with _TASKFLOW_LOCK:
        if _TASKFLOW.get('engine') is not engine:
            _TASKFLOW.update(engine=engine,
                             backend=_new_taskflow_backend(engine))
        return _TASKFLOW['backend']


def destroy_logbook(action_uuid):
    """Remove the flow an action's taskflow persistence holds (its
    logbook). :returns: False when there was none."""
    from taskflow import exceptions as tf_exc
    try:
        with contextlib.closing(taskflow_backend().get_connection()) as conn:
            conn.destroy_logbook(action_uuid)
    except tf_exc.NotFound:
        return False
    return True


def _new_taskflow_backend(engine):
    # Imported here: only conductors and the manage command need taskflow.
    from baremetal_orch.db.sqlalchemy import taskflow_store
    return taskflow_store.backend(engine)


@contextlib.contextmanager
def _mode(mode, transaction):
    outer = getattr(_MODE, 'mode', None)
    if outer is None:
        _MODE.mode = mode
    # SQLite has one writer at a time; waiting on its busy handler sleeps
    # in steps of up to 100 ms. Threads of this process queue on a lock.
    lock = _SQLITE_WRITE_LOCK if (mode == 'write' and _SQLITE[0]) \
        else contextlib.nullcontext()
    try:
        with lock, transaction as session:
            yield session
    except db_exc.DBInvalidUnicodeParameter:
        # Text with a lone surrogate: the API refuses it in bodies; this is
        # the net for text from elsewhere (a document stored before).
        raise exception.InvalidParameterValue(
            reason='The request holds text that is not valid Unicode (a '
                   'lone surrogate) for the database.')
    except orm_exc.StaleDataError:
        # A row changed or vanished under a concurrent transaction (the
        # callers lock what they change; this is the safety net).
        raise exception.Conflict(
            reason='The resource was changed or deleted by another request '
                   'at the same time; retry.')
    except (db_exc.DBError, sa.exc.DBAPIError) as e:
        # The driver's error, under SQLAlchemy's (under oslo.db's).
        inner = getattr(e, 'inner_exception', e)
        inner = getattr(inner, 'orig', inner)
        code = (getattr(inner, 'args', None) or (None,))[0]
        if code in _MYSQL_TEXT_ERRORS:
            # 4-byte UTF-8 over a utf8mb3 connection or into a utf8mb3
            # column.
            why = 'characters its character set lacks'
        elif isinstance(e, db_exc.DBDataError):
            # Longer than the column (MySQL's TEXT is 64 KiB, a JSON
            # field of the body may be 1 MiB) or out of range.
            why = 'a value too long or out of range'
        else:
            raise
        # The request's fault, not a 500.
        raise exception.InvalidParameterValue(
            reason='The request holds %s for the database (%s%s).'
                   % (why, type(inner).__name__,
                      ' %s' % code if isinstance(code, int) else ''))
    finally:
        if outer is None:
            _MODE.mode = None


def reader():
    """A read transaction: ``with reader() as session: ...``."""
    return _mode('read', _facade().reader.using(_CONTEXT))


def writer():
    """A write transaction: ``with writer() as session: ...``."""
    return _mode('write', _facade().writer.using(_CONTEXT))


@contextlib.contextmanager
def locked_row(get_row, ident):
    """A write transaction that holds the row lock of what ``get_row``
    finds (SELECT ... FOR UPDATE; on sqlite the write lock) for the whole
    block: a read-modify-write inside it (a PATCH) is one transaction, and
    a concurrent one waits for it rather than overwrite it. Reads and
    writes through the database API inside the block join it.

    :param get_row: ``get_row(session, ident, lock=True)``, raising the
        resource's NotFound.
    """
    with writer() as session:
        get_row(session, ident, lock=True)
        yield


def heartbeat_is_stale(host, timeout):
    """A clause, true while ``host`` has no fresh heartbeat: a conductor
    takes another's work over in the same statement that checks it is
    still dead (one that just came back keeps its work)."""
    cutoff = timeutils.utcnow() - datetime.timedelta(seconds=timeout)
    return ~sa.exists().where(models.Service.host == host,
                              models.Service.forced_down.is_(False),
                              models.Service.last_seen_at >= cutoff)


def paginate(session, query, model, limit=None, marker=None, sort_key=None,
             sort_dir=None, marker_field='uuid'):
    """Page a query after the row whose ``marker_field`` is ``marker``.

    Paging is total: following markers returns every row exactly once,
    whatever the sort key. The order is (sort key, ``id``), both in
    ``sort_dir``, and a null sorts before every value (first ascending,
    last descending) on every database; the rows after the marker are
    those after its (value, id) in that order. (oslo.db's paginate_query
    compares the marker's value with ``<`` and ``>``: a null there, or in
    a row, matched nothing, and those rows were skipped.)
    """
    sort_key = sort_key or 'id'
    columns = sa.inspect(model).columns
    if sort_key not in columns:
        raise exception.InvalidParameterValue(
            reason='The sort_key value "%s" is an invalid field for '
                   'sorting' % sort_key)
    marker_obj = None
    if marker is not None:
        marker_obj = session.query(model).filter(
            getattr(model, marker_field) == marker).one_or_none()
        if marker_obj is None:
            raise exception.InvalidParameterValue(
                reason='Marker %s could not be found.' % marker)
    descending = (sort_dir or 'asc') == 'desc'
    direction = sa.desc if descending else sa.asc
    column, ident = getattr(model, sort_key), model.id
    nullable = sort_key != 'id' and columns[sort_key].nullable
    order = [column, ident] if sort_key != 'id' else [ident]
    if nullable:
        # 0 for a null, 1 for a value: nulls first ascending.
        order.insert(0, sa.case((column.is_(None), 0), else_=1))
    query = query.order_by(*[direction(c) for c in order])
    if marker_obj is not None:
        query = query.filter(_after(marker_obj, column, ident, sort_key,
                                    nullable, descending))
    if limit is not None:
        query = query.limit(limit)
    return query.all()


def _after(marker, column, ident, sort_key, nullable, descending):
    """The rows after ``marker`` in paginate()'s order."""
    after_id = ident < marker.id if descending else ident > marker.id
    if sort_key == 'id':
        return after_id
    value = getattr(marker, sort_key)
    if value is None:
        # Among the nulls: the later ones, then (ascending) every value.
        among_nulls = sa.and_(column.is_(None), after_id)
        return among_nulls if descending else sa.or_(
            among_nulls, column.isnot(None))
    beyond = column < value if descending else column > value
    criteria = [beyond, sa.and_(column == value, after_id)]
    if nullable and descending:
        criteria.append(column.is_(None))
    return sa.or_(*criteria)


def apply_filters(query, model, filters, exact=()):
    """Equality filters on plain columns; None values are skipped."""
    for key in exact:
        value = (filters or {}).get(key)
        if value is None:
            continue
        column = getattr(model, key)
        if isinstance(value, (list, tuple, set)):
            query = query.filter(column.in_(list(value)))
        else:
            query = query.filter(column == value)
    return query


def update_values(columns):
    """The SET of an UPDATE built once for a set of ``columns``: each
    column's value the parameter ``v_<column>``, and ``updated_at``
    (:func:`update_params` gives them at execution)."""
    return {c: sa.bindparam('v_' + c) for c in columns + ('updated_at',)}


def update_params(values, now):
    """``(columns, parameters)`` of an UPDATE of ``values`` (a dict) built
    by :func:`update_values`, ``updated_at`` set to ``now``."""
    params = {'v_' + c: v for c, v in values.items()}
    params['v_updated_at'] = now
    return tuple(sorted(values.keys() - {'updated_at'})), params


def add_tags_and_labels(session, nodes):
    """Give each node dict (with its ``id``) its ``tags`` (sorted) and
    ``labels``: two queries for any number of nodes, built once."""
    by_id = {n['id']: n for n in nodes}
    for node in nodes:
        node['tags'] = []
        node['labels'] = {}
    if not by_id:
        return nodes
    ids = {'ids': list(by_id)}
    for node_id, tag in session.execute(_NODE_TAGS, ids):
        by_id[node_id]['tags'].append(tag)
    for node_id, key, value in session.execute(_NODE_LABELS, ids):
        by_id[node_id]['labels'][key] = value
    return nodes


_TAGS = models.NodeTag.__table__
_NODE_TAGS = (sa.select(_TAGS.c.node_id, _TAGS.c.tag)
              .where(_TAGS.c.node_id.in_(sa.bindparam('ids', expanding=True)))
              .order_by(_TAGS.c.tag))
_LABELS = models.NodeLabel.__table__
_NODE_LABELS = (
    sa.select(_LABELS.c.node_id, _LABELS.c.key, _LABELS.c.value)
    .where(_LABELS.c.node_id.in_(sa.bindparam('ids', expanding=True))))


def count(session, model, *criteria):
    stmt = sa.select(sa.func.count()).select_from(model)
    for crit in criteria:
        stmt = stmt.where(crit)
    return session.execute(stmt).scalar_one()
