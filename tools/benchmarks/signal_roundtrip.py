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
"""Signal round trip: a node's signal to the all-in-one ``baremetal-orch``.

    python -m tools.benchmarks.signal_roundtrip [--nodes N] [--repeat M]

Starts the all-in-one process (sqlite, noauth, fake driver writing config
drives), deploys N nodes in a group with ``wait_for_signal``, then
measures, printing one JSON object:

* ``http_ms``: POST of an IN_PROGRESS signal to the pre-signed
  ``deploy_signal_id`` until its 200 (the record updated and the event
  written: visible in ``GET /v1/events`` when the answer arrives), one
  client with keep-alive, N x M signals: median and 95th percentile;
* ``stock_agent_ms``: one run of the unmodified ``heat-config-notify``
  (heat-agents 13.0.0) sending a node's final signal, from process start to
  exit (its interpreter start-up and imports included): median over the
  nodes;
* ``last_agent_exit_to_action_end_ms``: from the exit of the last node's
  agent (its final signal answered 200) to the action reported
  ``complete`` (the waiting deploy polls its record every 0.1 s).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import requests

from baremetal_orch_testing.fixtures import heat_agents
from baremetal_orch_testing import helpers
from baremetal_orch_testing import services

HERE = os.path.dirname(os.path.abspath(__file__))


def _wait(predicate, timeout, what):
    try:
        return helpers.wait_for(predicate, timeout, interval=0.05)
    except helpers.Timeout:
        raise RuntimeError('%s: not within %s s' % (what, timeout)) from None


def run(nodes, repeat):
    tmp = tempfile.mkdtemp(prefix='bmo-signal-bench-')
    drive = os.path.join(tmp, 'configdrive')
    port = services.free_port()
    conf = services.write_config(os.path.join(tmp, 'aio.conf'),
                                 services.base_sections(
        tmp, port, 'sqlite:///%s' % os.path.join(tmp, 'aio.sqlite'),
        DEFAULT={'host': 'bench', 'rpc_transport': 'none',
                 'log_file': os.path.join(tmp, 'aio.log')},
        # A node waiting for its final signal holds a worker.
        conductor={'signal_timeout': 600, 'workers': nodes + 4,
                   'max_concurrent_nodes': nodes},
        fake_driver={'configdrive_dir': drive}))
    proc = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), 'baremetal-orch'),
         '--config-file', conf], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        client = services.Client('http://127.0.0.1:%d' % port)
        _wait(lambda: _answers(client), 60, 'the all-in-one')
        return _measure(client, drive, tmp, nodes, repeat)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def _answers(client):
    try:
        return client.get('/v1').status_code == 200
    except requests.RequestException:
        return False


def _measure(client, drive, tmp, nodes, repeat):
    uuids = [client.post('/v1/nodes', status=201, json={
        'name': 'n%03d' % i, 'driver': 'fake', 'tags': ['bench']}).json()[
        'uuid'] for i in range(nodes)]
    client.post('/v1/deployment_strategies', status=201, json={
        'schema': 'shipyard/DeploymentStrategy/v1',
        'metadata': {'name': 'bench'},
        'data': {'groups': [{'name': 'all', 'critical': True,
                             'depends_on': [],
                             'selectors': [{'node_tags': ['bench']}],
                             'wait_for_signal': True}]}})
    action = client.post('/v1/actions', status=201, json={
        'name': 'deploy_site',
        'parameters': {'deployment_strategy': 'bench'}}).json()
    infos = [_wait(lambda u=u: services.agent_info(drive, u), 120,
                   'config drive') for u in uuids]

    session = requests.Session()
    http = []
    body = json.dumps({'deploy_status': 'IN_PROGRESS',
                       'deploy_status_reason': 'bench'})
    for _ in range(repeat):
        for info in infos:
            started = time.perf_counter()
            resp = session.post(info['deploy_signal_id'], data=body,
                                headers={'content-type': 'application/json'},
                                timeout=30)
            http.append((time.perf_counter() - started) * 1000)
            if resp.status_code != 200:
                raise RuntimeError(resp.text)

    agents = heat_agents.HeatAgents()
    agents.setUp()
    try:
        stock = []
        for info in infos:
            config = os.path.join(tmp, '%s.json' % info['deployment_uuid'])
            with open(config, 'w') as f:
                json.dump({'id': info['deployment_uuid'], 'group': 'script',
                           'inputs': [{'name': k, 'value': v}
                                      for k, v in info.items()]}, f)
            env = dict(os.environ, PATH=os.path.dirname(sys.executable) +
                       os.pathsep + os.environ.get('PATH', ''))
            started = time.perf_counter()
            done = subprocess.run(
                [agents.notify, config], input=json.dumps({
                    'deploy_stdout': 'ok', 'deploy_stderr': '',
                    'deploy_status_code': 0}),
                capture_output=True, text=True, env=env, timeout=120)
            stock.append((time.perf_counter() - started) * 1000)
            if 'Response [200]' not in done.stderr:
                raise RuntimeError(done.stderr)
        last_final = time.perf_counter()
    finally:
        agents.cleanUp()
    _wait(lambda: client.get('/v1/actions/%s' % action['uuid']).json()[
        'state'] == 'complete', 120, 'the action')
    final_to_end = (time.perf_counter() - last_final) * 1000

    http.sort()
    return {'benchmark': 'signal_roundtrip', 'nodes': nodes,
            'signals': len(http),
            'http_ms': {'median': round(statistics.median(http), 2),
                        'p95': round(http[int(len(http) * 0.95) - 1], 2)},
            'stock_agent_ms': {'median': round(statistics.median(stock), 1),
                               'max': round(max(stock), 1)},
            'last_agent_exit_to_action_end_ms': round(final_to_end, 1),
            'note': 'all-in-one on sqlite, one client on 127.0.0.1; '
                    'stock_agent_ms includes its interpreter start-up'}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--nodes', type=int, default=16)
    parser.add_argument('--repeat', type=int, default=10)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.nodes, args.repeat)))


if __name__ == '__main__':
    main()
