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
"""The order groups run in, and the action's history in /v1/events."""

import copy
import threading

import fixtures

from baremetal_orch.common import context
from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import event as event_obj
from baremetal_orch.tests.unit.api import test_actions

# Eight groups of one node each that are all ready at once, then one that
# waits for the first: a serialized run must take the dry run's order.
WIDE = ['g%d' % i for i in range(8)]


def wide_strategy():
    groups = [test_actions.group(name, critical=False, node_names=[name])
              for name in reversed(WIDE)]
    groups.insert(3, test_actions.group('late', [WIDE[-1]], critical=False,
                                        node_names=['late']))
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 'deployment-strategy'},
            'data': {'groups': groups}}


class TestGroupOrder(test_actions.ActionApiTestCase):

    def load_wide(self, seconds=None):
        """The nodes (each phase lasting ``seconds``, else none) and
        :func:`wide_strategy`."""
        info = {} if seconds is None else {'fake_duration': seconds}
        for name in WIDE + ['late']:
            self.post('/v1/nodes', {'driver': 'fake', 'name': name,
                                    'driver_info': info}, status=201)
        self.post('/v1/deployment_strategies', wide_strategy(), status=201)

    def deploy(self):
        plan = self.post('/v1/actions', {'name': 'deploy_site',
                                         'dry_run': True},
                         status=200).json['plan']['order']
        created = self.post('/v1/actions', {'name': 'deploy_site'},
                            status=201).json
        return plan, self.finished(created['uuid'])

    def tree_groups(self, action):
        tree = self.get('/v1/tasks/%s?tree=true' % action['task_uuid'],
                        status=200).json
        return [t['name'] for t in tree['subtasks']]

    def test_serialized_groups_start_in_the_dry_run_order(self):
        self.config(group='conductor', max_concurrent_groups=1)
        self.load_wide()
        plan, action = self.deploy()
        # Ties are broken by document order: the document lists g7 first.
        # 'late' becomes ready once g7 ended and then goes before g4.
        self.assertEqual(['g7', 'g6', 'g5', 'late', 'g4', 'g3', 'g2', 'g1',
                          'g0'], plan)
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']))
        self.assertEqual(plan, action['report']['order'])
        self.assertEqual(plan, self.tree_groups(action))

    def test_parallel_groups_start_in_the_plan_priority(self):
        self.config(group='conductor', max_concurrent_groups=3)
        # Phases that last: every atom waits at its slot before the first
        # groups end (taskflow schedules the atoms one by one; with
        # instant nodes, two groups could end before a later atom asked,
        # and a group after it in the plan took the third slot).
        self.load_wide(seconds=0.3)
        plan, action = self.deploy()
        order = action['report']['order']
        self.assertEqual(sorted(plan), sorted(order))
        # The first three ready groups of the plan took the three slots.
        self.assertEqual({'g7', 'g6', 'g5'}, set(order[:3]))
        self.assertEqual(order, self.tree_groups(action))

    def test_tree_lists_groups_never_started_after_the_others(self):
        self.config(group='conductor', max_concurrent_groups=1)
        strategy = copy.deepcopy(test_actions.STRATEGY)
        strategy['data']['groups'][0]['success_criteria'] = {
            'minimum_successful_nodes': 1}
        self.load_site(strategy)
        self.patch('/v1/nodes/ntp01', [
            {'op': 'add', 'path': '/driver_info/fake_fail_phase',
             'value': 'prepare'}], status=200)
        _plan, action = self.deploy()
        self.assertEqual(('failed', 'failed'),
                         (action['state'], action['result']))
        # ntp failed: control and compute never started.
        self.assertEqual(['ntp', 'empty'], action['report']['order'])
        self.assertEqual(['ntp', 'empty', 'control', 'compute'],
                         self.tree_groups(action))


