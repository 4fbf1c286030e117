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
"""update_labels end to end on a REAL kube-apiserver.

The all-in-one ``baremetal-orch`` runs with ``[labels]driver =
kubernetes`` and a kubeconfig whose user may only get and patch nodes
(:mod:`.fixtures.kubernetes`: etcd and kube-apiserver 1.20 built from
Debian's sources). The test creates Kubernetes Node objects as an
administrator, deploys the bare-metal nodes, and reads back what the
driver did: the Node's labels, its ``resourceVersion`` and the API
server's audit log.
"""

import os

import fixtures
from kubernetes import client as k8s_client
import testtools

from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import kubernetes
from baremetal_orch_testing import services

PREFIX = 'baremetal-orch.openstack.org/'
STRATEGY = {
    'schema': 'shipyard/DeploymentStrategy/v1',
    'metadata': {'name': 'site'},
    'data': {'groups': [{
        'name': 'workers', 'critical': False, 'depends_on': [],
        'selectors': [{'node_tags': ['k8s']}]}]},
}
#: Labels Kubernetes and its components own: never removed.
PROTECTED = {'kubernetes.io/hostname': 'k1',
             'node-role.kubernetes.io/worker': '',
             'feature.node.kubernetes.io/cpu-model': 'x86',
             'x.k8s.io/owner': 'capi'}


