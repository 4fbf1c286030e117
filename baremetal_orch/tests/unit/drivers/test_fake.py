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
"""The provisioning drivers' batch call: the base's (a thread a node) and
the fake driver's (the nodes' waits side by side in the calling thread)."""

from concurrent import futures
import json
import os
import threading

import fixtures

from baremetal_orch.common import exception
from baremetal_orch.drivers.provisioning import base as base_driver
from baremetal_orch.drivers.provisioning import fake
from baremetal_orch.tests import base
from baremetal_orch_testing import helpers


def make_node(name, state='available', **driver_info):
    """A fake node as the driver sees it (the one factory of those)."""
    return helpers.driver_node(name=name, driver='fake',
                               provision_state=state,
                               driver_info=driver_info)


class FakeBatchTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.TempDir()).join('calls.log')
        self.config(group='fake_driver', call_log=self.log)
        self.driver = fake.FakeDriver()

    def calls(self):
        """``[(name, call, stage)]`` in the order the driver wrote them."""
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [(c['name'], c['call'], c['stage'])
                    for c in map(json.loads, f)]


class TestFakeBatch(FakeBatchTestCase):

    def test_nodes_wait_side_by_side_in_the_calling_thread(self):
        # No pool: one after the other, the ends would follow the nodes'
        # order (slow, fast, middle); side by side they follow the
        # durations, and every node started before the first ended.
        nodes = [make_node('slow', fake_duration=0.6),
                 make_node('fast', fake_duration=0.05),
                 make_node('middle', fake_duration=0.3)]
        self.assertEqual({}, self.driver.call_many('provide', nodes, 10))
        calls = self.calls()
        self.assertEqual(['slow', 'fast', 'middle'],
                         [n for n, _c, s in calls if s == 'start'])
        self.assertEqual(['fast', 'middle', 'slow'],
                         [n for n, _c, s in calls if s == 'end'])
        self.assertEqual(['start'] * 3 + ['end'] * 3,
                         [s for _n, _c, s in calls])

    def test_each_node_fails_alone(self):
        configdrive = self.useFixture(fixtures.TempDir()).path
        self.config(group='fake_driver', configdrive_dir=configdrive)
        ok = make_node('ok')
        bad = make_node('bad', fake_fail_phase='deploy')
        slow = make_node('slow', fake_duration=0.5)
        active = make_node('active', state='active')
        infos = {n.uuid: {'deploy_signal_id': n.name}
                 for n in (ok, bad, slow, active)}
        failed = self.driver.call_many('deploy', [ok, bad, slow, active],
                                       0.2, infos)
        self.assertEqual({bad.uuid, slow.uuid}, set(failed))
        self.assertIsInstance(failed[bad.uuid], exception.ProvisioningFailed)
        self.assertIsInstance(failed[slow.uuid],
                              exception.ProvisioningTimeout)
        # An active node is not deployed again; the others got their own
        # instance info.
        self.assertEqual([('ok', 'deploy', 'start'),
                          ('bad', 'deploy', 'start'),
                          ('slow', 'deploy', 'start'),
                          ('ok', 'deploy', 'end')], self.calls())
        for node in (ok, bad, slow):
            with open(os.path.join(configdrive, node.uuid + '.json')) as f:
                self.assertEqual(infos[node.uuid],
                                 json.load(f)['instance_info'])
        self.assertFalse(os.path.exists(
            os.path.join(configdrive, active.uuid + '.json')))

    def test_one_node_is_a_batch_of_one(self):
        bad = make_node('bad', fake_fail_phase='prepare')
        self.assertRaises(exception.ProvisioningFailed, self.driver.provide,
                          bad, 10)
        self.assertIsNone(self.driver.provide(make_node('ok'), 10))
        self.assertEqual([('bad', 'provide', 'start'),
                          ('ok', 'provide', 'start'),
                          ('ok', 'provide', 'end')], self.calls())

    def test_a_held_node_waits_in_the_pool_for_its_abort(self):
        pool = futures.ThreadPoolExecutor(max_workers=2)
        self.addCleanup(pool.shutdown)
        held = make_node('held', fake_wait='prepare')
        free = make_node('free', fake_duration=0.05)
        answer = pool.submit(self.driver.call_many, 'provide', [held, free],
                             30, None, pool)
        # The free node ends while the held one waits.
        self.wait_for(lambda: ('free', 'provide', 'end') in self.calls() and
                      ('held', 'prepare', 'wait') in self.calls(),
                      timeout=10)
        self.assertFalse(answer.done())
        self.assertTrue(self.driver.abort(held))
        failed = answer.result(timeout=10)
        self.assertEqual([held.uuid], list(failed))
        self.assertIn('aborted while it waited', str(failed[held.uuid]))


class Gate(base_driver.ProvisioningDriver):
    """A driver whose provide returns once two calls are in it at once."""

    name = 'gate'

    def __init__(self):
        self.barrier = threading.Barrier(2, timeout=10)

    def manage(self, node, timeout):
        pass

    def provide(self, node, timeout):
        self.barrier.wait()

    def deploy(self, node, instance_info, timeout):
        if instance_info.get('fail'):
            raise exception.ProvisioningFailed(node=node.name, reason='asked')

    def undeploy(self, node, timeout):
        pass

    def set_console(self, node, enabled):
        pass

    def set_maintenance(self, node, enabled, reason=None):
        pass


class TestBaseBatch(base.TestCase):

    def test_calls_wait_side_by_side_in_the_pool(self):
        pool = futures.ThreadPoolExecutor(max_workers=2)
        self.addCleanup(pool.shutdown)
        driver = Gate()
        self.assertEqual({}, driver.call_many(
            'provide', [make_node('a'), make_node('b')], 10, pool=pool))
        # Without a pool the calls run one after the other: the first
        # waits alone at the barrier, which breaks.
        driver.barrier = threading.Barrier(2, timeout=0.1)
        node = make_node('c')
        failed = driver.call_many('provide', [node, make_node('d')], 10)
        self.assertIsInstance(failed[node.uuid],
                              threading.BrokenBarrierError)

    def test_deploy_gets_each_node_its_instance_info(self):
        ok, bad = make_node('ok'), make_node('bad')
        failed = Gate().call_many('deploy', [ok, bad], 10,
                                  {bad.uuid: {'fail': True}})
        self.assertEqual([bad.uuid], list(failed))

    def test_an_unknown_call_is_refused(self):
        self.assertRaises(ValueError, Gate().call_many, 'inspect',
                          [make_node('a')], 10)
