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
"""P7: ``deploy_site`` over a real Ironic against a script driving the
same Ironic straight through its API (and P6 during it).

Each run has a site of its own, built before the clock starts:

* a real Ironic from PyPI (:mod:`tools.benchmarks.real_ironic`: one
  ``ironic`` process, API and conductor, on a MariaDB database of its own,
  fake-hardware with ``[fake]`` delays so that each phase takes seconds,
  power-state sync off) holding ``--nodes`` nodes in ``enroll``, spread
  round-robin over 4 shards;
* for baremetal_orch: 4 ``baremetal-orch-conductor`` processes, one per
  shard (``[ironic]shard_key``), and ``baremetal-orch-api``, over
  RabbitMQ (a vhost of its own) and MariaDB (a database of its own); the
  run starts once the conductors' Ironic sync has imported every node.

The clock then measures, for ours, a ``deploy_site`` of :data:`DEPENDS`
(10 groups, up to 3 side by side, a tenth of the nodes each, every group
spanning the 4 shards) from the POST of the action to its end; for the
script (:mod:`tools.benchmarks.raw_ironic`), the same groups and nodes
driven manage, provide, active through openstacksdk, in the same
dependency order, from its first request until every node is ``active``.
Both end with every Ironic node ``active`` (checked). Both hand each node
the same payload: the config drive ours puts in a node's ``active``
request (its signal URL and token, the Heat inputs), the script's built
the same way before its clock starts (:func:`config_drives`);
``--bare-script`` hands the script's nodes none, the peer of the figures
before 2026-11-28.

Runs alternate, ``--pairs`` pairs, and the side that goes first alternates
too (ours then the script's, then the script's then ours, ...:
:func:`sides_in_order`), so that what favours a session's first run (a
cold database, a cold page cache) does not always fall on the same side.
One JSON line a run, then the ``P7`` line (medians, ratio = median of the
pairs' ratios, min/median/max) and the ``P6`` line (the largest peak RSS
of a conductor process during the runs). Each run's line says where the
machine's CPU went while its clock ran: Ironic's CPU seconds, ours'
processes' (each conductor, the API) or the script's, the shared
servers' (:data:`SERVERS`: MariaDB, RabbitMQ) and the whole machine's
busy and idle seconds (:class:`Machine`).
"""

import argparse
import functools
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types

import fixtures
from oslo_utils import uuidutils
import psutil
import requests
import sqlalchemy as sa

from baremetal_orch.common import statuses
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing import services
from tools.benchmarks import ironic_shard_sync
from tools.benchmarks import processes
from tools.benchmarks import raw_ironic
from tools.benchmarks import real_ironic
from tools.benchmarks import stats

#: The execution-core issue's goal (1.15 in the figures before 2026-11-27).
GOAL = 1.05
RSS_GOAL = 400
SHARDS = 4
#: The strategy: 10 groups in 5 layers (1, 3, 3, 2, 1 groups).
DEPENDS = {'g0': [], 'g1': ['g0'], 'g2': ['g0'], 'g3': ['g0'],
           'g4': ['g1'], 'g5': ['g1', 'g2'], 'g6': ['g2', 'g3'],
           'g7': ['g4', 'g5'], 'g8': ['g5', 'g6'], 'g9': ['g7', 'g8']}
#: ``[fake]`` delays of the Ironic (seconds; each phase takes seconds).
FAKE_DELAYS = {'power_delay': '1', 'boot_delay': '1', 'deploy_delay': '2',
               'management_delay': '0.5'}
#: ``[ironic]connect_retries`` of ours: Ironic's one API process resets
#: connections when hundreds of node workers call it at once.
CONNECT_RETRIES = 6
BIN = os.path.dirname(sys.executable)
WAIT = 600
#: The API endpoint in the signal URLs of the script's config drives
#: (ours': ``http://127.0.0.1:<its port>``).
SIGNAL_ENDPOINT = 'http://127.0.0.1:56789'


def node_name(i):
    return 'bench-%05d' % i


def groups_of(count):
    """``{group: [node names]}``: consecutive blocks of a tenth of the
    nodes (node i is in shard i % 4, so every group spans the shards)."""
    names = sorted(DEPENDS)
    size = -(-count // len(names))
    return {g: [node_name(i) for i in range(n * size,
                                            min(count, (n + 1) * size))]
            for n, g in enumerate(names)}


def strategy(name, count):
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': name},
            'data': {'groups': [
                {'name': g, 'critical': True, 'depends_on': DEPENDS[g],
                 'selectors': [{'node_names': members}],
                 'success_criteria': {'percent_successful_nodes': 100}}
                for g, members in sorted(groups_of(count).items())]}}


