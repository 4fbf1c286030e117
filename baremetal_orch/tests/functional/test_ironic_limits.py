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
"""The ironic driver against a real Ironic at its limits.

Ironic as large operators run it: a low ``[conductor]
max_concurrent_deploy``, an API that does not answer for a while (a TCP
relay in front of it refuses and resets connections), Ironic SIGKILLed
and restarted mid-deploy, a burst its standalone API server resets
connections under. Nodes deploy side by side as a conductor deploys a
group (one thread per node); every node must end with Ironic's real
state, and every failure must carry Ironic's own reason. The outage is
also run through the conductor's node work, which records it as events
on the action.
"""

from concurrent import futures
import threading
import time

import requests
import testtools.content

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.conductor import node_work
from baremetal_orch.db import api as dbapi
from baremetal_orch.drivers import provisioning as drivers
from baremetal_orch.drivers.provisioning import ironic as ironic_driver
from baremetal_orch.ironic import outage
from baremetal_orch.ironic import throttle
from baremetal_orch.objects import event as event_obj
from baremetal_orch.tests import base as test_base
from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import ironic as ironic_fixture
from baremetal_orch_testing.fixtures import tcp_relay
from baremetal_orch_testing import helpers


class LimitsTestCase(base.FunctionalTestCase):

    #: IronicFixture arguments of the class.
    IRONIC = {}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ironic = cls.use_class_fixture(
            ironic_fixture.IronicFixture(**cls.IRONIC))

    def setUp(self):
        super().setUp()
        throttle.reset()
        outage.reset()
        self.addCleanup(throttle.reset)
        self.addCleanup(outage.reset)
        # The defaults of the retry options, whatever the test base sets.
        self.config(group='ironic', poll_interval=0.2, api_max_retries=6,
                    api_retry_interval=2, outage_tolerance=600,
                    **self.ironic.ironic_options())
        self.driver = ironic_driver.IronicDriver()

    def available_nodes(self, count, prefix):
        nodes = []
        for i in range(count):
            inode = self.ironic.create_node('%s-%d-%s' % (
                prefix, i, self.getUniqueString()[-6:]))
            self.ironic.provision(inode['uuid'], 'manage', 'manageable')
            inode = self.ironic.provision(inode['uuid'], 'provide',
                                          'available')
            nodes.append(helpers.driver_node(inode))
        return nodes

    def deploy_all(self, nodes, timeout=300):
        """Deploy the nodes side by side; ``{node name: exception}`` of
        those that failed."""
        with futures.ThreadPoolExecutor(len(nodes)) as pool:
            jobs = {n.name: pool.submit(self.driver.deploy, n, {}, timeout)
                    for n in nodes}
            return {name: job.exception() for name, job in jobs.items()
                    if job.exception() is not None}

    def states(self, nodes):
        return {n.name: self.ironic.get_node(n.ironic_uuid)[
            'provision_state'] for n in nodes}

    def wait_all_deploying(self, nodes):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            states = self.states(nodes)
            if all(s in ('deploying', 'active') for s in states.values()):
                return states
            time.sleep(0.1)
        self.fail('nodes not deploying: %s' % states)


class TestConcurrencyLimit(LimitsTestCase):
    """Ironic takes 4 deploys at a time (one API thread, so its count is
    exact); a deploy lasts about 6 s; 16 nodes: the last ones wait about
    18 s for a slot, beyond the old 12 s retry budget."""

    LIMIT = 4
    IRONIC = {'conductor_options': {'max_concurrent_deploy': LIMIT},
              'api_threads': 1, 'fake_delays': {'deploy_delay': '3'}}

    def test_every_node_deploys(self):
        nodes = self.available_nodes(16, 'limit')
        mark = self.ironic.log_mark()
        peak = [0]
        stop = threading.Event()

        def sample():
            # Ironic's own count of deploying nodes.
            while not stop.wait(0.3):
                deploying = self.ironic._call(
                    'GET', '/nodes?provision_state=deploying&fields=uuid'
                ).json()['nodes']
                peak[0] = max(peak[0], len(deploying))

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            failed = self.deploy_all(nodes)
        finally:
            stop.set()
            sampler.join()
        self.assertEqual({}, failed)
        self.assertEqual({'active'}, set(self.states(nodes).values()))
        statuses = [r.status for r in self.ironic.request_log(since=mark)
                    if r.method == 'PUT' and r.path.endswith('/provision')]
        # Ironic's limit was reached, and it refused requests.
        self.assertIn('503', statuses)
        self.assertEqual(16, statuses.count('202'))
        self.assertLessEqual(peak[0], self.LIMIT)
        window = throttle.throttle_for(self.driver.client.endpoint,
                                       throttle.DEPLOY).stats()
        self.addDetailUniqueName('figures', testtools.content.text_content(
            'ironic peak %d, own peak %d, refusals %d, 503s %d' % (
                peak[0], window['peak'], window['refusals'],
                statuses.count('503'))))


