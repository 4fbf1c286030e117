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
"""A small site deployed over a real Ironic (fake-hardware).

The Ironic nodes are created in Ironic, in a shard of their own; the
service's conductor imports them (its periodic Ironic sync) and deploys
them through Ironic. Three groups: ``control`` (two Ironic nodes),
``compute`` depending on it, whose fake node fails its deploy
(``driver_info.fake_fail_phase``), and ``storage`` (an Ironic node)
depending on ``compute``. The action fails; the report says which group
failed and why, ``storage`` is never attempted, and Ironic shows the
control nodes active and the storage node untouched.
"""

from tempest import config
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from baremetal_orch_tempest_plugin.tests import base

CONF = config.CONF

#: A fake-hardware node whose every interface is a fake one (or noop).
IRONIC_NODE = {'driver': 'fake-hardware', 'boot_interface': 'fake',
               'deploy_interface': 'fake', 'management_interface': 'fake',
               'power_interface': 'fake', 'network_interface': 'noop'}


class TestSiteOverIronic(base.BaremetalOrchTest):

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.baremetal_orch.ironic_backend:
            raise cls.skipException('no Ironic behind baremetal_orch '
                                    '([baremetal_orch] ironic_backend)')

    @classmethod
    def setup_clients(cls):
        super().setup_clients()
        cls.ironic = cls.os_system_admin.baremetal_orch_ironic.IronicClient()

    @classmethod
    def create_ironic_node(cls, name, shard):
        _, inode = cls.ironic.create_node(name=name, shard=shard,
                                          **IRONIC_NODE)
        cls.addClassResourceCleanup(cls._delete_ironic_node, inode['uuid'])
        # Imported by the conductor's sync, under Ironic's UUID.
        node = cls.admin.wait_for_node(
            inode['uuid'], timeout=CONF.baremetal_orch.ironic_sync_timeout)
        return inode, node

    @classmethod
    def _delete_ironic_node(cls, uuid):
        try:
            # Any state: maintenance lets Ironic delete an active node.
            cls.ironic.set_maintenance(uuid)
            cls.ironic.delete_node(uuid)
        except lib_exc.NotFound:
            pass

    @classmethod
    def resource_setup(cls):
        super().resource_setup()
        site = cls.name('ironic-site')
        shard = site
        cls.ironic_nodes = {}
        cls.tags = {g: '%s-%s' % (site, g)
                    for g in ('control', 'compute', 'storage')}
        for group, count in (('control', 2), ('storage', 1)):
            for _ in range(count):
                inode, node = cls.create_ironic_node(cls.name(group[:3]),
                                                     shard)
                _, node = cls.admin.update('nodes', node['uuid'], [
                    {'op': 'add', 'path': '/tags',
                     'value': [cls.tags[group]]}])
                cls.ironic_nodes.setdefault(group, []).append(inode)
        cls.broken = cls.create_node(
            name=cls.name('cmp'), tags=[cls.tags['compute']],
            driver_info={'fake_fail_phase': 'deploy'})
        cls.strategy = cls.name('ironic-site')
        cls.create_strategy(cls.strategy, [
            {'name': 'control',
             'selectors': [{'node_tags': [cls.tags['control']]}],
             'success_criteria': {'percent_successful_nodes': 100}},
            {'name': 'compute', 'depends_on': ['control'],
             'selectors': [{'node_tags': [cls.tags['compute']]}],
             'success_criteria': {'percent_successful_nodes': 100}},
            {'name': 'storage', 'depends_on': ['compute'],
             'selectors': [{'node_tags': [cls.tags['storage']]}]},
        ])

    @decorators.idempotent_id('3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b01')
    def test_deploy_with_a_failing_group(self):
        control = sorted(n['name'] for n in self.ironic_nodes['control'])
        storage = [n['name'] for n in self.ironic_nodes['storage']]
        _, action = self.admin.create_action(
            'deploy_site', {'deployment_strategy': self.strategy})
        action = self.admin.wait_for_action(action['uuid'])
        report = action['report']
        self.assertEqual(('failed', 'failed'),
                         (action['state'], action['result']), report)
        self.assertEqual(['control', 'compute'], report['order'][:2])
        self.assertNotIn('storage', report['order'])

        groups = report['groups']
        self.assertEqual(('success', None, control),
                         (groups['control']['status'],
                          groups['control']['reason'],
                          sorted(groups['control']['succeeded_nodes'])))
        self.assertEqual(('failed', 'deploy_criteria_not_met',
                          [self.broken['name']]),
                         (groups['compute']['status'],
                          groups['compute']['reason'],
                          groups['compute']['failed_nodes']))
        self.assertEqual(('failed', 'dependency_failed'),
                         (groups['storage']['status'],
                          groups['storage']['reason']))
        expected = dict({name: 'success' for name in control},
                        **{self.broken['name']: 'failure'},
                        **{name: 'not_started' for name in storage})
        self.assertEqual(expected, {name: report['nodes'][name]
                                    for name in expected})

        # What Ironic itself says.
        for inode in self.ironic_nodes['control']:
            _, shown = self.ironic.show_node(inode['uuid'])
            self.assertEqual('active', shown['provision_state'])
        for inode in self.ironic_nodes['storage']:
            _, shown = self.ironic.show_node(inode['uuid'])
            self.assertEqual('enroll', shown['provision_state'])
        # The deployment records: the two Ironic nodes and the broken one.
        _, body = self.admin.list('deployments', action_uuid=action['uuid'])
        by_node = {r['node_uuid']: r for r in body['deployments']}
        for inode in self.ironic_nodes['control']:
            self.assertIn(inode['uuid'], by_node)
        for inode in self.ironic_nodes['storage']:
            self.assertNotIn(inode['uuid'], by_node)
        # The events name the failed node, and no other.
        _, body = self.admin.list('events', action_uuid=action['uuid'],
                                  limit=1000)
        failed = {e['resource_uuid'] for e in body['events']
                  if e['event_type'] == 'node.failed'}
        self.assertEqual({self.broken['uuid']}, failed)
