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

"""Unique node status and claims."""

import json
import threading

from baremetal_orch.common import exception
from baremetal_orch.deployment import tracker
from baremetal_orch.tests import base


class TestNodeTracker(base.TestCase):

    def setUp(self):
        super().setUp()
        self.t = tracker.NodeTracker(['a', 'b', 'c', 'd'])

    def test_initial(self):
        self.assertEqual(dict.fromkeys('abcd', tracker.NOT_STARTED),
                         self.t.statuses())
        t = tracker.NodeTracker(['a'], statuses={'a': tracker.SUCCESS,
                                                 'z': tracker.FAILURE})
        self.assertEqual({'a': 'success', 'z': 'failure'}, t.statuses())

    def test_claim_by_status(self):
        self.t.mark('b', tracker.PREPARED)
        self.t.mark('c', tracker.FAILURE)
        self.assertEqual(['a', 'd'], self.t.claim(
            'g1', ['a', 'b', 'c', 'd', 'a'], tracker.NOT_STARTED))
        self.assertEqual(['b'], self.t.claim('g1', 'abcd', tracker.PREPARED))

    def test_claimed_elsewhere_not_returned(self):
        self.assertEqual(['a', 'b'],
                         self.t.claim('g1', ['a', 'b'], tracker.NOT_STARTED))
        self.assertEqual(['c'], self.t.claim('g2', ['a', 'b', 'c'],
                                             tracker.NOT_STARTED))
        # The same group gets its claims back (a retried step).
        self.assertEqual(['a', 'b'],
                         self.t.claim('g1', ['a', 'b'], tracker.NOT_STARTED))
        self.assertEqual('g1', self.t.owner('a'))
        self.assertEqual(['a', 'b'], self.t.claimed_by('g1'))
        self.t.release('g1', ['a'])
        self.assertIsNone(self.t.owner('a'))
        self.assertEqual(['a'], self.t.claim('g2', ['a', 'b'],
                                             tracker.NOT_STARTED))
        # Releasing another group's claim does nothing.
        self.t.release('g1', ['a'])
        self.assertEqual('g2', self.t.owner('a'))
        self.t.release('g2')
        self.assertEqual({'b': 'g1'}, self.t.claims())

    def test_mark_and_status(self):
        self.t.mark('a', tracker.SUCCESS)
        self.assertEqual(tracker.SUCCESS, self.t.status('a'))
        self.assertRaises(exception.InvalidParameterValue, self.t.mark, 'a',
                          'done')
        self.assertRaises(exception.InvalidParameterValue, self.t.claim,
                          'g', ['a'], 'done')

    def test_unknown_node(self):
        self.assertRaises(exception.NodeNotFound, self.t.status, 'zz')
        self.assertRaises(exception.NodeNotFound, self.t.mark, 'zz',
                          tracker.SUCCESS)
        self.assertRaises(exception.NodeNotFound, self.t.claim, 'g', ['zz'],
                          tracker.NOT_STARTED)

    def test_round_trip(self):
        self.t.mark('a', tracker.PREPARED)
        self.t.claim('g1', ['a'], tracker.PREPARED)
        self.t.claim('g2', ['b'], tracker.NOT_STARTED)
        self.t.mark('c', tracker.PREPARED)
        self.t.mark('c', tracker.FAILURE)
        data = json.loads(json.dumps(self.t.to_dict()))
        again = tracker.NodeTracker.from_dict(data, dict.fromkeys('abcd'))
        self.assertEqual(self.t.to_dict(), again.to_dict())
        self.assertEqual(self.t.statuses(), again.statuses())
        self.assertEqual({'a': 'g1', 'b': 'g2'}, again.claims())
        self.assertEqual(['c'], again.failed_after_prepare())
        self.assertEqual([], again.claim('g2', ['a'], tracker.PREPARED))

    def test_statuses_written_follow_the_given_and_the_marked(self):
        t = tracker.NodeTracker('abcd', statuses={'c': tracker.SUCCESS})
        self.assertEqual('nnsn', t.to_dict()['statuses'])
        t.mark('a', tracker.PREPARED)
        t.mark('d', tracker.FAILURE)
        t.mark('c', tracker.NOT_STARTED)
        self.assertEqual('pnnf', t.to_dict()['statuses'])

    def test_a_large_site_is_a_few_bytes_a_node(self):
        # Written at every checkpoint of a running action: its size must
        # not be that of the node identifiers.
        nodes = ['%08d-0000-4000-8000-000000000000' % i
                 for i in range(10000)]
        t = tracker.NodeTracker(nodes)
        t.claim('g1', nodes[:3000], tracker.NOT_STARTED)
        for node in nodes[:2000]:
            t.mark(node, tracker.PREPARED)
        size = len(json.dumps(t.to_dict()))
        self.assertLess(size, 3 * len(nodes))
        again = tracker.NodeTracker.from_dict(
            json.loads(json.dumps(t.to_dict())), dict.fromkeys(nodes))
        self.assertEqual(t.statuses(), again.statuses())
        self.assertEqual(t.claims(), again.claims())

    def test_from_dict_refuses_what_does_not_fit(self):
        data = self.t.to_dict()
        self.assertRaisesRegex(
            exception.InvalidParameterValue, 'do not fit the 5 nodes',
            tracker.NodeTracker.from_dict, data, dict.fromkeys('abcde'))
        self.assertRaises(
            exception.InvalidParameterValue, tracker.NodeTracker.from_dict,
            dict(data, statuses='nnnx'), dict.fromkeys('abcd'))
        self.assertRaisesRegex(
            exception.InvalidParameterValue, 'does not have',
            tracker.NodeTracker.from_dict, dict(data, claims={'g': [7]}),
            dict.fromkeys('abcd'))

    def test_two_threads_claim_disjoint(self):
        names = ['n%04d' % i for i in range(2000)]
        for rounds in range(5):
            t = tracker.NodeTracker(names)
            barrier = threading.Barrier(2)
            got = {}

            def worker(group):
                barrier.wait()
                taken = []
                # Claim in small slices so the threads interleave.
                for i in range(0, len(names), 7):
                    taken += t.claim(group, names[i:i + 7],
                                     tracker.NOT_STARTED)
                got[group] = taken

            threads = [threading.Thread(target=worker, args=(g,))
                       for g in ('g1', 'g2')]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            self.assertEqual(set(), set(got['g1']) & set(got['g2']))
            self.assertEqual(sorted(names), sorted(got['g1'] + got['g2']))
            claims = t.claims()
            for group, taken in got.items():
                self.assertTrue(all(claims[n] == group for n in taken))
