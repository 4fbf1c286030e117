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
"""P1: GET /v1/nodes?detail=true paged through N nodes, baremetal_orch
against a real Ironic (PyPI, standalone, sqlite, noauth, fake-hardware,
power sync off) holding the same number of nodes. Nodes per second,
median of several repetitions; one client, keep-alive, pages of 1,000."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import requests

from baremetal_orch.tests.functional.fixtures import ironic as ironic_fixture
from baremetal_orch.tests.functional import services
from tools.benchmarks import harness
from tools.benchmarks import ironic_shard_sync

GOAL = 1.5


def page_through(url, headers, expected):
    session = requests.Session()
    session.headers.update(headers)
    started = time.monotonic()
    count, marker = 0, None
    while True:
        params = {'detail': 'true', 'limit': 1000}
        if marker:
            params['marker'] = marker
        resp = session.get(url, params=params, timeout=300)
        resp.raise_for_status()
        nodes = resp.json()['nodes']
        count += len(nodes)
        if len(nodes) < 1000:
            break
        marker = nodes[-1]['uuid']
    seconds = time.monotonic() - started
    if count != expected:
        raise RuntimeError('listed %d nodes, expected %d' % (count, expected))
    return count / seconds


def ours(count, repeat):
    tmp = tempfile.mkdtemp(prefix='bmo-p1-')
    db = 'sqlite:///%s' % os.path.join(tmp, 'p1.sqlite')
    svc = harness.Service(connection=db)
    svc.add_nodes([{'name': 'bench-%05d' % i, 'tags': ['t%d' % (i % 7)],
                    'rack_name': 'rack%d' % (i % 20),
                    'driver_info': {'ipmi_password': 'x'}}
                   for i in range(count)])
    svc.stop()
    port = services.free_port()
    conf = services.write_config(os.path.join(tmp, 'p1.conf'),
                                 services.base_sections(tmp, port, db))
    log = open(os.path.join(tmp, 'aio.log'), 'wb')
    proc = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), 'baremetal-orch'),
         '--config-file', conf], stdout=log, stderr=subprocess.STDOUT)
    try:
        url = 'http://127.0.0.1:%d/v1/nodes' % port
        deadline = time.monotonic() + 60
        while True:
            try:
                requests.get(url, timeout=5)
                break
            except requests.RequestException:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError('the all-in-one did not start; see '
                                       + log.name)
                time.sleep(0.2)
        page_through(url, {}, count)  # warm up
        return [page_through(url, {}, count) for _ in range(repeat)]
    finally:
        proc.terminate()
        proc.wait(30)


def theirs(count, repeat):
    with ironic_fixture.IronicFixture(check_interval=60) as ironic:
        ironic_shard_sync.create_nodes(ironic, count, 1, 8)
        headers = {'X-OpenStack-Ironic-API-Version':
                   ironic_fixture.API_VERSION}
        url = ironic.endpoint + '/v1/nodes'
        page_through(url, headers, count)
        return [page_through(url, headers, count) for _ in range(repeat)]


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--quick', action='store_true')
    parser.add_argument('--nodes', type=int)
    parser.add_argument('--repeat', type=int, default=3)
    args = parser.parse_args(argv)
    count = args.nodes or (1000 if args.quick else 10000)
    mine = statistics.median(ours(count, args.repeat))
    ironic = statistics.median(theirs(count, args.repeat))
    print(json.dumps(harness.figure(
        'P1', round(mine, 1), 'nodes/s', baseline=round(ironic, 1),
        goal=GOAL, nodes=count, repeat=args.repeat,
        note='baseline: real Ironic, same machine, sqlite, noauth, '
             'fake-hardware, power sync off')))


if __name__ == '__main__':
    sys.exit(main())
