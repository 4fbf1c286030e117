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
"""Choosing a conductor, and the direct and oslo.messaging call paths."""

import collections
import datetime
from unittest import mock

from kombu import exceptions as kombu_exc
import oslo_messaging as messaging
from oslo_messaging import conffixture
from oslo_utils import timeutils
from oslo_utils import uuidutils

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.common import rpc
from baremetal_orch.conductor import manager
from baremetal_orch.conductor import rpcapi
from baremetal_orch.conf import default as conf_default
from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import base as objects_base
from baremetal_orch.objects import node as node_obj
from baremetal_orch.tests import base


class TestPickHost(base.DbTestCase):

    def register(self, host, shard=None, **values):
        dbapi.register_service(host, shard_key=shard)
        if values:
            dbapi.update_service(host, values)

    def test_shard_owner_preferred(self):
        self.register('plain-1')
        self.register('owner-a', shard='a')
        self.register('owner-b', shard='b')
        for _ in range(5):
            key = uuidutils.generate_uuid()
            self.assertEqual('owner-a', rpcapi.pick_host(key, shard='a'))
            self.assertEqual('owner-b', rpcapi.pick_host(key, shard='b'))

    def test_shard_without_live_owner_goes_to_the_ring(self):
        self.register('plain-1')
        old = timeutils.utcnow() - datetime.timedelta(hours=1)
        self.register('owner-a', shard='a', last_seen_at=old)
        self.assertEqual('plain-1', rpcapi.pick_host(
            uuidutils.generate_uuid(), shard='a'))

    def test_ring_spreads_over_unsharded_services(self):
        hosts = ['c1', 'c2', 'c3']
        for host in hosts:
            self.register(host)
        self.register('owner-a', shard='a')
        keys = ['node-%03d' % i for i in range(120)]
        picks = collections.Counter(rpcapi.pick_host(k) for k in keys)
        # Never the sharded service while unsharded ones live.
        self.assertEqual(set(hosts), set(picks))
        for host in hosts:
            self.assertGreater(picks[host], 20, picks)
        # Stable: the same key always goes to the same host.
        self.assertEqual([rpcapi.pick_host(k) for k in keys[:20]],
                         [rpcapi.pick_host(k) for k in keys[:20]])

    def test_ring_moves_few_keys_when_a_host_dies(self):
        for host in ('c1', 'c2', 'c3', 'c4'):
            self.register(host)
        keys = ['node-%03d' % i for i in range(100)]
        before = {k: rpcapi.pick_host(k) for k in keys}
        self.register('c4', forced_down=True)
        after = {k: rpcapi.pick_host(k) for k in keys}
        moved = [k for k in keys if before[k] != after[k]]
        # Only c4's keys move (consistent hashing).
        self.assertEqual({k for k in keys if before[k] == 'c4'}, set(moved))
        self.assertNotIn('c4', after.values())

    def test_only_sharded_services(self):
        self.register('owner-a', shard='a')
        self.register('owner-b', shard='b')
        picks = {rpcapi.pick_host('key-%d' % i) for i in range(50)}
        self.assertEqual({'owner-a', 'owner-b'}, picks)

    def test_hosts_restricts(self):
        self.register('c1')
        self.register('c2')
        for i in range(20):
            self.assertEqual('c2', rpcapi.pick_host('k%d' % i,
                                                    hosts=['c2']))

    def test_no_conductor_available(self):
        self.assertRaises(exception.NoConductorAvailable, rpcapi.pick_host,
                          'k')
        old = timeutils.utcnow() - datetime.timedelta(hours=1)
        self.register('stale', last_seen_at=old)
        self.register('down', forced_down=True)
        self.register('off', disabled=True)
        self.register('owner-a', shard='a', forced_down=True)
        e = self.assertRaises(exception.NoConductorAvailable,
                              rpcapi.pick_host, 'some-key', shard='a')
        self.assertEqual(503, e.status)
        self.assertIn('some-key', str(e))
        self.assertEqual([], rpcapi.live_hosts())


