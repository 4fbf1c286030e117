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
"""The JSON samples of the API reference are real requests and responses.

Every file in ``api-ref/source/samples/`` is produced here by a call to the
real API (pecan application, policy, JSON schemas, in-process conductor,
sqlite database, fake driver). Volatile values are replaced by fixed
placeholders (:class:`Normalizer`): server-generated UUIDs by fixed UUIDs in
order of first appearance, timestamps by one fixed instant, the request host
by ``http://127.0.0.1:6388`` and the conductor host by ``conductor-1``. The
result is compared with the file, so a sample cannot drift from the API.

After a deliberate API change, rewrite the files with::

    BAREMETAL_ORCH_REGENERATE_SAMPLES=1 python -m stestr \\
        --test-path baremetal_orch/tests/unit run doc.test_api_samples

and review the diff.
"""

import copy
import json
import os
import re
import uuid

import fixtures
import yaml

from baremetal_orch.api.controllers import v1 as v1_api
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import strategy as strategy_mod
from baremetal_orch.tests import base

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..',
                                    '..', '..'))
SAMPLES_DIR = os.path.join(ROOT, 'api-ref', 'source', 'samples')
API_REF_DIR = os.path.join(ROOT, 'api-ref', 'source')
EXAMPLES_DIR = os.path.join(ROOT, 'etc', 'baremetal-orch', 'examples')
REGENERATE = os.environ.get('BAREMETAL_ORCH_REGENERATE_SAMPLES') == '1'

ENDPOINT = 'http://127.0.0.1:6388'
CONDUCTOR = 'conductor-1'
TIMESTAMP = '2026-11-21T10:00:00.123456'

_NS = uuid.UUID('6b1f3c4e-4f0c-5b7e-9a0e-5d0f2a7c1e42')
_UUID_RE = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                      r'[0-9a-f]{12}')
_TIME_RE = re.compile(r'^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?'
                      r'(?P<tz>Z|[+-]\d{2}:\d{2})?$')


def fixed_uuid(kind, name):
    """The UUID the samples give the resource ``kind``/``name``."""
    return str(uuid.uuid5(_NS, '%s/%s' % (kind, name)))


#: Resources created with a client-chosen UUID keep it in the samples.
CHASSIS_UUID = fixed_uuid('chassis', 'rack03')
PORT_UUID = fixed_uuid('port', 'ctl01-eth0')
MISSING_NODE_UUID = fixed_uuid('node', 'missing')

#: The example site of the samples: the seed's racks, tags and labels with
#: one node per role (cmp05 fails its deploy, to show a partial success).
SITE = [
    {'name': 'ntp01', 'rack_name': 'rack01', 'tags': ['ntp'], 'labels': {}},
    {'name': 'ctl01', 'rack_name': 'rack03', 'tags': ['control'],
     'labels': {'openstack-control-plane': 'enabled'}},
    {'name': 'ctl02', 'rack_name': 'rack03', 'tags': ['control'],
     'labels': {'openstack-control-plane': 'enabled'}},
    {'name': 'ctl03', 'rack_name': 'rack03', 'tags': ['control'],
     'labels': {'openstack-control-plane': 'enabled'}},
    {'name': 'mon01', 'rack_name': 'rack02', 'tags': ['monitoring'],
     'labels': {}},
    {'name': 'cmp01', 'rack_name': 'rack01', 'tags': ['compute'],
     'labels': {'openstack-compute-node': 'enabled'}},
    {'name': 'cmp05', 'rack_name': 'rack02', 'tags': ['compute'],
     'labels': {'openstack-compute-node': 'enabled'},
     'driver_info': {'fake_fail_phase': 'deploy'}},
]

