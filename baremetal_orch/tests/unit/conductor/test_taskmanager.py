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
"""Node locks: exclusive across threads and hosts."""

import concurrent.futures
import threading

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.conductor import taskmanager
from baremetal_orch.db import api as dbapi
from baremetal_orch.drivers.provisioning import fake
from baremetal_orch.tests import base


class TestAcquire(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = orch_context.get_admin_context()
        self.node = self.create_node(name='n1')

    def test_lock_and_release(self):
        with taskmanager.acquire(self.ctx, 'n1', 'h1') as task:
            self.assertEqual('h1', dbapi.get_node('n1').reservation)
            self.assertEqual('h1', task.node.reservation)
            self.assertIsInstance(task.driver, fake.FakeDriver)
            self.assertRaises(exception.NodeLocked,
                              taskmanager.acquire(self.ctx, 'n1',
                                                  'h2').__enter__)
        self.assertIsNone(dbapi.get_node('n1').reservation)

    def test_released_on_error(self):
        def boom():
            with taskmanager.acquire(self.ctx, self.node.uuid, 'h1'):
                raise ValueError('boom')
        self.assertRaises(ValueError, boom)
        self.assertIsNone(dbapi.get_node('n1').reservation)

    def test_hand_over_keeps_the_lock(self):
        with taskmanager.acquire(self.ctx, 'n1', 'h1') as task:
            task.hand_over()
        self.assertEqual('h1', dbapi.get_node('n1').reservation)
        task.release()
        self.assertIsNone(dbapi.get_node('n1').reservation)
        # Releasing twice does not free a lock someone took meanwhile.
        dbapi.reserve_node('n1', 'h2')
        task.release()
        self.assertEqual('h2', dbapi.get_node('n1').reservation)

    def test_unknown_node(self):
        self.assertRaises(exception.NodeNotFound,
                          taskmanager.acquire(self.ctx, 'nope',
                                              'h1').__enter__)

    def test_exclusive_across_threads(self):
        """Many threads race for one node.

        Exactly one holds it at a time, the others get NodeLocked; once
        released it can be taken again.
        """
        contenders = 6
        start = threading.Barrier(contenders)
        done_trying = threading.Barrier(contenders)
        holders = []
        lock = threading.Lock()

        def contend(i):
            host = 'host-%d' % i
            start.wait(30)
            try:
                ctx_mgr = taskmanager.acquire(self.ctx, 'n1', host)
                ctx_mgr.__enter__()
            except exception.NodeLocked:
                done_trying.wait(30)
                return 'locked'
            with lock:
                holders.append(host)
            # Hold the lock until every contender has tried.
            done_trying.wait(30)
            self.assertEqual(host, dbapi.get_node('n1').reservation)
            ctx_mgr.__exit__(None, None, None)
            return 'held'

        with concurrent.futures.ThreadPoolExecutor(contenders) as pool:
            results = list(pool.map(contend, range(contenders)))
        self.assertEqual(1, results.count('held'), results)
        self.assertEqual(contenders - 1, results.count('locked'))
        self.assertEqual(1, len(holders))
        self.assertIsNone(dbapi.get_node('n1').reservation)
        with taskmanager.acquire(self.ctx, 'n1', 'late'):
            self.assertEqual('late', dbapi.get_node('n1').reservation)
