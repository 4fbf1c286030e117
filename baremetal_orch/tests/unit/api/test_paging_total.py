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
"""Paging is total: with every documented sort_key of every list call, in
both directions, following ``next`` returns every row exactly once, rows
whose sort value is null (or equal to another's) included.

Before: ``sort_key=name`` ascending showed 3 of 38 nodes when one had no
name; rows with a null value were skipped, or repeated, past the marker.
"""

import urllib.parse

from baremetal_orch.api.controllers.v1 import actions
from baremetal_orch.api.controllers.v1 import chassis
from baremetal_orch.api.controllers.v1 import deployments
from baremetal_orch.api.controllers.v1 import events
from baremetal_orch.api.controllers.v1 import nodes
from baremetal_orch.api.controllers.v1 import ports
from baremetal_orch.api.controllers.v1 import strategies
from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import deployment as deployment_obj
from baremetal_orch.tests import base

#: Small pages, so that a marker falls among the nulls and among equals.
LIMIT = 2


def _strategy(name):
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': name},
            'data': {'groups': [{'name': 'a', 'critical': True,
                                 'depends_on': [], 'selectors': []}]}}


class TotalPagingTestCase(base.ApiTestCase):

    def setUp(self):
        super().setUp()
        # Nodes: names, racks, shards and groups null, equal or distinct;
        # half of them updated (updated_at null for the others).
        values = [None, 'r1', None, 'r1', 'r0', None, 'r2', 'r1', None]
        self.nodes = []
        for i, rack in enumerate(values):
            node = self.create_node(
                name=None if i % 3 == 0 else 'n%d' % i,
                rack_name=rack, shard=values[-1 - i],
                conductor_group=rack and rack.upper(),
                provision_state=('enroll', 'manageable')[i % 2],
                driver='fake')
            if i % 2:
                dbapi.update_node(node.uuid, {'extra': {'i': i}})
            self.nodes.append(node)
        for i in range(5):
            row = dbapi.create_chassis({'description': None})
            if i % 2:
                dbapi.update_chassis(row.uuid, {'description': 'd'})
        for i, node in enumerate(self.nodes[:5]):
            row = dbapi.create_port({'node_id': node.id,
                                     'address': '52:54:00:00:00:%02x' % i})
            if i % 2:
                dbapi.update_port(row.uuid, {'extra': {'i': i}})
        for i in range(5):
            row = dbapi.create_action({
                'name': ('deploy_site', 'update_site')[i % 2],
                'state': ('complete', 'failed')[i // 3],
                'parameters': {}, 'progress': {}})
            if i % 2:
                dbapi.update_action(row.uuid, {'result': 'success'})
        for i, node in enumerate(self.nodes[:5]):
            record, _token = deployment_obj.create(node, None,
                                                   'test-conductor')
            if i % 2:
                dbapi.update_deployment(record.uuid, {'status': 'COMPLETE'})
        for i in range(5):
            dbapi.create_event('action.start', resource_uuid=None)
        for i in range(5):
            dbapi.create_strategy('s%d' % i, _strategy('s%d' % i))

    def walk(self, path, key, ident, sort_key, sort_dir):
        url = '%s?%s' % (path, urllib.parse.urlencode({
            'limit': LIMIT, 'sort_key': sort_key, 'sort_dir': sort_dir}))
        seen = []
        for _page in range(100):
            resp = self.get(url, status=200)
            seen.extend(item[ident] for item in resp.json[key])
            if 'next' not in resp.json:
                return seen
            parts = urllib.parse.urlsplit(resp.json['next'])
            url = '%s?%s' % (parts.path, parts.query)
        self.fail('%s never ended' % path)

    def check(self, path, key, sort_keys, ident='uuid'):
        everything = self.get('%s?limit=1000' % path,
                              status=200).json[key]
        expected = sorted(item[ident] for item in everything)
        self.assertGreaterEqual(len(expected), 5)
        for sort_key in sort_keys:
            walks = {}
            for sort_dir in ('asc', 'desc'):
                with self.subTest(path=path, sort_key=sort_key,
                                  sort_dir=sort_dir):
                    seen = self.walk(path, key, ident, sort_key, sort_dir)
                    self.assertEqual(len(expected), len(seen), seen)
                    self.assertEqual(expected, sorted(seen))
                    walks[sort_dir] = seen
            # One order, read both ways (nulls first ascending).
            self.assertEqual(walks['asc'], walks['desc'][::-1],
                             '%s sort_key=%s' % (path, sort_key))

    def test_nodes(self):
        self.check('/v1/nodes', 'nodes', nodes.SORT_KEYS)

    def test_chassis(self):
        self.check('/v1/chassis', 'chassis', chassis.SORT_KEYS)

    def test_ports(self):
        self.check('/v1/ports', 'ports', ports.SORT_KEYS)

    def test_actions(self):
        self.check('/v1/actions', 'actions', actions.SORT_KEYS)

    def test_deployments(self):
        self.check('/v1/deployments', 'deployments', deployments.SORT_KEYS)

    def test_events(self):
        self.check('/v1/events', 'events', events.SORT_KEYS)

    def test_strategies(self):
        self.check('/v1/deployment_strategies', 'deployment_strategies',
                   strategies.SORT_KEYS, ident='name')
