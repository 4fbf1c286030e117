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
"""Tests of the shard-aware Ironic client, at the HTTP level."""

import os

import fixtures
from oslo_config import cfg
from oslo_utils import uuidutils
import testscenarios

from baremetal_orch.common import exception
from baremetal_orch.ironic import client as ironic_client
from baremetal_orch.ironic import peers as ironic_peers
from baremetal_orch.tests.unit.ironic import base

load_tests = testscenarios.load_tests_apply_scenarios

LISTINGS = [
    ('details', {'call': lambda c: c.list_nodes()}),
    ('fields', {'call': lambda c: c.list_nodes(fields=['name'])}),
    ('filtered', {'call': lambda c: c.list_nodes(
        provision_state='available')}),
]

SCOPES = [
    ('shard', {'scope': {'shard_key': 'a'},
               'expect': {'shard': 'a'}}),
    ('group', {'scope': {'conductor_group': 'g1'},
               'expect': {'conductor_group': 'g1'}}),
    ('shard_and_group', {'scope': {'shard_key': 'a',
                                   'conductor_group': 'G1'},
                         'expect': {'shard': 'a', 'conductor_group': 'g1'}}),
    ('unscoped', {'scope': {}, 'expect': {}}),
]


class TestScopeInvariant(base.IronicTestCase):
    """Every listing carries the configured shard and conductor group."""

    scenarios = testscenarios.multiply_scenarios(SCOPES, LISTINGS)

    def setUp(self):
        super().setUp()
        self.config(group='ironic', **self.scope)
        # Five nodes of each (shard, group): three pages of two each.
        for shard in ('a', 'b', None):
            for group in ('g1', 'g2'):
                for i in range(5):
                    self.ironic.add_node('%s-%s-%d' % (shard, group, i),
                                         shard=shard, conductor_group=group,
                                         provision_state='available')
        self.client = ironic_client.IronicClient(page_size=2)

    def _in_scope(self, node):
        return all(node[k] == v for k, v in self.expect.items())

    def test_every_listing_request_is_scoped(self):
        nodes = self.call(self.client)
        listings = self.ironic.listings()
        self.assertGreater(len(listings), 1)  # it did page
        for method, path, query, headers in listings:
            for key, value in self.expect.items():
                self.assertEqual(value, query.get(key),
                                 '%s %s %s' % (method, path, query))
            if not self.expect.get('shard'):
                self.assertNotIn('shard', query)
            self.assertEqual('2', query['limit'])
        names = sorted(n['name'] for n in nodes)
        wanted = sorted(n['name'] for n in self.ironic.nodes.values()
                        if self._in_scope(n))
        self.assertEqual(wanted, names)

    def test_pages_follow_the_marker_not_the_next_link(self):
        self.call(self.client)
        markers = [q.get('marker') for _m, _p, q, _h in
                   self.ironic.listings()]
        self.assertIsNone(markers[0])
        self.assertTrue(all(markers[1:]))
        self.assertEqual(len(markers), len(set(markers)))


