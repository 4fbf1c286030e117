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
"""Concurrent PATCHes lose no update and JSON patch ``test`` holds, for
every PATCH-able resource (nodes, chassis, ports, services), with real
threads through the WSGI application on sqlite.

Before: a PATCH read the resource, applied the patch and wrote the result
in separate transactions: of 16 concurrent ``add /tags/-`` most tags were
lost, and of 8 concurrent ``[test /extra/v == 0, replace /extra/v i]``
several succeeded.
"""

import threading

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base

WRITERS = 16
RACERS = 8
#: Seconds a thread may take before the test fails (a hang).
HANG = 120


class ConcurrentPatchTestCase(base.ApiTestCase):

    def setUp(self):
        super().setUp()
        self.node = self.post('/v1/nodes', {'driver': 'fake', 'name': 'n1',
                                            'extra': {'v': 0}},
                              status=201).json
        self.chassis = self.post('/v1/chassis', {'extra': {'v': 0}},
                                 status=201).json
        self.port = self.post('/v1/ports', {
            'address': '52:54:00:00:00:01', 'node_uuid': self.node['uuid'],
            'extra': {'v': 0}}, status=201).json
        dbapi.register_service('cond-a')

    def concurrently(self, path, patches):
        """PATCH ``path`` with each patch, all threads let go at once;
        the answers' statuses, in the patches' order."""
        barrier = threading.Barrier(len(patches))
        statuses = [None] * len(patches)

        def run(i):
            barrier.wait()
            statuses[i] = self.patch(path, patches[i]).status_int

        threads = [threading.Thread(target=run, args=(i,), daemon=True)
                   for i in range(len(patches))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(HANG)
            self.assertFalse(thread.is_alive(), 'a PATCH hung')
        return statuses

    def check_no_update_lost(self, path):
        statuses = self.concurrently(path, [
            [{'op': 'add', 'path': '/extra/k%d' % i, 'value': i}]
            for i in range(WRITERS)])
        self.assertEqual([200] * WRITERS, statuses)
        extra = self.get(path, status=200).json['extra']
        self.assertEqual({'k%d' % i: i for i in range(WRITERS)},
                         {k: v for k, v in extra.items() if k != 'v'})

    def check_test_holds(self, path, test_path='/extra/v', first=0):
        for value in range(first + 1, first + 4):
            statuses = self.concurrently(path, [
                [{'op': 'test', 'path': test_path, 'value': value - 1},
                 {'op': 'replace', 'path': test_path, 'value': value}]
                for _i in range(RACERS)])
            self.assertEqual(1, statuses.count(200), statuses)
            self.assertEqual(RACERS - 1, statuses.count(409), statuses)
            doc = self.get(path, status=200).json
            self.assertEqual(value, doc[test_path.split('/')[1]]['v'])

    def test_node_tags_and_extra(self):
        path = '/v1/nodes/%s' % self.node['uuid']
        statuses = self.concurrently(path, [
            [{'op': 'add', 'path': '/tags/-', 'value': 't%02d' % i},
             {'op': 'add', 'path': '/extra/k%d' % i, 'value': i}]
            for i in range(WRITERS)])
        self.assertEqual([200] * WRITERS, statuses)
        node = self.get(path, status=200).json
        self.assertEqual(['t%02d' % i for i in range(WRITERS)],
                         sorted(node['tags']))
        self.assertEqual(dict({'k%d' % i: i for i in range(WRITERS)}, v=0),
                         node['extra'])

    def test_node_test_op(self):
        self.check_test_holds('/v1/nodes/%s' % self.node['uuid'])

    def test_chassis(self):
        path = '/v1/chassis/%s' % self.chassis['uuid']
        self.check_no_update_lost(path)
        self.check_test_holds(path)

    def test_port(self):
        path = '/v1/ports/%s' % self.port['uuid']
        self.check_no_update_lost(path)
        self.check_test_holds(path)

    def test_service(self):
        path = '/v1/services/cond-a'
        statuses = self.concurrently(path, [
            [{'op': 'test', 'path': '/disabled', 'value': False},
             {'op': 'replace', 'path': '/disabled', 'value': True},
             {'op': 'replace', 'path': '/disabled_reason',
              'value': 'r%d' % i}]
            for i in range(RACERS)])
        self.assertEqual(1, statuses.count(200), statuses)
        self.assertEqual(RACERS - 1, statuses.count(409), statuses)
        winner = statuses.index(200)
        self.assertEqual('r%d' % winner,
                         dbapi.get_service('cond-a').disabled_reason)
