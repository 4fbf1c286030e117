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
"""An Ironic outage is one event on each action with nodes in flight.

The endpoint's outage tracker is driven directly (as the client's retries
drive it) on a fake clock; the actions watch it the way node work does
(:meth:`NodeWork._outages` through the ironic driver), and the events are
read back from a real database.
"""

import threading
import types

from oslo_utils import uuidutils

from baremetal_orch.conductor import node_work
from baremetal_orch.db import api as dbapi
from baremetal_orch.drivers import provisioning as drivers
from baremetal_orch.ironic import outage
from baremetal_orch.objects import event as event_obj
from baremetal_orch.tests import base

ENDPOINT = 'http://ironic.example.com:6385'
ERROR = 'Ironic request GET /v1/nodes failed: Connection refused'


class Clock:

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class TestOutageEvents(base.DbTestCase):

    def setUp(self):
        super().setUp()
        outage.reset()
        drivers.reset()
        self.addCleanup(outage.reset)
        self.addCleanup(drivers.reset)
        self.config(group='ironic', auth_type='none',
                    endpoint_override=ENDPOINT)
        self.clock = Clock()
        # The endpoint's one tracker, which the ironic driver's client
        # then finds.
        self.outage = outage.outage_for(ENDPOINT, self.clock)
        self.assertIs(self.outage,
                      drivers.get_driver('ironic').client.outage)

    @staticmethod
    def nodes(count, driver='ironic'):
        return [types.SimpleNamespace(uuid=uuidutils.generate_uuid(),
                                      driver=driver) for _i in range(count)]

    def in_flight(self, action, count, driver='ironic'):
        """Node work of ``action`` on ``count`` nodes, as a batch has it
        while it runs."""
        return node_work.NodeWork._outages(action, self.nodes(count, driver))

    def events(self, action):
        return [(e.event_type, e.details) for e in dbapi.list_events(
            {'action_uuid': action}, sort_key='id', sort_dir='asc')]

    def test_started_and_ended_once_per_action(self):
        a, b, idle = (uuidutils.generate_uuid() for _i in range(3))
        with self.in_flight(idle, 4):
            pass  # its work ended before the outage
        with self.in_flight(a, 2), self.in_flight(a, 1), \
                self.in_flight(b, 1), self.in_flight(b, 2, 'fake'):
            # Many requests fail during one outage, many answer after it.
            for _i in range(5):
                self.outage.failed(ERROR)
            self.clock.now += 42.5
            for _i in range(3):
                self.outage.answered()
        self.assertEqual([], self.events(idle))
        for action, nodes in ((a, 3), (b, 1)):
            events = self.events(action)
            self.assertEqual([event_obj.IRONIC_OUTAGE_STARTED,
                              event_obj.IRONIC_OUTAGE_ENDED],
                             [t for t, _d in events])
            started, ended = events[0][1], events[1][1]
            self.assertEqual({'endpoint': ENDPOINT, 'error': ERROR,
                              'nodes': nodes,
                              'started_at': started['started_at']},
                             started)
            self.assertEqual(42.5, ended['duration'])
            self.assertEqual((ENDPOINT, nodes, started['started_at']),
                             (ended['endpoint'], ended['nodes'],
                              ended['started_at']))
            self.assertLessEqual(started['started_at'], ended['ended_at'])
        event = dbapi.list_events({'action_uuid': a}, sort_key='id',
                                  sort_dir='asc')[1]
        self.assertEqual(a, event.resource_uuid)
        self.assertEqual('Ironic at %s answers again after 42.5 s'
                         % ENDPOINT, event.message)

    def test_each_outage_is_told(self):
        action = uuidutils.generate_uuid()
        with self.in_flight(action, 1):
            for seconds in (3, 7):
                self.outage.failed(ERROR)
                self.clock.now += seconds
                self.outage.answered()
        self.outage.failed(ERROR)  # no node in flight any more
        self.outage.answered()
        events = self.events(action)
        self.assertEqual([event_obj.IRONIC_OUTAGE_STARTED,
                          event_obj.IRONIC_OUTAGE_ENDED] * 2,
                         [t for t, _d in events])
        self.assertEqual([3, 7], [d['duration'] for t, d in events
                                  if t == event_obj.IRONIC_OUTAGE_ENDED])
        self.assertEqual(3, self.outage.count)

    def test_work_starting_or_ending_during_an_outage(self):
        leaving, joining = (uuidutils.generate_uuid() for _i in range(2))
        with self.in_flight(leaving, 2):
            self.outage.failed(ERROR)
            self.clock.now += 5
        with self.in_flight(joining, 3):
            # Told at once: its requests go to an Ironic that does not
            # answer; a second batch of it is not told twice.
            self.assertEqual([event_obj.IRONIC_OUTAGE_STARTED],
                             [t for t, _d in self.events(joining)])
            with self.in_flight(joining, 1):
                pass
            self.clock.now += 5
            self.outage.answered()
        for action, nodes in ((leaving, [2, 0]), (joining, [3, 3])):
            events = self.events(action)
            self.assertEqual([event_obj.IRONIC_OUTAGE_STARTED,
                              event_obj.IRONIC_OUTAGE_ENDED],
                             [t for t, _d in events])
            self.assertEqual(nodes, [d['nodes'] for _t, d in events])
            self.assertEqual(10, events[1][1]['duration'])
            self.assertEqual(events[0][1]['started_at'],
                             events[1][1]['started_at'])

    def test_requests_failing_at_once(self):
        action = uuidutils.generate_uuid()
        barrier = threading.Barrier(16)

        def request():
            barrier.wait()
            self.outage.failed(ERROR)
            self.outage.answered()
            self.outage.failed(ERROR)

        with self.in_flight(action, 16):
            threads = [threading.Thread(target=request) for _i in range(16)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            self.outage.answered()
        types_ = [t for t, _d in self.events(action)]
        # Starts and ends alternate, one pair per outage the tracker saw.
        self.assertEqual([event_obj.IRONIC_OUTAGE_STARTED,
                          event_obj.IRONIC_OUTAGE_ENDED] * self.outage.count,
                         types_)

    def test_an_event_that_cannot_be_written_fails_no_request(self):
        told = []

        def tell(kind, details):
            told.append(kind)
            raise RuntimeError('database gone')

        with self.outage.watch('action', 1, tell):
            self.outage.failed(ERROR)
            self.outage.answered()
        self.assertEqual([outage.STARTED, outage.ENDED], told)
        self.assertIsNone(self.outage.since)