#: Every sample file, by the test that produces it. A file in
#: api-ref/source/samples/ that is not listed here is stale.
MANIFEST = {
    'root': [
        'api-root-response.json',
        'api-v1-root-response.json',
        'error-response.json',
    ],
    'chassis': [
        'chassis-create-request.json',
        'chassis-create-response.json',
        'chassis-list-response.json',
        'chassis-show-response.json',
        'chassis-update-request.json',
        'chassis-update-response.json',
    ],
    'nodes': [
        'node-create-request.json',
        'node-create-response.json',
        'node-list-response.json',
        'node-list-detail-response.json',
        'node-show-response.json',
        'node-update-request.json',
        'node-update-response.json',
        'node-states-response.json',
        'node-set-provision-state-request.json',
        'node-set-maintenance-request.json',
        'node-set-console-request.json',
    ],
    'ports': [
        'port-create-request.json',
        'port-create-response.json',
        'port-list-response.json',
        'port-show-response.json',
        'port-update-request.json',
        'port-update-response.json',
    ],
    'deployment': [
        'node-filter-request.json',
        'node-filter-response.json',
        'strategy-create-request.json',
        'strategy-create-response.json',
        'strategy-list-response.json',
        'strategy-show-response.json',
        'strategy-validate-response.json',
        'strategy-validate-error-request.json',
        'strategy-validate-error-response.json',
        'action-dry-run-request.json',
        'action-dry-run-response.json',
        'action-create-request.json',
        'action-create-response.json',
        'action-show-response.json',
        'action-list-response.json',
        'action-retry-request.json',
        'action-retry-response.json',
        'task-show-response.json',
        'task-tree-response.json',
        'signal-in-progress-request.json',
        'signal-in-progress-response.json',
        'signal-complete-request.json',
        'signal-complete-response.json',
        'deployment-list-response.json',
        'deployment-show-response.json',
        'event-list-response.json',
        'event-list-action-response.json',
    ],
    'control': [
        'action-control-request.json',
        'action-control-response.json',
    ],
    'services': [
        'service-list-response.json',
        'service-show-response.json',
        'service-update-request.json',
        'service-update-response.json',
        'shard-list-response.json',
    ],
}


class Normalizer:
    """Replace the volatile values of API documents by fixed placeholders.

    UUIDs the test chose (``keep``) stay; any other UUID becomes a fixed
    one, the same for the same value within one test, numbered in order of
    first appearance (so a task's ``parent_uuid`` still names its parent).
    """

    def __init__(self, keep=(), host='test-conductor', namespace='sample'):
        self.keep = set(keep)
        self.host = host
        self.namespace = namespace
        self.uuids = {}

    def _uuid(self, match):
        value = match.group(0)
        if value in self.keep:
            return value
        if value not in self.uuids:
            self.uuids[value] = fixed_uuid(self.namespace,
                                           len(self.uuids) + 1)
        return self.uuids[value]

    def string(self, value):
        match = _TIME_RE.match(value)
        if match:
            return TIMESTAMP + (match.group('tz') or '')
        value = _UUID_RE.sub(self._uuid, value)
        value = value.replace('http://localhost', ENDPOINT)
        return value.replace(self.host, CONDUCTOR)

    def __call__(self, doc):
        if isinstance(doc, dict):
            return {self.string(k): self(v) for k, v in doc.items()}
        if isinstance(doc, list):
            return [self(v) for v in doc]
        if isinstance(doc, str):
            return self.string(doc)
        return doc


def sample_path(name):
    return os.path.join(SAMPLES_DIR, name)


class SampleTestCase(base.ApiTestCase):
    """Calls the API and checks (or rewrites) the sample files."""

    group = None

    def setUp(self):
        super().setUp()
        # One group at a time (the default, as in the seed).
        self.config(group='conductor', max_concurrent_groups=1)
        keep = {CHASSIS_UUID, PORT_UUID, MISSING_NODE_UUID}
        keep.update(fixed_uuid('node', n['name']) for n in SITE)
        self.normalize = Normalizer(keep=keep, namespace=self.group)

    def assertSample(self, name, doc):
        """``doc``, normalized, is what samples/``name`` holds."""
        self.assertIn(name, MANIFEST[self.group],
                      'add %s to MANIFEST[%r]' % (name, self.group))
        doc = self.normalize(copy.deepcopy(doc))
        path = sample_path(name)
        if REGENERATE:
            os.makedirs(SAMPLES_DIR, exist_ok=True)
            with open(path, 'w') as f:
                f.write(json.dumps(doc, indent=4) + '\n')
            return doc
        self.assertTrue(os.path.exists(path),
                        'missing sample %s: run with '
                        'BAREMETAL_ORCH_REGENERATE_SAMPLES=1' % name)
        with open(path) as f:
            expected = json.load(f)
        self.assertEqual(expected, doc,
                         'api-ref/source/samples/%s no longer matches the '
                         'API (regenerate with '
                         'BAREMETAL_ORCH_REGENERATE_SAMPLES=1 and review '
                         'the diff)' % name)
        return doc

    def request(self, name, body):
        """Check the request sample ``name`` and return the body to send."""
        self.assertSample(name, body)
        return body

    # Site helpers ----------------------------------------------------------

    def create_site(self):
        for node in SITE:
            body = dict(node, driver='fake',
                        uuid=fixed_uuid('node', node['name']))
            body.setdefault('driver_info', {})
            self.post('/v1/nodes', body, status=201)

    def defer_action_start(self):
        """Hold the flow of the next action until release() is called.

        The POST then answers before the conductor made any progress, as
        it does when the conductor is busy; the flow itself is untouched.
        Once released, the flows of later actions start at once.
        """
        held = []
        released = []
        runner = self.manager.actions
        launch = runner._launch

        def hold(*args, **kwargs):
            if released:
                return launch(*args, **kwargs)
            held.append((args, kwargs))
        self.useFixture(fixtures.MonkeyPatch(
            'baremetal_orch.flows.engine.ActionEngines._launch',
            lambda _self, *a, **kw: hold(*a, **kw)))

        def release():
            released.append(True)
            for args, kwargs in held:
                launch(*args, **kwargs)
        return release


