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
"""The stock Heat agent signals a deployment, unchanged, end to end.

Each node runs, as os-refresh-config would, the unmodified
``55-heat-config`` from the ``heat-agents`` sdist: it runs the stock
``script`` hook, which runs the deployment's script with the inputs in its
environment, then ``heat-config-notify``, which signals
``deploy_signal_id`` with nothing but a content-type header. The inputs are
what the fake driver wrote to the node's config drive, copied as they are
into the deployment document os-collect-config would write.

* ``aware``: a status-aware script that sends IN_PROGRESS with curl (as
  doc/source/admin/signals.rst shows) and waits for the test; exit 0.
* ``old``: an old-style script that knows nothing of IN_PROGRESS; exit 0.
* ``failing``: an old-style script that exits 3.
* ``forged``: like ``old``, its URL's token forged: the agent is refused
  (and, as stock heat-config-notify does, says nothing), the node times
  out.

The scenario runs against the all-in-one and against the split deployment
(API and conductor processes, RabbitMQ, MariaDB).
"""

import os
import subprocess
import sys
import urllib.parse

from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing.fixtures import heat_agents
from baremetal_orch_testing import services

#: [conductor]signal_timeout: the forged node's wait, and the most the
#: status-aware node may wait for the test.
SIGNAL_TIMEOUT = 40
NAMES = ('aware', 'old', 'failing', 'forged')
STRATEGY = {
    'schema': 'shipyard/DeploymentStrategy/v1',
    'metadata': {'name': 'heat-agents'},
    'data': {'groups': [{
        'name': 'configured', 'critical': False, 'depends_on': [],
        'selectors': [{'node_tags': ['heat']}],
        'wait_for_signal': True}]},
}
AWARE = '''#!/bin/sh
if [ "$deploy_status_aware" = "true" ]; then
    curl -sS -f -o /dev/null -X "$deploy_signal_verb" \\
        -H 'Content-Type: application/json' \\
        --data-binary '{"deploy_status": "IN_PROGRESS",
                        "deploy_status_reason": "configuring"}' \\
        "$deploy_signal_id"
fi
while [ ! -e %(go)s ]; do sleep 0.1; done
echo configured
printf done > "$heat_outputs_path.result"
'''
OLD = '''#!/bin/sh
echo "old style"
'''
FAILING = '''#!/bin/sh
echo "partly configured"
echo "disk full" >&2
exit 3
'''
SCRIPTS = {'aware': AWARE, 'old': OLD, 'failing': FAILING, 'forged': OLD}


def token_of(url):
    return urllib.parse.parse_qs(urllib.parse.urlparse(url).query)['token'][0]


