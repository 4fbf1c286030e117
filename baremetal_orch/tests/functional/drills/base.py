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
"""What the reliability drills share: the services they start, the fake
driver's call log, seeds and figures.

:class:`DrillTestCase` starts either a split deployment (conductors and an
API process over RabbitMQ and MariaDB, :meth:`~DrillTestCase.start_split`)
or the all-in-one service (:meth:`~DrillTestCase.start_aio`), creates
nodes and strategies through the REST API, and counts the driver calls
that completed (``[fake_driver]call_log``), which is how every drill proves
that no node was prepared or deployed twice.

With ``BAREMETAL_ORCH_DRILL_JOBBOARD=redis`` (or ``zookeeper``) the split
deployment posts its actions on a taskflow jobboard of its own
(``[taskflow]``, the ``Jobboard`` fixture of
:mod:`baremetal_orch_testing.fixtures.jobboard`), from which the
conductors take them; the figures name the mode.

Expensive drills set ``expensive = True``: they are skipped unless
``BAREMETAL_ORCH_DRILLS=1`` (``tox -e drills``). Random choices come from
:meth:`~DrillTestCase.make_random`, whose seed is printed and can be fixed
with ``BAREMETAL_ORCH_DRILL_SEED`` to replay a failure. Measured figures
are attached to the test result (``stestr last --subunit |
subunit2pyunit`` shows them) and, when ``BAREMETAL_ORCH_DRILL_FIGURES``
names a file, appended to it as one JSON line per drill.
"""

import collections
import concurrent.futures
import datetime
import json
import os
import random
import subprocess
import sys
import time

import sqlalchemy
from testtools import content

from baremetal_orch.common import states
from baremetal_orch.tests.functional import base
from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing.fixtures import jobboard
from baremetal_orch_testing import helpers
from baremetal_orch_testing import services

DRILLS_ENV = 'BAREMETAL_ORCH_DRILLS'
JOBBOARD_ENV = 'BAREMETAL_ORCH_DRILL_JOBBOARD'
SEED_ENV = 'BAREMETAL_ORCH_DRILL_SEED'
FIGURES_ENV = 'BAREMETAL_ORCH_DRILL_FIGURES'

#: The driver calls a phase completes: prepare ends with ``provide``.
COMPLETED_CALLS = ('provide', 'deploy')

CREATE_WORKERS = 4


def jobboard_kind():
    """The jobboard the drills use (``redis``, ``zookeeper``), or None
    for the database-only claim."""
    kind = os.environ.get(JOBBOARD_ENV, '').strip().lower()
    if kind in ('', '0', 'none', 'database', 'db'):
        return None
    if kind not in jobboard.PORTS:
        raise ValueError('%s=%s: expected redis or zookeeper'
                         % (JOBBOARD_ENV, kind))
    return kind


def strategy_doc(name, groups):
    """A deployment strategy selecting each group by one tag.

    :param groups: ``[(group, tag, [dependencies])]``.
    """
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': name},
            'data': {'groups': [
                {'name': group, 'critical': True, 'depends_on': list(deps),
                 'selectors': [{'node_tags': [tag]}],
                 'success_criteria': {'percent_successful_nodes': 100}}
                for group, tag, deps in groups]}}