def start_ironic(scope, count):
    db = scope.useFixture(databases.Database('mysql'))
    ironic = scope.useFixture(real_ironic.Ironic(
        connection=real_ironic.mysql_url(db.url), fake_delays=FAKE_DELAYS,
        locked_retries=10))
    ironic_shard_sync.create_nodes(ironic, count, SHARDS, 8)
    return ironic


def ironic_states(ironic, key='name', http=None):
    """``{node name (or uuid): provision state}`` from one listing."""
    nodes = (http or ironic.http).get(ironic.endpoint + '/v1/nodes', params={
        'fields': '%s,provision_state' % key, 'limit': 1000}, timeout=120)
    nodes.raise_for_status()
    return {n[key]: n['provision_state'] for n in nodes.json()['nodes']}


def check_all_active(ironic, count):
    states = ironic_states(ironic)
    bad = {n: s for n, s in states.items() if s != 'active'}
    if len(states) != count or bad:
        raise RuntimeError('%d Ironic nodes, not active: %s'
                           % (len(states), dict(list(bad.items())[:10])))


#: The shared servers whose CPU a run reports (process names): the
#: database (ours and Ironic's) and the broker (ours alone).
SERVERS = ('mariadbd', 'beam.smp')


class Machine:
    """The CPU the whole machine spent between two points, and how much of
    it the shared servers took (``psutil``; the servers found by name).

    A server's share is the sum, over its processes alive at both points,
    of what each spent in between; a process that ended meanwhile adds
    nothing (its last figure is gone with it), and never takes off what
    it had spent before the start.

    :param servers: process names (:data:`SERVERS`).
    """

    def __init__(self, servers=SERVERS):
        self.servers = [p for p in psutil.process_iter(['name'])
                        if p.info['name'] in servers]
        self.start = self._now()

    def _now(self):
        times = psutil.cpu_times()
        busy = sum(times) - times.idle - getattr(times, 'iowait', 0.0)
        spent = {}
        for proc in self.servers:
            try:
                t = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            spent[proc.pid] = t.user + t.system
        return busy, times.idle, spent

    def report(self):
        """``{'machine_busy_s', 'machine_idle_s', 'servers_cpu_s'}``
        since this object was made."""
        busy, idle, spent = self._now()
        servers = {}
        for proc in self.servers:
            name = proc.info['name']
            servers.setdefault(name, 0.0)
            if proc.pid in spent and proc.pid in self.start[2]:
                servers[name] += spent[proc.pid] - self.start[2][proc.pid]
        return {'machine_busy_s': round(busy - self.start[0], 1),
                'machine_idle_s': round(idle - self.start[1], 1),
                'servers_cpu_s': {name: round(cpu, 1)
                                  for name, cpu in sorted(servers.items())}}


def request_counts(ironic, since):
    """Ironic's API requests since a log mark, by kind, from its own log:
    node listings, GETs of one node, provision state changes, others."""
    counts = {'list': 0, 'get_node': 0, 'provision': 0, 'other': 0}
    for r in ironic.request_log(since):
        parts = r.path.rstrip('/').split('/')
        if r.method == 'GET' and parts[-1] in ('nodes', 'detail'):
            counts['list'] += 1
        elif r.method == 'GET' and len(parts) == 4 and parts[2] == 'nodes':
            counts['get_node'] += 1
        elif r.method == 'PUT' and parts[-1] == 'provision':
            counts['provision'] += 1
        else:
            counts['other'] += 1
    return counts


class Usage:
    """CPU seconds and peak RSS of processes and their children."""

    def __init__(self, pids):
        self.procs = {pid: psutil.Process(pid) for pid in pids}
        self.start = {pid: self._cpu(p) for pid, p in self.procs.items()}

    @staticmethod
    def _tree(proc):
        return [proc] + proc.children(recursive=True)

    def _cpu(self, proc):
        total = 0.0
        for p in self._tree(proc):
            t = p.cpu_times()
            total += t.user + t.system
        return total

    @staticmethod
    def _peak_mib(proc):
        with open('/proc/%d/status' % proc.pid) as f:
            for line in f:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1]) / 1024.0
        return 0.0

    def report(self):
        """``{pid: {'cpu_s', 'peak_rss_mib', 'children_peak_rss_mib'}}``."""
        out = {}
        for pid, proc in self.procs.items():
            children = proc.children(recursive=True)
            out[pid] = {
                'cpu_s': round(self._cpu(proc) - self.start[pid], 1),
                'peak_rss_mib': round(self._peak_mib(proc), 1),
                'children_peak_rss_mib': [round(self._peak_mib(c), 1)
                                          for c in children]}
        return out


