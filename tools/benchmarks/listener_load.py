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
"""L1: the API listener under many keep-alive clients.

Starts an all-in-one (``baremetal-orch``, the embedded default: sqlite,
noauth) with the listener options given, then runs rounds of concurrent
clients, each on its own keep-alive connection, cycling through exchanges
that end in an early answer (415 with a chunked or sized body unread, 404,
400, 413) followed by a pipelined GET on the same connection
(``baremetal_orch_testing.httpraw.SCENARIOS``). Prints one JSON
line per client count: answers by status, resets, timeouts, desyncs (a
pipelined GET answered with anything but its own 200 or a 503), 503s, and
requests sent again after an announced ``Connection: close``::

    python -m tools.benchmarks.listener_load --clients 8 40 200 \\
        --threads 4 --queue 64

``--url`` measures a service that is already running instead.

``--idle N`` adds the figure L1-idle: the latency of a GET (a new
connection each) with no other connection open, then with N idle
connections open (connected, nothing sent), as min/median/max in
milliseconds, and the ratio of the medians (goal: at most 2)::

    python -m tools.benchmarks.listener_load --clients --idle 200
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

import requests

from baremetal_orch_testing import helpers
from baremetal_orch_testing import httpraw
from baremetal_orch_testing import services


def start_aio(threads, queue, backlog, keepalive, extra=()):
    tmp = tempfile.mkdtemp(prefix='bmo-l1-')
    port = services.free_port()
    api = {}
    if threads is not None:
        api['workers'] = threads
    if queue is not None:
        api['max_queued_requests'] = queue
    if backlog is not None:
        api['backlog'] = backlog
    if keepalive is not None:
        api['max_keepalive_connections'] = keepalive
    for item in extra:
        key, _sep, value = item.partition('=')
        api[key] = value
    conf = services.write_config(
        os.path.join(tmp, 'aio.conf'), services.base_sections(
            tmp, port, 'sqlite:///%s' % os.path.join(tmp, 'l1.sqlite'),
            DEFAULT={'host': 'l1', 'log_file': os.path.join(tmp,
                                                            'aio.log')},
            api=api))
    exe = os.path.join(os.path.dirname(sys.executable), 'baremetal-orch')
    proc = subprocess.Popen([exe, '--config-file', conf],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=tmp)
    url = 'http://127.0.0.1:%d' % port
    try:
        helpers.wait_for_http(url + '/v1', 90, status=200, process=proc,
                              interval=0.2)
    except helpers.ProcessError:
        proc.kill()
        raise RuntimeError('the all-in-one did not start; see %s'
                           % tmp) from None
    return proc, url, os.path.join(tmp, 'aio.log')


def get_latencies(host, port, samples):
    """Milliseconds of ``samples`` GETs, each on a new connection, and
    what went wrong instead (a status, a timeout: 3 of them end it)."""
    path = '/v1/nodes?limit=5'
    result, failed = [], []
    while len(result) + len(failed) < samples and len(failed) < 3:
        started = time.perf_counter()
        try:
            conn = httpraw.Connection(host, port, timeout=10)
            try:
                conn.send(httpraw.request('GET', path, headers={
                    'Connection': 'close'}))
                status = conn.read().status
            finally:
                conn.close()
        except httpraw.Broken as e:
            failed.append(e.kind)
            continue
        if status != 200:
            failed.append(status)
            continue
        result.append((time.perf_counter() - started) * 1000)
    return result, failed


def _summary(values):
    if not values:
        return None
    return {'min': round(min(values), 2),
            'median': round(statistics.median(values), 2),
            'max': round(max(values), 2)}


def idle_figure(host, port, idle, samples=50):
    """L1-idle: GET latency with none, then ``idle``, idle connections."""
    get_latencies(host, port, 5)
    alone, failed_alone = get_latencies(host, port, samples)
    sockets = []
    try:
        for _i in range(idle):
            sockets.append(socket.create_connection((host, port),
                                                    timeout=30))
        # Every idle connection is accepted before the measure.
        time.sleep(1)
        crowded, failed = get_latencies(host, port, samples)
    finally:
        for sock in sockets:
            sock.close()
    ratio = None
    if alone and crowded:
        ratio = round(statistics.median(crowded) /
                      statistics.median(alone), 2)
    return {'figure': 'L1-idle', 'idle_connections': idle,
            'samples': samples, 'get_ms_alone': _summary(alone),
            'failed_alone': failed_alone,
            'get_ms_with_idle': _summary(crowded),
            'failed_with_idle': failed, 'median_ratio': ratio,
            'load': os.getloadavg()[0]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--clients', type=int, nargs='*',
                        default=[4, 40, 200])
    parser.add_argument('--idle', type=int, default=0,
                        help='also measure a GET with this many idle '
                             'connections open (figure L1-idle)')
    parser.add_argument('--rounds', type=int, default=40,
                        help='exchanges per client')
    parser.add_argument('--threads', type=int, default=None,
                        help='[api]workers (default: the default)')
    parser.add_argument('--queue', type=int, default=None,
                        help='[api]max_queued_requests')
    parser.add_argument('--backlog', type=int, default=None,
                        help='[api]backlog')
    parser.add_argument('--keepalive', type=int, default=None,
                        help='[api]max_keepalive_connections')
    parser.add_argument('--option', action='append', default=[],
                        help='another [api] option, KEY=VALUE')
    parser.add_argument('--scenario', action='append', default=None,
                        choices=sorted(httpraw.SCENARIOS))
    parser.add_argument('--url', help='measure this running service')
    args = parser.parse_args(argv)
    proc, log = None, None
    if args.url:
        url = args.url
    else:
        proc, url, log = start_aio(args.threads, args.queue, args.backlog,
                                   args.keepalive, args.option)
    parsed = urllib.parse.urlsplit(url)
    try:
        for clients in args.clients:
            result = httpraw.run_load(parsed.hostname, parsed.port, clients,
                                      args.rounds, args.scenario)
            alive = requests.get(url + '/v1', timeout=30).status_code
            result.update(figure='L1', threads=args.threads,
                          queue=args.queue, backlog=args.backlog,
                          keepalive=args.keepalive, answers_after=alive)
            if log:
                with open(log, encoding='utf-8', errors='replace') as f:
                    text = f.read()
                result['log_tracebacks'] = text.count('Traceback')
            print(json.dumps(result), flush=True)
        if args.idle:
            print(json.dumps(idle_figure(parsed.hostname, parsed.port,
                                         args.idle)), flush=True)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0


if __name__ == '__main__':
    sys.exit(main())