class DrillTestCase(base.FunctionalTestCase):
    """Base of the drills."""

    #: Skipped unless BAREMETAL_ORCH_DRILLS=1.
    expensive = False

    def setUp(self):
        super().setUp()
        if self.expensive and not func_fixtures.required(DRILLS_ENV):
            self.skipTest('%s is an expensive reliability drill: it runs '
                          'with %s=1 (tox -e drills, one test at a time)'
                          % (self.id().rsplit('.', 1)[-1], DRILLS_ENV))
        self.call_log = os.path.join(self.log_dir, 'calls.jsonl')
        self.client = None

    # Seeds and figures ---------------------------------------------------

    def make_random(self):
        """A seeded random.Random; the seed is attached to the result."""
        seed = os.environ.get(SEED_ENV)
        seed = int(seed) if seed else random.SystemRandom().randrange(
            2 ** 31)
        self.seed = seed
        self.addDetail('drill-seed', content.text_content(
            '%s=%d' % (SEED_ENV, seed)))
        print('%s: %s=%d' % (self.id(), SEED_ENV, seed), file=sys.stderr)
        return random.Random(seed)

    def record_figures(self, figures):
        """Attach ``figures`` (JSON) to the result; append them to the
        file named by BAREMETAL_ORCH_DRILL_FIGURES."""
        figures = dict(figures, mode=jobboard_kind() or 'database')
        text = json.dumps(figures, indent=1, sort_keys=True)
        self.addDetail('drill-figures', content.text_content(text))
        path = os.environ.get(FIGURES_ENV)
        if path:
            with open(path, 'a') as f:
                f.write(json.dumps({'test': self.id(), 'time': time.time(),
                                    'figures': figures},
                                   sort_keys=True) + '\n')

    # The fake driver's call log ------------------------------------------

    def completion_times(self):
        """{(node name, call): [end times]} of the driver calls that ended
        (wall-clock times, in the order they ended)."""
        return helpers.call_log_ends(self.call_log)

    def completed_calls(self):
        """{(node name, call): count} of the driver calls that ended."""
        return helpers.completed_calls(self.call_log)

    def assertEachCalledOnce(self, names, message='', unrecorded=None):
        """Every node in ``names`` was provided and deployed exactly once
        (completed calls).

        :param unrecorded: ``{(name, call): kill time}``: a call of a node
            that a killed conductor was running, whose completion it never
            saved (the node was still in its working state when the process
            died). Such a call is allowed a second completion, if its first
            one ended before the kill: the fake driver, unlike Ironic, has
            no state of its own that would tell the next conductor the work
            was done. Every other call must have ended exactly once.
        """
        unrecorded = unrecorded or {}
        times = self.completion_times()
        wrong = {}
        for key in ((n, c) for n in sorted(names) for c in COMPLETED_CALLS):
            ends = times.get(key, [])
            killed_at = unrecorded.get(key)
            if len(ends) == 1 or (len(ends) == 2 and killed_at is not None
                                  and ends[0] <= killed_at <= ends[1]):
                continue
            wrong['%s %s' % key] = len(ends)
        self.assertEqual({}, wrong, 'nodes not provided/deployed exactly '
                         'once (completed calls) %s' % message)

    def unrecorded_calls(self, snapshot, host, killed_at):
        """The calls a killed conductor may have completed unrecorded.

        :param snapshot: :meth:`node_rows` taken right after the kill.
        :returns: ``{(name, call): killed_at}`` for every node ``host``
            held in a working state (cleaning: provide; deploying: deploy).
        """
        calls = {states.CLEANING: 'provide', states.DEPLOYING: 'deploy'}
        return {(name, calls[state]): killed_at
                for name, (state, holder) in snapshot.items()
                if holder == host and state in calls}

    def node_rows(self, name_prefix):
        """{name: (provision_state, reservation)} read from the database
        (the lock holder is not in the API)."""
        engine = sqlalchemy.create_engine(self.db.url)
        try:
            with engine.connect() as conn:
                rows = conn.execute(sqlalchemy.text(
                    'SELECT name, provision_state, reservation FROM nodes '
                    'WHERE name LIKE :prefix'),
                    {'prefix': name_prefix + '%'}).all()
        finally:
            engine.dispose()
        return {name: (state, holder) for name, state, holder in rows}

    def log_lines(self, text):
        """[(wall-clock time, line)] of the conductors' log lines that
        contain ``text``, oldest first (oslo.log stamps local time)."""
        found = []
        for path in sorted(set(self._conductor_logs)):
            with open(path, errors='replace') as f:
                for line in f:
                    if text not in line:
                        continue
                    try:
                        stamp = datetime.datetime.strptime(
                            line[:23], '%Y-%m-%d %H:%M:%S.%f').timestamp()
                    except ValueError:
                        continue
                    found.append((stamp, line.rstrip()))
        return sorted(found)

    # Services ------------------------------------------------------------

    def _conf(self, name, port, connection, **sections):
        return services.write_config(
            os.path.join(self.log_dir, '%s.conf' % name),
            services.base_sections(self.log_dir, port, connection,
                                   **sections))

    def start_split(self, hosts, conductor=None, rabbit=None, **sections):
        """Conductors ``hosts`` and an API over RabbitMQ and MariaDB.

        :param conductor: extra ``[conductor]`` options.
        :param rabbit: a broker fixture (with ``transport_url``) already
            set up; default: a vhost of the shared broker.
        :param sections: more options, ``{section: {option: value}}``
            (``DEFAULT`` included), for every process.
        """
        self.db = self.useFixture(databases.Database('mysql'))
        self.rabbit = rabbit or self.useFixture(broker.RabbitMQ())
        kind = jobboard_kind()
        if kind and 'taskflow' not in sections:
            sections = dict(sections, taskflow=self.useFixture(
                jobboard.Jobboard(kind)).options)
        port = services.free_port()
        self.confs = {}
        for host in tuple(hosts) + ('api',):
            opts = {k: dict(v) for k, v in sections.items()}
            opts.setdefault('DEFAULT', {}).update({
                'rpc_transport': 'oslo', 'host': host,
                'transport_url': self.rabbit.transport_url,
                'rpc_response_timeout': 10})
            opts.setdefault('conductor', {}).update(dict(
                {'heartbeat_interval': 1, 'heartbeat_timeout': 4},
                **(conductor or {})))
            opts.setdefault('fake_driver', {})['call_log'] = self.call_log
            self.confs[host] = self._conf(host, port, self.db.url, **opts)
        subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                     'baremetal-orch-manage'),
                        '--config-file', self.confs['api'], 'db',
                        'upgrade'], check=True, capture_output=True,
                       timeout=120)
        self.conductors = {}
        self._conductor_logs = []
        self._starts = collections.Counter()
        for host in hosts:
            self.start_conductor(host)
        self.api = self.start_process(['baremetal-orch-api', '--config-file',
                                       self.confs['api']])
        endpoint = 'http://127.0.0.1:%d' % port
        self.wait_for_http(endpoint + '/v1', status=200, process=self.api,
                           timeout=60)
        self.endpoint = endpoint
        self.client = services.Client(endpoint)
        self.wait_alive(hosts)

    def owner(self, action, timeout=60):
        """The conductor of ``action`` (a document): with a jobboard, the
        one that takes its job (waited for)."""
        if action.get('conductor'):
            return action['conductor']
        return self.client.wait_for(lambda: self.client.get(
            '/v1/actions/%s' % action['uuid'], status=200).json()[
            'conductor'], timeout=timeout, interval=0.02)

    def start_conductor(self, host):
        """(Re)start the conductor ``host`` (the same host name)."""
        self._starts[host] += 1
        name = host if self._starts[host] == 1 else '%s.%d' % (
            host, self._starts[host])
        proc = self.start_process(['baremetal-orch-conductor',
                                   '--config-file', self.confs[host]],
                                  log_name=name)
        self.conductors[host] = proc
        self._conductor_logs.append(proc.log_path)
        return proc

    def wait_serving(self, host, timeout=60):
        """Wait until the current process of ``host`` serves RPC."""
        proc = self.conductors[host]
        line = 'Conductor %s serving RPC' % host

        def serving():
            if proc.poll() is not None:
                raise AssertionError('%s exited: %s' % (host,
                                                        proc.log.tail()))
            with open(proc.log_path, errors='replace') as f:
                return any(line in text for text in f)
        self.client.wait_for(serving, timeout=timeout)

    def alive_hosts(self):
        resp = self.client.get('/v1/services', status=200)
        return {s['host'] for s in resp.json()['services'] if s['alive']}

    def wait_alive(self, hosts, timeout=60):
        """Wait until every conductor in ``hosts`` heartbeats."""
        self.client.wait_for(lambda: set(hosts) <= self.alive_hosts(),
                             timeout=timeout)

    def start_aio(self, **sections):
        """The all-in-one service (no broker) on a sqlite database."""
        db = self.useFixture(databases.Database('sqlite'))
        port = services.free_port()
        opts = {k: dict(v) for k, v in sections.items()}
        opts.setdefault('DEFAULT', {}).update({'rpc_transport': 'none',
                                               'host': 'aio'})
        opts.setdefault('fake_driver', {})['call_log'] = self.call_log
        conf = self._conf('aio', port, db.url, **opts)
        self.aio = self.start_process(['baremetal-orch', '--config-file',
                                       conf])
        self.endpoint = 'http://127.0.0.1:%d' % port
        self.wait_for_http(self.endpoint + '/v1', status=200,
                           process=self.aio, timeout=60)
        self.client = services.Client(self.endpoint)

    # Inventory -----------------------------------------------------------

    def create_nodes(self, nodes):
        """POST every node (a list of bodies), a few requests at a time."""
        def create(chunk):
            client = services.Client(self.endpoint)
            return [client.post('/v1/nodes', json=body, status=201).json()
                    for body in chunk]
        chunks = [nodes[i::CREATE_WORKERS] for i in range(CREATE_WORKERS)]
        with concurrent.futures.ThreadPoolExecutor(CREATE_WORKERS) as pool:
            return [doc for docs in pool.map(create, chunks) for doc in docs]

    def node_states(self, names):
        """{name: provision_state} of the nodes ``names``."""
        wanted = set(names)
        states = {}
        marker = None
        while True:
            url = '/v1/nodes?limit=1000'
            if marker:
                url += '&marker=%s' % marker
            page = self.client.get(url, status=200).json()['nodes']
            if not page:
                break
            states.update({n['name']: n['provision_state'] for n in page
                           if n['name'] in wanted})
            marker = page[-1].get('uuid')
            if len(page) < 1000 or not marker:
                break
        return states