class TestClient(base.IronicTestCase):

    def test_scope_filters_cannot_be_overridden(self):
        self.config(group='ironic', shard_key='a')
        client = ironic_client.IronicClient()
        for key in ('shard', 'conductor_group', 'sharded'):
            self.assertRaises(ValueError, client.list_nodes, **{key: 'x'})
        self.assertEqual([], self.ironic.listings())

    def test_fields_always_include_uuid(self):
        self.ironic.add_node('n1')
        nodes = ironic_client.IronicClient().list_nodes(fields=['name'])
        self.assertEqual([{'name': 'n1',
                           'uuid': list(self.ironic.nodes)[0]}], nodes)
        (listing,) = self.ironic.listings()
        self.assertEqual('/v1/nodes', listing[1])
        self.assertEqual('name,uuid', listing[2]['fields'])

    def test_microversion(self):
        for shard_key, version in ((None, '1.46'), ('a', '1.82')):
            self.config(group='ironic', shard_key=shard_key)
            ironic_client.IronicClient().list_nodes()
            headers = self.ironic.listings()[-1][3]
            self.assertEqual(version,
                             headers['X-OpenStack-Ironic-API-Version'])
            self.assertEqual('baremetal %s' % version,
                             headers['OpenStack-API-Version'])

    def test_partition_key_is_the_deprecated_conductor_group(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'baremetal-orch.conf')
        with open(path, 'w') as f:
            f.write('[ironic]\npartition_key = Rack1\n')
        cfg.CONF(['--config-file', path], project='baremetal_orch',
                 default_config_files=[])
        client = ironic_client.IronicClient()
        self.assertEqual('rack1', client.conductor_group)
        self.ironic.add_node('in', conductor_group='rack1')
        self.ironic.add_node('out', conductor_group='rack2')
        nodes = client.list_nodes()
        self.assertEqual(['in'], [n['name'] for n in nodes])
        self.assertEqual('rack1',
                         self.ironic.listings()[0][2]['conductor_group'])

    def test_get_node_is_not_scoped(self):
        self.config(group='ironic', shard_key='a')
        node = self.ironic.add_node('other', shard='b')
        got = ironic_client.IronicClient().get_node(node['uuid'])
        self.assertEqual('b', got['shard'])
        (request,) = self.ironic.requests('GET', '/v1/nodes/' + node['uuid'])
        self.assertEqual({}, request[2])

    def test_node_exists_anywhere(self):
        self.config(group='ironic', shard_key='a', conductor_group='g1')
        other = self.ironic.add_node('other', shard='b',
                                     conductor_group='g2')
        client = ironic_client.IronicClient()
        self.assertTrue(client.node_exists_anywhere(other['uuid']))
        self.assertFalse(client.node_exists_anywhere(
            uuidutils.generate_uuid()))
        # Confirmed by a GET of the node itself, never by a listing.
        self.assertEqual([], self.ironic.listings())

    def test_node_exists_anywhere_raises_when_ironic_fails(self):
        node = self.ironic.add_node('n')
        self.ironic.mock.get(
            base.fake_ironic.ENDPOINT + '/v1/nodes/' + node['uuid'],
            status_code=500, json={'error_message': 'boom'})
        self.assertRaises(ironic_client.IronicRequestFailed,
                          ironic_client.IronicClient().node_exists_anywhere,
                          node['uuid'])

    def test_list_shards(self):
        for shard in ('a', 'a', 'b'):
            self.ironic.add_node(shard=shard)
        shards = ironic_client.IronicClient().list_shards()
        self.assertEqual([{'name': 'a', 'count': 2},
                          {'name': 'b', 'count': 1}], shards)
        (request,) = self.ironic.requests('GET', '/v1/shards')
        self.assertEqual('1.82', request[3]['X-OpenStack-Ironic-API-Version'])

    def test_no_credentials_no_endpoint(self):
        self.config(group='ironic', auth_type=None, endpoint_override=None)
        self.assertRaises(exception.DriverError,
                          ironic_client.IronicClient().list_nodes)

    def test_endpoint_without_auth_type_is_noauth(self):
        self.config(group='ironic', auth_type=None)
        self.ironic.add_node('n1')
        self.assertEqual(1, len(ironic_client.IronicClient().list_nodes()))


class TestCheckInScope(base.IronicTestCase):

    # (shard_key, conductor_group, node shard, node group, in scope)
    TABLE = [
        (None, None, 'x', 'y', True),
        ('a', None, 'a', 'y', True),
        ('a', None, 'b', 'y', False),
        ('a', None, None, 'y', False),
        (None, 'g1', 'x', 'g1', True),
        (None, 'g1', 'x', 'G1', True),
        (None, 'g1', 'x', 'g2', False),
        (None, 'g1', 'x', '', False),
        ('a', 'g1', 'a', 'g1', True),
        ('a', 'g1', 'a', 'g2', False),
        ('a', 'g1', 'b', 'g1', False),
    ]

    def test_table(self):
        for shard_key, group, shard, node_group, ok in self.TABLE:
            self.config(group='ironic', shard_key=shard_key,
                        conductor_group=group)
            node = self.ironic.add_node(shard=shard,
                                        conductor_group=node_group)
            client = ironic_client.IronicClient()
            row = (shard_key, group, shard, node_group)
            if ok:
                self.assertEqual(node['uuid'], client.check_in_scope(
                    node['uuid'])['uuid'], row)
            else:
                exc = self.assertRaises(exception.NodeNotInShard,
                                        client.check_in_scope, node['uuid'])
                self.assertIn(node['uuid'], str(exc), row)

    def test_accepts_a_fetched_node(self):
        self.config(group='ironic', shard_key='a')
        client = ironic_client.IronicClient()
        self.assertRaises(exception.NodeNotInShard, client.check_in_scope,
                          {'uuid': 'u', 'shard': 'b'})
        self.assertEqual([], self.ironic.requests())


