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
"""Pause, resume and abort of a running site action, through the API on
the all-in-one service with the fake driver (doc/source/admin/steering.rst)."""

import collections
import datetime
import time

from oslo_utils import timeutils

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base

FINAL = ('complete', 'failed', 'cancelled')


def strategy(groups):
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 'deployment-strategy'},
            'data': {'groups': groups}}


def group(name, depends_on=(), percent=100):
    return {'name': name, 'critical': False, 'depends_on': list(depends_on),
            'selectors': [{'node_tags': [name]}],
            'success_criteria': {'percent_successful_nodes': percent}}


class SteeringTestCase(base.ApiTestCase):

    #: Seconds each fake phase takes.
    duration = 0.3

    def setUp(self):
        super().setUp()
        self.config(group='conductor', max_concurrent_nodes=2)

    def make_site(self, layout, **driver_info):
        """``layout``: [(group, nodes, depends_on)]."""
        for name, count, _deps in layout:
            for i in range(count):
                info = dict(driver_info, fake_duration=self.duration)
                self.post('/v1/nodes', {
                    'driver': 'fake', 'name': '%s-%d' % (name, i),
                    'tags': [name], 'driver_info': info}, status=201)
        self.post('/v1/deployment_strategies', strategy(
            [group(name, deps) for name, _count, deps in layout]),
            status=201)

    def start(self, **parameters):
        body = {'name': 'deploy_site'}
        if parameters:
            body['parameters'] = parameters
        return self.post('/v1/actions', body, status=201).json['uuid']

    def action(self, uuid):
        return self.get('/v1/actions/' + uuid, status=200).json

    def control(self, uuid, verb, reason=None, status=202):
        body = {'verb': verb}
        if reason is not None:
            body['reason'] = reason
        return self.post('/v1/actions/%s/control' % uuid, body,
                         status=status)

    def wait_state(self, uuid, *states):
        def check():
            action = self.action(uuid)
            if action['state'] in states:
                return action
        return self.wait_for(check, timeout=60)

    def node_task_count(self, uuid):
        """{node uuid: task rows} (one a phase)."""
        return collections.Counter(t.node_uuid for t in dbapi.list_tasks(
            action_uuid=uuid, kind='node'))

    def events(self, uuid):
        return [e['event_type'] for e in self.get(
            '/v1/events?action_uuid=%s' % uuid, status=200).json['events']]


class TestPauseResume(SteeringTestCase):

    def test_pause_drains_then_resume_completes_sending_no_node_twice(self):
        self.make_site([('a', 6, ()), ('b', 2, ('a',))])
        uuid = self.start()
        self.wait_state(uuid, 'running')
        paused = self.control(uuid, 'pause', reason='bad firmware wave')
        self.assertIn(paused.json['state'], ('pausing', 'paused'))
        self.assertEqual('bad firmware wave', paused.json['state_reason'])
        action = self.wait_state(uuid, 'paused', *FINAL)
        self.assertEqual('paused', action['state'])
        self.assertEqual('bad firmware wave', action['state_reason'])
        # Nothing starts while paused: the count of node work is stable.
        started = sum(self.node_task_started(uuid))
        time.sleep(2 * self.duration + 0.5)
        self.assertEqual(started, sum(self.node_task_started(uuid)))
        self.assertEqual('paused', self.action(uuid)['state'])
        # Some node work of group a is left for after the resume.
        self.assertLess(started, 6 * 2 + 2 * 2)

        resumed = self.control(uuid, 'resume')
        self.assertEqual(('running', None), (resumed.json['state'],
                                             resumed.json['state_reason']))
        action = self.wait_state(uuid, *FINAL)
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']))
        self.assertIsNone(action['state_reason'])
        # Each node went through prepare and deploy exactly once.
        tasks = self.node_task_count(uuid)
        self.assertEqual(8, len(tasks))
        self.assertEqual({2}, set(tasks.values()))
        events = self.events(uuid)
        self.assertEqual(1, events.count('action.paused'))
        self.assertEqual(1, events.count('action.resumed'))

    def node_task_started(self, uuid):
        return [1 for t in dbapi.list_tasks(action_uuid=uuid, kind='node')
                if t.started_at is not None]

    def test_verbs_that_do_not_apply_are_409_naming_the_state(self):
        self.make_site([('a', 1, ())])
        uuid = self.start()
        self.wait_state(uuid, *FINAL)
        for verb in ('pause', 'resume', 'abort'):
            error = self.control(uuid, verb, status=409).json
            self.assertIn('it is complete', str(error))

    def test_resume_of_a_running_action_is_409(self):
        self.duration = 2
        self.make_site([('a', 2, ())])
        uuid = self.start()
        self.wait_state(uuid, 'running')
        error = self.control(uuid, 'resume', status=409).json
        self.assertIn('it is running', str(error))
        self.control(uuid, 'pause')
        error = self.control(uuid, 'pause', status=409).json
        self.assertIn('it is paus', str(error))
        self.control(uuid, 'abort')
        self.wait_state(uuid, *FINAL)

    def test_bad_requests(self):
        self.make_site([('a', 1, ())])
        uuid = self.start()
        self.control(uuid, 'stop', status=400)
        self.post('/v1/actions/%s/control' % uuid,
                  {'verb': 'pause', 'extra': 1}, status=400)
        self.control(uuid, 'pause', reason='x' * 256, status=400)
        self.post('/v1/actions/%s/control' % uuid, {}, status=400)
        self.control('not-a-uuid', 'pause', status=400)
        self.control('7b3d33f5-4a40-4cd0-9d3b-b8a2d0b2c3a1', 'pause',
                     status=404)
        self.assertEqual('complete', self.wait_state(uuid, *FINAL)['state'])


