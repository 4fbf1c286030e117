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
"""The adversarial suite, data: what the second attack on the all-in-one
found in the REST layer, sent as it sent it (real sockets and threads on
127.0.0.1): lone surrogates as raw UTF-8 bytes, concurrent PATCHes, a
node renamed or deleted under a running action, and paging over rows whose
sort value is null. Each failed before its fix."""

import concurrent.futures
import threading
import urllib.parse

import requests

from baremetal_orch.api.controllers.v1 import nodes as nodes_api
from baremetal_orch.tests.functional import aio
from baremetal_orch.tests.functional import base

#: A lone surrogate (U+D800) as UTF-8 would encode it, were it allowed.
RAW = b'\xed\xa0\x80'
TIMEOUT = 60


def strategy(name, node_names):
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': name},
            'data': {'groups': [{'name': 'g', 'critical': True,
                                 'depends_on': [],
                                 'selectors': [{'node_names': node_names}]}]}}


class TestDataAttacks(base.FunctionalTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.service = cls.use_class_fixture(aio.AllInOne())
        cls.url = cls.service.url

    def setUp(self):
        super().setUp()
        self.log_offset = self.service.log_size()
        self.http = requests.Session()
        self.addCleanup(self.http.close)

    def tearDown(self):
        logged = self.service.log_since(self.log_offset)
        super().tearDown()
        self.assertNotIn(b'Traceback', logged)

    def call(self, method, path, body=None, status=None, data=None,
             http=None):
        kwargs = {'timeout': TIMEOUT}
        if data is not None:
            kwargs.update(data=data, headers={
                'Content-Type': 'application/json'})
        elif body is not None:
            kwargs['json'] = body
        resp = (http or self.http).request(method, self.url + path,
                                           **kwargs)
        if status is not None:
            self.assertEqual(status, resp.status_code,
                             '%s %s: %s' % (method, path, resp.text))
        return resp

    def node(self, name, **values):
        return self.call('POST', '/v1/nodes', dict(
            {'driver': 'fake', 'name': name}, **values), 201).json()

    def test_raw_surrogates(self):
        node = self.node('sur-1')
        path = '/v1/nodes/' + node['uuid']
        for method, target, data, field in (
                ('POST', '/v1/nodes', b'{"driver": "fake", "tags": ["'
                 + RAW + b'"]}', 'tags[0]'),
                ('POST', '/v1/nodes', b'{"driver": "fake", "rack_name": "'
                 + RAW + b'"}', 'rack_name'),
                ('POST', '/v1/nodes/filter', b'{"selectors": [{"node_tags":'
                 b' ["' + RAW + b'"]}]}', 'node_tags[0]'),
                ('POST', '/v1/chassis', b'{"description": "' + RAW + b'"}',
                 'description'),
                ('PUT', path + '/maintenance', b'{"reason": "' + RAW
                 + b'"}', 'reason'),
                ('PATCH', path, b'[{"op": "add", "path": "/extra/x", '
                 b'"value": "' + RAW + b'"}]', 'value'),
                ('POST', '/v1/deployment_strategies',
                 b'{"schema": "shipyard/DeploymentStrategy/v1", "metadata":'
                 b' {"name": "sur"}, "data": {"groups": [{"name": "'
                 + RAW + b'", "critical": true, "depends_on": [], '
                 b'"selectors": []}]}}', 'groups[0].name'),
                ('POST', '/v1/nodes', '{"driver": "fake", "rack_name": '
                 '"\ud800"}'.encode('utf-16', 'surrogatepass'), 'UTF-8')):
            resp = self.call(method, target, data=data)
            self.assertEqual(400, resp.status_code, resp.text)
            self.assertIn(field, resp.json()['errors'][0]['detail'])
        after = self.call('GET', path, status=200).json()
        self.assertFalse(after['maintenance'])
        self.assertEqual({}, self.call(
            'GET', path + '?fields=extra', status=200).json()['extra'])
        self.assertEqual(404, self.call(
            'GET', '/v1/deployment_strategies/sur').status_code)

    def race(self, calls):
        """Run the calls at once, each on a connection of its own."""
        barrier = threading.Barrier(len(calls))

        def run(call):
            with requests.Session() as http:
                barrier.wait(TIMEOUT)
                return call(http)
        with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
            return list(pool.map(run, calls))

    def test_concurrent_patches(self):
        node = self.node('race-1', extra={'v': 0})
        path = '/v1/nodes/' + node['uuid']
        for r in range(3):
            statuses = self.race([
                (lambda http, i=i: self.call('PATCH', path, [
                    {'op': 'add', 'path': '/tags/-',
                     'value': 't%d-%02d' % (r, i)},
                    {'op': 'add', 'path': '/extra/k%d_%d' % (r, i),
                     'value': i}], http=http).status_code)
                for i in range(16)])
            self.assertEqual([200] * 16, statuses)
        doc = self.call('GET', path, status=200).json()
        self.assertEqual(48, len(doc['tags']))
        self.assertEqual(49, len(doc['extra']))
        for value in range(1, 4):
            statuses = self.race([
                (lambda http, value=value: self.call('PATCH', path, [
                    {'op': 'test', 'path': '/extra/v', 'value': value - 1},
                    {'op': 'replace', 'path': '/extra/v', 'value': value}],
                    http=http).status_code)
                for _i in range(8)])
            self.assertEqual(sorted([200] + [409] * 7), sorted(statuses))

    def test_held_node_rename_and_delete(self):
        # A deploy of 30 s per phase: the action runs during the test (the
        # service is stopped, whatever it runs, at the end of the class).
        node = self.node('held-1')
        for target in ('manage', 'provide'):
            self.call('PUT', '/v1/nodes/held-1/states/provision',
                      {'target': target}, 202)
            self.wait_for(lambda: self.call(
                'GET', '/v1/nodes/held-1').json()['target_provision_state']
                is None)
        self.call('PATCH', '/v1/nodes/held-1', [
            {'op': 'add', 'path': '/driver_info/fake_duration',
             'value': 30}], 200)
        self.call('POST', '/v1/deployment_strategies',
                  strategy('held-first', ['held-1']), 201)
        first = self.call('POST', '/v1/actions', {
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'held-first'}},
            201).json()
        resp = self.call('PATCH', '/v1/nodes/held-1', [
            {'op': 'replace', 'path': '/name', 'value': 'held-2'}])
        self.assertEqual(409, resp.status_code, resp.text)
        self.assertIn(first['uuid'], resp.text)
        resp = self.call('DELETE', '/v1/nodes/' + node['uuid'])
        self.assertEqual(409, resp.status_code, resp.text)
        self.call('POST', '/v1/deployment_strategies',
                  strategy('held-second', ['held-1']), 201)
        resp = self.call('POST', '/v1/actions', {
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'held-second'}})
        self.assertEqual(409, resp.status_code, resp.text)
        self.assertEqual('running', self.call(
            'GET', '/v1/actions/' + first['uuid']).json()['state'])

    def test_paging_with_null_sort_values(self):
        uuids = set()
        for i in range(12):
            values = {'driver': 'fake'}
            if i % 3:
                values['name'] = 'page-%02d' % i
            if i % 4:
                values['rack_name'] = 'r%d' % (i % 2)
            if i % 5 == 0:
                values['shard'] = 's%d' % (i % 2)
            uuid = self.call('POST', '/v1/nodes', values, 201).json()['uuid']
            uuids.add(uuid)
            if i % 2:
                # updated_at set on half of them.
                self.call('PATCH', '/v1/nodes/' + uuid, [
                    {'op': 'add', 'path': '/extra/i', 'value': i}], 200)
        everything = {n['uuid'] for n in self.call(
            'GET', '/v1/nodes?limit=1000', status=200).json()['nodes']}
        self.assertEqual(set(), uuids - everything)
        for sort_key in nodes_api.SORT_KEYS:
            for sort_dir in ('asc', 'desc'):
                seen = []
                url = '/v1/nodes?' + urllib.parse.urlencode({
                    'limit': 3, 'sort_key': sort_key,
                    'sort_dir': sort_dir})
                while url:
                    page = self.call('GET', url, status=200).json()
                    seen.extend(n['uuid'] for n in page['nodes'])
                    parts = urllib.parse.urlsplit(page.get('next', ''))
                    url = parts.path and '%s?%s' % (parts.path, parts.query)
                self.assertEqual(sorted(everything), sorted(seen),
                                 '%s %s' % (sort_key, sort_dir))