class TestRetries(base.IronicTestCase):

    def setUp(self):
        super().setUp()
        self.node = self.ironic.add_node('n', provision_state='manageable')
        self.uuid = self.node['uuid']
        self.client = ironic_client.IronicClient()

    def _puts(self):
        return len(self.ironic.requests(
            'PUT', '/v1/nodes/%s/states/provision' % self.uuid))

    def test_locked_node_is_retried(self):
        self.config(group='ironic', api_max_retries=3)
        self.ironic.locked[self.uuid] = 2
        self.client.set_provision_state(self.uuid, 'provide')
        self.assertEqual(3, self._puts())
        self.assertEqual('cleaning', self.node['provision_state'])

    def test_retries_are_bounded(self):
        self.config(group='ironic', api_max_retries=1)
        self.ironic.locked[self.uuid] = 5
        exc = self.assertRaises(ironic_client.IronicRequestFailed,
                                self.client.set_provision_state, self.uuid,
                                'provide')
        self.assertEqual(409, exc.status_code)
        self.assertEqual(2, self._puts())

    def test_a_provision_request_is_never_resent_blind(self):
        # 503 without the concurrency limit, a reset: not Ironic's word,
        # but the caller reads the node before asking again.
        self.config(group='ironic', outage_tolerance=600)
        for error in ((503, 'No free conductor workers'), None):
            if error:
                self.ironic.errors[self.uuid] = error
            else:
                self.ironic.resets[self.uuid] = 1
            exc = self.assertRaises(ironic_client.IronicRequestFailed,
                                    self.client.set_provision_state,
                                    self.uuid, 'provide')
            self.assertTrue(exc.outage)
            self.assertFalse(exc.busy)
        self.assertEqual(2, self._puts())

    def test_concurrency_limit_is_raised_at_once(self):
        self.config(group='ironic', outage_tolerance=600)
        self.ironic.busy[self.uuid] = 1
        exc = self.assertRaises(ironic_client.IronicRequestFailed,
                                self.client.set_provision_state, self.uuid,
                                'provide')
        self.assertTrue(exc.busy)
        self.assertFalse(exc.outage)
        self.assertEqual(1, self._puts())

    def test_final_conflict_is_not_retried(self):
        self.ironic.errors[self.uuid] = (409, 'Node is associated')
        exc = self.assertRaises(ironic_client.IronicRequestFailed,
                                self.client.set_provision_state, self.uuid,
                                'provide')
        self.assertEqual(409, exc.status_code)
        self.assertEqual('Node is associated', exc.details)
        self.assertEqual(1, self._puts())

    def test_no_retry_when_asked(self):
        self.ironic.locked[self.uuid] = 1
        self.assertRaises(ironic_client.IronicRequestFailed,
                          self.client.patch_node, self.uuid,
                          [{'op': 'add', 'path': '/extra/a', 'value': 1}],
                          retry=False)
        self.assertEqual(1, len(self.ironic.requests('PATCH')))

    def test_reset_connection_is_final_by_default(self):
        self.ironic.resets[self.uuid] = 1
        exc = self.assertRaises(ironic_client.IronicRequestFailed,
                                self.client.set_provision_state, self.uuid,
                                'provide')
        self.assertIn('Connection reset by peer', str(exc))
        self.assertEqual('manageable', self.node['provision_state'])

    def test_reset_connection_is_retried_with_connect_retries(self):
        self.config(group='ironic', connect_retries=2,
                    connect_retry_delay=0)
        self.ironic.resets[self.uuid] = 2
        self.client.set_provision_state(self.uuid, 'provide')
        self.assertEqual('cleaning', self.node['provision_state'])
        self.assertEqual(0, self.ironic.resets[self.uuid])

    def test_connect_retries_are_bounded(self):
        self.config(group='ironic', connect_retries=1,
                    connect_retry_delay=0)
        self.ironic.resets[self.uuid] = 3
        self.assertRaises(ironic_client.IronicRequestFailed,
                          self.client.set_provision_state, self.uuid,
                          'provide')
        self.assertEqual(1, self.ironic.resets[self.uuid])

    def test_bad_request_is_final(self):
        exc = self.assertRaises(ironic_client.IronicRequestFailed,
                                self.client.set_provision_state, self.uuid,
                                'active')
        self.assertEqual(400, exc.status_code)
        self.assertIn('can not be performed', exc.details)
        self.assertEqual(1, self._puts())


