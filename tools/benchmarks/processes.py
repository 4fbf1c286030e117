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
"""baremetal_orch's own processes serving the API, for benchmarks.

:class:`Processes` is what both deployments share: a database (a sqlite
file, the embedded default, or a fresh database on a server), the
configuration file, ``baremetal-orch-manage db upgrade``, fake nodes
written straight into the database, the processes started until the API
shows a live conductor, and :meth:`Processes.run_action`, which times a
``deploy_site`` from its ``POST`` to its end. :class:`AllInOne` is
``baremetal-orch`` (API and conductor in one process, no broker);
:class:`tools.benchmarks.split.Split` the API and a conductor over
RabbitMQ.
"""

import datetime
import os
import subprocess
import sys
import time

import fixtures
import psutil
import sqlalchemy as sa

from baremetal_orch.db.sqlalchemy import models
from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing import services
from tools.benchmarks import harness

BIN = os.path.dirname(sys.executable)
#: Seconds between polls of the action.
POLL_INTERVAL = 0.1
#: The fields polled: not the report, which names every node.
POLL_FIELDS = 'state,result'
START_TIMEOUT = 120
#: Where :meth:`Processes.run_action` reads the action's state.
POLL_API = 'api'
POLL_DATABASE = 'database'


def state_reader(uuid, poll, client=None, engine=None):
    """A function that reads the state of action ``uuid`` now: through
    the API (``poll`` :data:`POLL_API`, with ``client``, the state alone)
    or the database (:data:`POLL_DATABASE`, with ``engine``: no request of
    a benchmark's own on the API while the action runs)."""
    if poll == POLL_API:
        path = '/v1/actions/%s' % uuid
        return lambda: client.get(
            path, status=200, params={'fields': POLL_FIELDS}).json()['state']
    query = sa.select(models.Action.state).where(models.Action.uuid == uuid)

    def read():
        with engine.connect() as conn:
            return conn.execute(query).scalar()
    return read


def parse_timestamp(value):
    """An API timestamp (ISO 8601, UTC offset) as an aware datetime."""
    stamp = datetime.datetime.fromisoformat(value)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=datetime.timezone.utc)
    return stamp


def recorded_seconds(action):
    """Seconds from the action's ``created_at`` to its ``finished_at`` as
    the service recorded them (whole seconds on MariaDB, whose DATETIME
    keeps no fraction), or None while it has not finished."""
    if not action.get('created_at') or not action.get('finished_at'):
        return None
    return (parse_timestamp(action['finished_at']) -
            parse_timestamp(action['created_at'])).total_seconds()


def cpu_seconds(pid):
    """User and system CPU seconds of a process and its children."""
    proc = psutil.Process(pid)
    total = 0.0
    for p in [proc] + proc.children(recursive=True):
        try:
            times = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