class TestRootSamples(SampleTestCase):
    group = 'root'

    def test_root(self):
        resp = self.get('/', status=200)
        self.assertSample('api-root-response.json', resp.json)
        resp = self.get('/v1', status=200)
        self.assertSample('api-v1-root-response.json', resp.json)

    def test_error(self):
        resp = self.get('/v1/nodes/%s' % MISSING_NODE_UUID,
                        status=404)
        self.assertEqual('baremetal_orch.node.not_found',
                         resp.json['errors'][0]['code'])
        self.assertSample('error-response.json', resp.json)


class TestChassisSamples(SampleTestCase):
    group = 'chassis'

    def test_chassis(self):
        body = self.request('chassis-create-request.json', {
            'uuid': CHASSIS_UUID, 'description': 'Rack 03, row B',
            'extra': {'location': 'dc1/row-b/rack03'}})
        resp = self.post('/v1/chassis', body, status=201)
        self.assertSample('chassis-create-response.json', resp.json)
        resp = self.get('/v1/chassis', status=200)
        self.assertSample('chassis-list-response.json', resp.json)
        resp = self.get('/v1/chassis/%s' % CHASSIS_UUID, status=200)
        self.assertSample('chassis-show-response.json', resp.json)
        body = self.request('chassis-update-request.json', [
            {'op': 'replace', 'path': '/description',
             'value': 'Rack 03, row C'}])
        resp = self.patch('/v1/chassis/%s' % CHASSIS_UUID, body,
                          status=200)
        self.assertEqual('Rack 03, row C', resp.json['description'])
        self.assertSample('chassis-update-response.json', resp.json)


class TestNodeSamples(SampleTestCase):
    group = 'nodes'

    def test_nodes(self):
        self.post('/v1/chassis', {'uuid': CHASSIS_UUID}, status=201)
        body = self.request('node-create-request.json', {
            'uuid': fixed_uuid('node', 'ctl01'),
            'name': 'ctl01', 'driver': 'fake', 'rack_name': 'rack03',
            'chassis_uuid': CHASSIS_UUID, 'tags': ['control'],
            'labels': {'openstack-control-plane': 'enabled'},
            'shard': 'rack03', 'driver_info': {
                'ipmi_address': '10.0.3.11', 'ipmi_password': 'secret'}})
        resp = self.post('/v1/nodes', body, status=201)
        self.assertEqual('***',
                         resp.json['driver_info'].get('ipmi_password'))
        self.assertSample('node-create-response.json', resp.json)
        self.post('/v1/nodes', {'uuid': fixed_uuid('node', 'ctl02'),
                                'name': 'ctl02', 'driver': 'fake',
                                'rack_name': 'rack03', 'tags': ['control'],
                                'shard': 'rack03', 'driver_info': {}},
                  status=201)
        resp = self.get('/v1/nodes', status=200)
        self.assertSample('node-list-response.json', resp.json)
        resp = self.get('/v1/nodes?detail=true&shard=rack03&limit=1',
                        status=200)
        self.assertIn('shard=rack03', resp.json['next'])
        self.assertSample('node-list-detail-response.json', resp.json)
        resp = self.get('/v1/nodes/ctl01', status=200)
        self.assertSample('node-show-response.json', resp.json)
        body = self.request('node-update-request.json', [
            {'op': 'add', 'path': '/tags/-', 'value': 'gpu'},
            {'op': 'replace', 'path': '/labels/openstack-control-plane',
             'value': 'disabled'}])
        resp = self.patch('/v1/nodes/ctl01', body, status=200)
        self.assertEqual(['control', 'gpu'], resp.json['tags'])
        self.assertSample('node-update-response.json', resp.json)

        body = self.request('node-set-provision-state-request.json',
                            {'target': 'manage'})
        self.put('/v1/nodes/ctl01/states/provision', body, status=202)
        # Each call answers 202 and the conductor works in the background,
        # holding the node's lock: wait for the outcome before the next.
        self.wait_states(lambda s: s['provision_state'] == 'manageable'
                         and s['target_provision_state'] is None)
        body = self.request('node-set-maintenance-request.json',
                            {'reason': 'Replacing a failed disk'})
        self.put('/v1/nodes/ctl01/maintenance', body, status=202)
        self.wait_states(lambda s: s['maintenance'])
        body = self.request('node-set-console-request.json',
                            {'enabled': True})
        self.put('/v1/nodes/ctl01/states/console', body, status=202)
        states = self.wait_states(lambda s: s['console_enabled'])
        self.assertEqual('manageable', states['provision_state'])
        self.assertTrue(states['maintenance'])
        self.assertSample('node-states-response.json', states)

    def wait_states(self, predicate):
        def states():
            doc = self.get('/v1/nodes/ctl01/states', status=200).json
            return doc if predicate(doc) else None
        return self.wait_for(states)


