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
"""Figure P4-sync: one shard's node sync against an unsharded conductor's.

Starts a real standalone Ironic (the functional tests' fixture: fake
hardware, sqlite, one API worker, ``[conductor] sync_power_state_interval
= -1``), creates ``--nodes`` nodes spread evenly over ``--shards`` shards,
and times :func:`baremetal_orch.ironic.sync.sync` -- the Ironic listing
and the database work -- for a conductor with ``[ironic]shard_key`` set
against one without (which syncs every node). Both are timed twice per
round: *cold* (no record yet: every node is created) and *warm* (records
in line: nothing to write). Rounds alternate the two conductors; medians
of ``--repeat`` rounds are printed as one JSON line::

    {"figure": "P4-sync", "value": <shard cold s>, "unit": "s",
     "baseline": <full cold s>, "ratio": ..., "warm_value": ...,
     "warm_baseline": ..., "listing_value": ..., "listing_baseline": ...,
     "nodes_fetched": ..., "full_fetched": ...}

(``listing_*``: the Ironic listing alone, the same fields, so the rest of
a sync is its database work.)

The database is sqlite in a temporary directory unless ``--db-url`` names
another. Ironic's request log is checked: the sharded syncs must not have
made one node listing without ``shard=`` (exit status 1 otherwise, or when
a sync did not create exactly the nodes it fetched).

Usage (from the repository root)::

    python tools/benchmarks/ironic_sync.py            # 2,000 nodes
    python tools/benchmarks/ironic_sync.py --quick    # 200 nodes
"""

import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import tempfile
import threading
import time

from oslo_config import cfg
import requests
import sqlalchemy as sa

from baremetal_orch import conf as orch_conf  # noqa: F401 (options)
from baremetal_orch.conf import ironic as ironic_conf
from baremetal_orch.db import api as dbapi
from baremetal_orch.db import migration
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.db.sqlalchemy import models
from baremetal_orch.ironic import client as ironic_client
from baremetal_orch.ironic import sync
from baremetal_orch_testing.fixtures import ironic as ironic_fixture

CONF = cfg.CONF
FIGURE = 'P4-sync'


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true',
                        help='200 nodes instead of 2,000, 3 rounds')
    parser.add_argument('--nodes', type=int, default=None)
    parser.add_argument('--shards', type=int, default=4)
    parser.add_argument('--repeat', type=int, default=None)
    parser.add_argument('--threads', type=int, default=4,
                        help='client threads creating the nodes')
    parser.add_argument('--db-url', default=None,
                        help='SQLAlchemy URL of an empty database '
                             '(default: sqlite in a temporary directory)')
    args = parser.parse_args(argv)
    if args.nodes is None:
        args.nodes = 200 if args.quick else 2000
    if args.repeat is None:
        args.repeat = 3 if args.quick else 5
    return args


def client_conf(endpoint, shard_key=None):
    """A private configuration with only the [ironic] group."""
    conf = cfg.ConfigOpts()
    ironic_conf.register_opts(conf)
    conf([], project='baremetal_orch', default_config_files=[])
    conf.set_override('auth_type', 'none', group='ironic')
    conf.set_override('endpoint_override', endpoint, group='ironic')
    conf.set_override('shard_key', shard_key, group='ironic')
    return conf


def create_nodes(endpoint, count, shards, threads):
    """Create ``count`` nodes round-robin over ``shards``; return seconds."""
    local = threading.local()

    def create(i):
        if not hasattr(local, 'http'):
            local.http = requests.Session()
            local.http.headers['X-OpenStack-Ironic-API-Version'] = (
                ironic_fixture.API_VERSION)
        resp = local.http.post(endpoint + '/v1/nodes', timeout=60, json={
            'name': 'bench-%05d' % i, 'driver': 'fake-hardware',
            'shard': 'shard-%d' % (i % shards)})
        resp.raise_for_status()

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        for future in [pool.submit(create, i) for i in range(count)]:
            future.result()
    return time.monotonic() - started