class TestActionEvents(test_actions.ActionApiTestCase):

    def events(self, **filters):
        query = '&'.join('%s=%s' % kv for kv in sorted(filters.items()))
        return self.get('/v1/events?' + query, status=200).json['events']

    def states_seen_at_the_end(self):
        """The action's state as another client reads it while the
        conductor writes its ``action.finished`` event: a list, one state
        an event."""
        seen = []
        record = event_obj.Event.record

        def read(uuid):
            seen.append(dbapi.get_action(uuid).state)

        def probe(event_type, **kwargs):
            if event_type == event_obj.ACTION_FINISHED:
                # Its own thread: its own session, outside the writer's
                # transaction.
                reader = threading.Thread(target=read,
                                          args=(kwargs['action_uuid'],))
                reader.start()
                reader.join()
            return record(event_type, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'baremetal_orch.objects.event.Event.record', probe))
        return seen

    def test_an_action_seen_ended_has_its_finished_event(self):
        # A client that polls the action until it ended and then lists its
        # events finds the last one: the action's end and its event are
        # written in one transaction, for every kind of action.
        seen = self.states_seen_at_the_end()
        self.load_site()
        created = self.post('/v1/actions', {'name': 'deploy_site'},
                            status=201).json
        self.finished(created['uuid'])
        created = self.post('/v1/actions', {
            'name': 'update_labels',
            'parameters': {'target_nodes': ['ctl01']}}, status=201).json
        self.finished(created['uuid'])
        # An action that cannot run, ended by its conductor.
        cannot = dbapi.create_action({'name': 'deploy_site',
                                      'state': 'running'})
        self.manager.actions.fail(context.get_admin_context(), cannot.uuid,
                                  'no flow')
        self.assertEqual(['running'] * 3, seen)

    def test_deploy_site_history(self):
        self.config(group='conductor', max_concurrent_groups=1)
        self.load_site()
        self.patch('/v1/nodes/ctl02', [
            {'op': 'add', 'path': '/driver_info/fake_fail_phase',
             'value': 'deploy'}], status=200)
        created = self.post('/v1/actions', {'name': 'deploy_site'},
                            status=201).json
        action = self.finished(created['uuid'])
        events = self.events(action_uuid=action['uuid'])
        types = [e['event_type'] for e in events]
        self.assertEqual('action.started', types[0])
        self.assertEqual('action.finished', types[-1])
        self.assertEqual(
            {'state': action['state'], 'result': action['result']},
            {k: events[-1]['details'][k] for k in ('state', 'result')})
        started = [e['details']['group'] for e in events
                   if e['event_type'] == 'group.started']
        self.assertEqual(action['report']['order'], started)
        finished = {e['details']['group']: e for e in events
                    if e['event_type'] == 'group.finished'}
        self.assertEqual(set(action['report']['groups']), set(finished))
        for name, entry in action['report']['groups'].items():
            details = finished[name]['details']
            self.assertEqual(
                (entry['status'], entry['reason'], len(entry['nodes']),
                 len(entry['succeeded_nodes']), len(entry['failed_nodes'])),
                (details['status'], details['reason'], details['nodes'],
                 details['succeeded'], details['failed']), name)
        failed = [e for e in events if e['event_type'] == 'node.failed']
        self.assertEqual([('ctl02', 'deploy', 'control')],
                         [(e['details']['node'], e['details']['phase'],
                           e['details']['group']) for e in failed])
        ctl02 = self.get('/v1/nodes/ctl02', status=200).json
        self.assertEqual(ctl02['uuid'], failed[0]['resource_uuid'])
        # Filtered by the node, only its own history.
        self.assertEqual([failed[0]['uuid']], [
            e['uuid'] for e in self.events(resource_uuid=ctl02['uuid'])])
        # Paged like every list: the next link keeps the filter.
        page = self.get('/v1/events?limit=2&action_uuid=%s'
                        % action['uuid'], status=200).json
        self.assertEqual(types[:2], [e['event_type']
                                     for e in page['events']])
        self.assertIn('action_uuid=%s' % action['uuid'], page['next'])

    def test_update_labels_history(self):
        self.load_site()
        created = self.post('/v1/actions', {'name': 'deploy_site'},
                            status=201).json
        self.finished(created['uuid'])
        self.config(group='labels', driver='noop', noop_fail_nodes=['ctl01'])
        created = self.post('/v1/actions', {
            'name': 'update_labels',
            'parameters': {'target_nodes': ['ctl01', 'ntp01']}},
            status=201).json
        action = self.finished(created['uuid'])
        self.assertEqual('failed', action['state'])
        events = self.events(action_uuid=action['uuid'])
        self.assertEqual(['action.started', 'node.failed', 'action.finished'],
                         [e['event_type'] for e in events])
        self.assertEqual(('ctl01', 'labels'),
                         (events[1]['details']['node'],
                          events[1]['details']['phase']))
        self.assertEqual('failed', events[2]['details']['state'])