class TestDirectCalls(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = orch_context.get_admin_context()
        dbapi.register_service('test-conductor')
        self.manager = mock.Mock()
        rpcapi.set_local_manager(self.manager)
        self.addCleanup(rpcapi.set_local_manager, None)

    def test_calls_the_local_manager(self):
        api = rpcapi.ConductorAPI()
        node = node_obj.Node.get(self.ctx, self.create_node(name='n1').uuid)
        api.do_provisioning_action(self.ctx, node, 'manage')
        self.manager.do_provisioning_action.assert_called_once_with(
            self.ctx, node_uuid=node.uuid, target='manage')
        api.set_maintenance(self.ctx, node, True, 'r')
        self.manager.set_maintenance.assert_called_once_with(
            self.ctx, node_uuid=node.uuid, enabled=True, reason='r')
        api.run_nodes_phase(self.ctx, 'test-conductor', 'a-uuid',
                            [('t', 'n')], 'prepare')
        self.manager.run_nodes_phase.assert_called_once_with(
            self.ctx, action_uuid='a-uuid', items=[['t', 'n']],
            phase='prepare', params=None)

    def test_no_local_manager(self):
        rpcapi.set_local_manager(None)
        api = rpcapi.ConductorAPI()
        self.assertRaises(exception.NoConductorAvailable,
                          api.run_nodes_phase, self.ctx, 'test-conductor',
                          'a-uuid', [], 'prepare')

    def test_host_for_node(self):
        api = rpcapi.ConductorAPI()
        dbapi.register_service('other')
        node = node_obj.Node.get(self.ctx, self.create_node(
            name='n1', conductor='other').uuid)
        self.assertEqual('other', api.host_for_node(node))
        dbapi.update_service('other', {'forced_down': True})
        self.assertEqual('test-conductor', api.host_for_node(node))


class TestOsloCalls(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.config(rpc_transport='oslo')
        self.ctx = orch_context.get_admin_context()
        dbapi.register_service('c1')
        self.client = mock.Mock()
        with mock.patch.object(rpc, 'get_client', autospec=True,
                               return_value=self.client) as get_client:
            self.api = rpcapi.ConductorAPI()
        get_client.assert_called_once_with(mock.ANY, version_cap=None)
        self.assertIsInstance(get_client.call_args.args[0],
                              objects_base.BaremetalOrchObjectSerializer)

    def admit(self):
        # The one conductor alive, c1, is the hash ring's pick.
        return self.api.admit_action(self.ctx, 'a', 'deploy_site', {})

    def test_call_goes_to_the_host(self):
        self.client.prepare.return_value.call.return_value = 'ok'
        self.assertEqual('ok', self.admit())
        self.client.prepare.assert_called_once_with(
            server='c1', retry=rpcapi.CALL_RETRY)
        self.client.prepare.return_value.call.assert_called_once_with(
            self.ctx, 'admit_action', uuid='a', name='deploy_site',
            parameters={}, dry_run=False)

    def test_unreachable_is_503(self):
        self.client.prepare.return_value.call.side_effect = (
            messaging.MessagingTimeout('late'))
        e = self.assertRaises(exception.ServiceUnavailable, self.admit)
        self.assertEqual(503, e.status)
        self.client.prepare.return_value.cast.side_effect = (
            messaging.MessageDeliveryFailure('lost'))
        self.assertRaises(exception.ServiceUnavailable,
                          self.api.run_nodes_phase, self.ctx, 'c1', 'a',
                          [('t', 'n')], 'prepare')

    def test_broker_unreachable_is_503(self):
        # A new pooled connection that cannot reach the broker raises
        # kombu's error, not oslo.messaging's (the broker drill,
        # doc/source/contributor/drills.rst).
        self.client.prepare.return_value.call.side_effect = (
            kombu_exc.OperationalError('[Errno 111] Connection refused'))
        e = self.assertRaises(exception.ServiceUnavailable, self.admit)
        self.assertEqual(503, e.status)

    def test_remote_error_is_not_hidden(self):
        self.client.prepare.return_value.call.side_effect = (
            messaging.RemoteError('NodeLocked', 'locked', None))
        self.assertRaises(messaging.RemoteError, self.admit)


class TestVersionCap(base.DbTestCase):
    """``[DEFAULT]rpc_version_cap`` on a real client of the ``fake:/``
    transport. The API has one version, 1.0; a method of a later version
    will pass it as ``version=`` to ``_call`` or ``_cast``, and a cap below
    it refuses the message before it is sent (``NEXT`` stands for it)."""

    NEXT = '1.1'

    def setUp(self):
        super().setUp()
        self.useFixture(conffixture.ConfFixture(rpc.CONF)).transport_url = (
            'fake:/')
        self.config(rpc_transport='oslo')
        self.addCleanup(setattr, rpc, '_TRANSPORT', None)
        rpc._TRANSPORT = None
        self.ctx = orch_context.get_admin_context()

    def test_one_version_on_both_sides(self):
        version = rpcapi.ConductorAPI.RPC_API_VERSION
        self.assertEqual('1.0', version)
        self.assertEqual(version, manager.ConductorManager.target.version)
        # The newest version a cap may name is the one the client sends.
        cap = [o for o in conf_default.opts if o.name == 'rpc_version_cap']
        self.assertEqual([version], list(cap[0].type.choices))

    def test_uncapped_sends_any_version(self):
        client = rpcapi.ConductorAPI()._client
        self.assertTrue(client.can_send_version('1.0'))
        self.assertTrue(client.can_send_version(self.NEXT))

    def test_capped_sends_up_to_the_cap(self):
        self.config(rpc_version_cap='1.0')
        api = rpcapi.ConductorAPI()
        self.assertTrue(api._client.can_send_version('1.0'))
        self.assertFalse(api._client.can_send_version(self.NEXT))

    def test_cap_outside_the_known_versions_is_refused(self):
        for cap in (self.NEXT, '2.0'):
            self.assertRaises(ValueError, self.config, rpc_version_cap=cap)

    def test_version_reaches_the_message(self):
        self.config(rpc_version_cap='1.0')
        api = rpcapi.ConductorAPI()
        with mock.patch.object(rpc.get_transport(), '_send',
                               autospec=True) as send:
            api._cast(self.ctx, 'c1', 'abort_nodes', version='1.0',
                      node_uuids=[])
        target, _, message = send.call_args.args
        self.assertEqual(('c1', '1.0'), (target.server, target.version))
        self.assertEqual(('abort_nodes', '1.0'),
                         (message['method'], message['version']))

    def test_above_the_cap_is_503_and_not_sent(self):
        self.config(rpc_version_cap='1.0')
        api = rpcapi.ConductorAPI()
        with mock.patch.object(rpc.get_transport(), '_send',
                               autospec=True) as send:
            for send_one in (api._call, api._cast):
                e = self.assertRaises(
                    exception.ServiceUnavailable, send_one, self.ctx, 'c1',
                    'later_method', version=self.NEXT)
                self.assertEqual(503, e.status)
                self.assertEqual(
                    'later_method needs conductor RPC API 1.1, above '
                    '[DEFAULT]rpc_version_cap 1.0: not every conductor '
                    'runs the release that has it yet', str(e))
        send.assert_not_called()
