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
"""Tests of the shared poller: the decision from a table, then real
threads waiting on the fake Ironic."""

import threading
import types

from baremetal_orch.common import exception
from baremetal_orch.ironic import client as ironic_client
from baremetal_orch.ironic import poller
from baremetal_orch.tests import base as test_base
from baremetal_orch.tests.unit.ironic import base


class TestUseListing(test_base.TestCase):

    # (nodes waited on, nodes of the last listing, listing?)
    TABLE = [
        (0, None, False),
        (poller.MIN_WAITING - 1, None, False),   # a few: GETs
        (poller.MIN_WAITING - 1, 1, False),
        (poller.MIN_WAITING, None, True),        # no listing seen yet
        (25, 250, True),                         # P7's shards
        (4, 160, True),                          # 4 * 40 == 160
        (4, 161, False),                         # just above
        (20, 10000, False),                      # a few in a big shard
        (250, 10000, True),
    ]

    def test_table(self):
        for waiting, shard_size, expected in self.TABLE:
            self.assertEqual(expected,
                             poller.use_listing(waiting, shard_size),
                             (waiting, shard_size))


class FakeClock:

    def __init__(self):
        self.now = 100.0
        self.slept = []

    def __call__(self):
        self.now += 0.001
        return self.now

    def sleep(self, seconds):
        self.slept.append(round(seconds, 3))
        self.now += seconds


class TestStatePoller(test_base.TestCase):
    """One thread, a fake clock: which requests, how fresh."""

    def setUp(self):
        super().setUp()
        self.states = {'u%d' % i: 'cleaning' for i in range(8)}
        self.calls = []
        self.clock = FakeClock()
        self.poller = poller.StatePoller(self._list, self._get, spacing=0.5,
                                         clock=self.clock,
                                         sleep=self.clock.sleep)

    def _list(self, fields):
        self.calls.append('list')
        self.assertEqual(list(poller.FIELDS), fields)
        return [{'uuid': u, 'provision_state': s}
                for u, s in self.states.items() if not u.startswith('x')]

    def _get(self, uuid, fields):
        self.calls.append('get %s' % uuid)
        return {'uuid': uuid, 'provision_state': self.states[uuid]}

    def test_few_waiters_get_their_node(self):
        self.poller.register('u1')
        node, _since = self.poller.node('u1')
        self.assertEqual('cleaning', node['provision_state'])
        self.assertEqual(['get u1'], self.calls)

    def test_many_waiters_share_a_listing(self):
        for uuid in self.states:
            self.poller.register(uuid)
        looks = {}
        for uuid in self.states:
            looks[uuid] = self.poller.node(uuid)
        # The first look of each came after its call: one listing each,
        # the later ones spaced.
        self.assertEqual(['list'] * 8, self.calls)
        self.assertEqual(7, len(self.clock.slept))
        for seconds in self.clock.slept:
            self.assertTrue(0.49 <= seconds <= 0.5, self.clock.slept)
        # Next looks: any listing newer than each one's last. u7's is
        # newer than u0's last look: no request.
        self.calls.clear()
        self.states['u0'] = 'available'
        node, _since = self.poller.node('u0', looks['u0'][1])
        self.assertEqual('cleaning', node['provision_state'])
        self.assertEqual([], self.calls)
        # u7 saw the newest: a new listing, which u0 gets too.
        self.poller.node('u7', looks['u7'][1])
        self.assertEqual(['list'], self.calls)
        node, _since = self.poller.node('u0', looks['u0'][1])
        self.assertEqual('available', node['provision_state'])
        self.assertEqual(['list'], self.calls)

    def test_never_older_than_the_last_look(self):
        for uuid in self.states:
            self.poller.register(uuid)
        first, since = self.poller.node('u0')
        self.states['u0'] = 'available'
        # The same caller again: the listing it saw is not new to it.
        second, since2 = self.poller.node('u0', since)
        self.assertEqual(('cleaning', 'available'),
                         (first['provision_state'],
                          second['provision_state']))
        self.assertGreater(since2, since)
        self.assertEqual(['list', 'list'], self.calls)

    def test_a_node_not_listed_is_fetched_alone(self):
        self.states['x-moved'] = 'active'
        for uuid in self.states:
            self.poller.register(uuid)
        node, _since = self.poller.node('x-moved')
        self.assertEqual('active', node['provision_state'])
        self.assertEqual(['list', 'get x-moved'], self.calls)

    def test_a_refused_listing_falls_back_to_gets(self):
        def broken(fields):
            self.calls.append('list')
            raise ironic_client.IronicRequestFailed(
                request='GET /nodes', reason='HTTP 400', status_code=400)
        self.poller._list_nodes = broken
        for uuid in self.states:
            self.poller.register(uuid)
        node, _since = self.poller.node('u3')
        self.assertEqual('cleaning', node['provision_state'])
        self.assertEqual(['list', 'get u3'], self.calls)

    def test_a_listing_ironic_did_not_answer_fails_its_waiters(self):
        # The client rode the outage out already: no GET per node.
        def broken(fields):
            self.calls.append('list')
            raise ironic_client.IronicUnreachable(
                request='GET /nodes', reason='Ironic did not answer')
        self.poller._list_nodes = broken
        for uuid in self.states:
            self.poller.register(uuid)
        self.assertRaises(ironic_client.IronicUnreachable,
                          self.poller.node, 'u3')
        self.assertEqual(['list'], self.calls)

    def test_a_big_shard_is_not_listed_for_a_few(self):
        for i in range(1000):
            self.states['u%d' % i] = 'active'
        for i in range(8):
            self.poller.register('u%d' % i)
        self.poller.node('u0')                # no size known: a listing
        self.poller.node('u1')                # 8 * 40 < 1000: a GET
        self.assertEqual(['list', 'get u1'], self.calls)

    def test_unregister(self):
        for uuid in self.states:
            self.poller.register(uuid)
        self.poller.register('u0')
        for uuid in self.states:
            self.poller.unregister(uuid)
        self.assertEqual({'u0': 1}, self.poller._waiting)
        self.poller.unregister('u0')
        self.assertEqual({}, self.poller._waiting)