class Orchestrator:
    """4 conductors (one per shard) and the API, RabbitMQ and MariaDB."""

    def __init__(self, scope, ironic, count, poll_interval):
        self.scope = scope
        self.tmp = scope.useFixture(fixtures.TempDir()).path
        self.db = scope.useFixture(databases.Database('mysql'))
        self.engine = sa.create_engine(self.db.url)
        scope.addCleanup(self.engine.dispose)
        self.rabbit = scope.useFixture(broker.RabbitMQ())
        self.ironic = ironic
        self.count = count
        self.poll_interval = poll_interval
        self.port = services.free_port()
        self.procs = {}

    def _config(self, name, shard=None):
        sections = services.base_sections(
            self.tmp, self.port, self.db.url,
            DEFAULT={'rpc_transport': 'oslo', 'host': name,
                     'transport_url': self.rabbit.transport_url,
                     'rpc_response_timeout': 60},
            conductor={'heartbeat_interval': 2, 'heartbeat_timeout': 30,
                       'sync_interval': 10, 'workers': 128,
                       'max_concurrent_groups': len(DEPENDS),
                       'max_concurrent_nodes': self.count},
            ironic=dict(self.ironic.ironic_options(),
                        poll_interval=self.poll_interval,
                        connect_retries=CONNECT_RETRIES))
        if shard:
            sections['ironic']['shard_key'] = shard
        return services.write_config(
            os.path.join(self.tmp, '%s.conf' % name), sections)

    def _spawn(self, name, argv):
        log = open(os.path.join(self.tmp, name + '.log'), 'wb')
        proc = subprocess.Popen(
            [os.path.join(BIN, argv[0])] + argv[1:], stdout=log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
        self.procs[name] = proc
        self.scope.addCleanup(self._stop, proc)
        return proc

    @staticmethod
    def _stop(proc):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)

    def start(self):
        api_conf = self._config('api')
        subprocess.run([os.path.join(BIN, 'baremetal-orch-manage'),
                        '--config-file', api_conf, 'db', 'upgrade'],
                       check=True, capture_output=True, timeout=300)
        self.conductors = []
        for i in range(SHARDS):
            name = 'conductor-%d' % i
            self._spawn(name, ['baremetal-orch-conductor', '--config-file',
                               self._config(name, 'shard-%d' % i)])
            self.conductors.append(name)
        self._spawn('api', ['baremetal-orch-api', '--config-file',
                            api_conf])
        self.client = services.Client('http://127.0.0.1:%d' % self.port)
        self.client.wait_for(self._imported, timeout=WAIT, interval=1)

    def _imported(self):
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                with open(os.path.join(self.tmp, name + '.log'),
                          errors='replace') as f:
                    raise RuntimeError('%s exited:\n%s'
                                       % (name, f.read()[-3000:]))
        try:
            resp = self.client.get(
                '/v1/nodes', params={'limit': 1000, 'fields': 'uuid'})
        except requests.RequestException:
            return False
        return (resp.status_code == 200
                and len(resp.json()['nodes']) == self.count)

    def deploy(self):
        self.client.post('/v1/deployment_strategies', status=201,
                         json=strategy('p7', self.count))
        usage = Usage([self.procs[n].pid for n in self.conductors])
        api = Usage([self.procs['api'].pid])
        started = time.monotonic()
        action = self.client.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'p7'}}).json()
        # Read from the database, as P10 does: 0.1 s polls through the API
        # cost it about 16 CPU seconds of a P7 run (30 when they read the
        # whole document), on the cores Ironic needs; the script's side
        # has no watcher.
        state = processes.state_reader(action['uuid'],
                                       processes.POLL_DATABASE,
                                       engine=self.engine)
        self.client.wait_for(
            lambda: state() in statuses.ACTION_FINAL_STATES, timeout=7200,
            interval=processes.POLL_INTERVAL)
        seconds = time.monotonic() - started
        path = '/v1/actions/%s' % action['uuid']
        final = self.client.get(path, status=200).json()
        if (final['state'], final['result']) != ('complete', 'success'):
            raise RuntimeError('deploy_site ended %s/%s after %.1f s: %s' % (
                final['state'], final['result'], seconds,
                json.dumps(self.failures(final))))
        return seconds, usage.report(), api.report()[self.procs['api'].pid]

    def failures(self, final):
        """What failed: each group's status and reason, and the nodes'
        distinct last errors (counted)."""
        groups = {g: [e.get('status'), e.get('reason'),
                      len(e.get('failed_nodes') or ())]
                  for g, e in (final.get('report') or {}).get(
                      'groups', {}).items()}
        errors = {}
        nodes = self.client.get('/v1/nodes', params={
            'limit': 1000, 'fields': 'name,last_error'}).json()['nodes']
        for node in nodes:
            if node.get('last_error'):
                key = node['last_error'][:300]
                errors[key] = errors.get(key, 0) + 1
        return {'groups': groups, 'last_errors': errors,
                'logs': self.keep_logs()}

    def keep_logs(self):
        """Copy the services' logs out of the temporary directory."""
        dest = tempfile.mkdtemp(prefix='bmo-p7-logs-')
        for name in os.listdir(self.tmp):
            if name.endswith('.log'):
                shutil.copy2(os.path.join(self.tmp, name), dest)
        shutil.copy2(os.path.join(self.ironic.tmp, 'ironic.log'), dest)
        return dest


