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
"""Steering a running site action with the Keystone personas
(doc/source/admin/steering.rst).

Fake-driver nodes whose every phase takes :data:`DURATION` seconds
(``driver_info.fake_duration``) keep a ``deploy_site`` running long enough
to steer it through ``POST /v1/actions/{uuid}/control``. The rule
``baremetal_orch:action:control`` is a system admin's by default: a system
reader and a project member get 403 for every verb, and the action goes on
untouched. The admin pauses (``pausing`` while nodes are in flight, then
``paused``; no node work starts while paused), resumes (``running``, then
``complete``), aborts another action (``cancelled``, result ``failed``,
``state_reason`` the abort's reason) and retries it (``retry_of``, then
``complete``). Each control is an event of the action, with its reason
and its requester.
"""

import time

from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from baremetal_orch_tempest_plugin.tests import base

#: Seconds each phase (prepare, deploy) of a node takes.
DURATION = 3
#: Two groups, the second waiting for the first: a pause or an abort in
#: the first leaves all of the second's work for later.
PAUSE_LAYOUT = (('first', 3, ()), ('second', 2, ('first',)))
ABORT_LAYOUT = (('first', 2, ()), ('second', 2, ('first',)))
PAUSE_REASON = 'tempest: bad firmware wave'
ABORT_REASON = 'tempest: maintenance window closing'


