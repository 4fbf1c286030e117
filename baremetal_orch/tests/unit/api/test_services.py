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
"""/v1/services: listing, JSON patches and who may do what."""

import datetime

from oslo_utils import timeutils

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base

FIELDS = {'host', 'binary', 'shard_key', 'conductor_group', 'forced_down',
          'disabled', 'disabled_reason', 'alive', 'last_seen_at',
          'created_at', 'updated_at', 'links'}


class TestServicesApi(base.ApiTestCase):

    def setUp(self):
        super().setUp()
        self.config(group='conductor', heartbeat_timeout=60)
        dbapi.register_service('cond-a', shard_key='shard-a',
                               conductor_group='g1')
        dbapi.register_service('cond-b')

    def _services(self, persona='system_admin'):
        resp = self.get('/v1/services', persona=persona, status=200)
        return {s['host']: s for s in resp.json['services']}

    def test_list_documents(self):
        services = self._services()
        # The in-process conductor of the test base registered itself.
        self.assertEqual({'cond-a', 'cond-b', 'test-conductor'},
                         set(services))
        doc = services['cond-a']
        self.assertEqual(FIELDS, set(doc))
        self.assertEqual(
            ('cond-a', 'baremetal-orch-conductor', 'shard-a', 'g1', False,
             False, None, True),
            (doc['host'], doc['binary'], doc['shard_key'],
             doc['conductor_group'], doc['forced_down'], doc['disabled'],
             doc['disabled_reason'], doc['alive']))
        self.assertIsNotNone(doc['last_seen_at'])
        self.assertTrue(doc['links'][0]['href'].endswith(
            '/v1/services/cond-a'))

    def test_alive_table(self):
        old = timeutils.utcnow() - datetime.timedelta(seconds=61)
        dbapi.update_service('cond-b', {'last_seen_at': old})
        dbapi.register_service('cond-c')
        dbapi.update_service('cond-c', {'forced_down': True})
        dbapi.register_service('cond-d')
        dbapi.update_service('cond-d', {'disabled': True})
        services = self._services()
        self.assertEqual(
            {'cond-a': True,       # fresh heartbeat
             'cond-b': False,      # heartbeat older than the timeout
             'cond-c': False,      # forced down, even with a heartbeat
             'cond-d': True},      # disabled services still run
            {h: services[h]['alive'] for h in ('cond-a', 'cond-b',
                                               'cond-c', 'cond-d')})

    def test_fields(self):
        resp = self.get('/v1/services?fields=host,alive', status=200)
        self.assertEqual({'host', 'alive', 'links'},
                         set(resp.json['services'][0]))
        self.assertError(self.get('/v1/services?fields=nope'), 400)
        self.assertError(self.get('/v1/services?shard=x'), 400)

    def test_get_one(self):
        doc = self.get('/v1/services/cond-a', status=200).json
        self.assertEqual('shard-a', doc['shard_key'])
        self.assertError(self.get('/v1/services/nope'), 404,
                         'baremetal_orch.service.not_found')

    def test_readers_may_list_others_may_not(self):
        self.assertIn('cond-a', self._services('system_reader'))
        self.get('/v1/services/cond-a', persona='system_reader', status=200)
        for persona in ('project_admin', 'project_member',
                        'project_reader'):
            self.assertError(self.get('/v1/services', persona=persona), 403)

    def test_only_system_admin_may_patch(self):
        patch = [{'op': 'replace', 'path': '/forced_down', 'value': True}]
        for persona in ('system_reader', 'project_admin', 'project_member',
                        'project_reader'):
            self.assertError(self.patch('/v1/services/cond-a', patch,
                                        persona=persona), 403)
        self.assertFalse(dbapi.get_service('cond-a').forced_down)
        self.patch('/v1/services/cond-a', patch, status=200)
        self.assertTrue(dbapi.get_service('cond-a').forced_down)

    def test_patch_unknown_host(self):
        self.assertError(self.patch(
            '/v1/services/nope',
            [{'op': 'replace', 'path': '/disabled', 'value': True}]),
            404, 'baremetal_orch.service.not_found')

    def test_force_down_and_back(self):
        doc = self.patch('/v1/services/cond-a', [
            {'op': 'replace', 'path': '/forced_down', 'value': True}],
            status=200).json
        self.assertEqual((True, False), (doc['forced_down'], doc['alive']))
        doc = self.patch('/v1/services/cond-a', [
            {'op': 'replace', 'path': '/forced_down', 'value': False}],
            status=200).json
        self.assertEqual((False, True), (doc['forced_down'], doc['alive']))
        self.assertFalse(dbapi.get_service('cond-a').forced_down)

    def test_disable_with_reason_then_enable_clears_it(self):
        doc = self.patch('/v1/services/cond-b', [
            {'op': 'replace', 'path': '/disabled', 'value': True},
            {'op': 'replace', 'path': '/disabled_reason',
             'value': 'moving shard'}], status=200).json
        self.assertEqual((True, 'moving shard'),
                         (doc['disabled'], doc['disabled_reason']))
        row = dbapi.get_service('cond-b')
        self.assertEqual((True, 'moving shard'),
                         (row.disabled, row.disabled_reason))
        doc = self.patch('/v1/services/cond-b', [
            {'op': 'replace', 'path': '/disabled', 'value': False}],
            status=200).json
        self.assertEqual((False, None),
                         (doc['disabled'], doc['disabled_reason']))
        self.assertIsNone(dbapi.get_service('cond-b').disabled_reason)

    def test_bad_patches(self):
        cases = [
            ('not a list', {'forced_down': True}),
            ('read-only host', [{'op': 'replace', 'path': '/host',
                                 'value': 'x'}]),
            ('read-only shard_key', [{'op': 'replace', 'path': '/shard_key',
                                      'value': 'x'}]),
            ('read-only alive', [{'op': 'replace', 'path': '/alive',
                                  'value': False}]),
            ('read-only binary', [{'op': 'replace', 'path': '/binary',
                                   'value': 'x'}]),
            ('unknown field', [{'op': 'add', 'path': '/color',
                                'value': 'red'}]),
            ('not a boolean', [{'op': 'replace', 'path': '/forced_down',
                                'value': 'yes'}]),
            ('removed flag', [{'op': 'remove', 'path': '/disabled'}]),
            ('reason too long', [
                {'op': 'replace', 'path': '/disabled', 'value': True},
                {'op': 'replace', 'path': '/disabled_reason',
                 'value': 'x' * 256}]),
            ('reason on an enabled service', [
                {'op': 'replace', 'path': '/disabled_reason',
                 'value': 'why'}]),
            ('unknown op', [{'op': 'frobnicate', 'path': '/disabled'}]),
            ('failed test op', [{'op': 'test', 'path': '/disabled',
                                 'value': True}]),
        ]
        for name, patch in cases:
            resp = self.patch('/v1/services/cond-a', patch)
            # A test that fails: the patch conflicts with the state.
            self.assertEqual(409 if name == 'failed test op' else 400,
                             resp.status_int, '%s: %s' % (name, resp.text))
        self.assertError(self.patch('/v1/services/cond-a', b'{nope'), 400)
        row = dbapi.get_service('cond-a')
        self.assertEqual((False, False, None, 'shard-a'),
                         (row.forced_down, row.disabled, row.disabled_reason,
                          row.shard_key))

    def test_listed_in_v1_root(self):
        root = self.get('/v1', status=200).json
        self.assertIn('services', root)
        self.assertIn('shards', root)