def run_ours(count, poll_interval):
    with fixtures.Fixture() as scope:
        ironic = start_ironic(scope, count)
        orch = Orchestrator(scope, ironic, count, poll_interval)
        orch.start()
        ironic_usage = Usage([ironic.process.pid])
        machine = Machine()
        mark = ironic.log_mark()
        seconds, conductors, api = orch.deploy()
        used = machine.report()
        requests_made = request_counts(ironic, mark)
        check_all_active(ironic, count)
        return dict({'figure': 'P7-run', 'side': 'baremetal_orch',
                     'seconds': round(seconds, 2), 'nodes': count,
                     'conductors': list(conductors.values()),
                     'api_cpu_s': api['cpu_s'],
                     'ironic_cpu_s': list(ironic_usage.report().values())[
                         0]['cpu_s'],
                     'ironic_requests': requests_made,
                     'ironic_poll_interval': poll_interval}, **used)


def config_drives(nodes):
    """``{node uuid: config drive}``: what ours hands each node, for the
    script to hand its nodes the same. Ours puts in the config drive of
    the ``active`` request the node's instance info and the inputs of a
    deployment signalled over HTTP
    (:func:`baremetal_orch.objects.deployment.instance_info`), built by
    :mod:`baremetal_orch.ironic.configdrive`; the script's carries the
    same keys with values of the same length (a signal URL with its
    token, a record's UUID), built the same way, before the clock starts.

    :param nodes: openstacksdk nodes with ``id``, ``name`` and
        ``instance_info``.
    """
    from baremetal_orch.ironic import configdrive
    from baremetal_orch.objects import deployment as deployments
    drives = {}
    for node in nodes:
        uuid = uuidutils.generate_uuid()
        record = types.SimpleNamespace(
            uuid=uuid, signal_url='%s/v1/signals/%s' % (SIGNAL_ENDPOINT,
                                                        uuid))
        inputs = deployments.instance_info(node, record,
                                           secrets.token_urlsafe(32))
        drives[node.id] = configdrive.build(configdrive.meta_data(
            types.SimpleNamespace(ironic_uuid=node.id, name=node.name),
            inputs))
    return drives


def run_script(count, poll_interval, with_drives=True):
    with fixtures.Fixture() as scope:
        ironic = start_ironic(scope, count)
        api = raw_ironic.SdkIronic(ironic.endpoint)
        scope.addCleanup(api.close)
        nodes = list(api.conn.baremetal.nodes(
            fields=['uuid', 'name', 'instance_info'], limit=1000))
        by_name = {n.name: n.id for n in nodes}
        if with_drives:
            api.config_drives = config_drives(nodes)
        members = {g: [by_name[n] for n in names]
                   for g, names in groups_of(count).items()}
        driver = raw_ironic.DagDriver(DEPENDS, members)
        ironic_usage = Usage([ironic.process.pid])
        # This process's own threads (Ironic is its child).
        script_cpu = time.process_time()
        machine = Machine()
        mark = ironic.log_mark()
        seconds = raw_ironic.deploy(driver, api, poll_interval,
                                    timeout=7200)
        used = machine.report()
        requests_made = request_counts(ironic, mark)
        check_all_active(ironic, count)
        return dict({'figure': 'P7-run', 'side': 'script',
                     'seconds': round(seconds, 2), 'nodes': count,
                     'ironic_cpu_s': list(ironic_usage.report().values())[
                         0]['cpu_s'],
                     'script_cpu_s': round(time.process_time() - script_cpu,
                                           1),
                     'ironic_requests': requests_made,
                     'poll_interval': poll_interval,
                     'config_drive': with_drives}, **used)


