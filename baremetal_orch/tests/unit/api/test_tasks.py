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
"""/v1/tasks/{uuid}?tree=true: action → group → phase → node."""

from oslo_utils import uuidutils

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.api import test_actions
from baremetal_orch.tests.unit.db import test_selectors_sql

TASK_FIELDS = {'uuid', 'kind', 'name', 'status', 'reason', 'node_uuid',
               'parent_uuid', 'action_uuid', 'created_at', 'started_at',
               'finished_at', 'updated_at', 'subtasks'}


def shape(doc):
    """(kind, name, status, [children]) of a tree document."""
    return (doc['kind'], doc['name'], doc['status'],
            [shape(c) for c in doc['subtasks']])


class TestTaskTree(base.ApiTestCase):

    def build(self):
        action = uuidutils.generate_uuid()

        def task(kind, name, parent=None, **kw):
            return dbapi.create_task(dict(
                action_uuid=action, parent_uuid=parent, kind=kind,
                name=name, **kw))
        root = task('action', 'deploy_site', status='running')
        g1 = task('group', 'ntp', root, status='success')
        g2 = task('group', 'control', root, status='failed',
                  reason='prepare_criteria_not_met')
        p1 = task('phase', 'prepare', g1, status='success')
        task('node', 'ntp01', p1, status='success',
             node_uuid=uuidutils.generate_uuid())
        p2 = task('phase', 'deploy', g1, status='success')
        task('node', 'ntp01', p2, status='success')
        p3 = task('phase', 'prepare', g2, status='failed')
        task('node', 'ctl01', p3, status='failed', reason='boom')
        task('node', 'ctl02', p3, status='success')
        # Another action's tasks never leak in.
        other = dbapi.create_task({'action_uuid': uuidutils.generate_uuid(),
                                   'kind': 'action', 'name': 'x'})
        return root, g2, other

    def test_tree(self):
        root, _g2, _other = self.build()
        tree = self.get('/v1/tasks/%s?tree=true' % root, status=200).json
        self.assertEqual(TASK_FIELDS, set(tree))
        self.assertEqual(
            ('action', 'deploy_site', 'running', [
                ('group', 'ntp', 'success', [
                    ('phase', 'prepare', 'success', [
                        ('node', 'ntp01', 'success', [])]),
                    ('phase', 'deploy', 'success', [
                        ('node', 'ntp01', 'success', [])])]),
                ('group', 'control', 'failed', [
                    ('phase', 'prepare', 'failed', [
                        ('node', 'ctl01', 'failed', []),
                        ('node', 'ctl02', 'success', [])])])]),
            shape(tree))
        ctl01 = tree['subtasks'][1]['subtasks'][0]['subtasks'][0]
        self.assertEqual('boom', ctl01['reason'])
        self.assertEqual(tree['subtasks'][1]['subtasks'][0]['uuid'],
                         ctl01['parent_uuid'])

    def test_subtree_and_flat(self):
        root, g2, _other = self.build()
        sub = self.get('/v1/tasks/%s?tree=true' % g2, status=200).json
        self.assertEqual(('group', 'control', 'failed'),
                         shape(sub)[:3])
        self.assertEqual('prepare_criteria_not_met', sub['reason'])
        self.assertEqual(2, len(sub['subtasks'][0]['subtasks']))
        for query in ('', '?tree=false'):
            flat = self.get('/v1/tasks/%s%s' % (root, query),
                            status=200).json
            self.assertEqual(2, len(flat['subtasks']))
            for child in flat['subtasks']:
                self.assertTrue(uuidutils.is_uuid_like(child))

    def test_tree_is_one_query(self):
        root, _g2, _other = self.build()
        engine = dbapi.get_engine()
        with test_selectors_sql.count_selects(engine) as seen:
            self.get('/v1/tasks/%s?tree=true' % root, status=200)
        tasks_selects = [s for s in seen if 'FROM tasks' in s]
        # One to find the task, one for the whole tree.
        self.assertEqual(2, len(tasks_selects), tasks_selects)

    def test_errors(self):
        root, _g2, _other = self.build()
        self.assertError(self.get('/v1/tasks/' + uuidutils.generate_uuid()),
                         404, 'baremetal_orch.task.not_found')
        self.assertError(self.get('/v1/tasks/nope'), 400,
                         detail_contains='nope')
        self.assertError(self.get('/v1/tasks/%s?tree=maybe' % root), 400,
                         detail_contains='tree')
        self.assertError(self.get('/v1/tasks'), 405)


class TestTreeOfARealAction(test_actions.ActionApiTestCase):

    def test_tree_after_a_deploy(self):
        strategy = dict(test_actions.STRATEGY, data={'groups': [
            test_actions.group('ntp', node_names=['ntp01']),
            test_actions.group('control', ['ntp'],
                               node_tags=['control'])]})
        self.load_site(strategy)
        action = self.post('/v1/actions', {'name': 'deploy_site'},
                           status=201).json
        action = self.finished(action['uuid'])
        tree = self.get('/v1/tasks/%s?tree=true' % action['task_uuid'],
                        status=200).json
        self.assertEqual(
            ('action', 'deploy_site', 'success', [
                ('group', 'ntp', 'success', [
                    ('phase', 'prepare', 'success', [
                        ('node', 'ntp01', 'success', [])]),
                    ('phase', 'deploy', 'success', [
                        ('node', 'ntp01', 'success', [])])]),
                ('group', 'control', 'success', [
                    ('phase', 'prepare', 'success', [
                        ('node', 'ctl01', 'success', []),
                        ('node', 'ctl02', 'success', [])]),
                    ('phase', 'deploy', 'success', [
                        ('node', 'ctl01', 'success', []),
                        ('node', 'ctl02', 'success', [])])])]),
            self._sorted(shape(tree)))
        node = tree['subtasks'][0]['subtasks'][0]['subtasks'][0]
        self.assertEqual(dbapi.get_node('ntp01').uuid, node['node_uuid'])
        self.assertIsNotNone(node['finished_at'])

    def _sorted(self, s):
        kind, name, status, children = s
        children = [self._sorted(c) for c in children]
        if kind == 'phase':
            children.sort()
        return (kind, name, status, children)
