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
"""P10: the API's responsiveness while the service works.

P2's site (:func:`tools.benchmarks.makespan.workload`: 2,000 fake nodes,
20 groups in 4 layers, parallel groups) on the all-in-one
``baremetal-orch`` (:class:`tools.benchmarks.processes.AllInOne`: API and
conductor in one process, no broker; embedded sqlite by default). Once
the API shows the conductor alive, one client thread sends ``GET
/v1/nodes?limit=100`` one after the other over a keep-alive connection,
at most ``--rate`` a second (a request that overruns its slot is followed
by the next at once, the missed slots are dropped, never sent in a
burst): first for ``--idle`` seconds with nothing else running (after a
warm-up of :data:`WARMUP` requests), then from just before the ``POST``
of P2's ``deploy_site`` to the poll that sees it end (the state is read
from the database, so the benchmark sends the API nothing else). The
figure is the p99 latency during the action over the p99 idle; goal: at
most 2.

One JSON line per run (``P10-run``), a fresh service each, then ``P10``:
the median ratio, and min, median and max of the ratios and of both p99s
over the runs. ``--deployment split`` and ``--connection URL`` as P2's
(:mod:`tools.benchmarks.makespan`).
"""

import argparse
import json
import os
import statistics
import sys
import threading
import time

import requests

from tools.benchmarks import harness
from tools.benchmarks import makespan
from tools.benchmarks import processes
from tools.benchmarks import split
from tools.benchmarks import stats

GOAL = 2.0
PATH = '/v1/nodes'
LIMIT = 100
#: Requests before the idle period, not counted (the connection, caches).
WARMUP = 20
#: Seconds a request may take before it counts as an error.
REQUEST_TIMEOUT = 30
DEPLOYMENTS = {'aio': processes.AllInOne, 'split': split.Split}


class Prober:
    """A thread sending ``GET url`` in sequence, at most ``rate`` a second,
    over one keep-alive session, until :meth:`stop`; each request is a
    sample ``(seconds, error)``, ``error`` None for a 200."""

    def __init__(self, url, rate, params=None):
        self.url = url
        self.period = 1.0 / rate
        self.params = params
        self.session = requests.Session()
        self._stop = threading.Event()
        self._thread = None
        self.samples = []

    def get(self):
        start = time.perf_counter()
        try:
            resp = self.session.get(self.url, params=self.params,
                                    timeout=REQUEST_TIMEOUT)
            resp.content  # the whole body, as a client reads it
            error = (None if resp.status_code == 200
                     else 'HTTP %d' % resp.status_code)
        except requests.RequestException as e:
            error = type(e).__name__
        return time.perf_counter() - start, error

    def _loop(self):
        due = time.monotonic()
        while not self._stop.is_set():
            self.samples.append(self.get())
            due = max(due + self.period, time.monotonic())
            self._stop.wait(due - time.monotonic())

    def start(self):
        self.samples = []
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name='prober',
                                        daemon=True)
        self._started = time.monotonic()
        self._thread.start()

    def stop(self):
        """Stop; return the samples and the seconds the thread ran."""
        self._stop.set()
        self._thread.join()
        return self.samples, time.monotonic() - self._started

    def close(self):
        self.session.close()


def phase(samples, seconds):
    """A phase's figures: requests, errors, rate, p50/p99/max in ms of the
    requests answered 200."""
    times = [t * 1000 for t, error in samples if error is None]
    errors = sorted({error for _t, error in samples if error is not None})
    doc = {'requests': len(samples), 'errors': len(samples) - len(times),
           'error_kinds': errors, 'seconds': round(seconds, 2),
           'rate': round(len(samples) / seconds, 2) if seconds else None}
    if times:
        doc.update(p50_ms=round(stats.percentile(times, 50), 2),
                   p99_ms=round(stats.percentile(times, 99), 2),
                   max_ms=round(max(times), 2))
    return doc


def ratio_of(idle, busy):
    """busy p99 / idle p99, or None when a phase has none."""
    if not idle.get('p99_ms') or busy.get('p99_ms') is None:
        return None
    return round(busy['p99_ms'] / idle['p99_ms'], 3)


