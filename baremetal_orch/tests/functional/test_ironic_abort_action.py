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
"""Aborting a ``deploy_site`` whose nodes a real Ironic holds in
``wait call-back`` (doc/source/admin/steering.rst, abort), end to end.

The service deploys with the ``ironic`` driver against a real standalone
Ironic (fake hardware): the all-in-one (``baremetal-orch``, no broker),
and a split one (an API and two conductors over RabbitMQ and MariaDB, the
waiting nodes owned by both, so that the action's conductor casts
``abort_nodes`` over the broker to the other one). The nodes of group
``wait`` have Ironic's ``custom-agent`` deploy interface: Ironic powers
them on and waits for an ironic-python-agent that never calls back, and
its ``deploy_callback_timeout`` is an hour away, so only an abort moves
them on. Group ``after`` depends on ``wait``.

``POST /v1/actions/{uuid}/control {"verb": "abort"}`` must reach Ironic
(one ``abort`` per waiting node, in Ironic's own request log, sent by the
node's own conductor), Ironic's reason must come back as the nodes'
failure (task, event, node record), and the action must end
``cancelled`` with the operator's reason. The seconds from the 202 to the
first abort request, to Ironic's last 202, to every node ``deploy
failed`` in Ironic and to ``cancelled`` are attached to the result as
``figures``.
"""

import datetime
import json
import os
import subprocess
import sys
import time

from oslo_utils import uuidutils
import testtools.content

from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing.fixtures import ironic as ironic_fixture
from baremetal_orch_testing import services

WAITING = 3
AFTER = 2
#: Bounds on waits (a hang fails; the abort itself is measured).
WAIT = 120
IRONIC_ABORTED = 'By request, the deploy operation was aborted'
CONDUCTORS = ('cond-1', 'cond-2')