class StockAgentScenario:
    """The scenario; a subclass starts the service (:meth:`start`)."""

    def start(self):
        """Start the service; return (Client, [process logs])."""
        raise NotImplementedError

    def setUp(self):
        super().setUp()
        self.drive = os.path.join(self.log_dir, 'configdrive')
        self.client, self.logs = self.start()

    def deployment(self, info, script):
        """The deployment document os-collect-config would hand
        heat-config: every input as the node received it."""
        return {'id': info['deployment_uuid'], 'name': 'configure',
                'group': 'script', 'options': {},
                'inputs': [{'name': k, 'value': v}
                           for k, v in sorted(info.items())],
                'outputs': [{'name': 'result'}], 'config': script}

    def events(self, node_uuid):
        return [e for e in self.client.get(
            '/v1/events?resource_uuid=%s' % node_uuid,
            status=200).json()['events']]

    def test_stock_heat_agent_signals(self):
        agents = self.useFixture(heat_agents.HeatAgents())
        c = self.client
        nodes = {name: c.post('/v1/nodes', status=201, json={
            'name': name, 'driver': 'fake', 'tags': ['heat']}).json()['uuid']
            for name in NAMES}
        c.post('/v1/deployment_strategies', json=STRATEGY, status=201)
        action = c.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'heat-agents'}}).json()
        infos = {name: c.wait_for(
            lambda u=uuid: services.agent_info(self.drive, u), timeout=120)
            for name, uuid in nodes.items()}
        tokens = {name: token_of(info['deploy_signal_id'])
                  for name, info in infos.items()}
        for info in infos.values():
            self.assertEqual(('POST', 'CFN_SIGNAL', 'true'),
                             (info['deploy_signal_verb'],
                              info['deploy_signal_transport'],
                              info['deploy_status_aware']))

        go = os.path.join(agents.root, 'go')
        runs = {}
        for name in NAMES:
            info = dict(infos[name])
            if name == 'forged':
                info['deploy_signal_id'] = info['deploy_signal_id'].replace(
                    tokens[name], tokens[name][:-6] + 'FORGED')
            node = agents.node(name)
            node.write_deployments([self.deployment(
                info, SCRIPTS[name] % {'go': go})])
            runs[name] = (node, node.start())
            self.addCleanup(_stop, runs[name][1])

        # IN_PROGRESS, visible while the action runs.
        aware = infos['aware']['deployment_uuid']
        c.wait_for(lambda: any(
            e['event_type'] == 'deployment.signal.in_progress'
            for e in self.events(nodes['aware'])), timeout=60)
        self.assertEqual(('IN_PROGRESS', 'configuring'), tuple(
            c.get('/v1/deployments/%s' % aware, status=200).json()[k]
            for k in ('status', 'status_reason')))
        self.assertEqual('running', c.get('/v1/actions/%s' % action['uuid'],
                                          status=200).json()['state'])
        open(go, 'w').close()

        for name, (node, proc) in runs.items():
            self.assertEqual(0, proc.wait(120), node.read_log())
        answers = {name: node.read_log() for name, (node, _) in runs.items()}
        for name in ('aware', 'old', 'failing'):
            self.assertIn('Response <Response [200]>', answers[name])
        # Stock heat-config-notify: refused, and silent about it.
        self.assertIn('Response <Response [401]>', answers['forged'])
        self.assertNotIn('Error running heat-config-notify',
                         answers['forged'])

        action = c.wait_for_action(action['uuid'],
                                   timeout=SIGNAL_TIMEOUT + 120)
        self.assertEqual(('complete', 'success_with_failures'),
                         (action['state'], action['result']))
        self.assertEqual({'aware': 'success', 'old': 'success',
                          'failing': 'failure', 'forged': 'failure'},
                         action['report']['nodes'])
        records = {r['node_uuid']: r for r in c.get(
            '/v1/deployments?action_uuid=%s' % action['uuid'],
            status=200).json()['deployments']}
        got = {name: records[uuid] for name, uuid in nodes.items()}
        self.assertEqual(('COMPLETE', 0, 'configured\n'), tuple(
            got['aware'][k] for k in ('status', 'deploy_status_code',
                                      'deploy_stdout')))
        self.assertEqual(('COMPLETE', 0, 'old style\n'), tuple(
            got['old'][k] for k in ('status', 'deploy_status_code',
                                    'deploy_stdout')))
        self.assertEqual(('FAILED', 3, 'disk full\n'), tuple(
            got['failing'][k] for k in ('status', 'deploy_status_code',
                                        'deploy_stderr')))
        self.assertEqual('FAILED', got['forged']['status'])
        self.assertIn('timeout', got['forged']['status_reason'])
        kinds = {name: [(e['event_type'], e['details'].get('outputs'))
                        for e in self.events(uuid)
                        if e['event_type'].startswith('deployment.')]
                 for name, uuid in nodes.items()}
        self.assertEqual({
            'aware': [('deployment.signal.in_progress', None),
                      ('deployment.signal.complete', {'result': 'done'})],
            'old': [('deployment.signal.complete', {})],
            'failing': [('deployment.signal.failed', {})],
            'forged': [('deployment.signal.timeout', None)]}, kinds)
        tree = c.get('/v1/tasks/%s?tree=true' % action['task_uuid'],
                     status=200).json()
        node_tasks = {t['name']: t for g in tree['subtasks']
                      for p in g['subtasks'] if p['name'] == 'deploy'
                      for t in p['subtasks']}
        self.assertIn('status code: 3', node_tasks['failing']['reason'])
        self.assertIn('final signal', node_tasks['forged']['reason'])

        # The agent replays its final signal: 409, nothing changes.
        node, _ = runs['aware']
        replay = node.notify(aware)
        self.assertEqual(0, replay.returncode, replay.stderr)
        self.assertIn('Response <Response [409]>', replay.stderr)
        self.assertEqual('COMPLETE', c.get('/v1/deployments/%s' % aware,
                                           status=200).json()['status'])

        # The refusals are in the service's log, with the deployment and
        # the reason; no token is in any log line or answer.
        text = '\n'.join(log.read().decode('utf-8', 'replace')
                         for log in self.logs)
        forged = infos['forged']['deployment_uuid']
        self.assertIn('Refused a signal for deployment %s: the token does '
                      'not match' % forged, text)
        self.assertIn('Refused a signal for deployment %s: Deployment %s '
                      'has already received its final signal'
                      % (aware, aware), text)
        self.assertIn('/v1/signals/%s?token=***' % aware, text)
        answers = ''.join(c.get(path, status=200).text for path in (
            '/v1/deployments', '/v1/events',
            '/v1/deployments?action_uuid=%s' % action['uuid'],
            '/v1/tasks/%s?tree=true' % action['task_uuid']))
        for token in tokens.values():
            self.assertNotIn(token, text)
            self.assertNotIn(token, answers)


def _stop(proc):
    if proc.poll() is None:
        proc.kill()
        proc.wait(30)


class TestStockAgentAllInOne(StockAgentScenario, base.FunctionalTestCase):
    """The all-in-one ``baremetal-orch``: sqlite, no broker."""

    def start(self):
        proc, client = services.start_all_in_one(
            self, conductor={'signal_timeout': SIGNAL_TIMEOUT},
            fake_driver={'configdrive_dir': self.drive})
        return client, [proc.log]


class TestStockAgentSplit(StockAgentScenario, base.FunctionalTestCase):
    """API and conductor processes over RabbitMQ, on MariaDB."""

    def start(self):
        db = self.useFixture(databases.Database('mysql'))
        rabbit = self.useFixture(broker.RabbitMQ())
        port = services.free_port()
        endpoint = 'http://127.0.0.1:%d' % port
        conf = services.write_config(
            os.path.join(self.log_dir, 'split.conf'), services.base_sections(
                self.log_dir, port, db.url,
                DEFAULT={'rpc_transport': 'oslo', 'host': 'conductor-h',
                         'transport_url': rabbit.transport_url,
                         'rpc_response_timeout': 30},
                api={'public_endpoint': endpoint},
                conductor={'signal_timeout': SIGNAL_TIMEOUT},
                fake_driver={'configdrive_dir': self.drive}))
        subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                     'baremetal-orch-manage'),
                        '--config-file', conf, 'db', 'upgrade'],
                       check=True, capture_output=True, timeout=120)
        conductor = self.start_process(
            ['baremetal-orch-conductor', '--config-file', conf])
        api = self.start_process(['baremetal-orch-api', '--config-file',
                                  conf])
        self.wait_for_http(endpoint + '/v1', status=200, process=api,
                           timeout=60)
        client = services.Client(endpoint)
        services.wait_for_live_conductor(client)
        return client, [api.log, conductor.log]