class TestWaitsShareListings(base.IronicTestCase):
    """Many wait_for_state at once on the fake Ironic: listings, not a GET
    per node and poll."""

    NODES = 20

    def setUp(self):
        super().setUp()
        self.config(group='ironic', shard_key='s1', poll_interval=0.05)
        self.uuids = [self.ironic.add_node('n%d' % i, shard='s1',
                                           provision_state='manageable')[
            'uuid'] for i in range(self.NODES)]
        self.ironic.add_node('other', shard='s2')
        self.client = ironic_client.IronicClient()

    def _wait_all(self, uuids, target, wanted, fail_states=()):
        results, barrier = {}, threading.Barrier(len(uuids))

        def one(uuid):
            barrier.wait()
            try:
                results[uuid] = self.client.wait_for_state(
                    uuid, (wanted,), 10, fail_states=fail_states)[
                        'provision_state']
            except exception.BaremetalOrchException as exc:
                results[uuid] = exc
        for uuid in uuids:
            self.client.set_provision_state(uuid, target)
        threads = [threading.Thread(target=one, args=(u,)) for u in uuids]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        return results

    def test_every_node_reaches_its_state(self):
        results = self._wait_all(self.uuids, 'provide', 'available')
        self.assertEqual({u: 'available' for u in self.uuids}, results)
        listings = self.ironic.listings()
        gets = [r for r in self.ironic.requests('GET')
                if r[1].startswith('/v1/nodes/')]
        # Each node took several polls (cleaning, clean wait, available):
        # a GET per node and poll would be 3 x 20 requests or more.
        self.assertLess(len(listings) + len(gets), self.NODES)
        for _m, _p, query, _h in listings:
            self.assertEqual('s1', query['shard'])
        self.assertEqual({'list': len(listings), 'get': len(gets)},
                         self.client.poller.requests)

    def test_failures_and_moved_nodes(self):
        self.ironic.fail[self.uuids[0]] = ('provide', 'clean failed',
                                           'BMC unreachable')
        # Moved to another shard while being waited on: fetched alone.
        self.ironic.nodes[self.uuids[1]]['shard'] = 's2'
        results = self._wait_all(self.uuids, 'provide', 'available',
                                 fail_states=('clean failed',))
        self.assertIsInstance(results[self.uuids[0]],
                              exception.ProvisioningFailed)
        self.assertIn('BMC unreachable', str(results[self.uuids[0]]))
        self.assertEqual('available', results[self.uuids[1]])
        self.assertGreater(self.client.poller.requests['get'], 0)
        self.assertEqual({u: 'available' for u in self.uuids[2:]},
                         {u: results[u] for u in self.uuids[2:]})

    def test_the_driver_checks_scope_from_the_listing(self):
        from baremetal_orch.drivers.provisioning import ironic as driver_mod

        driver = driver_mod.IronicDriver(client=self.client)
        nodes = [types.SimpleNamespace(ident='n%d' % i, ironic_uuid=u)
                 for i, u in enumerate(self.uuids)]
        # One node moved to another shard: refused, as with a GET.
        self.ironic.nodes[self.uuids[-1]]['shard'] = 's2'
        results, barrier = {}, threading.Barrier(len(nodes))

        # The prepare phase of manageable nodes: provide.
        def provide(node):
            barrier.wait()
            try:
                driver.provide(node, 10)
                results[node.ident] = 'available'
            except exception.BaremetalOrchException as exc:
                results[node.ident] = type(exc).__name__
        threads = [threading.Thread(target=provide, args=(n,))
                   for n in nodes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        expected = {n.ident: 'available' for n in nodes[:-1]}
        expected[nodes[-1].ident] = 'NodeNotInShard'
        self.assertEqual(expected, results)
        gets = [r for r in self.ironic.requests('GET')
                if r[1].startswith('/v1/nodes/')]
        puts = self.ironic.requests('PUT')
        self.assertEqual(self.NODES - 1, len(puts))
        # A GET per node would be 19 for the checks alone, and as many
        # per poll.
        self.assertLess(len(gets) + len(self.ironic.listings()),
                        self.NODES)
