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
"""Site actions on the fake driver: dry run, deploy_site to the end, its
task tree and deployment records."""

from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from baremetal_orch_tempest_plugin.tests import base


class TestDeploySite(base.BaremetalOrchTest):
    """Two groups of fake nodes, ``compute`` depending on ``control``."""

    @classmethod
    def resource_setup(cls):
        super().resource_setup()
        site = cls.name('site')
        cls.tags = {'control': site + '-control',
                    'compute': site + '-compute'}
        cls.nodes = {group: [cls.create_node(name=cls.name(group[:3]),
                                             tags=[tag], rack_name=site)
                             for _ in range(2)]
                     for group, tag in cls.tags.items()}
        cls.strategy = cls.name('strategy')
        cls.create_strategy(cls.strategy, [
            {'name': 'compute', 'depends_on': ['control'],
             'selectors': [{'node_tags': [cls.tags['compute']]}],
             'success_criteria': {'percent_successful_nodes': 100}},
            {'name': 'control',
             'selectors': [{'node_tags': [cls.tags['control']]}],
             'success_criteria': {'minimum_successful_nodes': 2}},
        ])

    @classmethod
    def deploy(cls):
        """Run the site's deploy_site once, for the tests that read it."""
        if not hasattr(cls, '_deployed'):
            _, action = cls.admin.create_action(
                'deploy_site', {'deployment_strategy': cls.strategy})
            cls._deployed = (action, cls.admin.wait_for_action(
                action['uuid']))
        return cls._deployed

    @classmethod
    def names(cls, group):
        return sorted(n['name'] for n in cls.nodes[group])

    @decorators.idempotent_id('e4b2c1d0-3f5a-4e6b-8c7d-9a0b1c2d3e01')
    def test_dry_run_plans_and_creates_nothing(self):
        _, before = self.admin.list('actions', name='deploy_site',
                                    limit=1000)
        _, body = self.admin.create_action(
            'deploy_site', {'deployment_strategy': self.strategy},
            dry_run=True)
        plan = body['plan']
        self.assertEqual(['control', 'compute'], plan['order'])
        self.assertEqual(self.names('control'),
                         sorted(plan['groups']['control']['nodes']))
        self.assertEqual(['control'],
                         plan['groups']['compute']['depends_on'])
        self.assertEqual({}, plan['overlaps'])
        self.assertEqual([], plan['empty_groups'])
        _, after = self.admin.list('actions', name='deploy_site',
                                   limit=1000)
        self.assertEqual(
            {a['uuid'] for a in before['actions']},
            {a['uuid'] for a in after['actions']})

    @decorators.idempotent_id('e4b2c1d0-3f5a-4e6b-8c7d-9a0b1c2d3e02')
    def test_unknown_strategy_and_action(self):
        exc = self.assertRaises(lib_exc.NotFound, self.admin.create_action,
                                'deploy_site', {'deployment_strategy':
                                                self.name('missing')})
        self.assertErrorDocument(404, exc.resp_body)
        exc = self.assertRaises(lib_exc.BadRequest, self.admin.create_action,
                                'reboot_site')
        self.assertErrorDocument(400, exc.resp_body)

    @decorators.idempotent_id('e4b2c1d0-3f5a-4e6b-8c7d-9a0b1c2d3e03')
    def test_deploy_site_to_the_end(self):
        created, action = self.deploy()
        self.assertIn(created['state'], ('pending', 'running'))
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']),
                         action['report'])

        report = action['report']
        self.assertEqual(['control', 'compute'], report['order'])
        for group in ('control', 'compute'):
            self.assertEqual('success', report['groups'][group]['status'])
            self.assertIsNone(report['groups'][group]['reason'])
            self.assertEqual(
                self.names(group),
                sorted(report['groups'][group]['succeeded_nodes']))
            for name in self.names(group):
                self.assertEqual('success', report['nodes'][name])
        for node in self.nodes['control'] + self.nodes['compute']:
            _, shown = self.admin.show('nodes', node['uuid'])
            self.assertEqual('active', shown['provision_state'])

        # The task tree: action -> group -> phase -> node.
        _, tree = self.admin.show_task_tree(action['task_uuid'])
        self.assertEqual(('action', 'deploy_site', action['uuid']),
                         (tree['kind'], tree['name'], tree['action_uuid']))
        self.assertEqual(['compute', 'control'],
                         sorted(t['name'] for t in tree['subtasks']))
        for group in tree['subtasks']:
            self.assertEqual('group', group['kind'])
            self.assertEqual(['prepare', 'deploy'],
                             [p['name'] for p in group['subtasks']])
            for phase in group['subtasks']:
                self.assertEqual(('phase', 'success'),
                                 (phase['kind'], phase['status']))
                self.assertEqual(
                    self.names(group['name']),
                    sorted(n['name'] for n in phase['subtasks']))
                for task in phase['subtasks']:
                    self.assertEqual('node', task['kind'])
                    self.assertEqual(action['uuid'], task['action_uuid'])

        # One deployment record per node deployed, complete.
        _, body = self.admin.list('deployments', action_uuid=action['uuid'])
        records = body['deployments']
        uuids = {n['uuid'] for n in self.nodes['control'] +
                 self.nodes['compute']}
        self.assertEqual(uuids, {r['node_uuid'] for r in records})
        for record in records:
            self.assertEqual(action['uuid'], record['action_uuid'])
            _, shown = self.admin.show('deployments', record['uuid'])
            self.assertEqual(record['node_uuid'], shown['node_uuid'])
            self.assertNotIn('token', shown.get('signal_url') or '')

    @decorators.idempotent_id('e4b2c1d0-3f5a-4e6b-8c7d-9a0b1c2d3e04')
    def test_task_tree_lists_groups_in_start_order(self):
        _, action = self.deploy()
        self.assertEqual(['control', 'compute'], action['report']['order'])
        _, tree = self.admin.show_task_tree(action['task_uuid'])
        # Groups in the order they started, as the report has them.
        self.assertEqual(action['report']['order'],
                         [t['name'] for t in tree['subtasks']])

    @decorators.idempotent_id('e4b2c1d0-3f5a-4e6b-8c7d-9a0b1c2d3e05')
    def test_action_lifecycle_events(self):
        _, action = self.deploy()
        _, body = self.admin.list('events', action_uuid=action['uuid'],
                                  limit=1000)
        events = body['events']
        self.assertEqual({action['uuid']},
                         {e['action_uuid'] for e in events})
        types = [e['event_type'] for e in events]
        self.assertEqual(1, types.count('action.started'))
        self.assertEqual(1, types.count('action.finished'))
        self.assertEqual(2, types.count('group.started'))
        self.assertEqual(2, types.count('group.finished'))
        self.assertNotIn('node.failed', types)
        finished = [e for e in events if e['event_type'] == 'action.finished']
        self.assertEqual(('complete', 'success'),
                         (finished[0]['details']['state'],
                          finished[0]['details']['result']))