def setup_database(url):
    CONF([], project='baremetal_orch', default_config_files=[])
    if url is None:
        tmp = tempfile.mkdtemp(prefix='bmo-p4-sync-')
        url = 'sqlite:///%s' % os.path.join(tmp, 'bench.sqlite')
    CONF.set_override('connection', url, group='database')
    sqla_api.reset_engine()
    migration.upgrade()
    return url


def clear_nodes():
    with sqla_api.writer() as session:
        session.execute(sa.delete(models.Node))


def timed_sync(host, client):
    started = time.monotonic()
    counts = sync.sync(None, host, client)
    return time.monotonic() - started, counts


def main(argv=None):
    args = parse_args(argv)
    url = setup_database(args.db_url)
    with ironic_fixture.IronicFixture(check_interval=60) as ironic:
        created = create_nodes(ironic.endpoint, args.nodes, args.shards,
                               args.threads)
        print('created %d nodes in %d shards in %.1f s (%.0f nodes/s)' % (
            args.nodes, args.shards, created, args.nodes / created),
            file=sys.stderr)
        conductors = {
            'shard': ('bench-shard-0', ironic_client.IronicClient(
                client_conf(ironic.endpoint, shard_key='shard-0'))),
            'full': ('bench-full', ironic_client.IronicClient(
                client_conf(ironic.endpoint))),
        }
        for host, _client in conductors.values():
            dbapi.register_service(host)
        # Warm up: version discovery and connections are not measured.
        for host, client in conductors.values():
            client.list_nodes(fields=['uuid'])
        times = {(k, t): [] for k in conductors
                 for t in ('cold', 'warm', 'listing')}
        fetched, unscoped, wrong = {}, 0, []
        for _ in range(args.repeat):
            for key, (host, client) in conductors.items():
                clear_nodes()
                mark = ironic.log_mark()
                seconds, cold = timed_sync(host, client)
                times[(key, 'cold')].append(seconds)
                seconds, warm = timed_sync(host, client)
                times[(key, 'warm')].append(seconds)
                started = time.monotonic()
                client.list_nodes(fields=sync.FIELDS + (
                    (sync.SHARD_FIELD,) if client.shard_key else ()))
                times[(key, 'listing')].append(time.monotonic() - started)
                if key == 'shard':
                    unscoped += sum(1 for r in ironic.node_listings(mark)
                                    if 'shard' not in r.query)
                fetched[key] = cold['listed']
                if (cold['created'] != cold['listed']
                        or warm['unchanged'] != warm['listed']):
                    wrong.append({key: [cold, warm]})

    med = {k: statistics.median(v) for k, v in times.items()}
    shard_size = len(range(0, args.nodes, args.shards))
    print(json.dumps({
        'figure': FIGURE, 'value': round(med[('shard', 'cold')], 4),
        'unit': 's', 'baseline': round(med[('full', 'cold')], 4),
        'ratio': round(med[('shard', 'cold')] / med[('full', 'cold')], 3),
        'warm_value': round(med[('shard', 'warm')], 4),
        'warm_baseline': round(med[('full', 'warm')], 4),
        'warm_ratio': round(med[('shard', 'warm')] / med[('full', 'warm')],
                            3),
        'listing_value': round(med[('shard', 'listing')], 4),
        'listing_baseline': round(med[('full', 'listing')], 4),
        'nodes_fetched': fetched['shard'], 'full_fetched': fetched['full'],
        'shard_size': shard_size, 'total_nodes': args.nodes,
        'shards': args.shards, 'repeat': args.repeat,
        'database': sa.engine.make_url(url).get_backend_name(),
        'unscoped_listings': unscoped, 'sync_power_state_interval': -1}))
    if wrong:
        print('unexpected sync summaries: %s' % wrong, file=sys.stderr)
    ok = (fetched['shard'] == shard_size and fetched['full'] == args.nodes
          and unscoped == 0 and not wrong)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