class TestApiOutage(LimitsTestCase, test_base.DbTestCase):
    """Ironic's API refuses connections (and resets the open ones) for
    10 s while Ironic deploys: a deploy lasts about 4 s, so every node
    becomes active during the outage."""

    IRONIC = {'fake_delays': {'deploy_delay': '2'}}
    OUTAGE = 10

    def setUp(self):
        super().setUp()
        self.relay = self.useFixture(tcp_relay.TcpRelay(self.ironic.port))
        self.config(group='ironic', endpoint_override=self.relay.endpoint)
        self.driver = ironic_driver.IronicDriver()
        # The conductor's own driver, through the relay too.
        drivers.reset()
        self.addCleanup(drivers.reset)

    def outage_while(self, work, nodes):
        """Run ``work()`` in the background, cut Ironic's API once the
        nodes deploy, and return what ``work()`` returns."""
        with futures.ThreadPoolExecutor(1) as pool:
            job = pool.submit(work)
            self.wait_all_deploying(nodes)
            self.relay.refuse()
            time.sleep(self.OUTAGE)
            self.relay.resume()
            return job.result()

    def test_nodes_end_with_ironic_state(self):
        nodes = self.available_nodes(8, 'outage')
        failed = self.outage_while(lambda: self.deploy_all(nodes), nodes)
        self.assertEqual({}, failed)
        self.assertEqual({'active'}, set(self.states(nodes).values()))
        self.assertGreater(self.relay.reset, 0)
        self.assertEqual(1, self.driver.client.outage.count)

    def test_events_on_the_action(self):
        """The operator's view: the deploy phase of an action's 8 nodes
        (the conductor's node work) gets one event when Ironic stops
        answering and one when it answers again."""
        self.config(group='conductor', max_concurrent_nodes=8)
        action = self.running_action()
        nodes = self.available_nodes(8, 'events')
        items = []
        for node in nodes:
            row = dbapi.create_node({
                'name': node.name, 'driver': 'ironic',
                'ironic_uuid': node.ironic_uuid,
                'provision_state': 'available'})
            items.append((dbapi.create_task({
                'action_uuid': action, 'kind': 'node', 'name': node.name,
                'node_uuid': row.uuid}), row.uuid))
        work = node_work.NodeWork('test-conductor', spawn=None)
        self.addCleanup(work.stop)
        self.outage_while(lambda: work.run(
            orch_context.get_admin_context(), action, items, 'deploy',
            {'deadline': 300, 'group': 'g'}), nodes)
        events = [e for e in dbapi.list_events(
            {'action_uuid': action}, sort_key='id', sort_dir='asc')
            if e.event_type.startswith('ironic.')]
        # First, so that a failure below shows them.
        self.addDetailUniqueName('events', testtools.content.text_content(
            '\n'.join('%s %s %s' % (e.event_type, e.message, e.details)
                      for e in events)))
        self.assertEqual({'success'}, {dbapi.get_task(t).status
                                       for t, _n in items})
        self.assertEqual({'active'}, set(self.states(nodes).values()))
        self.assertEqual([event_obj.IRONIC_OUTAGE_STARTED,
                          event_obj.IRONIC_OUTAGE_ENDED],
                         [e.event_type for e in events])
        started, ended = events[0].details, events[1].details
        self.assertEqual((self.relay.endpoint, 8),
                         (started['endpoint'], started['nodes']))
        self.assertTrue(started['error'])
        self.assertEqual(started['started_at'], ended['started_at'])
        # It started at most a poll after the cut and ended at the first
        # answer after it (the longest delay between two tries is 5 s).
        self.assertGreater(ended['duration'], self.OUTAGE - 1)
        self.assertLess(ended['duration'],
                        self.OUTAGE + outage.MAX_DELAY + 2)


class TestIronicRestart(LimitsTestCase):
    """Ironic SIGKILLed mid-deploy and started again: it fails the nodes
    it left deploying ("The deploying state can't be resumed by conductor
    ..."), all of them in one pass."""

    IRONIC = {'fake_delays': {'deploy_delay': '5'},
              'conductor_options': {'periodic_max_workers': 32}}

    def test_ironic_reasons_then_a_second_deploy(self):
        nodes = self.available_nodes(6, 'restart')
        with futures.ThreadPoolExecutor(1) as pool:
            job = pool.submit(self.deploy_all, nodes)
            self.wait_all_deploying(nodes)
            self.ironic.kill()
            time.sleep(2)
            self.ironic.restart()
            failed = job.result()
        self.assertEqual(sorted(n.name for n in nodes), sorted(failed))
        for name, exc in failed.items():
            self.assertIsInstance(exc, exception.ProvisioningFailed)
            self.assertIn("can't be resumed by conductor", str(exc), name)
        for node in nodes:
            after = self.ironic.get_node(node.ironic_uuid)
            self.assertEqual('deploy failed', after['provision_state'])
            self.assertIn(after['last_error'], str(failed[node.name]))
        # Nothing stuck: a second deploy makes them active.
        self.assertEqual({}, self.deploy_all(nodes))
        self.assertEqual({'active'}, set(self.states(nodes).values()))


class TestBurst(LimitsTestCase):
    """40 nodes deploy while 160 other requests hit Ironic's standalone
    API at once (cheroot, listen backlog 5): a reset before an answer is
    never a failed node."""

    IRONIC = {'fake_delays': {'deploy_delay': '1'}}

    def test_no_node_fails_on_a_reset(self):
        nodes = self.available_nodes(40, 'burst')
        resets = []

        def hit(_i):
            try:
                requests.get(self.ironic.endpoint + '/v1/nodes', timeout=30,
                             headers={'X-OpenStack-Ironic-API-Version':
                                      '1.82'})
            except requests.RequestException as exc:
                resets.append(exc)

        with futures.ThreadPoolExecutor(161) as pool:
            job = pool.submit(self.deploy_all, nodes)
            list(pool.map(hit, range(160)))
            failed = job.result()
        self.assertEqual({}, failed)
        self.assertEqual({'active'}, set(self.states(nodes).values()))
        self.addDetailUniqueName('figures', testtools.content.text_content(
            '%d of 160 burst requests failed to connect' % len(resets)))
