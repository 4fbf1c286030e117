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
"""Figure P4: what one shard's node sync costs against a full listing.

Starts a real standalone Ironic (the functional tests' fixture: fake
hardware, sqlite, one API worker, ``[conductor]
sync_power_state_interval = -1`` so Ironic's power sync does not steal the
API's CPU), creates ``--nodes`` nodes spread evenly over ``--shards``
shards with a few client threads, then times
:meth:`baremetal_orch.ironic.client.IronicClient.list_nodes` (detailed,
paged 1,000 at a time) with ``[ironic]shard_key`` set against the same
listing without a shard key. Each is run ``--repeat`` times, alternating;
the medians are reported as one JSON line::

    {"figure": "P4", "value": <shard s>, "unit": "s", "baseline": <full s>,
     "ratio": <shard / full>, "goal": 0.35, "nodes_fetched": ...,
     "shard_size": ...}

Ironic's own request log is checked too: the sharded runs must not have
made one node listing without ``shard=``.

Usage::

    python tools/benchmarks/ironic_shard_sync.py            # 2,000 nodes
    python tools/benchmarks/ironic_shard_sync.py --quick    # 200 nodes
"""

import argparse
import concurrent.futures
import json
import statistics
import sys
import threading
import time

from oslo_config import cfg
import requests

from baremetal_orch.conf import ironic as ironic_conf
from baremetal_orch.ironic import client as ironic_client
from baremetal_orch_testing.fixtures import ironic as ironic_fixture

GOAL = 0.35


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true',
                        help='200 nodes instead of 2,000')
    parser.add_argument('--nodes', type=int, default=None)
    parser.add_argument('--shards', type=int, default=4)
    parser.add_argument('--repeat', type=int, default=5)
    parser.add_argument('--threads', type=int, default=4,
                        help='client threads creating the nodes')
    args = parser.parse_args(argv)
    if args.nodes is None:
        args.nodes = 200 if args.quick else 2000
    return args


def make_conf(endpoint, shard_key=None):
    """A private configuration with only the [ironic] group."""
    conf = cfg.ConfigOpts()
    ironic_conf.register_opts(conf)
    conf([], project='baremetal_orch', default_config_files=[])
    conf.set_override('auth_type', 'none', group='ironic')
    conf.set_override('endpoint_override', endpoint, group='ironic')
    conf.set_override('shard_key', shard_key, group='ironic')
    return conf


def create_nodes(ironic, count, shards, threads):
    """Create ``count`` nodes round-robin over ``shards``; return seconds."""
    local = threading.local()

    def create(i):
        if not hasattr(local, 'http'):
            local.http = requests.Session()
            local.http.headers.update(
                {'X-OpenStack-Ironic-API-Version': ironic_fixture.API_VERSION})
        resp = local.http.post(ironic.endpoint + '/v1/nodes', timeout=60,
                               json={'name': 'bench-%05d' % i,
                                     'driver': 'fake-hardware',
                                     'shard': 'shard-%d' % (i % shards)})
        resp.raise_for_status()

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        for future in [pool.submit(create, i) for i in range(count)]:
            future.result()
    return time.monotonic() - started


def timed(client):
    started = time.monotonic()
    nodes = client.list_nodes()
    return time.monotonic() - started, len(nodes)


def main(argv=None):
    args = parse_args(argv)
    with ironic_fixture.IronicFixture(check_interval=60) as ironic:
        created = create_nodes(ironic, args.nodes, args.shards, args.threads)
        print('created %d nodes in %d shards in %.1f s (%.0f nodes/s)' % (
            args.nodes, args.shards, created, args.nodes / created),
            file=sys.stderr)
        sharded = ironic_client.IronicClient(
            make_conf(ironic.endpoint, shard_key='shard-0'))
        full = ironic_client.IronicClient(make_conf(ironic.endpoint))
        # Warm up: version discovery and connections are not measured.
        timed(sharded)
        timed(full)
        shard_times, full_times = [], []
        unscoped = 0
        for _ in range(args.repeat):
            mark = ironic.log_mark()
            seconds, fetched = timed(sharded)
            shard_times.append(seconds)
            unscoped += sum(1 for r in ironic.node_listings(since=mark)
                            if 'shard' not in r.query)
            seconds, full_fetched = timed(full)
            full_times.append(seconds)

    shard_size = len(range(0, args.nodes, args.shards))
    value = statistics.median(shard_times)
    baseline = statistics.median(full_times)
    print(json.dumps({
        'figure': 'P4', 'value': round(value, 4), 'unit': 's',
        'baseline': round(baseline, 4), 'ratio': round(value / baseline, 3),
        'goal': GOAL, 'nodes_fetched': fetched, 'shard_size': shard_size,
        'total_nodes': args.nodes, 'full_fetched': full_fetched,
        'repeat': args.repeat, 'unscoped_listings': unscoped,
        'sync_power_state_interval': -1}))
    ok = (fetched == shard_size and full_fetched == args.nodes
          and unscoped == 0)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