def sides_in_order(pair, sides):
    """The ``sides`` of pair number ``pair`` (from 0) in the order they
    run: as given in even pairs, reversed in odd ones (A B, B A, A B...)."""
    return list(sides) if pair % 2 == 0 else list(reversed(sides))


def summarise(runs, count, pairs):
    ours = [r['seconds'] for r in runs if r['side'] == 'baremetal_orch']
    script = [r['seconds'] for r in runs if r['side'] == 'script']
    n = min(len(ours), len(script))
    ratios = stats.pair_ratios(ours[:n], script[:n])
    conductors = [c for r in runs for c in r.get('conductors', ())]
    load = [round(x, 2) for x in os.getloadavg()]
    p7 = {'figure': 'P7', 'value': stats.summary(ours, 2)['median'],
          'unit': 's', 'baseline': stats.summary(script, 2)['median'],
          'ratio': stats.summary(ratios)['median'], 'goal': GOAL,
          'ratios': stats.summary(ratios), 'ours': stats.summary(ours, 2),
          'script': stats.summary(script, 2), 'nodes': count,
          'pairs': n, 'groups': len(DEPENDS), 'shards': SHARDS,
          'conductor_cpu_s': stats.summary(
              [c['cpu_s'] for c in conductors], 1),
          'script_config_drive': all(
              r.get('config_drive', False)
              for r in runs if r['side'] == 'script'),
          'fake_delays': FAKE_DELAYS, 'load': load}
    p6 = {'figure': 'P6', 'value': max(c['peak_rss_mib'] for c in conductors),
          'unit': 'MiB', 'baseline': None, 'ratio': None, 'goal': RSS_GOAL,
          'during': 'P7', 'nodes': count,
          'peak_rss_mib': stats.summary(
              [c['peak_rss_mib'] for c in conductors], 1),
          'note': 'VmHWM of each baremetal-orch-conductor process '
                  '(children: see the P7-run lines)'}
    return [p7, p6]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true',
                        help='40 nodes, one pair')
    parser.add_argument('--nodes', type=int)
    parser.add_argument('--pairs', type=int)
    parser.add_argument('--poll-interval', type=float, default=1.0,
                        help='seconds between polls: [ironic]poll_interval '
                             'of ours, the script\'s listing')
    parser.add_argument('--bare-script', action='store_true',
                        help='the script hands its nodes no config drive '
                             '(the peer of the figures before '
                             '2026-11-28); by default it hands each node '
                             'a config drive like the one ours hands it')
    args = parser.parse_args(argv)
    count = args.nodes or (40 if args.quick else 1000)
    pairs = args.pairs or (1 if args.quick else 2)
    runs = []
    sides = [('baremetal_orch', run_ours),
             ('script', functools.partial(
                 run_script, with_drives=not args.bare_script))]
    for pair in range(pairs):
        for name, side in sides_in_order(pair, sides):
            try:
                run = side(count, args.poll_interval)
            except Exception as exc:
                # Reported, not hidden: the line says what failed; the
                # summary has only the runs that completed.
                run = {'figure': 'P7-run', 'side': name, 'nodes': count,
                       'failed': str(exc)[-4000:]}
            run['load'] = [round(x, 2) for x in os.getloadavg()]
            print(json.dumps(run), flush=True)
            runs.append(run)
    done = [r for r in runs if 'failed' not in r]
    if not any(r['side'] == 'baremetal_orch' for r in done) or not any(
            r['side'] == 'script' for r in done):
        return 1
    for doc in summarise(done, count, pairs):
        print(json.dumps(doc), flush=True)
    return 1 if len(done) < len(runs) else 0


if __name__ == '__main__':
    sys.exit(main())
