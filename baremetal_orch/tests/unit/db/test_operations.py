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
"""Strategies, actions, tasks, events and deployment records."""

import datetime

from oslo_utils import timeutils
from oslo_utils import uuidutils

from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base

DOC = {'schema': 'shipyard/DeploymentStrategy/v1',
       'metadata': {'name': 's1'}, 'data': {'groups': []}}


class TestStrategies(base.DbTestCase):

    def test_crud(self):
        row = dbapi.create_strategy('s1', DOC)
        self.assertEqual(('s1', DOC), (row.name, row.document))
        self.assertEqual(DOC, dbapi.get_strategy('s1').document)
        dbapi.destroy_strategy('s1')
        self.assertRaises(exception.StrategyNotFound, dbapi.get_strategy,
                          's1')
        self.assertRaises(exception.StrategyNotFound,
                          dbapi.destroy_strategy, 's1')

    def test_duplicate_name(self):
        dbapi.create_strategy('s1', DOC)
        e = self.assertRaises(exception.DuplicateName, dbapi.create_strategy,
                              's1', {'other': 1})
        self.assertIn('s1', str(e))
        self.assertEqual(DOC, dbapi.get_strategy('s1').document)

    def test_list_pages_by_name(self):
        for name in ('c', 'a', 'b'):
            dbapi.create_strategy(name, DOC)
        self.assertEqual(['a', 'b', 'c'],
                         [r.name for r in dbapi.list_strategies()])
        page = dbapi.list_strategies(limit=2)
        self.assertEqual(['a', 'b'], [r.name for r in page])
        self.assertEqual(['c'], [r.name for r in dbapi.list_strategies(
            limit=2, marker='b')])
        self.assertEqual(['c', 'b', 'a'], [r.name for r in
                                           dbapi.list_strategies(
                                               sort_dir='desc')])


class TestActions(base.DbTestCase):

    def test_crud(self):
        row = dbapi.create_action({'name': 'deploy_site',
                                   'parameters': {'a': 1}})
        self.assertEqual('pending', row.state)
        self.assertTrue(uuidutils.is_uuid_like(row.uuid))
        row = dbapi.update_action(row.uuid, {'state': 'running',
                                             'report': {'x': 1}})
        self.assertEqual(('running', {'x': 1}), (row.state, row.report))
        self.assertIsNotNone(row.updated_at)
        self.assertRaises(exception.ActionNotFound, dbapi.get_action,
                          uuidutils.generate_uuid())
        self.assertRaises(exception.ActionNotFound, dbapi.update_action,
                          uuidutils.generate_uuid(), {'state': 'failed'})

    def test_duplicate_uuid(self):
        row = dbapi.create_action({'name': 'deploy_site'})
        self.assertRaises(exception.Conflict, dbapi.create_action,
                          {'name': 'update_site', 'uuid': row.uuid})
        self.assertEqual('deploy_site', dbapi.get_action(row.uuid).name)

    def test_list_and_active(self):
        a = dbapi.create_action({'name': 'deploy_site'})
        b = dbapi.create_action({'name': 'update_site', 'state': 'running',
                                 'conductor': 'h1'})
        dbapi.create_action({'name': 'update_labels', 'state': 'complete'})
        self.assertEqual([a.uuid, b.uuid],
                         [r.uuid for r in dbapi.list_active_actions()])
        self.assertEqual([b.uuid], [r.uuid for r in dbapi.list_actions(
            {'conductor': 'h1'})])
        self.assertEqual(['update_labels'], [r.name for r in
                                             dbapi.list_actions(
                                                 {'state': 'complete'})])
        self.assertEqual(3, len(dbapi.list_actions()))

    def test_claim(self):
        row = dbapi.create_action({'name': 'deploy_site',
                                   'conductor': 'dead'})
        self.assertFalse(dbapi.claim_action(row.uuid, 'other', 'h1'))
        self.assertTrue(dbapi.claim_action(row.uuid, 'dead', 'h1'))
        # The second claimant lost the race.
        self.assertFalse(dbapi.claim_action(row.uuid, 'dead', 'h2'))
        self.assertEqual('h1', dbapi.get_action(row.uuid).conductor)
        free = dbapi.create_action({'name': 'deploy_site'})
        self.assertTrue(dbapi.claim_action(free.uuid, None, 'h2'))
        self.assertEqual('h2', dbapi.get_action(free.uuid).conductor)

    def _service(self, host, seen_ago, forced_down=False):
        dbapi.register_service(host)
        dbapi.update_service(host, {
            'last_seen_at': timeutils.utcnow() -
            datetime.timedelta(seconds=seen_ago),
            'forced_down': forced_down})

    def test_claim_only_while_the_heartbeat_is_stale(self):
        # (heartbeat age in s, forced down, claimed with a 60 s timeout)
        table = [(5, False, False),     # came back: keeps its action
                 (120, False, True),    # still dead
                 (5, True, True)]       # forced down counts as dead
        for i, (age, forced, claimed) in enumerate(table):
            host = 'c%d' % i
            self._service(host, age, forced)
            row = dbapi.create_action({'name': 'deploy_site',
                                       'conductor': host})
            self.assertEqual(claimed, dbapi.claim_action(
                row.uuid, host, 'me', heartbeat_timeout=60), host)
            self.assertEqual('me' if claimed else host,
                             dbapi.get_action(row.uuid).conductor)

    def test_claim_of_an_unknown_conductor(self):
        row = dbapi.create_action({'name': 'deploy_site',
                                   'conductor': 'never-registered'})
        self.assertTrue(dbapi.claim_action(row.uuid, 'never-registered',
                                           'me', heartbeat_timeout=60))

    def test_steal_reservation_only_while_the_heartbeat_is_stale(self):
        self._service('back', 5)
        self._service('dead', 120)
        for host, stolen in (('back', False), ('dead', True)):
            node = self.create_node(name='n-' + host, reservation=host)
            self.assertEqual(stolen, dbapi.steal_reservation(
                node.uuid, host, 'me', heartbeat_timeout=60))
            self.assertEqual('me' if stolen else host,
                             dbapi.get_node(node.uuid).reservation)
        # Without a timeout (a conductor recovering itself): taken.
        self.assertTrue(dbapi.steal_reservation('n-back', 'back', 'back'))


