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
"""Drill R5: concurrent actions and node operations (the all-in-one).

Cheap, so it always runs (no BAREMETAL_ORCH_DRILLS needed):

* an action whose nodes overlap a running action's is refused with 409
  ``baremetal_orch.action.nodes_busy`` naming the overlapping nodes and
  creates nothing; once the first action ended, the second runs; no node
  is provided or deployed twice (the fake driver's completed calls);
* two overlapping actions posted at the same instant: one runs, the other
  is refused with the same 409 (both can pass the API's check; the
  conductor then fails the later one before it runs);
* two ``PUT states/provision`` on one node at the same instant: one 202,
  one 409, and the driver ran once.
"""

import concurrent.futures
import threading

from baremetal_orch.tests.functional.drills import base
from baremetal_orch_testing import services

#: Long enough for a second request to find the first action running.
DURATION = 1.0
BUSY_CODE = 'baremetal_orch.action.nodes_busy'


def together(*calls):
    """Run the callables at the same instant (a barrier); their results."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait()
        return call()
    with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


class TestR5Concurrency(base.DrillTestCase):

    def setUp(self):
        super().setUp()
        self.start_aio()

    def _nodes(self, prefix, tags_by_name):
        self.create_nodes([
            {'name': '%s-%s' % (prefix, name), 'driver': 'fake',
             'tags': ['%s-%s' % (prefix, t) for t in tags],
             'driver_info': {'fake_duration': DURATION}}
            for name, tags in sorted(tags_by_name.items())])
        return sorted('%s-%s' % (prefix, n) for n in tags_by_name)

    def _strategies(self, prefix, *tags):
        for tag in tags:
            self.client.post('/v1/deployment_strategies', status=201,
                             json=base.strategy_doc(
                                 '%s-%s' % (prefix, tag),
                                 [('group-%s' % tag,
                                   '%s-%s' % (prefix, tag), ())]))

    def _post_action(self, client, strategy):
        return client.post('/v1/actions', json={
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': strategy}})

    def _overlapping_site(self, prefix):
        """Nodes a0-a3 (tag a), s0-s1 (tags a and b), b0-b3 (tag b)."""
        layout = {'a%d' % i: ('a',) for i in range(4)}
        layout.update({'s%d' % i: ('a', 'b') for i in range(2)})
        layout.update({'b%d' % i: ('b',) for i in range(4)})
        names = self._nodes(prefix, layout)
        self._strategies(prefix, 'a', 'b')
        return names

    def test_overlapping_action_refused_then_runs(self):
        c = self.client
        names = self._overlapping_site('ov')
        first = self._post_action(c, 'ov-a')
        self.assertEqual(201, first.status_code, first.text)
        first = first.json()

        second = self._post_action(c, 'ov-b')
        self.assertEqual(409, second.status_code, second.text)
        error = second.json()['errors'][0]
        self.assertEqual(BUSY_CODE, error['code'])
        self.assertIn('Nodes ov-s0, ov-s1 are already part of running '
                      'action %s' % first['uuid'], error['detail'])
        # Refused: nothing was created.
        actions = c.get('/v1/actions', status=200).json()['actions']
        self.assertEqual([first['uuid']], [a['uuid'] for a in actions])

        done = c.wait_for_action(first['uuid'], timeout=120)
        self.assertEqual(('complete', 'success'),
                         (done['state'], done['result']), done['report'])
        # The first action ended: the second may run now.
        second = self._post_action(c, 'ov-b')
        self.assertEqual(201, second.status_code, second.text)
        done = c.wait_for_action(second.json()['uuid'], timeout=120)
        self.assertEqual(('complete', 'success'),
                         (done['state'], done['result']), done['report'])
        self.assertEqual({'ov-s0': 'success', 'ov-s1': 'success'},
                         {n: s for n, s in done['report']['nodes'].items()
                          if n.startswith('ov-s')})
        self.assertEachCalledOnce(names)
        self.assertEqual({n: 'active' for n in names},
                         self.node_states(names))

    def test_overlapping_actions_at_the_same_instant(self):
        names = self._overlapping_site('sim')
        clients = [services.Client(self.endpoint) for _ in range(2)]
        answers = together(
            lambda: self._post_action(clients[0], 'sim-a'),
            lambda: self._post_action(clients[1], 'sim-b'))
        statuses = sorted(r.status_code for r in answers)
        self.assertEqual([201, 409], statuses,
                         [r.text for r in answers])
        refused = [r for r in answers if r.status_code == 409][0]
        self.assertEqual(BUSY_CODE, refused.json()['errors'][0]['code'])
        started = [r for r in answers if r.status_code == 201][0].json()
        self.assertIn('Nodes sim-s0, sim-s1 are already part of running '
                      'action %s' % started['uuid'],
                      refused.json()['errors'][0]['detail'])
        # When both passed the API's check, the conductor refused the later
        # one: it is recorded failed, never run.
        others = [a for a in self.client.get(
            '/v1/actions', status=200).json()['actions']
            if a['uuid'] != started['uuid']]
        self.assertEqual([], [a for a in others if a['state'] != 'failed'])
        self.record_figures({'refused_by': 'conductor' if others
                             else 'api'})
        done = self.client.wait_for_action(started['uuid'], timeout=120)
        self.assertEqual(('complete', 'success'),
                         (done['state'], done['result']), done['report'])
        ran = sorted(done['report']['nodes'])
        self.assertEachCalledOnce(ran)
        # The refused action's own nodes were never touched.
        counts = self.completed_calls()
        self.assertEqual([], sorted(n for n, _call in counts
                                    if n in set(names) - set(ran)))

    def test_concurrent_provision_requests(self):
        c = self.client
        names = self._nodes('pv', {'n%d' % i: ('p',) for i in range(4)})
        for name in names:
            c.put('/v1/nodes/%s/states/provision' % name,
                  json={'target': 'manage'}, status=202)
        for name in names:
            c.wait_for_state(name, 'manageable', timeout=60)
        clients = [services.Client(self.endpoint) for _ in range(2)]
        for target, state in (('provide', 'available'),
                              ('active', 'active')):
            for name in names:
                answers = together(*[
                    (lambda client=client: client.put(
                        '/v1/nodes/%s/states/provision' % name,
                        json={'target': target})) for client in clients])
                self.assertEqual([202, 409],
                                 sorted(r.status_code for r in answers),
                                 '%s %s: %s' % (target, name,
                                                [r.text for r in answers]))
            for name in names:
                c.wait_for_state(name, state, timeout=60)
        self.assertEachCalledOnce(names)
