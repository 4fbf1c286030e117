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
"""osprofiler with ``[profiler]enabled``: a request signed with one of
``[profiler]hmac_keys`` is traced, and its trace lands in the real Redis
named by ``[profiler]connection_string``."""

import json
import os

from osprofiler import profiler
from osprofiler import web

from baremetal_orch.tests.functional import base
from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing import services

REDIS = os.environ.get('BAREMETAL_ORCH_REDIS', 'redis://127.0.0.1:6379')
HMAC_KEY = 'func-profiler-key'


class TestProfiler(base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        try:
            import redis
            self.redis = redis.Redis.from_url(REDIS)
            self.redis.ping()
        except Exception as e:
            if func_fixtures.required('BAREMETAL_ORCH_REQUIRE_REDIS'):
                raise
            self.skipTest('Redis is not available at %s: %s' % (REDIS, e))
        self.proc, self.client = services.start_all_in_one(
            self, profiler={'enabled': 'true', 'hmac_keys': HMAC_KEY,
                            'connection_string': REDIS,
                            'trace_sqlalchemy': 'true'})

    def trace(self, base_id):
        key = 'osprofiler_opt:%s' % base_id
        self.addCleanup(self.redis.delete, key)
        return [json.loads(item) for item in self.redis.lrange(key, 0, -1)]

    def test_a_signed_request_is_traced_in_redis(self):
        profiler.init(HMAC_KEY)
        self.addCleanup(profiler.clean)
        base_id = profiler.get().get_base_id()
        headers = web.get_trace_id_headers()
        self.client.get('/v1/nodes', status=200, headers=headers)
        events = self.client.wait_for(lambda: self.trace(base_id),
                                      timeout=30)
        names = {e['name'] for e in events}
        self.assertIn('wsgi-start', names)
        self.assertEqual({'baremetal-orch'},
                         {e['service'] for e in events})
        self.assertEqual({'baremetal_orch'},
                         {e['project'] for e in events})
        # The request's SQL ran inside the trace.
        self.client.wait_for(lambda: 'db-start' in {
            e['name'] for e in self.trace(base_id)}, timeout=30)

    def test_an_unsigned_request_is_not_traced(self):
        profiler.init('another-key')
        self.addCleanup(profiler.clean)
        base_id = profiler.get().get_base_id()
        headers = web.get_trace_id_headers()
        self.client.get('/v1/nodes', status=200, headers=headers)
        # The signed request above ends before this one: a key would be
        # there by now.
        self.client.get('/v1', status=200)
        self.assertEqual([], self.trace(base_id))