class TestAbort(SteeringTestCase):

    def test_abort_ends_cancelled_with_unstarted_groups_aborted(self):
        self.make_site([('a', 4, ()), ('b', 2, ('a',)), ('c', 2, ('b',))])
        uuid = self.start()
        self.wait_state(uuid, 'running')
        self.control(uuid, 'abort', reason='window closing')
        action = self.wait_state(uuid, *FINAL)
        self.assertEqual(('cancelled', 'failed', 'window closing'),
                         (action['state'], action['result'],
                          action['state_reason']))
        groups = action['report']['groups']
        for name in ('b', 'c'):
            self.assertEqual(('failed', 'aborted'),
                             (groups[name]['status'],
                              groups[name]['reason']), name)
        nodes = action['report']['nodes']
        for name in ('b-0', 'b-1', 'c-0', 'c-1'):
            self.assertEqual('not_started', nodes[name])
        # No node of b or c reached its driver.
        names = {n.uuid: n.name for n in dbapi.list_nodes()}
        touched = {names[t.node_uuid] for t in dbapi.list_tasks(
            action_uuid=uuid, kind='node') if t.started_at is not None}
        self.assertFalse({'b-0', 'b-1', 'c-0', 'c-1'} & touched)
        self.assertIn('action.aborted', self.events(uuid))

    def test_abort_of_a_paused_action(self):
        self.make_site([('a', 4, ()), ('b', 2, ('a',))])
        uuid = self.start()
        self.wait_state(uuid, 'running')
        self.control(uuid, 'pause')
        self.wait_state(uuid, 'paused', *FINAL)
        self.control(uuid, 'abort')
        action = self.wait_state(uuid, *FINAL)
        self.assertEqual('cancelled', action['state'])
        self.assertEqual(('failed', 'aborted'),
                         (action['report']['groups']['b']['status'],
                          action['report']['groups']['b']['reason']))


class TestWorkThatWaited(SteeringTestCase):
    """Node work a conductor received but had not handed to a driver when
    the action was paused (here, a node waiting for its lock) does not
    start while the action is paused: it goes back to the phase, which
    sends it again after the resume."""

    def start_with_a_node_held(self):
        """Group a of a-0 and a-1, a-0 locked by another operation; once
        a-1 is prepared, a-0 waits for its lock. Returns (action, a-0)."""
        self.make_site([('a', 2, ())])
        held = dbapi.get_node('a-0')
        dbapi.reserve_node(held.uuid, 'someone-else')
        self.addCleanup(dbapi.release_node, held.uuid, 'someone-else')
        uuid = self.start()
        self.wait_for(lambda: dbapi.get_node('a-1').provision_state ==
                      'available', timeout=60)
        return uuid, held

    def test_a_node_waiting_for_its_lock_does_not_start_once_paused(self):
        uuid, held = self.start_with_a_node_held()
        self.control(uuid, 'pause', reason='hold')
        # Given back while it waited: nothing is in flight, so the action
        # is paused though the other operation still holds the lock.
        self.wait_for(lambda: self.action(uuid)['state'] == 'paused',
                      timeout=10)
        task = [t for t in dbapi.list_tasks(action_uuid=uuid, kind='node')
                if t.node_uuid == held.uuid]
        self.assertEqual([('pending', None)],
                         [(t.status, t.started_at) for t in task])
        # The lock is free again: still nothing starts while paused.
        dbapi.release_node(held.uuid, 'someone-else')
        time.sleep(2 * self.duration + 0.5)
        node = dbapi.get_node('a-0')
        self.assertEqual(('enroll', None),
                         (node.provision_state, node.reservation))
        self.assertEqual('paused', self.action(uuid)['state'])
        self.control(uuid, 'resume')
        action = self.wait_state(uuid, *FINAL)
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']),
                         action['report'])
        # One task a node a phase: the work given back was not doubled.
        self.assertEqual({2}, set(self.node_task_count(uuid).values()))
        self.assertEqual('active', dbapi.get_node('a-0').provision_state)

    def test_an_abort_leaves_the_work_given_back_unstarted(self):
        uuid, _held = self.start_with_a_node_held()
        self.control(uuid, 'abort')
        action = self.wait_for(
            lambda: (self.action(uuid)
                     if self.action(uuid)['state'] in FINAL else None),
            timeout=10)
        self.assertEqual('cancelled', action['state'])
        self.assertEqual('not_started', action['report']['nodes']['a-0'])
        self.assertEqual('enroll', dbapi.get_node('a-0').provision_state)


