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
"""The shard-aware Ironic client and the ironic driver against real Ironic.

One standalone Ironic (fake hardware) serves the whole class; each test
uses shard names of its own. Ironic's own request log is the witness of
what was asked of it.
"""

import contextlib
import json
import os
import sqlite3
import threading

from oslo_utils import uuidutils

from baremetal_orch.common import exception
from baremetal_orch.drivers.provisioning import ironic as ironic_driver
from baremetal_orch.ironic import client as ironic_client
from baremetal_orch.ironic import configdrive
from baremetal_orch.tests.functional import base
from baremetal_orch_testing.fixtures import ironic as ironic_fixture
from baremetal_orch_testing import helpers


class TestIronicDriver(base.FunctionalTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # deploy_delay makes "deploying" last (and hold Ironic's node lock
        # for) about two seconds: prepare and deploy each sleep one. Ironic
        # answers 409 at once on a locked node instead of retrying itself
        # for up to 3 s (which hid the lock from our client under load).
        cls.ironic = cls.use_class_fixture(ironic_fixture.IronicFixture(
            fake_delays={'deploy_delay': '1'}, deploy_callback_timeout=2,
            locked_retries=0))

    def setUp(self):
        super().setUp()
        self.shard = 'shard-%s' % uuidutils.generate_uuid()[:8]
        self.config(group='ironic', shard_key=self.shard,
                    poll_interval=0.1, api_retry_interval=1,
                    api_max_retries=6, **self.ironic.ironic_options())
        self.driver = ironic_driver.IronicDriver()

    def node(self, name, shard=None, **fields):
        inode = self.ironic.create_node(
            '%s-%s' % (name, uuidutils.generate_uuid()[:8]),
            shard=shard or self.shard, **fields)
        return inode, helpers.driver_node(inode)

    def test_shard_listing_asks_ironic_for_the_shard_only(self):
        other_b = self.shard + '-b'
        other_c = self.shard + '-c'
        mine = {self.node('a%d' % i)[0]['uuid'] for i in range(5)}
        for i in range(3):
            self.node('b%d' % i, shard=other_b)
        for i in range(2):
            self.node('c%d' % i, shard=other_c)
        mark = self.ironic.log_mark()

        client = ironic_client.IronicClient(page_size=2)
        nodes = client.list_nodes()
        named = client.list_nodes(fields=['name', 'shard'])

        self.assertEqual(mine, {n['uuid'] for n in nodes})
        self.assertEqual(mine, {n['uuid'] for n in named})
        self.assertEqual({self.shard}, {n['shard'] for n in nodes + named})
        listings = self.ironic.node_listings(since=mark)
        # Five nodes, two per page: three pages per listing.
        self.assertEqual(6, len(listings))
        for request in listings:
            self.assertEqual(self.shard, request.query.get('shard'),
                             request)
        shards = {s['name']: s['count'] for s in client.list_shards()}
        self.assertEqual(5, shards[self.shard])
        self.assertEqual(3, shards[other_b])
        self.assertEqual(2, shards[other_c])
        # GET /v1/shards is not a node listing: still no unscoped listing.
        self.assertEqual(listings, self.ironic.node_listings(since=mark))

    def prepare(self, node):
        """The driver calls of the conductor's prepare phase for an
        enrolled node (:mod:`baremetal_orch.conductor.node_work`)."""
        self.driver.manage(node, 60)
        self.driver.provide(node, 60)

    def provision_requests(self, inode, since):
        """How many provision requests for ``inode`` Ironic took (logged
        202); the others may only be its 409 of a locked node."""
        path = '/v1/nodes/%s/states/provision' % inode['uuid']
        statuses = [r.status for r in self.ironic.request_log(since=since)
                    if r.method == 'PUT' and r.path == path]
        self.assertEqual(set(), set(statuses) - {'202', '409'}, statuses)
        return statuses.count('202')

    def test_prepare_and_deploy_to_active(self):
        inode, node = self.node('deploy')
        self.assertEqual('enroll', inode['provision_state'])
        mark = self.ironic.log_mark()
        self.driver.manage(node, 60)
        self.assertEqual('manageable', self.ironic.get_node(
            inode['uuid'])['provision_state'])
        self.driver.provide(node, 60)
        self.assertEqual('available', self.ironic.get_node(
            inode['uuid'])['provision_state'])
        # manage, then provide: one request each.
        self.assertEqual(2, self.provision_requests(inode, mark))

        node.instance_info = {'image_source': 'http://images.test/n.qcow2'}
        info = dict(node.instance_info,
                    deploy_signal_id='http://orch.test/v1/signals/x?t=1',
                    deploy_status_aware='true')
        mark = self.ironic.log_mark()
        errors = []

        def deploy():
            try:
                self.driver.deploy(node, info, 60)
            except Exception as exc:
                errors.append(exc)
        thread = threading.Thread(target=deploy)
        thread.start()
        self.addCleanup(thread.join, 60)
        # Ironic deploys (deploy_delay) while the driver waits for it.
        self.ironic.wait_for(inode['uuid'], 'provision_state', 'deploying')
        thread.join(60)
        self.assertEqual([], errors)
        self.assertFalse(thread.is_alive())
        after = self.ironic.get_node(inode['uuid'])
        self.assertEqual('active', after['provision_state'])
        self.assertEqual(1, self.provision_requests(inode, mark))
        # Ironic keeps the node's own instance info, and the config drive
        # it took with the deploy request: what the node reads.
        stored = self._stored_instance_info(inode['uuid'])
        self.assertEqual('http://images.test/n.qcow2',
                         stored['image_source'])
        self.assertNotIn('deploy_signal_id', stored)
        self.assertEqual(
            {'uuid': inode['uuid'], 'name': node.name,
             'hostname': node.name, 'meta': info},
            configdrive.read(stored['configdrive']))
        # Not shown to the API: Ironic masks a config drive.
        self.assertEqual('******', after['instance_info']['configdrive'])

        # Deploying an active node again asks Ironic for nothing (its
        # prepare phase does not call the driver).
        mark = self.ironic.log_mark()
        self.driver.deploy(node, info, 60)
        writes = [r for r in self.ironic.request_log(since=mark)
                  if r.method != 'GET']
        self.assertEqual([], writes)
        self.assertEqual([], self.ironic.node_listings(since=mark))

    def _stored_instance_info(self, uuid):
        """The instance info Ironic stored (its own database)."""
        with contextlib.closing(sqlite3.connect(os.path.join(
                self.ironic.tmp, 'ironic.db'))) as db:
            row = db.execute('SELECT instance_info FROM nodes WHERE uuid=?',
                             (uuid,)).fetchone()
        return json.loads(row[0])

    def test_failed_deploy_reports_ironic_reason(self):
        inode, node = self.node('fail', **ironic_fixture.FAILING_DEPLOY)
        self.prepare(node)
        exc = self.assertRaises(exception.ProvisioningFailed,
                                self.driver.deploy, node, {}, 60)
        self.assertIn('Timeout reached while waiting for callback',
                      str(exc))
        self.assertIn(node.ident, str(exc))
        after = self.ironic.get_node(inode['uuid'])
        self.assertEqual('deploy failed', after['provision_state'])
        self.assertIn(after['last_error'], str(exc))

    def test_node_moved_to_another_shard_is_refused(self):
        inode, node = self.node('moved')
        self.ironic.provision(inode['uuid'], 'manage', 'manageable')
        self.ironic.set_shard(inode['uuid'], self.shard + '-other')
        mark = self.ironic.log_mark()
        for call in (lambda: self.driver.manage(node, 60),
                     lambda: self.driver.provide(node, 60),
                     lambda: self.driver.deploy(node, {'a': 1}, 60),
                     lambda: self.driver.set_maintenance(node, True, 'x')):
            exc = self.assertRaises(exception.NodeNotInShard, call)
            self.assertIn(inode['uuid'], str(exc))
        writes = [r for r in self.ironic.request_log(since=mark)
                  if r.method != 'GET']
        self.assertEqual([], writes)
        self.assertEqual('manageable', self.ironic.get_node(
            inode['uuid'])['provision_state'])

    def test_node_exists_anywhere(self):
        gone, _ = self.node('gone')
        moved, _ = self.node('moved')
        client = ironic_client.IronicClient()
        self.assertTrue(client.node_exists_anywhere(gone['uuid']))
        self.ironic.delete_node(gone['uuid'])
        self.ironic.set_shard(moved['uuid'], self.shard + '-elsewhere')
        mark = self.ironic.log_mark()
        self.assertFalse(client.node_exists_anywhere(gone['uuid']))
        self.assertTrue(client.node_exists_anywhere(moved['uuid']))
        # The moved node is no longer listed in our shard, yet exists.
        self.assertNotIn(moved['uuid'],
                         [n['uuid'] for n in client.list_nodes()])
        statuses = [(r.path, r.status) for r in
                    self.ironic.request_log(since=mark)
                    if r.path.startswith('/v1/nodes/')
                    and r.path not in ironic_fixture.LISTING_PATHS]
        self.assertEqual([('/v1/nodes/%s' % gone['uuid'], '404'),
                          ('/v1/nodes/%s' % moved['uuid'], '200')],
                         statuses)

    def test_final_conflict_is_not_retried(self):
        inode, _ = self.node('conflict')
        client = ironic_client.IronicClient()
        client.patch_node(inode['uuid'], [
            {'op': 'add', 'path': '/instance_uuid',
             'value': uuidutils.generate_uuid()}])
        mark = self.ironic.log_mark()
        exc = self.assertRaises(
            ironic_client.IronicRequestFailed, client.patch_node,
            inode['uuid'], [{'op': 'add', 'path': '/instance_uuid',
                             'value': uuidutils.generate_uuid()}])
        self.assertEqual(409, exc.status_code)
        patches = [r for r in self.ironic.request_log(since=mark)
                   if r.method == 'PATCH']
        self.assertEqual(['409'], [r.status for r in patches])

    def test_locked_node_is_retried_then_undeployed(self):
        inode, node = self.node('locked')
        self.prepare(node)
        deploy = threading.Thread(target=self.driver.deploy,
                                  args=(node, {}, 60))
        deploy.start()
        self.addCleanup(deploy.join, 60)
        self.ironic.wait_for(inode['uuid'], 'provision_state', 'deploying')
        mark = self.ironic.log_mark()
        # Ironic holds the node's lock while it deploys: 409, retried.
        self.driver.set_maintenance(node, True, reason='locked test')
        deploy.join(60)
        statuses = [r.status for r in self.ironic.request_log(since=mark)
                    if r.path.endswith('/maintenance')]
        self.assertEqual('409', statuses[0])
        self.assertIn(statuses[-1], ('200', '202'))
        after = self.ironic.get_node(inode['uuid'])
        self.assertTrue(after['maintenance'])
        self.assertEqual('locked test', after['maintenance_reason'])
        self.assertEqual('active', after['provision_state'])

        self.driver.set_maintenance(node, False)
        self.driver.set_console(node, True)
        self.ironic.wait_for(inode['uuid'], 'console_enabled', True)
        mark = self.ironic.log_mark()
        self.driver.undeploy(node, 60)
        after = self.ironic.get_node(inode['uuid'])
        self.assertEqual('available', after['provision_state'])
        self.assertFalse(after['maintenance'])
        self.assertEqual(1, self.provision_requests(inode, mark))


class TestConductorGroup(base.FunctionalTestCase):
    """An Ironic whose only conductor serves group ``rack1``."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ironic = cls.use_class_fixture(
            ironic_fixture.IronicFixture(conductor_group='rack1'))

    def setUp(self):
        super().setUp()
        self.shard = 'shard-%s' % uuidutils.generate_uuid()[:8]
        self.config(group='ironic', shard_key=self.shard,
                    **self.ironic.ironic_options())
        self.inode = self.ironic.create_node(
            'grouped-%s' % self.shard, shard=self.shard)

    def test_listing_carries_shard_and_group(self):
        self.config(group='ironic', conductor_group='RACK1')
        mark = self.ironic.log_mark()
        nodes = ironic_client.IronicClient().list_nodes(fields=['name'])
        self.assertEqual([self.inode['uuid']], [n['uuid'] for n in nodes])
        (listing,) = self.ironic.node_listings(since=mark)
        self.assertEqual(self.shard, listing.query['shard'])
        self.assertEqual('rack1', listing.query['conductor_group'])

    def test_node_of_another_group_is_refused(self):
        self.config(group='ironic', conductor_group='rack2')
        client = ironic_client.IronicClient()
        self.assertEqual([], client.list_nodes())
        self.assertRaises(exception.NodeNotInShard, client.check_in_scope,
                          self.inode['uuid'])
        node = helpers.driver_node(self.inode)
        driver = ironic_driver.IronicDriver()
        for call in (driver.manage, driver.provide):
            self.assertRaises(exception.NodeNotInShard, call, node, 60)
        self.assertEqual('enroll', self.ironic.get_node(
            self.inode['uuid'])['provision_state'])
