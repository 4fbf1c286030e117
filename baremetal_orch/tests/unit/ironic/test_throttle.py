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
        # 'sp'/'ap'/'rp' the same for a probe, 't+N' N seconds pass.
        table = [
            ('s', 4.0, 4, True),
            ('a', 5.0, 5, True),        # slow start: a slot per accept
            ('s', 5.0, 5, True),
            ('a', 6.0, 6, True),
            ('s', 6.0, 6, True),
            ('r', 2.0, 2, False),       # the limit met: what Ironic holds
            ('t+0.4', 2.0, 2, False),   # held off
            ('t+0.2', 2.0, 2, True),    # over: a probe may go
            ('sp', 2.0, 2, False),      # one probe at a time
            ('ap', 3.0, 3, True),       # Ironic had room: the next at once
            ('sp', 3.0, 3, False),
            ('rp', 3.0, 3, False),      # refused: held off 1 s
            ('e', 3.0, 3, True),        # an own deploy ended: no hold-off
            ('s', 3.0, 3, False),       # the window is full; no probe yet
            ('a', 3.0, 3, False),       # no growth past slow start
            ('t+1.0', 3.0, 3, True),    # the probe's hold-off is over
            ('sp', 3.0, 3, False),
            ('e', 3.0, 3, False),       # a probe is out, the window full
            ('ap', 3.0, 3, True),       # room: in flight 3 of 3 again
        ]
        window = throttle.Window(clock=self.clock)
        for step, size, limit, can_send in table:
            if step == 's':
                self.assertFalse(window.sent(), step)
            elif step == 'sp':
                self.assertTrue(window.sent(), step)
            elif step in ('a', 'ap'):
                window.accepted(probe=step == 'ap')
            elif step in ('r', 'rp'):
                window.refused(probe=step == 'rp')
            elif step == 'e':
                window.released()
            else:
                self.clock.now += float(step[2:])
            self.assertAlmostEqual(size, window.size, places=2, msg=step)
            self.assertEqual(limit, window.limit(), step)
            self.assertEqual(can_send, window.can_send(), step)

    def test_hold_off_doubles_up_to_a_share_of_the_work(self):
        # (how long work lasted, or None; the hold-offs of six refusals)
        table = [
            (None, [0.5, 1.0, 1.0, 1.0, 1.0, 1.0]),
            (8.0, [0.5, 1.0, 1.0, 1.0, 1.0, 1.0]),
            (2.0, [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
            (120.0, [0.5, 1.0, 2.0, 4.0, 8.0, 15.0]),
            (3600.0, [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]),
        ]
        for lasted, expected in table:
            window = throttle.Window(clock=self.clock)
            if lasted is not None:
                window.sent()
                window.accepted()
                window.released(lasted=lasted)
            holds = []
            for _i in range(6):
                window.sent()
                window.refused()
                holds.append(window.held())
            self.assertEqual(expected, holds, lasted)
        self.assertEqual(1.0, window.size)
        self.clock.now += 60
        self.assertFalse(window.sent())        # within the window of 1
        window.accepted()
        self.assertTrue(window.sent())         # past it: a probe
        window.accepted(probe=True)
        self.assertEqual(2.0, window.size)
        self.assertTrue(window.sent())         # the next probe at once
        window.refused(probe=True)
        self.assertEqual(0.5, window.held())   # a probe accepted: 0.5

    def test_lasting_is_a_moving_mean(self):
        window = throttle.Window(clock=self.clock)
        for lasted in (10.0, 20.0):
            window.sent()
            window.accepted()
            window.released(lasted=lasted)
        self.assertAlmostEqual(12.0, window.lasting)
        window.sent()
        window.released(freed=False)     # never accepted: not counted
        self.assertAlmostEqual(12.0, window.lasting)
        self.assertAlmostEqual(1.5, window.max_hold())

    def test_wait_time(self):
        window = throttle.Window(clock=self.clock)
        self.assertIsNone(window.wait_time())
        for _i in range(4):
            window.sent()
        self.assertIsNone(window.wait_time())   # slow start: no probe
        window.refused()
        self.assertEqual(0.5, window.wait_time())
        window.released()                        # own end: no hold-off
        self.assertTrue(window.can_send())
        window.sent()                            # full again
        self.assertEqual(0.5, window.wait_time())   # the probe waits
        self.clock.now += 0.5
        self.assertEqual(0.0, window.wait_time())

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
        window = throttle.Window(cap=2, clock=self.clock)
        window.sent()
        window.sent()
        window.refused()
        window.sent()
        self.clock.now += 10
        self.assertFalse(window.can_send())    # no probe past the cap

    def test_converges_on_ironic_limit(self):
        # A conductor deploying nodes through an Ironic that takes
        # ``limit`` at a time; one deploy ends every ``every`` seconds.
        for limit, nodes, every in ((4, 60, 10.0), (20, 100, 10.0),
                                    (1, 10, 10.0), (4, 60, 0.1),
                                    (20, 100, 0.1)):
            ironic = FakeIronicLimit(limit)
            window = throttle.Window(clock=self.clock)
            left, in_ironic, refusals, rounds = nodes, 0, 0, 0
            while left or in_ironic:
                rounds += 1
                self.clock.now += every
                while left and window.can_send():
                    probe = window.sent()
                    if ironic.ask():
                        window.accepted(probe)
                        left -= 1
                        in_ironic += 1
                    else:
                        window.refused(probe)
                        refusals += 1
                    self.assertLessEqual(in_ironic, limit)
                # Ironic always full while nodes are left.
                if left:
                    self.assertEqual(limit, in_ironic, (limit, rounds))
                if in_ironic:
                    ironic.deploying -= 1
                    in_ironic -= 1
                    window.released()
            # At most one refused probe per hold-off (at least 0.5 s),
            # never one per request sent.
            most = rounds * every / throttle.FIRST_HOLD + 2
            self.assertLessEqual(refusals, min(rounds, most),
                                 (limit, every, refusals))


class TestSharedIronic(base.TestCase):
    """Conductors, each with a window of its own, share one Ironic."""

    DEPLOY = 8.0
    POLL = 0.2
    TICK = 0.01

    def simulate(self, conductors, limit, nodes):
        """Deploy ``nodes`` split evenly; each conductor sees its deploys
        end at its next poll. Returns (makespan / ideal, refusals)."""
        clock = FakeClock()
        clock.now = 0.0
        windows = [throttle.Window(clock=clock) for _c in range(conductors)]
        queued = [nodes // conductors] * conductors
        own = [[] for _c in range(conductors)]    # ends of accepted work
        ironic = []                               # ends, as Ironic has them
        refusals, last_seen, step = 0, 0.0, 0
        polls = round(self.POLL / self.TICK)
        while any(queued) or any(own):
            clock.now = step * self.TICK
            ironic = [end for end in ironic if end > clock.now]
            for c, window in enumerate(windows):
                if step % polls == c % polls:
                    for end in [e for e in own[c] if e <= clock.now]:
                        own[c].remove(end)
                        window.released(lasted=self.DEPLOY)
                        last_seen = clock.now
                while queued[c] and window.can_send():
                    probe = window.sent()
                    if len(ironic) < limit:
                        window.accepted(probe)
                        ironic.append(clock.now + self.DEPLOY)
                        own[c].append(ironic[-1])
                        queued[c] -= 1
                    else:
                        window.refused(probe)
                        refusals += 1
            step += 1
        ideal = -(-nodes // limit) * self.DEPLOY
        return last_seen / ideal, refusals

    def test_the_slots_one_leaves_are_taken_up(self):
        # (conductors, Ironic's limit): 5 x limit nodes.
        for conductors, limit in ((1, 4), (1, 20), (2, 4), (2, 20),
                                  (4, 20), (10, 100)):
            ratio, refusals = self.simulate(conductors, limit, 5 * limit)
            # One poll's delay per deploy round is the floor (1.025).
            self.assertLess(ratio, 1.10, (conductors, limit))
            # At most about one refused probe per conductor and second.
            self.assertLess(refusals, 1.2 * conductors * 5 * self.DEPLOY,
                            (conductors, limit, refusals))


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
