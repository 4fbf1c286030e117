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
"""P1: the node list of baremetal_orch against a real Ironic's.

Both services run side by side on one database engine (``--backend
sqlite``: each its own sqlite file; ``--backend mysql``: each its own
database on the MariaDB server, 127.0.0.1:3306), each holding ``--nodes``
nodes: the all-in-one ``baremetal-orch`` (nodes bulk-inserted) and a real
Ironic from PyPI (standalone, noauth, fake-hardware, one API worker,
``[conductor]sync_power_state_interval = -1``; nodes created through its
API). Two listings are timed, each paged through every node (pages of
1,000, one client, keep-alive):

* ``detail``: ``GET /v1/nodes?detail=true``, each service's whole
  document (ours has fewer fields than Ironic's);
* ``common``: ``GET /v1/nodes?fields=...`` with only the fields both
  services have and Ironic accepts in ``fields=`` (like for like).

Interleaved: ours, Ironic's, ours, Ironic's (``--pairs`` times), each
listing preceded by a warm-up listing of its own. One JSON line per
listing: ``value`` and ``baseline`` the median nodes per second, ``ratio``
the median of the pairs' ratios, ``ratios`` their min/median/max.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import fixtures
import requests

from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing.fixtures import ironic as ironic_fixture
from baremetal_orch_testing import helpers
from baremetal_orch_testing import services
from tools.benchmarks import harness
from tools.benchmarks import ironic_shard_sync
from tools.benchmarks import real_ironic
from tools.benchmarks import stats

GOAL = 1.5
PAGE = 1000
IRONIC_HEADERS = {'X-OpenStack-Ironic-API-Version': ironic_fixture.API_VERSION}


def page_through(session, url, params, expected):
    """Nodes per second of one listing of every node, page by page."""
    started = time.monotonic()
    count, marker = 0, None
    while True:
        query = dict(params, limit=PAGE)
        if marker:
            query['marker'] = marker
        resp = session.get(url, params=query, timeout=300)
        resp.raise_for_status()
        nodes = resp.json()['nodes']
        count += len(nodes)
        if len(nodes) < PAGE:
            break
        marker = nodes[-1]['uuid']
    seconds = time.monotonic() - started
    if count != expected:
        raise RuntimeError('listed %d nodes, expected %d' % (count, expected))
    return count / seconds


def common_fields(ours, theirs, accepted=lambda field: True):
    """The fields of a node document both services have and ``accepted``
    (sorted)."""
    return sorted(f for f in (set(ours) & set(theirs)) - {'links'}
                  if accepted(f))


class Lister:
    """One service's node list: a keep-alive session and a warm-up."""

    def __init__(self, url, headers, count):
        self.url = url
        self.count = count
        self.session = requests.Session()
        self.session.headers.update(headers)

    def one_node(self):
        resp = self.session.get(self.url, params={'detail': 'true',
                                                  'limit': 1}, timeout=60)
        resp.raise_for_status()
        return resp.json()['nodes'][0]

    def accepts(self, field):
        """True when ``?fields=`` may name ``field``. Ironic 39 refuses
        created_at and updated_at (400) and fails on chassis_uuid and
        conductor (500)."""
        resp = self.session.get(self.url, params={'fields': 'uuid,' + field,
                                                  'limit': 1}, timeout=60)
        return resp.status_code == 200

    def measure(self, params):
        page_through(self.session, self.url, params, self.count)  # warm-up
        return page_through(self.session, self.url, params, self.count)


def seed_ours(server, count):
    """A database of ours holding ``count`` bulk-inserted nodes: a sqlite
    file (``server`` None) or a fresh database on the ``server`` URL.
    Returns its URL and a callable that drops it (or None)."""
    svc = harness.Service(connection=server)
    connection = harness.CONF.database.connection
    svc.add_nodes([{'name': 'bench-%05d' % i, 'tags': ['t%d' % (i % 7)],
                    'rack_name': 'rack%d' % (i % 20),
                    'driver_info': {'ipmi_password': 'x'}}
                   for i in range(count)])
    # The in-process conductor stops; the database stays for the
    # all-in-one (Service.stop would drop a server's database).
    svc.manager.del_host(wait=False)
    return connection, getattr(svc, '_drop', None)


