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
"""baremetal-orch-status upgrade check, in-process on sqlite."""

import datetime
import json
import os

import fixtures
from oslo_utils import timeutils

from baremetal_orch.cmd import status
from baremetal_orch.db import api as dbapi
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.cmd import cli

SUCCESS, WARNING, FAILURE = 0, 1, 2
SCHEMA = 'Database schema'
PEERS = 'Ironic peer_list'
SHARDS = 'Shard keys within conductor groups'
RPC = 'RPC transport'
DRIVERS = 'Enabled drivers'


class StatusTestCase(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.cli = self.useFixture(cli.CommandFixture(status))
        self.config(rpc_transport='oslo')
        self.config(group='conductor', heartbeat_timeout=60)

    def check(self):
        """(exit code, {check: (result, details)}) through --json."""
        out = self.cli.run('upgrade', 'check', '--json')
        doc = json.loads(out.stdout)
        return out.code, {c['check']: (c['result'], c['details'])
                          for c in doc['checks']}

    def retire_all(self):
        """Force down every service (those of a previous table row)."""
        for svc in dbapi.list_services():
            dbapi.update_service(svc.host, {'forced_down': True})

    def result(self, name):
        return self.check()[1][name][0]

    def service(self, host, shard_key=None, group=None, **values):
        dbapi.register_service(host, shard_key=shard_key,
                               conductor_group=group)
        if values:
            dbapi.update_service(host, values)


class TestAllPass(StatusTestCase):

    def test_clean_deployment(self):
        self.service('c1', 's1', 'g1')
        self.service('c2', 's2', 'g1')
        code, checks = self.check()
        self.assertEqual({SCHEMA: (SUCCESS, None), PEERS: (SUCCESS, None),
                          SHARDS: (SUCCESS, None), RPC: (SUCCESS, None),
                          DRIVERS: (SUCCESS, None)},
                         checks)
        self.assertEqual(SUCCESS, code)

    def test_table_output(self):
        out = self.cli.run('upgrade', 'check')
        self.assertEqual(0, out.code)
        for name in (SCHEMA, PEERS, SHARDS, RPC):
            self.assertIn('Check: %s' % name, out.stdout)
        self.assertIn('Result: Success', out.stdout)

    def test_usage(self):
        self.assertEqual(2, self.cli.run('upgrade').code)
        self.assertEqual(2, self.cli.run('upgrade', 'nope').code)


class TestSchema(StatusTestCase):

    def test_empty_database_fails(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'empty.sqlite')
        self.config(group='database', connection='sqlite:///%s' % path)
        sqla_api.reset_engine()
        code, checks = self.check()
        self.assertEqual(FAILURE, code)
        self.assertEqual(FAILURE, checks[SCHEMA][0])
        self.assertIn('baremetal-orch-manage db upgrade', checks[SCHEMA][1])

    def test_older_revision_fails(self):
        self.useFixture(fixtures.MockPatch(
            'baremetal_orch.cmd.status.schema_head',
            return_value='0004_future'))
        code, checks = self.check()
        self.assertEqual(FAILURE, code)
        self.assertIn('0003_action_steering, not 0004_future',
                      checks[SCHEMA][1])

    def test_head_is_the_newest_migration(self):
        self.assertEqual('0003_action_steering', status.schema_head())


class TestPeerList(StatusTestCase):

    def test_table(self):
        for peers, expected in (([], SUCCESS), (['c1'], SUCCESS),
                                (['c1', 'c2'], WARNING),
                                (['c1', 'c2', 'c3'], WARNING)):
            self.config(group='ironic', peer_list=peers)
            code, checks = self.check()
            self.assertEqual(expected, checks[PEERS][0], peers)
            self.assertEqual(expected, code, peers)
            if expected == WARNING:
                self.assertIn('deprecated', checks[PEERS][1])
                self.assertIn('shard_key', checks[PEERS][1])


class TestShardKeys(StatusTestCase):

    CASES = [
        ('all unsharded', [('a', None, 'g1'), ('b', None, 'g1')], SUCCESS),
        ('all sharded', [('a', 's1', 'g1'), ('b', 's2', 'g1')], SUCCESS),
        ('mixed in one group', [('a', 's1', 'g1'), ('b', None, 'g1')],
         WARNING),
        ('mixed in the default group', [('a', 's1', None), ('b', None, None)],
         WARNING),
        ('split across groups', [('a', 's1', 'g1'), ('b', None, 'g2')],
         SUCCESS),
    ]

    def test_table(self):
        for i, (name, services, expected) in enumerate(self.CASES):
            self.retire_all()
            for host, shard, group in services:
                self.service('case%d-%s' % (i, host), shard, group)
            self.assertEqual(expected, self.result(SHARDS), name)

    def test_warning_names_group_and_hosts(self):
        self.service('a', 's1', 'g1')
        self.service('b', None, 'g1')
        self.service('c', None, 'g2')
        details = self.check()[1][SHARDS][1]
        self.assertIn('conductor group g1: a (shard s1) set a shard key but '
                      'b do not', details)
        self.assertNotIn('g2', details)

    def test_forced_down_services_are_retired(self):
        self.service('a', 's1', 'g1')
        self.service('b', None, 'g1', forced_down=True)
        self.assertEqual(SUCCESS, self.result(SHARDS))


class TestRpcTransport(StatusTestCase):

    def _stale(self):
        return timeutils.utcnow() - datetime.timedelta(seconds=120)

    def test_table(self):
        cases = [
            ('oslo', [{}, {}], SUCCESS),
            ('none', [], SUCCESS),
            ('none', [{}], SUCCESS),
            ('none', [{}, {}], FAILURE),
            ('none', [{}, {'forced_down': True}], SUCCESS),
            ('none', [{}, {'last_seen_at': self._stale()}], SUCCESS),
            ('none', [{}, {'disabled': True}], FAILURE),
        ]
        for i, (transport, services, expected) in enumerate(cases):
            self.retire_all()
            self.config(rpc_transport=transport)
            for j, values in enumerate(services):
                self.service('case%d-%d' % (i, j), **values)
            self.assertEqual(expected, self.result(RPC),
                             (transport, services))

    def test_failure_names_the_services(self):
        self.config(rpc_transport='none')
        self.service('c1')
        self.service('c2')
        code, checks = self.check()
        self.assertEqual(FAILURE, code)
        self.assertIn('2 conductor services are alive (c1, c2)',
                      checks[RPC][1])


class TestEnabledDrivers(StatusTestCase):

    def test_nodes_of_a_driver_not_enabled(self):
        dbapi.create_node({'uuid': '11111111-2222-3333-4444-555555555555',
                           'name': 'n1', 'driver': 'fake',
                           'provision_state': 'enroll'})
        self.config(enabled_drivers=['fake', 'ironic'])
        self.assertEqual(SUCCESS, self.result(DRIVERS))
        # The split services' default: the fake node is left out.
        self.config(enabled_drivers=['ironic'])
        code, checks = self.check()
        self.assertEqual(FAILURE, code)
        self.assertIn('driver(s) fake, which [DEFAULT]enabled_drivers '
                      '(ironic) leaves out', checks[DRIVERS][1])
