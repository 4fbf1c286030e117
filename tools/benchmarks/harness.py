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
"""An in-process baremetal_orch for benchmarks: sqlite (or a URL), the
conductor in this process (rpc_transport = none), fake nodes."""

import os
import tempfile
import time

from oslo_config import cfg
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import launcher
from baremetal_orch.conductor import manager as manager_mod
from baremetal_orch.conductor import rpcapi
from baremetal_orch.db import migration
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.db.sqlalchemy import models
from baremetal_orch.notifications import notifier
from baremetal_orch.objects import action as action_obj
from baremetal_orch import service

CONF = cfg.CONF


#: A database server for the benchmarks (``--connection``), e.g.
#: ``mysql+pymysql://root@127.0.0.1/`` or
#: ``postgresql+psycopg2://postgres@127.0.0.1/``; each run gets a fresh
#: database of its own on it.
CONNECTION_ENV = 'BAREMETAL_ORCH_BENCH_CONNECTION'


def add_deployment_args(parser, aio_help):
    """``--deployment aio|split`` (``--split``) and ``--connection``, as
    the benchmarks that start the service take them."""
    parser.add_argument(
        '--deployment', choices=['aio', 'split'], default='aio',
        help=aio_help + '; split: baremetal-orch-api and '
                        'baremetal-orch-conductor processes over RabbitMQ')
    parser.add_argument('--split', dest='deployment', action='store_const',
                        const='split', help='--deployment split')
    parser.add_argument(
        '--connection', default=os.environ.get(CONNECTION_ENV),
        help='a database server (a fresh database is made on it); default '
             '$%s, else an embedded sqlite file' % CONNECTION_ENV)


def database_name(connection):
    """The backend of ``connection`` (``mysql``, ``postgresql``), or
    ``sqlite`` for None (the embedded default)."""
    return (sa.engine.make_url(connection).get_backend_name()
            if connection else 'sqlite')


def fresh_database(server_url):
    """Create an empty database on ``server_url`` (MariaDB/MySQL or
    PostgreSQL); returns (its URL, a callable that drops it)."""
    url = sa.engine.make_url(server_url)
    name = 'bmo_bench_%s' % uuidutils.generate_uuid()[:8]
    admin = sa.create_engine(url.set(
        database='postgres' if url.get_backend_name() == 'postgresql'
        else None), isolation_level='AUTOCOMMIT')
    with admin.connect() as conn:
        conn.exec_driver_sql('CREATE DATABASE %s' % name)

    def drop():
        sqla_api.reset_engine()
        with admin.connect() as conn:
            conn.exec_driver_sql('DROP DATABASE %s' % name)
        admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False), drop


def insert_nodes(engine, nodes, conductor):
    """Bulk-insert fake nodes ([{name, tags, rack_name, driver_info,
    labels}]) in ``enroll``, bound to the conductor ``conductor``, through
    the SQLAlchemy ``engine``."""
    now = timeutils.utcnow()
    rows, tags = [], []
    for n in nodes:
        rows.append({'uuid': uuidutils.generate_uuid(), 'name': n['name'],
                     'driver': 'fake', 'provision_state': 'enroll',
                     'maintenance': False, 'console_enabled': False,
                     'rack_name': n.get('rack_name'),
                     'driver_info': n.get('driver_info') or {},
                     'instance_info': {}, 'extra': {},
                     'conductor': conductor, 'created_at': now})
    with engine.begin() as conn:
        conn.execute(sa.insert(models.Node), rows)
        ids = dict(conn.execute(sa.select(models.Node.name,
                                          models.Node.id)).all())
        for n in nodes:
            for tag in n.get('tags', ()):
                tags.append({'node_id': ids[n['name']], 'tag': tag,
                             'created_at': now})
        if tags:
            conn.execute(sa.insert(models.NodeTag), tags)
        labels = [{'node_id': ids[n['name']], 'key': k, 'value': v,
                   'created_at': now}
                  for n in nodes
                  for k, v in (n.get('labels') or {}).items()]
        if labels:
            conn.execute(sa.insert(models.NodeLabel), labels)


