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
"""What a deploy costs a real Ironic, with the ``ironic`` driver's config
drive and without one: Ironic's CPU seconds a node.

A real Ironic from PyPI on MariaDB (:mod:`tools.benchmarks.real_ironic`,
fake-hardware without delays) holds ``--nodes`` times ``2 * --pairs``
``available`` nodes. Interleaved, ``--pairs`` times: ``--nodes`` nodes
are moved to ``active`` by 8 client threads, each request carrying the
config drive the driver builds (:mod:`baremetal_orch.ironic.configdrive`,
the signal inputs of a node), then as many without one; the Ironic
process's CPU seconds from the first request to the last node ``active``
(and one quiet second) are divided by the nodes. ``drive_ms - plain_ms``
is what handing the inputs in the deploy request costs Ironic, to set
beside ``patch_ms`` of :mod:`tools.benchmarks.ironic_poll_cost` (the
patch of ``instance_info`` the driver sent before).
"""

import argparse
import concurrent.futures
import json
import sys
import threading
import time
import types

import fixtures
import requests

from baremetal_orch.ironic import configdrive
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing.fixtures import ironic as ironic_fixture
from tools.benchmarks import ironic_shard_sync
from tools.benchmarks import processes
from tools.benchmarks import real_ironic
from tools.benchmarks import real_ironic_deploy
from tools.benchmarks import stats

THREADS = 8
NO_DELAYS = {'power_delay': '0', 'boot_delay': '0', 'deploy_delay': '0'}


def drive_of(uuid):
    """The config drive the driver hands a node (the inputs' sizes)."""
    node = types.SimpleNamespace(ironic_uuid=uuid, name='bench-node')
    return configdrive.build(configdrive.meta_data(node, {
        'deploy_signal_id': 'http://127.0.0.1:6388/v1/signals/%s?token=%s'
                            % (uuid, 'x' * 43),
        'deploy_signal_verb': 'POST',
        'deploy_signal_transport': 'CFN_SIGNAL',
        'deploy_status_aware': 'true', 'deployment_uuid': uuid}))


class Client:
    def __init__(self, ironic):
        self.ironic = ironic
        self.headers = {'X-OpenStack-Ironic-API-Version':
                        ironic_fixture.API_VERSION}
        self._local = threading.local()

    def _session(self):
        if not hasattr(self._local, 'session'):
            self._local.session = requests.Session()
            self._local.session.headers.update(self.headers)
        return self._local.session

    def provision(self, uuid, target, drive=None):
        body = {'target': target}
        if drive:
            body['configdrive'] = drive
        url = '%s/v1/nodes/%s/states/provision' % (
            self.ironic.endpoint, uuid)
        while True:
            resp = self._session().put(url, json=body, timeout=60)
            if resp.status_code != 409:  # locked: again
                resp.raise_for_status()
                return
            time.sleep(0.2)

    def states(self):
        return real_ironic_deploy.ironic_states(
            self.ironic, key='uuid', http=self._session())

    def move(self, pool, uuids, target, state, drives=None):
        list(pool.map(lambda u: self.provision(
            u, target, (drives or {}).get(u)), uuids))
        while True:
            now = self.states()
            if all(now[u] == state for u in uuids):
                return
            time.sleep(0.5)


def measure(ironic, uuids, nodes, pairs):
    client = Client(ironic)
    batches = iter([uuids[i:i + nodes]
                    for i in range(0, nodes * 2 * pairs, nodes)])
    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        client.move(pool, uuids, 'manage', 'manageable')
        client.move(pool, uuids, 'provide', 'available')

        def deploy(with_drive):
            batch = next(batches)
            drives = {u: drive_of(u) for u in batch} if with_drive else {}
            time.sleep(1)
            before = processes.cpu_seconds(ironic.pid())
            client.move(pool, batch, 'active', 'active', drives)
            time.sleep(1)
            return ((processes.cpu_seconds(ironic.pid()) - before) /
                    len(batch))

        drive_s, plain_s = stats.interleaved(
            (lambda: deploy(True), lambda: deploy(False)), pairs)
    return {'figure': 'ironic-deploy-cost', 'nodes': nodes, 'pairs': pairs,
            'drive_bytes': len(drive_of(uuids[0])),
            'drive_ms': stats.summary([s * 1000 for s in drive_s], 1),
            'plain_ms': stats.summary([s * 1000 for s in plain_s], 1)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, default=50,
                        help='nodes deployed in each run')
    parser.add_argument('--pairs', type=int, default=3)
    args = parser.parse_args(argv)
    with fixtures.Fixture() as scope:
        db = scope.useFixture(databases.Database('mysql'))
        ironic = scope.useFixture(real_ironic.Ironic(
            connection=real_ironic.mysql_url(db.url),
            fake_delays=NO_DELAYS, locked_retries=10))
        total = args.nodes * 2 * args.pairs
        ironic_shard_sync.create_nodes(ironic, total, 1, THREADS)
        uuids = sorted(Client(ironic).states())
        print(json.dumps(measure(ironic, uuids, args.nodes, args.pairs)),
              flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