class TestPortSamples(SampleTestCase):
    group = 'ports'

    def test_ports(self):
        node = fixed_uuid('node', 'ctl01')
        self.post('/v1/nodes', {'uuid': node, 'name': 'ctl01',
                                'driver': 'fake', 'driver_info': {}},
                  status=201)
        body = self.request('port-create-request.json', {
            'uuid': PORT_UUID, 'node_uuid': node,
            'address': '52:54:00:3a:01:11', 'pxe_enabled': True,
            'local_link_connection': {'switch_id': '0a:1b:2c:3d:4e:5f',
                                      'port_id': 'Ethernet1/11',
                                      'switch_info': 'tor-rack03'}})
        resp = self.post('/v1/ports', body, status=201)
        self.assertSample('port-create-response.json', resp.json)
        resp = self.get('/v1/ports?node=ctl01', status=200)
        self.assertSample('port-list-response.json', resp.json)
        resp = self.get('/v1/ports/%s' % PORT_UUID, status=200)
        self.assertSample('port-show-response.json', resp.json)
        body = self.request('port-update-request.json', [
            {'op': 'replace', 'path': '/pxe_enabled', 'value': False}])
        resp = self.patch('/v1/ports/%s' % PORT_UUID, body, status=200)
        self.assertFalse(resp.json['pxe_enabled'])
        self.assertSample('port-update-response.json', resp.json)


def _strategy_document():
    """The seed's example DeploymentStrategy, as the JSON the API takes."""
    with open(os.path.join(EXAMPLES_DIR, 'deployment-strategy.yaml')) as f:
        return yaml.safe_load(f)