class FakeTime:

    def __init__(self):
        self.now = 1000.0
        self.slept = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


class TestOutage(base.IronicTestCase):
    """Requests Ironic does not answer, on a fake clock."""

    def setUp(self):
        super().setUp()
        self.config(group='ironic', outage_tolerance=30)
        self.node = self.ironic.add_node('n', provision_state='available')
        self.uuid = self.node['uuid']
        self.time = FakeTime()
        self.client = ironic_client.IronicClient(sleep=self.time.sleep,
                                                 clock=self.time.clock)
        self.log = self.useFixture(fixtures.FakeLogger(level='WARNING'))

    def _gets(self):
        return len(self.ironic.requests('GET', '/v1/nodes/%s' % self.uuid))

    def test_a_read_rides_out_an_outage(self):
        # (resets, answers 5xx, delays slept)
        table = [
            (1, None, [0.5]),
            (5, None, [0.5, 1.0, 2.0, 4.0, 5.0]),
            (0, (500, 'Internal Server Error'), [0.5]),
            (0, (502, 'Bad Gateway'), [0.5]),
        ]
        for resets, error, slept in table:
            self.time.slept = []
            self.ironic.resets[self.uuid] = resets
            if error:
                self.ironic.mock.get(
                    base.fake_ironic.ENDPOINT + '/v1/nodes/' + self.uuid,
                    [{'status_code': error[0],
                      'json': {'error_message': error[1]}},
                     {'json': self.ironic._handle}])
            node = self.client.get_node(self.uuid)
            self.assertEqual('available', node['provision_state'])
            self.assertEqual(slept, self.time.slept, (resets, error))
            if error:
                self.ironic.install(self.ironic.mock)

    def test_one_log_line_per_outage(self):
        self.ironic.resets[self.uuid] = 5
        self.client.get_node(self.uuid)
        self.ironic.resets[self.uuid] = 3
        self.client.get_node(self.uuid)
        lines = [line for line in self.log.output.splitlines()
                 if 'Ironic at' in line]
        self.assertEqual(4, len(lines), lines)
        self.assertIn('does not answer', lines[0])
        self.assertIn('answers again after 12.5 s', lines[1])
        self.assertIn('answers again after 3.5 s', lines[3])
        self.assertEqual(2, self.client.outage.count)

    def test_tolerance_spent(self):
        self.ironic.resets[self.uuid] = 1000
        exc = self.assertRaises(ironic_client.IronicUnreachable,
                                self.client.get_node, self.uuid)
        self.assertIn('Ironic did not answer for 3', str(exc))
        self.assertIn('outage_tolerance', str(exc))
        self.assertIn('Connection reset by peer', str(exc))
        self.assertTrue(exc.outage)
        self.assertGreaterEqual(sum(self.time.slept), 30)
        self.assertLess(sum(self.time.slept), 36)

    def test_requests_have_a_timeout(self):
        # Without one, a request never answered blocks every wait that
        # shares its poll, for ever.
        for configured, used in ((None, 60), (5, 5)):
            self.config(group='ironic', timeout=configured)
            self.client.get_node(self.uuid)
            self.assertEqual(
                used, self.ironic.mock.request_history[-1].timeout)

    def test_answers_are_final(self):
        self.ironic.mock.get(
            base.fake_ironic.ENDPOINT + '/v1/nodes/' + self.uuid,
            status_code=404, json={'error_message': 'Not found'})
        self.assertRaises(ironic_client.IronicRequestFailed,
                          self.client.get_node, self.uuid)
        self.assertEqual([], self.time.slept)
        self.assertEqual(1, self._gets())


