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
"""Nodes signal a REAL all-in-one ``baremetal-orch`` over HTTP.

The process runs from a config file (sqlite, noauth, rpc_transport none,
the fake driver writing each node's instance info to a config-drive
directory); the test plays each node's agent with ``requests``: it reads
the pre-signed ``deploy_signal_id`` from the config drive and POSTs to
its URL with the token in the ``X-Signal-Token`` header instead (the
stock Heat agent, which POSTs to the URL as it is, is in
test_heat_agents).
"""

import json
import os

import requests

from baremetal_orch.tests.functional import base
from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing import helpers
from baremetal_orch_testing import services

TIMEOUT = 10  # seconds any one HTTP call may take
SIGNAL_TIMEOUT = 3  # [conductor]signal_timeout: the silent node's wait

STRATEGY = {
    'schema': 'shipyard/DeploymentStrategy/v1',
    'metadata': {'schema': 'metadata/Document/v1',
                 'name': 'deployment-strategy'},
    'data': {'groups': [{
        'name': 'signalled', 'critical': True, 'depends_on': [],
        'selectors': [{'node_tags': ['signalled']}],
        'success_criteria': {'minimum_successful_nodes': 2},
        'wait_for_signal': True}]},
}


class TestSignalsAgainstAllInOne(base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        work = self.log_dir
        self.drive = os.path.join(work, 'configdrive')
        port = helpers.free_port()
        self.url = 'http://127.0.0.1:%d' % port
        conf = os.path.join(work, 'baremetal-orch.conf')
        with open(conf, 'w') as f:
            f.write('\n'.join([
                '[DEFAULT]', 'host = signals-aio', 'rpc_transport = none',
                '[api]', 'host_ip = 127.0.0.1', 'port = %d' % port,
                'auth_strategy = noauth', 'workers = 4',
                '[database]',
                'connection = sqlite:///%s' % os.path.join(work, 'db.sqlite'),
                '[fake_driver]', 'configdrive_dir = %s' % self.drive,
                '[conductor]', 'signal_timeout = %d' % SIGNAL_TIMEOUT,
                '']))
        self.proc = self.start_process(['baremetal-orch', '--config-file',
                                        conf])
        # Runs before start_process's own stop: the all-in-one may not
        # answer SIGTERM while it serves (its signal handler stops cheroot
        # from inside cheroot's own loop), so wait 3 s, not 10, before the
        # SIGKILL.
        self.addCleanup(func_fixtures.stop_process, self.proc, 3)
        self.wait_for_http(self.url + '/v1', status=200, process=self.proc,
                           timeout=60)
        self.http = requests.Session()
        self.addCleanup(self.http.close)

    # --- the operator's side (noauth) ---------------------------------------

    def api(self, method, path, body=None, status=None):
        resp = self.http.request(method, self.url + path, json=body,
                                 timeout=TIMEOUT)
        if status is not None:
            self.assertEqual(status, resp.status_code,
                             '%s %s: %s' % (method, path, resp.text))
        return resp

    def wait_until(self, predicate, timeout=60, interval=0.1):
        return helpers.wait_for(predicate, timeout, interval,
                                processes=[self.proc])

    # --- the node's side ----------------------------------------------------

    def config_drive(self, node_uuid):
        path = os.path.join(self.drive, '%s.json' % node_uuid)
        self.wait_until(lambda: os.path.exists(path))
        with open(path) as f:
            return json.load(f)['instance_info']

    def signal(self, info, body=None, token=None, data=None, headers=None):
        """POST as an agent: only the signal token, no Keystone."""
        all_headers = {'Content-Type': 'application/json',
                       'X-Signal-Token': (services.signal_token(info)
                                          if token is None else token)}
        all_headers.update(headers or {})
        return requests.post(info['deploy_signal_id'].split('?')[0],
                             data=json.dumps(body) if data is None else data,
                             headers=all_headers, timeout=TIMEOUT)

    def test_agents_signal_over_http(self):
        nodes = {}
        for name in ('new-agent', 'old-agent', 'silent'):
            nodes[name] = self.api('POST', '/v1/nodes', {
                'name': name, 'driver': 'fake', 'tags': ['signalled'],
                'driver_info': {}}, status=201).json()['uuid']
        self.api('POST', '/v1/deployment_strategies', STRATEGY, status=201)
        action = self.api('POST', '/v1/actions', {'name': 'deploy_site'},
                          status=201).json()
        drives = {name: self.config_drive(uuid)
                  for name, uuid in nodes.items()}
        for info in drives.values():
            self.assertEqual('true', info['deploy_status_aware'])
            self.assertTrue(info['deploy_signal_id'].startswith(
                self.url + '/v1/signals/'))
        new, old, silent = (drives[n] for n in ('new-agent', 'old-agent',
                                                'silent'))

        # Forged and missing tokens: 401, in the API-SIG format.
        for token in ('forged', ''):
            resp = self.signal(new, {'deploy_status_code': 0}, token=token)
            self.assertEqual(401, resp.status_code, resp.text)
            self.assertEqual('baremetal_orch.signal.invalid_token',
                             resp.json()['errors'][0]['code'])
        # A body over 1 MiB: declared, then chunked (no Content-Length).
        big = json.dumps({'deploy_status_code': 0,
                          'pad': 'p' * (1024 * 1024)}).encode()
        resp = self.signal(new, data=big)
        self.assertEqual(413, resp.status_code, resp.text)
        resp = self.signal(new, data=(big[i:i + 65536]
                                      for i in range(0, len(big), 65536)))
        self.assertEqual(413, resp.status_code, resp.text)
        resp = self.signal(new, data=b'{"deploy_status": "DONE"}')
        self.assertEqual(400, resp.status_code, resp.text)

        # The new agent reports it started; visible while the action runs.
        resp = self.signal(new, {'deploy_status': 'IN_PROGRESS',
                                 'deploy_status_reason': 'hooks started'})
        self.assertEqual(200, resp.status_code, resp.text)
        self.assertEqual('IN_PROGRESS', resp.json()['status'])
        events = self.api('GET', '/v1/events?resource_uuid=%s'
                          % nodes['new-agent'], status=200).json()['events']
        self.assertEqual([('deployment.signal.in_progress', 'hooks started',
                           action['uuid'])],
                         [(e['event_type'], e['message'], e['action_uuid'])
                          for e in events])
        self.assertEqual('running', self.api(
            'GET', '/v1/actions/%s' % action['uuid'],
            status=200).json()['state'])

        # Final signals: the new agent's explicit COMPLETE, the old agent's
        # stock Heat signal (no deploy_status, status code 0, chunked).
        resp = self.signal(new, {'deploy_status': 'COMPLETE',
                                 'deploy_status_code': 0,
                                 'deploy_stdout': 'x' * 40000 + 'END'})
        self.assertEqual(200, resp.status_code, resp.text)
        body = json.dumps({'deploy_stdout': 'ok', 'deploy_stderr': '',
                           'deploy_status_code': 0, 'result': 'r'}).encode()
        resp = self.signal(old, data=iter([body[:10], body[10:]]))
        self.assertEqual(200, resp.status_code, resp.text)
        self.assertEqual('COMPLETE', resp.json()['status'])
        # A replayed final signal.
        resp = self.signal(old, data=body)
        self.assertEqual(409, resp.status_code, resp.text)

        action = self.wait_until(lambda: (lambda a: a if a['state'] not in (
            'pending', 'running') else None)(self.api(
                'GET', '/v1/actions/%s' % action['uuid'],
                status=200).json()))
        self.assertEqual(('complete', 'success_with_failures'),
                         (action['state'], action['result']))
        self.assertEqual({'new-agent': 'success', 'old-agent': 'success',
                          'silent': 'failure'}, action['report']['nodes'])

        records = {r['node_uuid']: r for r in self.api(
            'GET', '/v1/deployments?action_uuid=%s' % action['uuid'],
            status=200).json()['deployments']}
        self.assertEqual({'new-agent': 'COMPLETE', 'old-agent': 'COMPLETE',
                          'silent': 'FAILED'},
                         {n: records[u]['status'] for n, u in nodes.items()})
        stdout = records[nodes['new-agent']]['deploy_stdout']
        self.assertEqual(16384, len(stdout))
        self.assertTrue(stdout.endswith('END'))
        self.assertIn('timeout', records[nodes['silent']]['status_reason'])
        for record in records.values():
            self.assertNotIn('token', json.dumps(record))
        # The silent node's agent wakes up too late.
        resp = self.signal(silent, {'deploy_status_code': 0})
        self.assertEqual(409, resp.status_code, resp.text)
        self.assertEqual('baremetal_orch.signal.already_final',
                         resp.json()['errors'][0]['code'])
        # The action's own lifecycle events are there too.
        kinds = [e['event_type'] for e in self.api(
            'GET', '/v1/events?action_uuid=%s' % action['uuid'],
            status=200).json()['events']
            if e['event_type'].startswith('deployment.')]
        self.assertEqual(sorted(['deployment.signal.in_progress',
                                 'deployment.signal.complete',
                                 'deployment.signal.complete',
                                 'deployment.signal.timeout']),
                         sorted(kinds))