class TestDeploymentSamples(SampleTestCase):
    group = 'deployment'

    def setUp(self):
        super().setUp()
        self.configdrive = self.useFixture(fixtures.TempDir()).path
        self.config(group='fake_driver', configdrive_dir=self.configdrive)
        self.config(group='api', public_endpoint=ENDPOINT)

    def test_deployment(self):
        self.create_site()
        body = self.request('node-filter-request.json', {'selectors': [
            {'node_tags': ['control'], 'rack_names': ['rack03']},
            {'node_names': ['ntp01']},
            {'node_labels': ['openstack-compute-node:enabled'],
             'rack_names': ['rack02']}]})
        resp = self.post('/v1/nodes/filter', body, status=200)
        self.assertEqual({'ctl01', 'ctl02', 'ctl03', 'ntp01', 'cmp05'},
                         set(resp.json['node_names']))
        self.assertSample('node-filter-response.json', resp.json)

        document = self.request('strategy-create-request.json',
                                _strategy_document())
        resp = self.post('/v1/deployment_strategies/validate', document,
                         status=200)
        self.assertSample('strategy-validate-response.json', resp.json)
        resp = self.post('/v1/deployment_strategies', document, status=201)
        self.assertSample('strategy-create-response.json', resp.json)
        resp = self.get('/v1/deployment_strategies', status=200)
        self.assertSample('strategy-list-response.json', resp.json)
        resp = self.get('/v1/deployment_strategies/deployment-strategy',
                        status=200)
        self.assertSample('strategy-show-response.json', resp.json)

        bad = copy.deepcopy(document)
        bad['metadata']['name'] = 'cyclic'
        bad['data']['groups'][4]['depends_on'] = ['compute-nodes-1']
        self.request('strategy-validate-error-request.json', bad)
        resp = self.post('/v1/deployment_strategies/validate', bad,
                         status=400)
        self.assertEqual('baremetal_orch.strategy.cycle',
                         resp.json['errors'][0]['code'])
        self.assertSample('strategy-validate-error-response.json',
                          resp.json)

        body = self.request('action-dry-run-request.json', {
            'name': 'deploy_site', 'dry_run': True,
            'parameters': {'deployment_strategy': 'deployment-strategy'}})
        resp = self.post('/v1/actions', body, status=200)
        self.assertSample('action-dry-run-response.json', resp.json)

        body = self.request('action-create-request.json', {
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'deployment-strategy'}})
        release = self.defer_action_start()
        resp = self.post('/v1/actions', body, status=201)
        self.assertSample('action-create-response.json', resp.json)
        release()
        uuid_ = resp.json['uuid']
        action = self.wait_for(lambda: (lambda a: a if a['state'] not in (
            'pending', 'running') else None)(
            self.get('/v1/actions/%s' % uuid_, status=200).json))
        self.manager.actions.wait(30)
        action = self.get('/v1/actions/%s' % uuid_, status=200).json
        self.assertEqual(('complete', 'success_with_failures'),
                         (action['state'], action['result']))
        self.assertEqual('deploy_criteria_not_met',
                         action['report']['groups']['compute-nodes-2'][
                             'reason'])
        self._canonical_order(action)
        self.assertSample('action-show-response.json', action)
        actions = self.get('/v1/actions?name=deploy_site', status=200).json
        for item in actions['actions']:
            self._canonical_order(item)
        self.assertSample('action-list-response.json', actions)

        resp = self.get('/v1/tasks/%s' % action['task_uuid'], status=200)
        self.assertSample('task-show-response.json', resp.json)
        resp = self.get('/v1/tasks/%s?tree=true' % action['task_uuid'],
                        status=200)
        self.assertEqual(5, len(resp.json['subtasks']))
        self.assertSample('task-tree-response.json', resp.json)
        self.assertEqual(action['report']['order'], [
            g['name'] for g in resp.json['subtasks']])
        resp = self.get('/v1/events?action_uuid=%s' % uuid_, status=200)
        self.assertEqual(
            ['action.started'] + ['group.started', 'group.finished'] * 5 +
            ['action.finished'],
            [e['event_type'] for e in resp.json['events']
             if e['event_type'] != 'node.failed'])
        self.assertSample('event-list-action-response.json', resp.json)
        self._signals(uuid_)
        self._retry(uuid_)

    def _canonical_order(self, action):
        """The groups started one at a time in the plan's order (the
        strategy's topological order, ties broken by document order)."""
        strategy = strategy_mod.parse(_strategy_document())
        self.assertEqual(list(strategy.topological_order()),
                         action['report']['order'])

    def _retry(self, action_uuid):
        """Retry the action: only cmp05, whose deploy failed, is sent
        again (and fails again); the others count as they ended."""
        body = self.request('action-retry-request.json', {
            'name': 'retry', 'parameters': {'action': action_uuid}})
        uuid_ = self.post('/v1/actions', body, status=201).json['uuid']
        self.wait_for(lambda: self.get(
            '/v1/actions/%s' % uuid_, status=200).json['state'] not in (
            'pending', 'running'))
        self.manager.actions.wait(30)
        retry = self.get('/v1/actions/%s' % uuid_, status=200).json
        self.assertEqual(('complete', 'success_with_failures', action_uuid),
                         (retry['state'], retry['result'],
                          retry['report']['retry_of']))
        self.assertEqual(['cmp05', 'cmp05'], [
            t.name for t in dbapi.list_tasks(action_uuid=uuid_,
                                             kind='node')])
        self._canonical_order(retry)
        self.assertSample('action-retry-response.json', retry)

    def _signals(self, action_uuid):
        """Play the agent of ctl01: read the config drive, signal."""
        node = fixed_uuid('node', 'ctl01')
        with open(os.path.join(self.configdrive, '%s.json' % node)) as f:
            info = json.load(f)
        info = info.get('instance_info', info)
        url = info['deploy_signal_id']
        self.assertTrue(url.startswith(ENDPOINT + '/v1/signals/'))
        # The pre-signed URL as a stock agent uses it, then the header.
        signed = url[len(ENDPOINT):]
        path, query = signed.split('?', 1)
        token = {'X-Signal-Token': query[len('token='):]}
        body = self.request('signal-in-progress-request.json', {
            'deploy_status': 'IN_PROGRESS',
            'deploy_status_reason': 'Applying the host configuration'})
        resp = self.post(signed, body, status=200)
        self.assertSample('signal-in-progress-response.json', resp.json)
        body = self.request('signal-complete-request.json', {
            'deploy_status': 'COMPLETE',
            'deploy_status_reason': 'Host configuration applied',
            'deploy_stdout': 'kubelet joined the cluster\n',
            'deploy_stderr': '', 'deploy_status_code': 0})
        resp = self.post(path, body, headers=token, status=200)
        self.assertEqual('COMPLETE', resp.json['status'])
        self.assertSample('signal-complete-response.json', resp.json)
        resp = self.get('/v1/deployments?node_uuid=%s' % node, status=200)
        self.assertEqual(1, len(resp.json['deployments']))
        self.assertSample('deployment-list-response.json', resp.json)
        resp = self.get('/v1/deployments/%s' % path.rsplit('/', 1)[1],
                        status=200)
        self.assertSample('deployment-show-response.json', resp.json)
        resp = self.get('/v1/events?resource_uuid=%s&action_uuid=%s'
                        % (node, action_uuid), status=200)
        self.assertEqual(['deployment.signal.in_progress',
                          'deployment.signal.complete'],
                         [e['event_type'] for e in resp.json['events']])
        self.assertSample('event-list-response.json', resp.json)