class TestTasks(base.DbTestCase):

    def test_tree_rows(self):
        action = uuidutils.generate_uuid()
        root = dbapi.create_task({'action_uuid': action, 'kind': 'action',
                                  'name': 'deploy_site'})
        kids = dbapi.create_tasks([
            {'action_uuid': action, 'parent_uuid': root, 'kind': 'group',
             'name': 'g%d' % i} for i in range(3)])
        self.assertEqual(3, len(set(kids)))
        self.assertEqual([], dbapi.create_tasks([]))
        self.assertEqual('pending', dbapi.get_task(root).status)
        self.assertEqual(kids, [t.uuid for t in dbapi.list_tasks(
            parent_uuid=root)])
        self.assertEqual([root] + kids, [t.uuid for t in dbapi.list_tasks(
            action_uuid=action)])
        self.assertEqual([root], [t.uuid for t in dbapi.list_tasks(
            action_uuid=action, kind='action')])
        dbapi.update_task(kids[0], {'status': 'success'})
        self.assertEqual({kids[0]: 'success', kids[1]: 'pending'},
                         dbapi.get_task_statuses(kids[:2]))
        self.assertEqual({}, dbapi.get_task_statuses([]))
        self.assertRaises(exception.TaskNotFound, dbapi.update_task,
                          uuidutils.generate_uuid(), {'status': 'x'})
        self.assertRaises(exception.TaskNotFound, dbapi.get_task,
                          uuidutils.generate_uuid())

    def test_start_task_unless_it_ended(self):
        final = ('success', 'failed')
        action = uuidutils.generate_uuid()
        for status, previous in (('pending', 'pending'),
                                 ('running', 'running'),
                                 ('success', None), ('failed', None)):
            uuid = dbapi.create_task({'action_uuid': action, 'kind': 'node',
                                      'name': status, 'status': status})
            self.assertEqual(previous, dbapi.start_task(uuid, final),
                             status)
            row = dbapi.get_task(uuid)
            self.assertEqual('running' if previous else status, row.status)
            self.assertEqual(previous == 'pending',
                             row.started_at is not None)
        self.assertRaises(exception.TaskNotFound, dbapi.start_task,
                          uuidutils.generate_uuid(), final)

    def test_release_node_with_the_task_outcome(self):
        node = self.create_node(name='n1')
        task = dbapi.create_task({'action_uuid': uuidutils.generate_uuid(),
                                  'kind': 'node', 'name': 'n1',
                                  'status': 'running'})
        dbapi.reserve_node('n1', 'h1')
        dbapi.release_node(node.uuid, 'h1',
                           task=(task, {'status': 'success'}))
        self.assertIsNone(dbapi.get_node('n1').reservation)
        self.assertEqual('success', dbapi.get_task(task).status)


class TestEvents(base.DbTestCase):

    def test_create_list(self):
        node, action = uuidutils.generate_uuid(), uuidutils.generate_uuid()
        dbapi.create_event('signal', resource_uuid=node, action_uuid=action,
                           message='m', details={'a': 1})
        dbapi.create_event('other', resource_uuid=node)
        self.assertEqual(['signal', 'other'], [e.event_type for e in
                                               dbapi.list_events(
                                                   {'resource_uuid': node})])
        events = dbapi.list_events({'action_uuid': action})
        self.assertEqual([('signal', 'm', {'a': 1})],
                         [(e.event_type, e.message, e.details)
                          for e in events])


class TestDeployments(base.DbTestCase):

    def test_one_live_record_per_node(self):
        node = uuidutils.generate_uuid()
        first = dbapi.create_deployment({'node_uuid': node})
        self.assertEqual('IN_PROGRESS', first.status)
        second = dbapi.create_deployment({'node_uuid': node})
        self.assertEqual([second.uuid], [d.uuid for d in
                                         dbapi.list_deployments(
                                             {'node_uuid': node})])
        self.assertTrue(dbapi.get_deployment(first.uuid).deleted)
        self.assertEqual(2, len(dbapi.list_deployments(
            {'node_uuid': node}, include_deleted=True)))

    def test_update_only_if_not_final(self):
        row = dbapi.create_deployment({'node_uuid':
                                       uuidutils.generate_uuid()})
        row = dbapi.update_deployment(row.uuid, {'status': 'COMPLETE',
                                                 'final': True},
                                      only_if_not_final=True)
        self.assertEqual('COMPLETE', row.status)
        self.assertRaises(exception.SignalAfterFinal,
                          dbapi.update_deployment, row.uuid,
                          {'status': 'FAILED'}, only_if_not_final=True)
        self.assertEqual('COMPLETE', dbapi.get_deployment(row.uuid).status)
        self.assertRaises(exception.DeploymentNotFound,
                          dbapi.update_deployment, uuidutils.generate_uuid(),
                          {'status': 'FAILED'})
