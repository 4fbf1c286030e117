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
"""A running site action's report is a view of its one record (the rules'
state of its last checkpoint, on the snapshot admission stored), built when
it is read; checkpoints do not write it. Once the action ended, the report
stored then is shown.
"""

from oslo_utils import uuidutils

from baremetal_orch.common import context
from baremetal_orch.conductor import admission
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import site as site_mod
from baremetal_orch.tests.unit.api import test_actions


class TestActionReport(test_actions.ActionApiTestCase):

    def setUp(self):
        super().setUp()
        self.load_site()
        admitted = admission.admit(
            context.get_admin_context(), uuidutils.generate_uuid(),
            'deploy_site', {'deployment_strategy': 'deployment-strategy'},
            'test-conductor')
        self.uuid = admitted.action.uuid
        self.site = site_mod.SiteDeployment.from_dict(
            admitted.action.parameters['snapshot'])

    def report(self):
        return self.get('/v1/actions/' + self.uuid, status=200).json[
            'report']

    def checkpoint(self, **values):
        dbapi.update_action(self.uuid, dict(
            values, progress={'site': self.site.to_dict()}))

    def test_a_running_action_shows_the_report_of_its_record(self):
        self.assertFalse(self.report())
        self.checkpoint(state='running')
        self.assertEqual('pending',
                         self.report()['groups']['ntp']['status'])
        self.site.start('ntp')
        self.site.finish_prepare('ntp', dict.fromkeys(
            self.site.prepare_targets('ntp'), True))
        self.checkpoint()
        report = self.report()
        self.assertEqual(self.site.report(), report)
        self.assertEqual(['ntp'], report['order'])
        self.assertEqual('prepared', report['nodes']['ntp01'])
        self.site.finish_deploy('ntp', dict.fromkeys(
            self.site.deploy_targets('ntp'), True))
        self.checkpoint()
        report = self.report()
        self.assertEqual(self.site.report(), report)
        self.assertEqual(['ntp01'],
                         report['groups']['ntp']['succeeded_nodes'])
        # Nothing stored it: it is built from the record.
        self.assertFalse(dbapi.get_action(self.uuid).report)

    def test_an_ended_action_shows_the_report_stored(self):
        self.checkpoint(state='running')
        ended = {'order': [], 'groups': {}, 'nodes': {}, 'ended': True}
        dbapi.update_action(self.uuid, {'state': 'complete',
                                        'result': 'success',
                                        'report': ended})
        self.assertEqual(ended, self.report())

    def test_a_running_action_without_a_record_shows_its_row(self):
        # An update_labels action writes its report when it ends.
        labels = dbapi.create_action({
            'uuid': uuidutils.generate_uuid(), 'name': 'update_labels',
            'state': 'running',
            'parameters': {'target_nodes': ['ntp01'],
                           'snapshot': {'nodes': {'u': 'ntp01'}}}})
        self.assertEqual({}, self.get('/v1/actions/' + labels.uuid,
                                      status=200).json['report'])
