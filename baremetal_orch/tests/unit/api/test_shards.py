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
"""/v1/shards: node counts per shard."""

from baremetal_orch.tests import base


class TestShardsApi(base.ApiTestCase):

    def _nodes(self, shards):
        for i, shard in enumerate(shards):
            self.create_node(name='n%02d' % i, shard=shard)

    def test_empty(self):
        self.assertEqual({'shards': []},
                         self.get('/v1/shards', status=200).json)

    def test_counts_named_by_name_then_unsharded_as_null(self):
        self._nodes(['b', 'a', 'b', None, 'c', None, 'b'])
        self.assertEqual(
            [{'name': 'a', 'count': 1}, {'name': 'b', 'count': 3},
             {'name': 'c', 'count': 1}, {'name': None, 'count': 2}],
            self.get('/v1/shards', status=200).json['shards'])

    def test_a_shard_named_None_is_not_the_unsharded_nodes(self):
        self._nodes(['None', None, None])
        self.assertEqual(
            [{'name': 'None', 'count': 1}, {'name': None, 'count': 2}],
            self.get('/v1/shards', status=200).json['shards'])

    def test_no_null_entry_when_every_node_has_a_shard(self):
        self._nodes(['a', 'a'])
        self.assertEqual([{'name': 'a', 'count': 2}],
                         self.get('/v1/shards', status=200).json['shards'])

    def test_counts_follow_the_nodes(self):
        self._nodes(['a', 'a'])
        self.patch('/v1/nodes/n00', [{'op': 'replace', 'path': '/shard',
                                      'value': 'b'}], status=200)
        self.assertEqual(
            [{'name': 'a', 'count': 1}, {'name': 'b', 'count': 1}],
            self.get('/v1/shards', status=200).json['shards'])

    def test_policy(self):
        self.get('/v1/shards', persona='system_reader', status=200)
        for persona in ('project_admin', 'project_member',
                        'project_reader'):
            self.assertError(self.get('/v1/shards', persona=persona), 403)

    def test_unknown_query_parameter(self):
        self.assertError(self.get('/v1/shards?sharded=true'), 400)
