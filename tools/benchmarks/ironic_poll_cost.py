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
"""What a poll costs a real Ironic: a GET of one node against a scoped
listing, both with the fields of a wait (``poller.FIELDS``).

A real Ironic from PyPI on MariaDB (:mod:`tools.benchmarks.real_ironic`)
holds ``--nodes`` nodes over 4 shards. Interleaved, ``--pairs`` times:
``--gets`` GETs of single nodes, one after another, then listings of one
shard and of every node, then ``--gets`` JSON patches of ``instance_info``
(what the ``ironic`` driver sends each node before deploying it: the
signal inputs). The figure ``listed_per_get`` is how many listed nodes
cost Ironic's API as much as one GET of a node: the constant
:data:`baremetal_orch.ironic.poller.LISTED_PER_GET` it checks;
``patch_ms`` what the patch before a deploy costs.
"""

import argparse
import itertools
import json
import sys
import time

import fixtures

from baremetal_orch.ironic import poller
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing.fixtures import ironic as ironic_fixture
from tools.benchmarks import ironic_shard_sync
from tools.benchmarks import real_ironic
from tools.benchmarks import stats

SHARDS = 4


def _timed(func):
    started = time.monotonic()
    func()
    return time.monotonic() - started


def measure(ironic, uuids, gets, pairs):
    http = ironic.http
    headers = {'X-OpenStack-Ironic-API-Version':
               ironic_fixture.API_VERSION}
    fields = ','.join(poller.FIELDS)

    def get_one(uuid):
        resp = http.get('%s/v1/nodes/%s' % (ironic.endpoint, uuid),
                        params={'fields': fields}, headers=headers,
                        timeout=60)
        resp.raise_for_status()

    def listing(shard=None):
        params = {'fields': fields, 'limit': 1000}
        if shard:
            params['shard'] = shard
        resp = http.get(ironic.endpoint + '/v1/nodes', params=params,
                        headers=headers, timeout=120)
        resp.raise_for_status()
        return len(resp.json()['nodes'])

    shard_size = listing('shard-0')
    total = listing()

    def per_get():
        return _timed(lambda: [get_one(u) for u in uuids[:gets]]) / gets

    def per_shard_listing():
        return _timed(lambda: listing('shard-0'))

    def per_full_listing():
        return _timed(listing)

    rounds = itertools.count()

    def per_patch():
        n = next(rounds)

        def patch(uuid):
            resp = http.patch(
                '%s/v1/nodes/%s' % (ironic.endpoint, uuid), json=[
                    {'op': 'add', 'path': '/instance_info/deploy_signal_id',
                     'value': 'http://127.0.0.1/signal/%d' % n}],
                headers=headers, timeout=60)
            resp.raise_for_status()
        return _timed(lambda: [patch(u) for u in uuids[:gets]]) / gets

    get_s, shard_s, full_s, patch_s = stats.interleaved(
        (per_get, per_shard_listing, per_full_listing, per_patch), pairs)
    listed_per_get = [g / (f / total) for g, f in zip(get_s, full_s)]
    return {'figure': 'ironic-poll-cost', 'nodes': total,
            'shard_nodes': shard_size, 'pairs': pairs,
            'get_ms': stats.summary([s * 1000 for s in get_s], 2),
            'shard_listing_ms': stats.summary(
                [s * 1000 for s in shard_s], 1),
            'full_listing_ms': stats.summary([s * 1000 for s in full_s], 1),
            'patch_ms': stats.summary([s * 1000 for s in patch_s], 2),
            'listed_per_get': stats.summary(listed_per_get, 1),
            'constant': poller.LISTED_PER_GET}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--gets', type=int, default=100)
    parser.add_argument('--pairs', type=int, default=5)
    args = parser.parse_args(argv)
    with fixtures.Fixture() as scope:
        db = scope.useFixture(databases.Database('mysql'))
        ironic = scope.useFixture(real_ironic.Ironic(
            connection=real_ironic.mysql_url(db.url)))
        ironic_shard_sync.create_nodes(ironic, args.nodes, SHARDS, 8)
        resp = ironic.http.get(ironic.endpoint + '/v1/nodes',
                               params={'limit': 1000}, timeout=120)
        resp.raise_for_status()
        uuids = [n['uuid'] for n in resp.json()['nodes']]
        print(json.dumps(measure(ironic, uuids, args.gets, args.pairs)),
              flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