# The figures file (tox -e drills) -------------------------------------------

def _r1_lines(figures):
    yield ('reference run: %s nodes in %s s (seed %s, %s)' % (
        figures['nodes'], figures['reference_duration_s'], figures['seed'],
        figures.get('mode', 'database')))
    yield ('trial  kill point              restart  resumed by   in flight  '
           'take-over  resumed  kill->end  overhead')
    for t in figures['trials']:
        point = '%s %s +%.2fs' % (t['kill_point'][0], t['kill_point'][1]
                                  or '', t['kill_point'][2])
        yield ('%5d  %-22s  %-7s  %-11s  %9d  %9s  %6ss  %8ss  %7ss' % (
            t['trial'], point, 'yes' if t['restart_at_once'] else 'no',
            t['resumed_by'] + ('' if t['takeover_s'] is None else '*'),
            t['in_flight_on_killed'],
            '-' if t['takeover_s'] is None else '%ss' % t['takeover_s'],
            t['resume_s'], t['kill_to_end_s'],
            t['overhead_vs_reference_s']))
        if t['unrecorded_completions_redone']:
            yield ('       redone (completed, never recorded): %s'
                   % ', '.join(t['unrecorded_completions_redone']))
    yield ('*: taken over by the survivor. take-over, resumed: seconds from '
           'the kill to the log lines "Taking over action", "Resuming action"')
    for key, name in (('takeover_s', 'take-over'), ('resume_s', 'resumed')):
        values = sorted(t[key] for t in figures['trials']
                        if t[key] is not None)
        if values:
            yield ('%s: min %s s, median %s s, max %s s over %d trials'
                   % (name, values[0], values[len(values) // 2],
                      values[-1], len(values)))


#: The columns of the steering drills' trials: (figure key, heading).
STEERING_COLUMNS = {
    'R8': (('paused_after_calls', 'pause at'),
           ('pause_to_paused_s', 'pause->paused'),
           ('takeover_s', 'take-over'), ('quiet_s', 'paused for'),
           ('started_while_paused', 'started'),
           ('resume_to_end_s', 'resume->end'), ('sent_twice', 'twice')),
    'R9': (('killed_after_calls', 'kill at'),
           ('in_flight_on_killed', 'in flight'),
           ('kill_to_dead_s', 'kill->dead'),
           ('kill_to_abort_s', 'kill->abort'),
           ('takeover_log_s', 'take-over'),
           ('abort_before_takeover', 'abort first'),
           ('abort_to_end_s', 'abort->end'),
           ('nodes_not_started', 'not started'), ('sent_twice', 'twice')),
}


def _steering_lines(figures):
    columns = STEERING_COLUMNS[figures['drill']]
    yield ('%s: %s nodes a trial (seed %s, %s)' % (
        figures['drill'], figures['nodes'], figures['seed'],
        figures.get('mode', 'database')))
    yield 'trial  ' + '  '.join('%13s' % h for _k, h in columns)
    for t in figures['trials']:
        yield '%5d  ' % t['trial'] + '  '.join(
            '%13s' % ('-' if t.get(k) is None else t[k])
            for k, _h in columns)
    for key, heading in columns:
        values = sorted(t[key] for t in figures['trials']
                        if isinstance(t.get(key), float))
        if values:
            yield ('%s: min %s s, median %s s, max %s s over %d trials'
                   % (heading, values[0], values[len(values) // 2],
                      values[-1], len(values)))


def report_lines(path):
    """Readable lines of a figures file."""
    with open(path) as f:
        entries = [json.loads(line) for line in f if line.strip()]
    for entry in entries:
        yield entry['test']
        figures = entry['figures']
        if figures.get('drill') in STEERING_COLUMNS:
            lines = _steering_lines(figures)
        elif 'trials' in figures:
            lines = _r1_lines(figures)
        else:
            lines = ('%s: %s' % item for item in sorted(figures.items()))
        for line in lines:
            yield '  ' + line


def main(argv=None):
    """``reset`` or ``report`` the file BAREMETAL_ORCH_DRILL_FIGURES."""
    argv = sys.argv[1:] if argv is None else argv
    path = os.environ.get(FIGURES_ENV)
    if not path or argv not in (['reset'], ['report']):
        print('usage: %s=FILE python -m %s reset|report'
              % (FIGURES_ENV, __name__), file=sys.stderr)
        return 2
    if argv == ['reset']:
        open(path, 'w').close()
    elif os.path.exists(path):
        for line in report_lines(path):
            print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