class TestWaitForState(base.IronicTestCase):

    def setUp(self):
        super().setUp()
        self.node = self.ironic.add_node('n', provision_state='available')
        self.uuid = self.node['uuid']
        self.client = ironic_client.IronicClient()

    def test_waits_through_the_working_states(self):
        self.client.set_provision_state(self.uuid, 'active')
        self.assertEqual('deploying', self.node['provision_state'])
        node = self.client.wait_for_state(self.uuid, ['active'], 10)
        self.assertEqual('active', node['provision_state'])
        self.assertEqual(['deploying', 'active'],
                         self.ironic.states_entered(self.uuid))

    def test_failure_reports_last_error(self):
        self.ironic.fail[self.uuid] = ('active', 'deploy failed',
                                       'Image checksum mismatch')
        self.client.set_provision_state(self.uuid, 'active')
        exc = self.assertRaises(
            exception.ProvisioningFailed, self.client.wait_for_state,
            self.uuid, ['active'], 10, fail_states=['deploy failed'],
            label='node-1')
        self.assertIn('Image checksum mismatch', str(exc))
        self.assertIn('node-1', str(exc))

    def test_failure_waits_for_ironic_to_write_last_error(self):
        self.ironic.fail[self.uuid] = ('active', 'deploy failed',
                                       'Timeout reached while waiting for '
                                       'callback')
        self.ironic.late_error[self.uuid] = 2
        self.client.set_provision_state(self.uuid, 'active')
        exc = self.assertRaises(
            exception.ProvisioningFailed, self.client.wait_for_state,
            self.uuid, ['active'], 10, fail_states=['deploy failed'])
        self.assertIn('Timeout reached while waiting for callback', str(exc))

    def test_failure_without_last_error(self):
        self.ironic.fail[self.uuid] = ('active', 'deploy failed', None)
        self.client.set_provision_state(self.uuid, 'active')
        exc = self.assertRaises(
            exception.ProvisioningFailed, self.client.wait_for_state,
            self.uuid, ['active'], 10, fail_states=['deploy failed'])
        self.assertIn('Ironic moved the node to deploy failed', str(exc))

    def test_timeout(self):
        self.ironic.stuck.add(self.uuid)
        self.client.set_provision_state(self.uuid, 'active')
        exc = self.assertRaises(exception.ProvisioningTimeout,
                                self.client.wait_for_state, self.uuid,
                                ['active'], 0.2)
        self.assertIn('active', str(exc))
        self.assertEqual('deploying', self.node['provision_state'])


class TestPeerList(base.IronicTestCase):

    def test_no_warning_for_one_peer(self):
        logger = self.useFixture(fixtures.FakeLogger())
        for peers in ([], ['host-1'], ['host-1', 'host-1']):
            self.config(group='ironic', peer_list=peers)
            self.assertFalse(ironic_peers.warn_deprecated_peer_list())
            self.assertIsNone(ironic_peers.peer_ring())
        self.assertNotIn('peer_list', logger.output)

    def test_warning_for_several_peers(self):
        logger = self.useFixture(fixtures.FakeLogger())
        self.config(group='ironic', peer_list=['host-1', 'host-2'])
        self.assertTrue(ironic_peers.warn_deprecated_peer_list())
        self.assertIn('[ironic]peer_list is deprecated', logger.output)
        self.assertIn('shard_key', logger.output)
        self.assertIn('host-1, host-2', logger.output)

    def test_ring_gives_each_node_one_owner(self):
        self.config(group='ironic', peer_list=['h1', 'h2', 'h3'])
        ring = ironic_peers.peer_ring()
        uuids = [uuidutils.generate_uuid() for _ in range(200)]
        owners = {u: ring.owner(u) for u in uuids}
        self.assertEqual({'h1', 'h2', 'h3'}, set(owners.values()))
        for uuid, owner in owners.items():
            self.assertEqual([owner], [h for h in ('h1', 'h2', 'h3')
                                       if ring.owns(h, uuid)])

    def test_losing_a_peer_only_moves_its_nodes(self):
        uuids = [uuidutils.generate_uuid() for _ in range(200)]
        before = ironic_peers.PeerRing(['h1', 'h2', 'h3'])
        after = ironic_peers.PeerRing(['h1', 'h2'])
        for uuid in uuids:
            if before.owner(uuid) != 'h3':
                self.assertEqual(before.owner(uuid), after.owner(uuid))