class Processes(fixtures.Fixture):
    """baremetal_orch's processes and their database; subclasses name the
    processes (:attr:`COMMANDS`), the host the nodes are bound to
    (:attr:`HOST`) and the configuration (:meth:`sections`)."""

    #: {name: command in the virtualenv's bin}, started in this order.
    COMMANDS = {}
    #: ``[DEFAULT]host`` of the conductor, which the nodes are bound to.
    HOST = None

    def __init__(self, connection=None, overrides=None):
        """:param connection: a database server URL (a fresh database is
        made on it), or None for a sqlite file.
        :param overrides: {(section, option): value} of the config."""
        super().__init__()
        self.server = connection
        self.overrides = overrides or {}
        self.procs = {}

    def sections(self):
        """The configuration file's {section: {option: value}}."""
        raise NotImplementedError

    def _setUp(self):
        self.tmp = self.useFixture(fixtures.TempDir()).path
        if self.server:
            self.connection, drop = harness.fresh_database(self.server)
            self.addCleanup(drop)
        else:
            self.connection = 'sqlite:///%s' % os.path.join(
                self.tmp, 'bench.sqlite')
        self.port = services.free_port()
        self.conf = services.write_config(
            os.path.join(self.tmp, 'bench.conf'), self.sections())
        subprocess.run([os.path.join(BIN, 'baremetal-orch-manage'),
                        '--config-file', self.conf, 'db', 'upgrade'],
                       check=True, capture_output=True, timeout=300)
        self.engine = sa.create_engine(self.connection)
        self.addCleanup(self.engine.dispose)
        self.url = 'http://127.0.0.1:%d' % self.port
        self.client = services.Client(self.url)

    def stop(self):
        self.cleanUp()

    def add_nodes(self, nodes):
        """Insert fake nodes bound to the conductor (before :meth:`start`
        or after it)."""
        harness.insert_nodes(self.engine, nodes, self.HOST)

    def _spawn(self, name):
        log = open(os.path.join(self.tmp, name + '.log'), 'wb')
        self.addCleanup(log.close)
        proc = subprocess.Popen(
            [os.path.join(BIN, self.COMMANDS[name]), '--config-file',
             self.conf], stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
        self.procs[name] = proc
        self.addCleanup(func_fixtures.stop_process, proc, 10)
        return proc

    def log_tail(self, name, size=3000):
        with open(os.path.join(self.tmp, name + '.log'),
                  errors='replace') as f:
            return f.read()[-size:]

    def check_alive(self):
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise RuntimeError('%s exited (%s):\n%s' % (
                    name, proc.returncode, self.log_tail(name)))

    def start(self):
        """Start the processes; return once the API answers and shows the
        conductor alive."""
        for name in self.COMMANDS:
            self._spawn(name)

        def answers():
            self.check_alive()
            try:
                return self.client.get('/v1').status_code == 200
            except Exception:
                return False
        self.client.wait_for(answers, timeout=START_TIMEOUT, interval=0.5)
        services.wait_for_live_conductor(self.client, timeout=START_TIMEOUT)

    def add_strategy(self, document):
        self.client.post('/v1/deployment_strategies', status=201,
                         json=document)

    def run_action(self, strategy_name, timeout=3600, poll=POLL_API):
        """POST a deploy_site; poll its state every POLL_INTERVAL until it
        ends, through the API (``poll``: :data:`POLL_API`) or the database
        (:data:`POLL_DATABASE`: no request of the benchmark's own on the
        API while the action runs). Return (the whole action document,
        seconds from before the POST to the poll that saw it end, usage):
        ``usage`` holds each process's CPU seconds during the action and
        the seconds the service recorded (:func:`recorded_seconds`)."""
        pids = {name: proc.pid for name, proc in self.procs.items()}
        cpu = {name: cpu_seconds(pid) for name, pid in pids.items()}
        start = time.monotonic()
        action = self.client.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': strategy_name}}).json()
        state = state_reader(action['uuid'], poll, client=self.client,
                             engine=self.engine)
        deadline = start + timeout
        while True:
            if state() not in ('pending', 'running'):
                seconds = time.monotonic() - start
                break
            if time.monotonic() > deadline:
                raise RuntimeError('action did not end within %s s'
                                   % timeout)
            self.check_alive()
            time.sleep(POLL_INTERVAL)
        usage = {'cpu_s': {name: round(cpu_seconds(pid) - cpu[name], 1)
                           for name, pid in pids.items()}}
        final = self.client.get('/v1/actions/%s' % action['uuid'],
                                status=200).json()
        recorded = recorded_seconds(final)
        usage['recorded_s'] = None if recorded is None else round(
            recorded, 2)
        return final, seconds, usage


class AllInOne(Processes):
    """``baremetal-orch``: API and conductor in one process, no broker
    (``rpc_transport = none``). Heartbeats every 2 s, stale after 30 s: a
    loaded 2-core machine must not make the API find the conductor
    dead."""

    COMMANDS = {'aio': 'baremetal-orch'}
    HOST = 'aio'

    def sections(self):
        sections = services.base_sections(
            self.tmp, self.port, self.connection,
            DEFAULT={'host': self.HOST, 'rpc_transport': 'none'},
            conductor={'heartbeat_interval': 2, 'heartbeat_timeout': 30})
        for (section, option), value in self.overrides.items():
            sections.setdefault(section, {})[option] = value
        return sections