def start_ours(tmp, connection):
    """The all-in-one over the database at ``connection``: its process
    and node list URL."""
    port = services.free_port()
    conf = services.write_config(
        os.path.join(tmp, 'p1.conf'), services.base_sections(
            tmp, port, connection, conductor={'sync_interval': -1}))
    log = open(os.path.join(tmp, 'aio.log'), 'wb')
    proc = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), 'baremetal-orch'),
         '--config-file', conf], stdout=log, stderr=subprocess.STDOUT)
    url = 'http://127.0.0.1:%d/v1/nodes' % port
    try:
        # Any answer will do.
        helpers.wait_for_http(url, 60, status=range(100, 600),
                              process=proc, interval=0.2)
    except helpers.ProcessError:
        proc.kill()
        raise RuntimeError('the all-in-one did not start; see '
                           + log.name) from None
    return proc, url


def lines(backend, count, pairs, detail, common, fields):
    """The JSON documents of both listings."""
    docs = []
    for name, (mine, theirs) in (('detail', detail), ('common', common)):
        ratios = stats.pair_ratios(mine, theirs)
        docs.append(harness.figure(
            'P1', round(stats.summary(mine)['median'], 1), 'nodes/s',
            baseline=round(stats.summary(theirs)['median'], 1),
            ratio=stats.summary(ratios)['median'], goal=GOAL,
            listing=name, backend=backend, nodes=count, pairs=pairs,
            ratios=stats.summary(ratios), ours=stats.summary(mine, 1),
            ironic=stats.summary(theirs, 1),
            fields=fields if name == 'common' else 'detail=true',
            load=[round(x, 2) for x in os.getloadavg()],
            note='interleaved ours/Ironic, a warm-up before each; Ironic '
                 'standalone, fake-hardware, one API worker, power sync '
                 'off'))
    return docs


def run(backend, count, pairs):
    with fixtures.Fixture() as scope:
        tmp = scope.useFixture(fixtures.TempDir()).path
        if backend == 'sqlite':
            server = None
            ironic = real_ironic.Ironic(check_interval=60)
        else:
            server = databases.server_url('mysql')
            theirs_db = scope.useFixture(databases.Database('mysql')).url
            ironic = real_ironic.Ironic(
                connection=real_ironic.mysql_url(theirs_db),
                check_interval=60)
        scope.useFixture(ironic)
        ironic_shard_sync.create_nodes(ironic, count, 1, 8)
        ours_db, drop = seed_ours(server, count)
        if drop:
            scope.addCleanup(drop)
        proc, url = start_ours(tmp, ours_db)
        scope.addCleanup(proc.wait, 30)
        scope.addCleanup(proc.terminate)
        ours = Lister(url, {}, count)
        theirs = Lister(ironic.endpoint + '/v1/nodes', IRONIC_HEADERS,
                        count)
        fields = common_fields(ours.one_node(), theirs.one_node(),
                               theirs.accepts)
        common = {'fields': ','.join(fields)}
        detail = {'detail': 'true'}
        results = stats.interleaved(
            [lambda: ours.measure(detail), lambda: theirs.measure(detail),
             lambda: ours.measure(common), lambda: theirs.measure(common)],
            pairs)
    return lines(backend, count, pairs, results[0:2], results[2:4], fields)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true',
                        help='1,000 nodes and 2 pairs')
    parser.add_argument('--nodes', type=int)
    parser.add_argument('--pairs', type=int)
    parser.add_argument('--backend', choices=('sqlite', 'mysql'),
                        default='sqlite')
    args = parser.parse_args(argv)
    count = args.nodes or (1000 if args.quick else 10000)
    pairs = args.pairs or (2 if args.quick else 5)
    for doc in run(args.backend, count, pairs):
        print(json.dumps(doc), flush=True)


if __name__ == '__main__':
    sys.exit(main())