class TestLabelsOnKubernetes(base.FunctionalTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # A first build takes minutes: here, outside the per-test timeout
        # (or waiting for the one .ci/run started). Fails with its reason.
        kubernetes.ensure_binaries()

    def setUp(self):
        super().setUp()
        self.kube = self.useFixture(kubernetes.KubeAPIServer())
        self.proc, self.client = services.start_all_in_one(
            self, labels={'driver': 'kubernetes',
                          'kubeconfig': self.kube.kubeconfig,
                          'request_timeout': 3})

    def deploy(self, names):
        c = self.client
        for name in names:
            c.post('/v1/nodes', status=201, json={
                'name': name, 'driver': 'fake', 'tags': ['k8s'],
                'rack_name': 'rack-1',
                'labels': {'team': 'blue', 'tier': 'web'}})
        c.post('/v1/deployment_strategies', json=STRATEGY, status=201)
        action = c.post('/v1/actions', status=201, json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'site'}}).json()
        action = c.wait_for_action(action['uuid'], timeout=120)
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']))

    def relabel(self, names, timeout=120):
        action = self.client.post('/v1/actions', status=201, json={
            'name': 'update_labels',
            'parameters': {'target_nodes': names}}).json()
        return self.client.wait_for_action(action['uuid'], timeout=timeout)

    def node_reasons(self, action):
        tree = self.client.get('/v1/tasks/%s?tree=true' % action['task_uuid'],
                               status=200).json()
        found = {}

        def walk(task):
            if task['kind'] == 'node':
                found[task['name']] = (task['status'], task['reason'])
            for sub in task.get('subtasks') or ():
                walk(sub)
        walk(tree)
        return found

    def audit_after(self, mark):
        """The driver's node requests after the first ``mark`` ones."""
        return self.kube.audit()[mark:]

    def test_apply_change_remove_and_no_write(self):
        self.kube.create_node('k1', dict(PROTECTED, stale='gone',
                                         team='red'))
        self.kube.create_node('k2', {'kubernetes.io/hostname': 'k2'})
        # No Kubernetes node k3.
        self.deploy(['k1', 'k2', 'k3'])
        generated = {PREFIX + 'rack': 'rack-1',
                     PREFIX + 'group.workers': 'true'}
        wanted = dict(generated, team='blue', tier='web')

        # Apply: k3 fails alone, k1 and k2 get their labels.
        action = self.relabel(['k1', 'k2', 'k3'])
        self.assertEqual('failed', action['state'])
        self.assertEqual(['k1', 'k2'], action['report']['relabeled'])
        self.assertEqual(['k3'], action['report']['not_relabeled'])
        reasons = self.node_reasons(action)
        self.assertEqual(('success', 'success'),
                         (reasons['k1'][0], reasons['k2'][0]))
        self.assertEqual('failed', reasons['k3'][0])
        self.assertIn('Kubernetes node k3 could not be found',
                      reasons['k3'][1])
        k1, _ = self.kube.node('k1')
        # stale removed, team changed, protected labels untouched.
        self.assertEqual(dict(PROTECTED, **wanted), k1)
        k2, _ = self.kube.node('k2')
        self.assertEqual(dict({'kubernetes.io/hostname': 'k2'}, **wanted),
                         k2)
        calls = self.client.wait_for(
            lambda: (lambda a: a if len(a) >= 6 else None)(
                self.kube.audit()), timeout=30)
        # One GET per node; k1: set then remove; k2: set only; k3: 404.
        self.assertEqual(
            sorted([('get', 'k1', 200), ('patch', 'k1', 200),
                    ('patch', 'k1', 200), ('get', 'k2', 200),
                    ('patch', 'k2', 200), ('get', 'k3', 404)]),
            sorted(calls))
        mark = len(calls)

        # Change and remove: k1 in green, without a tier.
        self.client.patch('/v1/nodes/k1', status=200, json=[
            {'op': 'replace', 'path': '/labels/team', 'value': 'green'},
            {'op': 'remove', 'path': '/labels/tier'}])
        action = self.relabel(['k1'])
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']))
        k1, version = self.kube.node('k1')
        self.assertEqual(dict(PROTECTED, team='green', **generated), k1)
        calls = self.client.wait_for(
            lambda: (lambda a: a if len(a) >= 3 else None)(
                self.audit_after(mark)), timeout=30)
        self.assertEqual([('get', 'k1', 200), ('patch', 'k1', 200),
                          ('patch', 'k1', 200)], calls)
        mark += len(calls)

        # Nothing changed: no write (resourceVersion unchanged, GETs only).
        _, version2 = self.kube.node('k2')
        action = self.relabel(['k1', 'k2'])
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']))
        self.assertEqual((version, version2),
                         (self.kube.node('k1')[1], self.kube.node('k2')[1]))
        calls = self.client.wait_for(
            lambda: (lambda a: a if len(a) >= 2 else None)(
                self.audit_after(mark)), timeout=30)
        self.assertEqual([('get', 'k1', 200), ('get', 'k2', 200)],
                         sorted(calls))

        # The driver's credentials allow nothing but get and patch.
        driver = self.kube.driver_api()
        for call in (driver.list_node, lambda: driver.delete_node('k2')):
            e = self.assertRaises(k8s_client.ApiException, call)
            self.assertEqual(403, e.status)

    def test_api_server_stopped_mid_action(self):
        for name in ('k1', 'k2'):
            self.kube.create_node(name, {'kubernetes.io/hostname': name})
        self.deploy(['k1', 'k2'])
        # The API server stops answering with the requests in flight,
        # then dies: each node fails within [labels]request_timeout.
        self.kube.freeze()
        action = self.client.post('/v1/actions', status=201, json={
            'name': 'update_labels',
            'parameters': {'target_nodes': ['k1', 'k2']}}).json()
        self.client.wait_for(lambda: self.client.get(
            '/v1/actions/%s' % action['uuid'],
            status=200).json()['state'] == 'running', timeout=60)
        self.kube.kill()
        action = self.client.wait_for_action(action['uuid'], timeout=120)
        self.assertEqual(('failed', 'failed'),
                         (action['state'], action['result']))
        self.assertEqual(['k1', 'k2'], action['report']['not_relabeled'])
        for name, (status, reason) in self.node_reasons(action).items():
            self.assertEqual('failed', status, name)
            self.assertIn('Label update of node %s failed' % name, reason)
            self.assertIn('Kubernetes API https://127.0.0.1:%d'
                          % self.kube.port, reason)
        # The service itself is unharmed.
        self.assertEqual(200, self.client.get('/v1/nodes').status_code)


class TestKubeFixtureFailure(base.FunctionalTestCase):
    """A build that cannot run fails the tests with its reason (no skip)."""

    def test_build_failure_is_an_error(self):
        root = self.log_dir
        os.makedirs(os.path.join(root, 'tools'))
        with open(os.path.join(root, 'tools',
                               'build-kube-apiserver.sh'), 'w') as f:
            f.write('echo "E: Unable to find a source package for '
                    'kubernetes" >&2\nexit 1\n')
        self.useFixture(fixtures.MonkeyPatch(
            'baremetal_orch_testing.fixtures.kubernetes.repo_root',
            lambda: root))
        fixture = kubernetes.KubeAPIServer()
        e = self.assertRaises(testtools.MultipleExceptions, fixture.setUp)
        self.assertIs(kubernetes.KubeError, e.args[0][0])
        text = str(e.args[0][1])
        self.assertIn('kube-apiserver could not be built', text)
        self.assertIn('Unable to find a source package for kubernetes', text)