class TestWindows(SteeringTestCase):

    def test_outside_every_window_the_action_waits_paused(self):
        self.make_site([('a', 2, ())])
        now = timeutils.utcnow(True)
        opens = now + datetime.timedelta(seconds=3)
        uuid = self.start(windows=[{
            'start': opens.isoformat(),
            'end': (opens + datetime.timedelta(hours=1)).isoformat()}])
        action = self.wait_state(uuid, 'paused', *FINAL)
        self.assertEqual(('paused', 'outside_window'),
                         (action['state'], action['state_reason']))
        self.assertEqual([], self.node_task_started(uuid))
        action = self.wait_state(uuid, *FINAL)
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']))
        events = self.events(uuid)
        self.assertIn('action.paused', events)
        self.assertIn('action.resumed', events)

    def node_task_started(self, uuid):
        return [t for t in dbapi.list_tasks(action_uuid=uuid, kind='node')
                if t.started_at is not None]

    def test_an_explicit_pause_outlives_the_window_opening(self):
        self.make_site([('a', 1, ())])
        now = timeutils.utcnow(True)
        opens = now + datetime.timedelta(seconds=2)
        uuid = self.start(windows=[{
            'start': opens.isoformat(),
            'end': (opens + datetime.timedelta(hours=1)).isoformat()}])
        self.wait_state(uuid, 'paused', *FINAL)
        self.control(uuid, 'resume', status=409)
        self.control(uuid, 'pause', reason='hold')
        time.sleep(3)
        action = self.action(uuid)
        self.assertEqual(('paused', 'hold'),
                         (action['state'], action['state_reason']))
        self.control(uuid, 'resume')
        action = self.wait_state(uuid, *FINAL)
        self.assertEqual('complete', action['state'])


class TestPausedTimeDoesNotCount(SteeringTestCase):

    def test_a_pause_longer_than_the_phase_timeout(self):
        # One node at a time, a stall timeout of 2 s, and a pause of 4 s
        # in the middle of the prepare phase.
        self.config(group='conductor', max_concurrent_nodes=1,
                    prepare_timeout=2, deploy_timeout=2)
        self.make_site([('a', 4, ())])
        uuid = self.start()
        self.wait_for(lambda: len(self.started(uuid)) >= 2, timeout=60)
        self.control(uuid, 'pause')
        self.wait_state(uuid, 'paused', *FINAL)
        time.sleep(4)
        self.control(uuid, 'resume')
        action = self.wait_state(uuid, *FINAL)
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']),
                         action['report'])

    def started(self, uuid):
        return [t for t in dbapi.list_tasks(action_uuid=uuid, kind='node')
                if t.started_at is not None]


class TestProgress(SteeringTestCase):

    def test_progress_and_eta(self):
        self.make_site([('a', 4, ()), ('b', 2, ('a',))])
        uuid = self.start()
        first = self.action(uuid)['progress']
        self.assertEqual({'prepare', 'deploy'}, set(first['phases']))
        for phase in first['phases'].values():
            self.assertEqual(6, sum(phase.values()), first)

        def with_eta():
            action = self.action(uuid)
            if (action['progress'] or {}).get('eta') is not None:
                return action
            if action['state'] in FINAL:
                return action
        running = self.wait_for(with_eta, timeout=60)
        self.assertEqual('running', running['state'], running['progress'])
        self.assertGreater(running['progress']['eta'], 0)
        final = self.wait_state(uuid, *FINAL)
        self.assertEqual(
            {'prepare': {'done': 6, 'failed': 0, 'in_flight': 0,
                         'pending': 0},
             'deploy': {'done': 6, 'failed': 0, 'in_flight': 0,
                        'pending': 0}},
            final['progress']['phases'])


class TestRetrySteered(SteeringTestCase):

    def test_a_retry_can_be_paused_and_resumed(self):
        self.make_site([('a', 6, ())])
        uuid = self.start()
        self.control(uuid, 'abort')
        self.assertEqual('cancelled', self.wait_state(uuid, *FINAL)['state'])
        retry = self.post('/v1/actions', {
            'name': 'retry', 'parameters': {'action': uuid}},
            status=201).json['uuid']
        self.control(retry, 'pause')
        self.assertEqual('paused',
                         self.wait_state(retry, 'paused', *FINAL)['state'])
        self.control(retry, 'resume')
        action = self.wait_state(retry, *FINAL)
        self.assertEqual(('complete', 'success', uuid),
                         (action['state'], action['result'],
                          action['report']['retry_of']))

    def test_update_labels_cannot_be_steered(self):
        self.make_site([('a', 1, ())])
        uuid = self.start()
        self.wait_state(uuid, *FINAL)
        labels = self.post('/v1/actions', {
            'name': 'update_labels',
            'parameters': {'target_nodes': ['a-0']}}, status=201).json
        error = self.control(labels['uuid'], 'pause', status=409).json
        self.assertIn('cannot be steered', str(error))
        # It ends on its own: not after this test's database is gone.
        self.wait_state(labels['uuid'], *FINAL)
