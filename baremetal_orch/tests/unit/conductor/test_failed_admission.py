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
"""An admission that fails leaves nothing behind, and a periodic sweep
removes an action left pending.

Before: deploy_site of a strategy stored with a lone surrogate in a group
name was a 500 that left the action pending forever, its root task
running and its node held: every later action on that node was refused.
"""

import datetime

from oslo_utils import timeutils

from baremetal_orch.common import context
from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base


def strategy(group_name):
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 'deployment-strategy'},
            'data': {'groups': [{'name': group_name, 'critical': True,
                                 'depends_on': [], 'selectors': []}]}}


class FailedAdmissionTestCase(base.ApiTestCase):

    def setUp(self):
        super().setUp()
        self.node = self.create_node(name='a2-02')

    def test_failure_after_the_action_row_leaves_nothing(self):
        # Stored before the API refused it (the strategy document is JSON
        # text, which holds the escape): the group task's row cannot take
        # the name, after the action and its root task were written.
        dbapi.create_strategy('deployment-strategy', strategy('g\ud800'))
        resp = self.post('/v1/actions', {'name': 'deploy_site'})
        self.assertError(resp, 400, 'baremetal_orch.invalid_parameter',
                         'not valid Unicode')
        self.assertEqual([], dbapi.list_actions())
        self.assertEqual([], dbapi.list_tasks())
        self.assertEqual([], dbapi.list_events())
        # The node is not held: an action on it is admitted and runs.
        dbapi.destroy_strategy('deployment-strategy')
        dbapi.create_strategy('deployment-strategy', strategy('g'))
        resp = self.post('/v1/actions', {'name': 'deploy_site'},
                         status=201)
        self.manager.actions.wait(60)
        self.assertEqual('complete',
                         dbapi.get_action(resp.json['uuid']).state)


class SweepTestCase(base.ConductorTestCase):

    def pending(self, age, host='test-conductor', state='pending'):
        action = dbapi.create_action({
            'name': 'deploy_site', 'state': state, 'conductor': host,
            'created_at': timeutils.utcnow() - datetime.timedelta(
                seconds=age),
            'parameters': {'snapshot': {'nodes': {'u1': 'n1'}}}})
        dbapi.create_task({'action_uuid': action.uuid, 'kind': 'action',
                           'name': 'deploy_site', 'status': 'running'})
        dbapi.create_event('action.started', resource_uuid=action.uuid,
                           action_uuid=action.uuid)
        return action.uuid

    def test_sweep(self):
        self.config(pending_action_timeout=300, group='conductor')
        stuck = self.pending(301)
        young = self.pending(200)
        other_host = self.pending(900, host='other-conductor')
        running = self.pending(900, state='running')
        swept = self.manager.sweep_pending_actions(
            context.get_admin_context())
        self.assertEqual([stuck], swept)
        self.assertEqual({young, other_host, running},
                         {a.uuid for a in dbapi.list_actions()})
        self.assertEqual(3, len(dbapi.list_tasks()))
        self.assertEqual(3, len(dbapi.list_events()))
        self.assertEqual([], [t for t in dbapi.list_tasks()
                              if t.action_uuid == stuck])

    def test_periodic_job(self):
        from baremetal_orch.conductor import periodics
        self.config(pending_action_timeout=120, group='conductor')
        jobs = {name: spacing for name, spacing, _f in
                periodics.Periodics(self.manager).jobs()}
        self.assertEqual(30, jobs['sweep_pending_actions'])
        self.config(pending_action_timeout=0, group='conductor')
        jobs = {name for name, _s, _f in
                periodics.Periodics(self.manager).jobs()}
        self.assertNotIn('sweep_pending_actions', jobs)