class TestSteering(base.BaremetalOrchTest):

    credentials = ['system_admin', 'system_reader', 'project_member']

    @classmethod
    def setup_clients(cls):
        super().setup_clients()
        cls.reader = cls.client(cls.os_system_reader)
        cls.member = cls.client(cls.os_project_member)

    @classmethod
    def resource_setup(cls):
        super().resource_setup()
        cls.admin_user = cls.os_system_admin.credentials.user_id
        cls.pause_site = cls.create_site('pause', PAUSE_LAYOUT)
        cls.abort_site = cls.create_site('abort', ABORT_LAYOUT)

    @classmethod
    def create_site(cls, prefix, layout):
        """Nodes and a strategy for ``layout`` [(group, nodes, depends)];
        returns ``(strategy name, {group: {node name: node uuid}})``."""
        site = cls.name(prefix)
        groups, names = [], {}
        for group, count, depends_on in layout:
            tag = '%s-%s' % (site, group)
            nodes = [cls.create_node(name=cls.name(group[:3]), tags=[tag],
                                     driver_info={'fake_duration': DURATION})
                     for _ in range(count)]
            names[group] = {n['name']: n['uuid'] for n in nodes}
            groups.append({
                'name': group, 'depends_on': list(depends_on),
                'selectors': [{'node_tags': [tag]}],
                'success_criteria': {'percent_successful_nodes': 100}})
        cls.create_strategy(site, groups)
        return site, names

    def start(self, site):
        _, action = self.admin.create_action(
            'deploy_site', {'deployment_strategy': site[0]})
        return self.wait_state(action['uuid'], 'running')

    def wait_state(self, uuid, state):
        action = self.admin.wait_for_action_state(uuid, (state,))
        self.assertEqual(state, action['state'], action)
        return action

    def assertOnlyAdminSteers(self, uuid, *verbs):
        """The reader's and the member's controls are 403; the action's
        state and reason do not move."""
        _, before = self.admin.show('actions', uuid)
        for client in (self.reader, self.member):
            for verb in verbs:
                exc = self.assertRaises(lib_exc.Forbidden,
                                        client.control_action, uuid, verb,
                                        'not mine to %s' % verb)
                self.assertErrorDocument(403, exc.resp_body)
        _, after = self.admin.show('actions', uuid)
        self.assertEqual(before['state_reason'], after['state_reason'])
        if before['state'] == 'paused':
            self.assertEqual('paused', after['state'])
        else:
            self.assertNotIn(after['state'], ('pausing', 'paused',
                                              'cancelled'))

    def started_node_work(self, task_uuid):
        """``{(phase, node uuid)}`` of the node tasks that have started."""
        _, tree = self.admin.show_task_tree(task_uuid)
        return {(phase['name'], task['node_uuid'])
                for group in tree['subtasks']
                for phase in group['subtasks']
                for task in phase['subtasks']
                if task['started_at'] is not None}

    def events(self, uuid, event_type):
        _, body = self.admin.list('events', action_uuid=uuid, limit=1000)
        return [e for e in body['events'] if e['event_type'] == event_type]

    def assertSteered(self, uuid, event_type, reason):
        """One ``event_type`` event of the action, with the reason and
        the admin as its requester."""
        events = self.events(uuid, event_type)
        self.assertEqual(1, len(events), events)
        details = events[0]['details']
        self.assertEqual((reason, self.admin_user),
                         (details['reason'], details['requester']), events)

    @decorators.idempotent_id('26aa1428-3869-46f1-a112-aeb557829de4')
    def test_pause_and_resume(self):
        nodes = sum(len(n) for n in self.pause_site[1].values())
        uuid = self.start(self.pause_site)['uuid']
        self.assertOnlyAdminSteers(uuid, 'pause', 'abort')

        _, paused = self.admin.control_action(uuid, 'pause', PAUSE_REASON)
        self.assertIn(paused['state'], ('pausing', 'paused'))
        self.assertEqual(PAUSE_REASON, paused['state_reason'])
        action = self.wait_state(uuid, 'paused')
        self.assertEqual(PAUSE_REASON, action['state_reason'])
        # Nothing in flight, and no node work starts while paused.
        started = self.started_node_work(action['task_uuid'])
        time.sleep(2 * DURATION)
        self.assertEqual(started,
                         self.started_node_work(action['task_uuid']))
        self.assertEqual('paused', self.admin.show('actions',
                                                   uuid)[1]['state'])
        self.assertLess(len(started), 2 * nodes)
        self.assertOnlyAdminSteers(uuid, 'resume', 'abort')
        exc = self.assertRaises(lib_exc.Conflict, self.admin.control_action,
                                uuid, 'pause')
        self.assertErrorDocument(409, exc.resp_body, 'paused')

        _, resumed = self.admin.control_action(uuid, 'resume')
        self.assertEqual(('running', None),
                         (resumed['state'], resumed['state_reason']))
        action = self.admin.wait_for_action(uuid)
        self.assertEqual(('complete', 'success', None),
                         (action['state'], action['result'],
                          action['state_reason']), action['report'])
        # Every node prepared and deployed, each exactly once.
        _, tree = self.admin.show_task_tree(action['task_uuid'])
        work = [(phase['name'], task['node_uuid'], task['status'])
                for group in tree['subtasks']
                for phase in group['subtasks']
                for task in phase['subtasks']]
        self.assertEqual(2 * nodes, len(work), work)
        self.assertEqual(2 * nodes, len({w[:2] for w in work}), work)
        self.assertEqual({'success'}, {w[2] for w in work}, work)
        for names in self.pause_site[1].values():
            for name in names:
                self.assertEqual('success', action['report']['nodes'][name])

        # A verb that does not apply is a 409 naming the state.
        exc = self.assertRaises(lib_exc.Conflict, self.admin.control_action,
                                uuid, 'resume')
        self.assertErrorDocument(409, exc.resp_body, 'complete')
        self.assertSteered(uuid, 'action.paused', PAUSE_REASON)
        self.assertSteered(uuid, 'action.resumed', None)
        self.assertEqual([], self.events(uuid, 'action.aborted'))

    @decorators.idempotent_id('b58a5578-b139-4499-a142-113e54e6924b')
    def test_abort_then_retry(self):
        groups = self.abort_site[1]
        uuid = self.start(self.abort_site)['uuid']
        self.assertOnlyAdminSteers(uuid, 'abort')

        _, aborting = self.admin.control_action(uuid, 'abort', ABORT_REASON)
        self.assertEqual(uuid, aborting['uuid'])
        action = self.admin.wait_for_action(uuid)
        self.assertEqual(('cancelled', 'failed', ABORT_REASON),
                         (action['state'], action['result'],
                          action['state_reason']), action['report'])
        report = action['report']
        # The group that never started: failed, aborted, nodes untouched.
        self.assertEqual(('failed', 'aborted'),
                         (report['groups']['second']['status'],
                          report['groups']['second']['reason']), report)
        for name in groups['second']:
            self.assertEqual('not_started', report['nodes'][name], report)
        touched = {node for _phase, node in self.started_node_work(
            action['task_uuid'])}
        self.assertFalse(set(groups['second'].values()) & touched)
        self.assertSteered(uuid, 'action.aborted', ABORT_REASON)
        exc = self.assertRaises(lib_exc.Conflict, self.admin.control_action,
                                uuid, 'resume')
        self.assertErrorDocument(409, exc.resp_body, 'cancelled')

        # Only an admin retries (baremetal_orch:action:create).
        for client in (self.reader, self.member):
            exc = self.assertRaises(lib_exc.Forbidden, client.retry_action,
                                    uuid)
            self.assertErrorDocument(403, exc.resp_body)
        _, retry = self.admin.retry_action(uuid)
        self.assertNotEqual(uuid, retry['uuid'])
        retried = self.admin.wait_for_action(retry['uuid'])
        self.assertEqual(('complete', 'success'),
                         (retried['state'], retried['result']),
                         retried['report'])
        self.assertEqual(uuid, retried['report']['retry_of'])
        for names in groups.values():
            for name in names:
                self.assertEqual('success', retried['report']['nodes'][name],
                                 retried['report'])
                _, node = self.admin.show('nodes', names[name])
                self.assertEqual('active', node['provision_state'])
        # The action to retry now is the newer one.
        exc = self.assertRaises(lib_exc.Conflict, self.admin.retry_action,
                                uuid)
        self.assertErrorDocument(409, exc.resp_body, retry['uuid'])