class AbortScenario:
    """The scenario, mixed into a test case that starts the service
    (:meth:`start`) and checks where the aborts were sent from."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ironic = cls.use_class_fixture(ironic_fixture.IronicFixture(
            deploy_callback_timeout=3600))

    def setUp(self):
        super().setUp()
        self.suffix = uuidutils.generate_uuid(dashed=False)[:8]
        self.start(ironic=dict(self.ironic.ironic_options(),
                               poll_interval=0.2),
                   conductor={'sync_interval': -1})

    def waiting_nodes(self):
        """The nodes of group ``wait``: ``{name: Ironic node}``."""
        return self.enroll('wait', WAITING, **ironic_fixture.FAILING_DEPLOY)

    def enroll(self, tag, count, first=0, **fields):
        """``count`` Ironic nodes, and their records here (driver
        ``ironic``, tagged ``tag``); returns ``{name: Ironic node}``."""
        nodes = {}
        for i in range(first, first + count):
            name = '%s-%d-%s' % (tag, i, self.suffix)
            inode = self.ironic.create_node(name, **fields)
            self.client.post('/v1/nodes', status=201, json={
                'name': name, 'driver': 'ironic', 'tags': [tag],
                'ironic_uuid': inode['uuid']})
            nodes[name] = inode
        return nodes

    def ironic_states(self, inodes):
        return {name: self.ironic.get_node(inode['uuid'])[
            'provision_state'] for name, inode in inodes.items()}

    def test_abort_reaches_the_nodes_ironic_holds(self):
        c = self.client
        waiting = self.waiting_nodes()
        after = self.enroll('after', AFTER)
        name = 'abort-' + self.suffix
        c.post('/v1/deployment_strategies', status=201, json={
            'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': name},
            'data': {'groups': [
                {'name': 'wait', 'critical': True, 'depends_on': [],
                 'selectors': [{'node_tags': ['wait']}],
                 'success_criteria': {'percent_successful_nodes': 100}},
                {'name': 'after', 'critical': True, 'depends_on': ['wait'],
                 'selectors': [{'node_tags': ['after']}],
                 'success_criteria': {'percent_successful_nodes': 100}},
            ]}})
        action = c.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': name}}).json()
        uuid = action['uuid']
        # Prepared (enroll -> available), then deployed: Ironic waits for
        # their agents.
        c.wait_for(lambda: set(self.ironic_states(waiting).values()) == {
            'wait call-back'}, timeout=WAIT, interval=0.2)
        self.assertEqual('running', c.get('/v1/actions/%s' % uuid,
                                          status=200).json()['state'])

        mark = self.ironic.log_mark()
        reason = 'bad firmware wave'
        c.post('/v1/actions/%s/control' % uuid, status=202,
               json={'verb': 'abort', 'reason': reason})
        accepted, accepted_at = time.monotonic(), time.time()
        # Until the action ended: when Ironic first shows every waiting
        # node failed.
        failed_in_ironic = []

        def ended():
            if not failed_in_ironic and set(self.ironic_states(
                    waiting).values()) == {'deploy failed'}:
                failed_in_ironic.append(time.monotonic())
            return self._ended(uuid)

        final = c.wait_for(ended, timeout=WAIT, interval=0.05)
        cancelled = time.monotonic()

        records = {n['name']: n for n in c.get(
            '/v1/nodes?detail=true&limit=1000', status=200).json()['nodes']}
        asked_at, sent_at = self.aborts_sent(final, records, waiting)
        figures = {
            'nodes_in_wait': len(waiting),
            'abort_202_to_cancelled_s': round(cancelled - accepted, 2),
            # The driver about to send the first abort (its log line),
            # and Ironic's 202 to the last one.
            'abort_202_to_first_abort_request_s': round(
                min(asked_at) - accepted_at, 2),
            'abort_202_to_last_abort_sent_s': round(
                max(sent_at) - accepted_at, 2),
            'abort_202_to_all_failed_in_ironic_s': round(
                failed_in_ironic[0] - accepted, 2)
            if failed_in_ironic else None}
        self.addDetailUniqueName('figures', testtools.content.text_content(
            json.dumps(figures, sort_keys=True)))
        report = final['report']
        self.assertEqual(('cancelled', 'failed', reason),
                         (final['state'], final['result'],
                          final['state_reason']), report)

        # Ironic took one abort per waiting node, and failed each deploy
        # with its own reason.
        ironic_nodes = {n: self.ironic.get_node(i['uuid'])
                        for n, i in waiting.items()}
        for node_name, inode in ironic_nodes.items():
            self.assertEqual('deploy failed', inode['provision_state'],
                             node_name)
            self.assertIn(IRONIC_ABORTED, inode['last_error'])
        provision = [(r.path, r.status)
                     for r in self.ironic.request_log(mark)
                     if r.method == 'PUT' and r.path.endswith('/provision')]
        self.assertEqual(
            sorted(('/v1/nodes/%s/states/provision' % i['uuid'], '202')
                   for i in waiting.values()), sorted(provision))

        # The groups: the waiting one failed (aborted), its nodes failed;
        # the dependent one never started.
        wait_group = report['groups']['wait']
        self.assertEqual(('failed', 'aborted'),
                         (wait_group['status'], wait_group['reason']))
        self.assertEqual(sorted(waiting), sorted(wait_group['failed_nodes']))
        after_group = report['groups']['after']
        self.assertEqual(('failed', 'aborted'),
                         (after_group['status'], after_group['reason']))
        self.assertEqual(dict.fromkeys(waiting, 'failure') | dict.fromkeys(
            after, 'not_started'), report['nodes'])
        # Ironic never saw a request to change a node of ``after``.
        self.assertEqual({'enroll'}, set(self.ironic_states(after).values()))

        # The events: the operator's abort, then each node's failure with
        # Ironic's reason.
        events = c.get('/v1/events?action_uuid=%s&limit=1000' % uuid,
                       status=200).json()['events']
        aborted = [e for e in events if e['event_type'] == 'action.aborted']
        self.assertEqual(1, len(aborted), events)
        # noauth: no requester to name.
        self.assertEqual(('deploy_site aborted: %s' % reason, reason),
                         (aborted[0]['message'],
                          aborted[0]['details']['reason']))
        failed = {e['details']['node']: e for e in events
                  if e['event_type'] == 'node.failed'}
        self.assertEqual(sorted(waiting), sorted(failed))
        for node_name, event in failed.items():
            self.assertEqual('deploy', event['details']['phase'])
            self.assertIn(IRONIC_ABORTED, event['details']['reason'])
            self.assertIn(ironic_nodes[node_name]['last_error'],
                          event['details']['reason'])

        # The records here: Ironic's state and reason.
        for node_name in waiting:
            self.assertEqual('deploy failed',
                             records[node_name]['provision_state'])
            self.assertIn(IRONIC_ABORTED, records[node_name]['last_error'])
        for node_name in after:
            self.assertEqual('enroll', records[node_name]['provision_state'])

    def aborts_sent(self, action, records, waiting):
        """Each waiting node's abort was sent once, by the process that
        owns the node (:meth:`owner`, its log).

        :returns: the wall-clock times of the log lines before the abort
            requests, and of those after Ironic took them.
        """
        logs = self.logs()
        asked, sent = [], []
        for name in waiting:
            owner = self.owner(action, records[name])
            for line, times in (('Node %s: Ironic node %s in wait call-back '
                                 '-> abort' % (name, waiting[name]['uuid']),
                                 asked),
                                ('Node %s: abort sent' % name, sent)):
                found = [text for text in logs[owner].splitlines()
                         if line in text]
                self.assertEqual(1, len(found), line)
                for other, text in logs.items():
                    if other != owner:
                        self.assertNotIn(line, text)
                times.append(datetime.datetime.strptime(
                    found[0][:23], '%Y-%m-%d %H:%M:%S.%f').timestamp())
        return asked, sent

    @staticmethod
    def read(proc):
        with open(proc.log_path, errors='replace') as f:
            return f.read()

    def _ended(self, uuid):
        doc = self.client.get('/v1/actions/%s' % uuid, status=200).json()
        return doc if doc['state'] in ('complete', 'failed',
                                       'cancelled') else None


class TestAllInOne(AbortScenario, base.FunctionalTestCase):
    """The all-in-one service: the abort is a call within the process."""

    def start(self, **sections):
        self.proc, self.client = services.start_all_in_one(self, **sections)

    def logs(self):
        return {'aio': self.read(self.proc)}

    def owner(self, action, record):
        return 'aio'


class TestSplit(AbortScenario, base.FunctionalTestCase):
    """An API and two conductors over RabbitMQ and MariaDB; the waiting
    nodes are spread over both conductors, so the action's conductor
    casts ``abort_nodes`` over the broker to the other one."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.rabbit = cls.use_class_fixture(broker.RabbitMQ())

    def start(self, **sections):
        db = self.useFixture(databases.Database('mysql'))
        port = services.free_port()
        confs = {}
        for host in CONDUCTORS + ('api',):
            options = {k: dict(v) for k, v in sections.items()}
            options['DEFAULT'] = {
                'rpc_transport': 'oslo', 'host': host,
                'transport_url': self.rabbit.transport_url,
                'rpc_response_timeout': 30}
            confs[host] = services.write_config(
                os.path.join(self.log_dir, '%s.conf' % host),
                services.base_sections(self.log_dir, port, db.url,
                                       **options))
        subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                     'baremetal-orch-manage'),
                        '--config-file', confs['api'], 'db', 'upgrade'],
                       check=True, capture_output=True, timeout=120)
        self.conductors = {
            host: self.start_process(['baremetal-orch-conductor',
                                      '--config-file', confs[host]],
                                     log_name=host)
            for host in CONDUCTORS}
        api = self.start_process(['baremetal-orch-api', '--config-file',
                                  confs['api']])
        endpoint = 'http://127.0.0.1:%d' % port
        self.wait_for_http(endpoint + '/v1', status=200, process=api,
                           timeout=60)
        self.client = services.Client(endpoint)
        # Nodes are bound to a live conductor when they are created.
        self.client.wait_for(lambda: set(CONDUCTORS) <= {
            s['host'] for s in self.client.get(
                '/v1/services', status=200).json()['services']
            if s['alive']}, timeout=60)

    #: Nodes enrolled at most until both conductors own one. The hash
    #: ring binds a node to either with even odds: all of 10 nodes went
    #: to one conductor in one CI run (1 in 512); 40 make it 1 in 5e11.
    ENROLL_AT_MOST = 40

    def waiting_nodes(self):
        """At least WAITING nodes, more until both conductors own one
        (the hash ring binds each node to one of them)."""
        nodes = {}
        for _ in range(self.ENROLL_AT_MOST):
            nodes.update(self.enroll('wait', 1, first=len(nodes),
                                     **ironic_fixture.FAILING_DEPLOY))
            owners = {self.client.get('/v1/nodes/%s' % name, status=200)
                      .json()['conductor'] for name in nodes}
            if len(nodes) >= WAITING and owners == set(CONDUCTORS):
                return nodes
        self.fail('the nodes are all owned by %s' % owners)

    def logs(self):
        return {host: self.read(proc)
                for host, proc in self.conductors.items()}

    def owner(self, action, record):
        self.assertIn(action['conductor'], CONDUCTORS)
        self.assertIn(record['conductor'], CONDUCTORS)
        return record['conductor']
