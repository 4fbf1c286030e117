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
"""The window and the queue in front of Ironic's limits, on a fake clock."""

import threading

from baremetal_orch.ironic import throttle
from baremetal_orch.tests import base


class FakeClock:

    def __init__(self):
        self.now = 50.0

    def __call__(self):
        return self.now


class FakeIronicLimit:
    """Ironic's limit: accepts while fewer than ``limit`` deploy."""

    def __init__(self, limit):
        self.limit = limit
        self.deploying = 0

    def ask(self):
        if self.deploying >= self.limit:
            return False
        self.deploying += 1
        return True


class TestWindow(base.TestCase):

    def setUp(self):
        super().setUp()
        self.clock = FakeClock()

    def test_steps(self):
        # (step, window size after, limit after, can send after)
        # step: 's' sent, 'a' accepted, 'r' refused, 'e' ended (freed),
        # 't+N' N seconds pass.
        table = [
            ('s', 4.0, 4, True),
            ('a', 5.0, 5, True),        # slow start: a slot per accept
            ('s', 5.0, 5, True),
            ('a', 6.0, 6, True),
            ('s', 6.0, 6, True),
            ('r', 3.0, 3, False),       # halved, never below in flight
            ('t+0.4', 3.0, 3, False),   # held off
            ('t+0.2', 3.0, 3, True),    # the hold-off is over
            ('s', 3.0, 3, False),
            ('a', 3.333, 3, False),     # additive: 1 / window
            ('e', 3.333, 3, True),
            ('s', 3.333, 3, False),
            ('a', 3.633, 3, False),
            ('e', 3.633, 3, True),
            ('s', 3.633, 3, False),
            ('a', 3.908, 3, False),
            ('e', 3.908, 3, True),
            ('s', 3.908, 3, False),
            ('a', 4.164, 4, True),      # one slot more: a probe
            ('s', 4.164, 4, False),
            ('r', 3.0, 3, False),       # refused: back to what Ironic holds
            ('e', 3.0, 3, True),        # an own deploy ended: no hold-off
        ]
        window = throttle.Window(clock=self.clock)
        for step, size, limit, can_send in table:
            if step == 's':
                window.sent()
            elif step == 'a':
                window.accepted()
            elif step == 'r':
                window.refused()
            elif step == 'e':
                window.released()
            else:
                self.clock.now += float(step[2:])
            self.assertAlmostEqual(size, window.size, places=2, msg=step)
            self.assertEqual(limit, window.limit(), step)
            self.assertEqual(can_send, window.can_send(), step)

    def test_hold_off_doubles_and_resets(self):
        window = throttle.Window(clock=self.clock)
        holds = []
        for _i in range(6):
            window.sent()
            window.refused()
            holds.append(window.held())
        self.assertEqual([0.5, 1.0, 2.0, 4.0, 8.0, 8.0], holds)
        self.assertEqual(1.0, window.size)
        self.clock.now += 8
        self.assertTrue(window.can_send())
        window.sent()
        window.accepted()
        window.sent()
        window.refused()
        self.assertEqual(0.5, window.held())   # accepted: back to 0.5

    def test_cap(self):
        # (cap, accepts, limit)
        table = [(None, 0, 4), (None, 10, 14), (2, 0, 2), (2, 10, 2),
                 (6, 10, 6)]
        for cap, accepts, limit in table:
            window = throttle.Window(cap=cap, clock=self.clock)
            for _i in range(accepts):
                window.sent()
                window.accepted()
                window.released()
            self.assertEqual(limit, window.limit(), (cap, accepts))

    def test_converges_on_ironic_limit(self):
        # A conductor deploying 60 nodes through an Ironic that takes 4 at
        # a time; a deploy ends after each round of sends.
        for limit, nodes in ((4, 60), (20, 100), (1, 10)):
            ironic = FakeIronicLimit(limit)
            window = throttle.Window(clock=self.clock)
            left, in_ironic, refusals, rounds = nodes, 0, 0, 0
            while left or in_ironic:
                rounds += 1
                self.clock.now += 10
                while left and window.can_send():
                    window.sent()
                    if ironic.ask():
                        window.accepted()
                        left -= 1
                        in_ironic += 1
                    else:
                        window.refused()
                        refusals += 1
                    self.assertLessEqual(in_ironic, limit)
                # Ironic always full while nodes are left.
                if left:
                    self.assertEqual(limit, in_ironic, (limit, rounds))
                if in_ironic:
                    ironic.deploying -= 1
                    in_ironic -= 1
                    window.released()
            # About one refusal per window of deploys, not per node.
            self.assertLessEqual(refusals, nodes // limit + 4,
                                 (limit, refusals))


class TestThrottle(base.TestCase):

    def test_fifo_and_refused_back_to_the_head(self):
        queue = throttle.Throttle(cap=1)
        first = queue.acquire()
        order = []
        started = []

        def waiter(name):
            started.append(name)
            slot = queue.acquire()
            order.append(name)
            slot.accept()
            slot.release()

        threads = []
        for name in ('b', 'c'):
            thread = threading.Thread(target=waiter, args=(name,))
            thread.start()
            threads.append(thread)
            # Queued in this order.
            while queue.stats()['queued'] < len(threads):
                threading.Event().wait(0.001)
        # 'a' is refused: it goes before 'b' and 'c'.
        queue.window._hold = 0.0
        first.refuse()
        again = queue.acquire(again=True)
        order.append('a')
        again.accept()
        again.release()
        for thread in threads:
            thread.join(10)
        self.assertEqual(['a', 'b', 'c'], order)
        stats = queue.stats()
        self.assertEqual(1, stats['peak'])
        self.assertEqual(0, stats['in_flight'])
        self.assertEqual(1, stats['refusals'])

    def test_slot_release_is_idempotent(self):
        queue = throttle.Throttle()
        with queue.acquire() as slot:
            slot.accept()
            slot.release()
        self.assertEqual(0, queue.stats()['in_flight'])

    def test_one_throttle_per_endpoint_and_kind(self):
        self.addCleanup(throttle.reset)
        one = throttle.throttle_for('http://a', throttle.DEPLOY)
        self.assertIs(one, throttle.throttle_for('http://a',
                                                 throttle.DEPLOY))
        self.assertIsNot(one, throttle.throttle_for('http://a',
                                                    throttle.CLEAN))
        self.assertIsNot(one, throttle.throttle_for('http://b',
                                                    throttle.DEPLOY))
        throttle.throttle_for('http://a', throttle.DEPLOY, cap=3)
        self.assertEqual(3, one.window.cap)
