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
"""Conductor services and shards."""

from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from baremetal_orch_tempest_plugin.tests import base


class TestServicesAndShards(base.BaremetalOrchTest):

    @decorators.idempotent_id('0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f1')
    def test_a_live_conductor_is_listed(self):
        _, body = self.admin.list('services')
        alive = [s for s in body['services'] if s['alive']]
        self.assertNotEqual([], alive, body)
        service = alive[0]
        self.assertEqual('baremetal-orch-conductor', service['binary'])
        _, shown = self.admin.show('services', service['host'])
        self.assertEqual(service['host'], shown['host'])
        # A no-op update (the service stays enabled) answers the service.
        _, updated = self.admin.update_service(service['host'], [
            {'op': 'replace', 'path': '/disabled',
             'value': service['disabled']}])
        self.assertEqual(service['disabled'], updated['disabled'])
        self.assertRaises(lib_exc.NotFound, self.admin.show, 'services',
                          self.name('no-such-host'))

    @decorators.idempotent_id('0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f2')
    def test_shards_count_nodes(self):
        shard = self.name('shard')
        for _ in range(2):
            self.create_node(name=self.name('sh'), shard=shard)
        _, body = self.admin.list('shards')
        counts = {s['name']: s['count'] for s in body['shards']}
        self.assertEqual(2, counts.get(shard), body)
        _, body = self.admin.list('nodes', shard=shard)
        self.assertEqual(2, len(body['nodes']))