def run_once(nodes, unit, idle_s, rate, connection=None, deployment='aio'):
    """One run on a fresh service; returns its ``P10-run`` document."""
    load = makespan.workload(nodes, unit, parallel=True)
    svc = DEPLOYMENTS[deployment](connection=connection,
                                  overrides=load.overrides)
    svc.setUp()
    try:
        svc.add_nodes(load.nodes)
        svc.start()
        svc.add_strategy(load.document)
        prober = Prober(svc.url + PATH, rate, params={'limit': LIMIT})
        try:
            listed = prober.session.get(prober.url, params=prober.params,
                                        timeout=REQUEST_TIMEOUT)
            listed.raise_for_status()
            if len(listed.json()['nodes']) != min(LIMIT, len(load.nodes)):
                raise RuntimeError('%s?limit=%d listed %d nodes' % (
                    PATH, LIMIT, len(listed.json()['nodes'])))
            for _ in range(WARMUP):
                prober.get()
            load_before = os.getloadavg()
            prober.start()
            time.sleep(idle_s)
            idle = phase(*prober.stop())
            prober.start()
            try:
                action, seconds, usage = svc.run_action(
                    makespan.STRATEGY, poll=processes.POLL_DATABASE)
            finally:
                busy = phase(*prober.stop())
        finally:
            prober.close()
        makespan.check_ended(action['state'], action['result'], seconds)
        return harness.figure(
            'P10-run', ratio_of(idle, busy), 'busy p99 / idle p99',
            goal=GOAL, idle=idle, busy=busy, action_s=round(seconds, 2),
            bound_s=round(makespan.bound_of(load), 2), nodes=nodes,
            groups=len(load.groups), deployment=deployment,
            database=harness.database_name(connection), **usage,
            load=[round(x, 2) for x in load_before],
            load_after=[round(x, 2) for x in os.getloadavg()])
    finally:
        svc.stop()


def _summary(values):
    """:func:`stats.summary` of the values that are not None, or None."""
    values = [v for v in values if v is not None]
    return stats.summary(values) if values else None


def summarise(runs):
    """The ``P10`` document of the ``P10-run`` documents."""
    ratios = [r['value'] for r in runs if r['value'] is not None]
    first = runs[0]
    return harness.figure(
        'P10', round(statistics.median(ratios), 3) if ratios else None,
        'busy p99 / idle p99', goal=GOAL, ratios=_summary(ratios),
        **{'%s_%s_ms' % (name, key): _summary(
            r[name].get('%s_ms' % key) for r in runs)
           for name in ('idle', 'busy') for key in ('p50', 'p99')},
        requests={'idle': sum(r['idle']['requests'] for r in runs),
                  'busy': sum(r['busy']['requests'] for r in runs)},
        errors={'idle': sum(r['idle']['errors'] for r in runs),
                'busy': sum(r['busy']['errors'] for r in runs)},
        repeat=len(runs), nodes=first['nodes'], groups=first['groups'],
        deployment=first['deployment'], database=first['database'],
        load=runs[0]['load'], load_after=runs[-1]['load_after'],
        note='GET %s?limit=%d, one client, keep-alive, sequential; idle '
             'before the action, busy from its POST to its end (P2, '
             'parallel groups)' % (PATH, LIMIT))


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true',
                        help='200 nodes, phases of 0.5 to 1 s, 5 s idle, '
                             'one run')
    parser.add_argument('--repeat', type=int,
                        help='runs, a fresh service each (default: 3; '
                             '--quick: 1)')
    parser.add_argument('--idle', type=float,
                        help='seconds of the idle period (default: 20; '
                             '--quick: 5)')
    parser.add_argument('--rate', type=float, default=20.0,
                        help='requests a second at most (default: 20)')
    harness.add_deployment_args(
        parser, 'aio: baremetal-orch, API and conductor in one process (the '
                'default)')
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.quick:
        nodes, unit = 200, makespan.sizes(True)[1]
    else:
        nodes, unit = makespan.sizes(False)
    repeat = args.repeat or (1 if args.quick else 3)
    idle_s = args.idle if args.idle is not None else (
        5.0 if args.quick else 20.0)
    runs = []
    for _ in range(repeat):
        runs.append(run_once(nodes, unit, idle_s, args.rate,
                             args.connection, args.deployment))
        print(json.dumps(runs[-1]), flush=True)
    print(json.dumps(summarise(runs)), flush=True)


if __name__ == '__main__':
    sys.exit(main())