class TestActionControlSamples(SampleTestCase):
    """``POST /v1/actions/{uuid}/control``: pause a running deployment
    (before any node work starts, so the sample does not depend on
    timing), then abort it; a verb on the ended action is a 409."""

    group = 'control'

    def setUp(self):
        super().setUp()
        self.config(group='fake_driver',
                    configdrive_dir=self.useFixture(fixtures.TempDir()).path)
        self.config(group='api', public_endpoint=ENDPOINT)

    def test_control(self):
        self.create_site()
        self.post('/v1/deployment_strategies', _strategy_document(),
                  status=201)
        release = self.defer_action_start()
        resp = self.post('/v1/actions', {
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'deployment-strategy'}},
            status=201)
        uuid_ = resp.json['uuid']
        path = '/v1/actions/%s/control' % uuid_
        body = self.request('action-control-request.json', {
            'verb': 'pause', 'reason': 'change freeze until 14:00 UTC'})
        resp = self.post(path, body, status=202)
        self.assertIn(resp.json['state'], ('pausing', 'paused'))
        self.assertEqual('change freeze until 14:00 UTC',
                         resp.json['state_reason'])
        self.assertSample('action-control-response.json', resp.json)
        release()
        self.post(path, {'verb': 'abort', 'reason': 'window missed'},
                  status=202)
        self.wait_for(lambda: self.get('/v1/actions/%s' % uuid_,
                                       status=200).json['state']
                      == 'cancelled')
        self.manager.actions.wait(30)
        resp = self.post(path, {'verb': 'resume'}, status=409)
        self.assertIn('cancelled', resp.json['errors'][0]['detail'])


class TestServiceSamples(SampleTestCase):
    group = 'services'

    def test_services(self):
        for name, shard in (('ctl01', 'rack03'), ('ctl02', 'rack03'),
                            ('cmp01', 'rack01'), ('ntp01', None)):
            self.post('/v1/nodes', {'uuid': fixed_uuid('node', name),
                                    'name': name, 'driver': 'fake',
                                    'shard': shard, 'driver_info': {}},
                      status=201)
        resp = self.get('/v1/shards', status=200)
        self.assertEqual([1, 2, 1], [s['count']
                                     for s in resp.json['shards']])
        self.assertSample('shard-list-response.json', resp.json)
        # Show a service that has heartbeated (a heartbeat sets updated_at),
        # not one caught in its first second.
        self.wait_for(lambda: self.get('/v1/services/test-conductor',
                                       status=200).json['updated_at'])
        resp = self.get('/v1/services', status=200)
        self.assertSample('service-list-response.json', resp.json)
        resp = self.get('/v1/services/test-conductor', status=200)
        self.assertSample('service-show-response.json', resp.json)
        body = self.request('service-update-request.json', [
            {'op': 'replace', 'path': '/disabled', 'value': True},
            {'op': 'replace', 'path': '/disabled_reason',
             'value': 'Hardware maintenance of the conductor host'}])
        resp = self.patch('/v1/services/test-conductor', body, status=200)
        self.assertTrue(resp.json['disabled'])
        self.assertSample('service-update-response.json', resp.json)


