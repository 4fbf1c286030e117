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
"""Concurrent updates and deletes of one row on real MariaDB and
PostgreSQL: a request that loses the race gets NotFound (404), never a
StaleDataError (500), and of several deletes of one row exactly one
succeeds (found by the notification catalogue test over HTTP)."""

import threading

import testscenarios

from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.db import migration
from baremetal_orch.tests.functional import base
from baremetal_orch.tests.functional.fixtures import databases

load_tests = testscenarios.load_tests_apply_scenarios

ROUNDS = 8
THREADS = 6


class TestRowRaces(base.FunctionalTestCase):

    scenarios = [('mysql', {'backend': 'mysql'}),
                 ('postgresql', {'backend': 'postgresql'})]

    def setUp(self):
        super().setUp()
        databases.use_database(self, self.backend)
        migration.upgrade()

    def race(self, calls):
        """Run the calls at once; the outcome of each: 'ok', the name of
        the exception class."""
        barrier = threading.Barrier(len(calls))
        outcomes = [None] * len(calls)

        def run(i, call):
            barrier.wait(30)
            try:
                call()
                outcomes[i] = 'ok'
            except Exception as e:
                outcomes[i] = type(e).__name__
        threads = [threading.Thread(target=run, args=(i, c))
                   for i, c in enumerate(calls)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        return outcomes

    def check(self, outcomes, deletes, not_found):
        self.assertEqual(1, outcomes[:deletes].count('ok'), outcomes)
        self.assertEqual(set(), set(outcomes) - {'ok', not_found},
                         outcomes)

    def node(self, name, **values):
        return dbapi.create_node(dict({'name': name, 'driver': 'fake',
                                       'provision_state': 'enroll'},
                                      **values))

    def test_port(self):
        node = self.node('n')
        for r in range(ROUNDS):
            port = dbapi.create_port({'node_id': node.id,
                                      'address': '52:54:00:00:00:%02x' % r})
            deletes = THREADS // 2
            calls = [lambda: dbapi.destroy_port(port.uuid)] * deletes + [
                (lambda i=i: dbapi.update_port(port.uuid, {'extra': {
                    'i': i}})) for i in range(THREADS - deletes)]
            self.check(self.race(calls), deletes, 'PortNotFound')
            self.assertRaises(exception.PortNotFound, dbapi.get_port,
                              port.uuid)

    def test_chassis(self):
        for r in range(ROUNDS):
            chassis = dbapi.create_chassis({'description': 'c%d' % r})
            calls = [lambda: dbapi.destroy_chassis(chassis.uuid)] + [
                (lambda i=i: dbapi.update_chassis(
                    chassis.uuid, {'description': 'd%d' % i}))
                for i in range(THREADS - 1)]
            self.check(self.race(calls), 1, 'ChassisNotFound')

    def test_node_with_tags_and_labels(self):
        for r in range(ROUNDS):
            node = self.node('race-%d' % r, tags=['a'], labels={'k': 'v'})
            deletes = 2
            calls = [lambda: dbapi.destroy_node(node.uuid)] * deletes + [
                (lambda i=i: dbapi.update_node(node.uuid, {
                    'tags': ['t%d' % i], 'labels': {'k': str(i)},
                    'name': 'race-%d-%d' % (r, i)}))
                for i in range(THREADS - deletes)]
            self.check(self.race(calls), deletes, 'NodeNotFound')
            self.assertEqual([], dbapi.list_nodes(
                {'names': ['race-%d' % r] + ['race-%d-%d' % (r, i)
                                             for i in range(THREADS)]}))
