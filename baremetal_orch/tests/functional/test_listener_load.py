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
"""The API listener of a running all-in-one under concurrent clients.

Each client keeps one keep-alive connection and cycles through exchanges
that end in an early answer (415 with a chunked or a sized body unread,
404, 400, 413) followed by a pipelined GET on the same connection, plus
plain and one-shot GETs (:data:`baremetal_orch_testing.httpraw.SCENARIOS`).
What is counted, not timed: resets, timeouts, desyncs (a pipelined GET
answered with anything but its own 200 or a 503), malformed answers and
503s. Up to the configured capacity (``[api]max_queued_requests``
connections with a request each) there must be none of any; past it,
503s and still no reset. The counts are attached to the test
(``listener-load``); ``tools/benchmarks/listener_load.py`` runs the same
load with other sizes and prints them.
"""

import requests
from testtools import content

from baremetal_orch.tests.functional import aio
from baremetal_orch.tests.functional import base
from baremetal_orch_testing import httpraw

THREADS = 4
QUEUE = 16
ROUNDS = 12


class TestListenerLoad(base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        self.service = self.useFixture(aio.AllInOne({
            'api': {'workers': THREADS, 'max_queued_requests': QUEUE}}))

    def load(self, clients):
        result = httpraw.run_load('127.0.0.1', self.service.port, clients,
                                  ROUNDS)
        self.addDetail('listener-load-%d' % clients,
                       content.json_content(result))
        for broken in ('resets', 'timeouts', 'desyncs', 'malformed',
                       'connect_errors', 'bad_error_documents'):
            self.assertEqual(0, result[broken], result)
        self.assertGreater(result['statuses'].get('200', 0), 0, result)
        self.assertEqual(200, requests.get(self.service.url + '/v1',
                                           timeout=30).status_code)
        self.assertNotIn(b'Traceback', self.service.log_since(0))
        return result

    def test_up_to_the_capacity(self):
        result = self.load(QUEUE)
        # Each connection has at most one request waiting: the queue is
        # never full, so no 503.
        self.assertEqual(0, result['service_unavailable'], result)

    def test_past_the_capacity(self):
        # 503s are allowed here (how many depends on the machine), each an
        # API-SIG document; no reset, no hang, no desync.
        self.load(QUEUE * 4)