class Service:
    """The all-in-one service minus the HTTP server."""

    def __init__(self, connection=None, overrides=None):
        """:param connection: a database server URL (a fresh database is
        made on it), or None for a sqlite file (the embedded default)."""
        self.tmp = tempfile.mkdtemp(prefix='bmo-bench-')
        self._drop = None
        if connection:
            connection, self._drop = fresh_database(connection)
        service.prepare_service([], binary='baremetal-orch')
        CONF.set_override('rpc_transport', 'none')
        CONF.set_override('host', 'bench')
        CONF.set_override('enabled_drivers', ['fake', 'ironic'])
        CONF.set_override('connection', connection or 'sqlite:///%s' %
                          os.path.join(self.tmp, 'bench.sqlite'),
                          group='database')
        from oslo_messaging import opts as messaging_opts
        for group, opts in messaging_opts.list_opts():
            CONF.register_opts(opts, group=None if group == 'DEFAULT'
                               else group)
        for (group, name), value in (overrides or {}).items():
            CONF.set_override(name, value, group=group)
        sqla_api.reset_engine()
        migration.upgrade()
        # As the all-in-one does (when notifications are on).
        notifier.start(conductor=True)
        self.manager = manager_mod.ConductorManager('bench')
        self.manager.init_host()
        rpcapi.set_local_manager(self.manager)
        self.context = orch_context.get_admin_context()
        # As the service's launcher does once its services started: what
        # was built to start is kept out of the collector's passes.
        launcher.freeze_heap()

    def stop(self):
        self.manager.del_host(wait=False)
        if self._drop is not None:
            # The action's last writes (its event) follow its state.
            time.sleep(2)
            self._drop()

    def add_nodes(self, nodes):
        """Bulk-insert fake nodes: [{name, tags, rack_name, driver_info}]."""
        insert_nodes(sqla_api.get_engine(), nodes, 'bench')

    def add_strategy(self, document):
        from baremetal_orch.db import api as dbapi
        dbapi.create_strategy(document['metadata']['name'], document)

    def run_action(self, strategy_name, timeout=3600):
        """Start deploy_site as the API does (the conductor admits it);
        wait; return (action, seconds)."""
        start = time.monotonic()
        action = self.manager.admit_action(
            self.context, uuidutils.generate_uuid(), 'deploy_site',
            {'deployment_strategy': strategy_name})
        deadline = start + timeout
        if action.uuid in self.manager.actions.running():
            # Its flow runs in a thread of this process, which ends with
            # the action: nothing polls the database meanwhile (a poll
            # twenty times a second took 8 % of the interpreter's time
            # from the service measured).
            self.manager.actions.wait(timeout)
            seconds = time.monotonic() - start
            action = action_obj.Action.get(self.context, action.uuid)
            if action.state in ('pending', 'running'):
                raise RuntimeError('action did not end within %s s'
                                   % timeout)
            return action, seconds
        # Poll the state column alone: reading the whole action (its report
        # names every node) twenty times a second would take the
        # interpreter from the service measured.
        engine = sqla_api.get_engine()
        query = sa.select(models.Action.state).where(
            models.Action.uuid == action.uuid)
        while time.monotonic() < deadline:
            with engine.connect() as conn:
                state = conn.execute(query).scalar()
            if state not in ('pending', 'running'):
                seconds = time.monotonic() - start
                return action_obj.Action.get(self.context,
                                             action.uuid), seconds
            time.sleep(0.05)
        raise RuntimeError('action did not end within %s s' % timeout)


def chain_strategy(name, groups, depends=None):
    """A strategy: groups g0..gN-1 selecting tag gI; depends_on from
    ``depends`` ({group: [groups]}) or none."""
    depends = depends or {}
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': name},
            'data': {'groups': [
                {'name': g, 'critical': False,
                 'depends_on': list(depends.get(g, [])),
                 'selectors': [{'node_tags': [g]}]} for g in groups]}}


def figure(name, value, unit, baseline=None, goal=None, ratio=None, **extra):
    if ratio is None and baseline:
        ratio = round(value / baseline, 3)
    doc = {'figure': name, 'value': value, 'unit': unit,
           'baseline': baseline, 'ratio': ratio, 'goal': goal}
    doc.update(extra)
    return doc


def peak_rss_mib():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