class TestSampleFiles(base.TestCase):
    """Samples, tests and api-ref agree.

    The sample directory holds exactly the samples the tests check, the
    api-ref shows each of them, and every resource has its section.
    """

    def test_no_stale_sample(self):
        if REGENERATE:
            self.skipTest('regenerating')
        wanted = {n for names in MANIFEST.values() for n in names}
        present = set(os.listdir(SAMPLES_DIR))
        self.assertEqual(set(), present - wanted, 'stale samples')
        self.assertEqual(set(), wanted - present, 'missing samples')

    def test_api_ref_includes_exist(self):
        included = set()
        for name in os.listdir(API_REF_DIR):
            if not name.endswith(('.inc', '.rst')):
                continue
            with open(os.path.join(API_REF_DIR, name)) as f:
                included.update(re.findall(
                    r'literalinclude::\s+samples/(\S+)', f.read()))
        wanted = {n for names in MANIFEST.values() for n in names}
        self.assertEqual(set(), included - wanted,
                         'the api-ref includes samples no test produces')
        self.assertEqual(set(), wanted - included,
                         'samples the api-ref does not show')

    def test_routes_documented(self):
        """Every resource of the v1 root has a section in the api-ref."""
        with open(os.path.join(API_REF_DIR, 'index.rst')) as f:
            index = f.read()
        for name in v1_api.RESOURCES:
            self.assertIn('%s.inc' % name.replace('_', '-'), index)

    def test_route_table_documented(self):
        """Every path of the v1 route table has a documented method."""
        def generic(path):
            return re.sub(r'\{[^}]*\}', '{}', path)

        documented = set()
        for name in os.listdir(API_REF_DIR):
            if name.endswith('.inc'):
                with open(os.path.join(API_REF_DIR, name)) as f:
                    documented.update(generic(m) for m in re.findall(
                        r'rest_method::\s+[A-Z]+\s+(\S+)', f.read()))
        routes = re.findall(r'^(/v1/\S+)', v1_api.__doc__, re.M)
        self.assertGreater(len(routes), 10)
        for route in routes:
            for path in (re.sub(r'\[.*\]', '', route),
                         route.replace('[', '').replace(']', '')):
                self.assertIn(generic(path), documented)


class TestNormalizer(base.TestCase):
    """The placeholders keep what the samples must show."""

    def test_table(self):
        kept = fixed_uuid('node', 'ctl01')
        generated = '0c0941a8-f8e6-43dc-93ff-4702974cda8f'
        other = '47f0b791-281d-45d4-8c12-aaa5f90d87e7'
        normalize = Normalizer(keep={kept}, namespace='t')
        first, second = fixed_uuid('t', 1), fixed_uuid('t', 2)
        for value, expected in [
                (kept, kept),
                (generated, first),
                ('req-%s' % other, 'req-%s' % second),
                (generated, first),
                ('http://localhost/v1/nodes/%s' % kept,
                 '%s/v1/nodes/%s' % (ENDPOINT, kept)),
                ('2026-01-02T03:04:05', TIMESTAMP),
                ('2026-01-02T03:04:05.000001+00:00', TIMESTAMP + '+00:00'),
                ('test-conductor', CONDUCTOR),
                ('not a date 2026-01-02T03:04:05', 'not a date '
                 '2026-01-02T03:04:05'),
                (3, 3), (None, None)]:
            self.assertEqual(expected, normalize(value), value)

    def test_keys_and_nesting(self):
        generated = '0c0941a8-f8e6-43dc-93ff-4702974cda8f'
        normalize = Normalizer(namespace='t')
        self.assertEqual({fixed_uuid('t', 1): [fixed_uuid('t', 1)]},
                         normalize({generated: [generated]}))
