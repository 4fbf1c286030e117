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
"""Tests of the payloads: their fields, masking and round trips."""

import datetime
import json

from baremetal_orch.deployment import labels as labels_mod
from baremetal_orch.notifications import action as action_payloads
from baremetal_orch.notifications import inventory as inventory_payloads
from baremetal_orch.notifications import node as node_payloads
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import base as obj_base
from baremetal_orch.objects import chassis as chassis_obj
from baremetal_orch.objects import deployment as deployment_obj
from baremetal_orch.objects import node as node_obj
from baremetal_orch.objects import port as port_obj
from baremetal_orch.tests import base

NODE_UUID = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123'
ACTION_UUID = '6f0a1f6e-5f3c-4a55-9d0f-6f5c1c7b2a10'
NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)

NODE_FIELDS = {
    'uuid', 'name', 'driver', 'ironic_uuid', 'rack_name', 'tags', 'labels',
    'shard', 'conductor_group', 'provision_state', 'target_provision_state',
    'power_state', 'maintenance', 'maintenance_reason', 'console_enabled',
    'conductor', 'owner', 'last_error', 'extra', 'created_at', 'updated_at'}

#: Secret values that must never appear in a payload.
SECRETS = ('s3cr3t-pass', 's3cr3t-token', 's3cr3t-key', 's3cr3t-secret',
           's3cr3t-nested', 's3cr3t-list')

SECRET_INFO = {
    'ipmi_address': '10.0.0.1',
    'ipmi_password': 's3cr3t-pass',
    'deploy_signal_token': 's3cr3t-token',
    'ssh_key': 's3cr3t-key',
    'client_secret': 's3cr3t-secret',
    'bmc': {'auth': {'Password': 's3cr3t-nested'}},
    'accounts': [{'token': 's3cr3t-list', 'user': 'admin'}],
}


def make_node(**kw):
    values = dict(
        id=1, uuid=NODE_UUID, name='cmp01', driver='fake',
        ironic_uuid=None, chassis_id=None,
        chassis_uuid='8a1b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
        rack_name='rack1', tags=['compute'], labels={'role': 'compute'},
        shard='s1', conductor_group='g1', provision_state='active',
        target_provision_state=None, power_state='power on',
        maintenance=False, maintenance_reason=None, console_enabled=False,
        driver_info=dict(SECRET_INFO), instance_info=dict(SECRET_INFO),
        extra={'note': 'x'}, applied_labels={}, deployed_groups=['g'],
        conductor='c1', owner='p1', reservation=None, last_error=None,
        created_at=NOW, updated_at=NOW)
    values.update(kw)
    return node_obj.Node(**values)


def _data(payload):
    return payload.obj_to_primitive()['baremetal_orch_object.data']


class TestNodePayloads(base.TestCase):

    def test_node_payload_fields(self):
        self.assertEqual(NODE_FIELDS, set(node_payloads.NodePayload.fields))
        payload = node_payloads.NodePayload(make_node())
        self.assertEqual(NODE_FIELDS, set(_data(payload)))
        self.assertEqual('cmp01', payload.name)
        self.assertEqual(['compute'], payload.tags)
        self.assertEqual({'role': 'compute'}, payload.labels)
        self.assertEqual(NOW, payload.created_at)

    def test_crud_payload_fields(self):
        payload = node_payloads.NodeCRUDPayload(make_node())
        self.assertEqual(
            NODE_FIELDS | {'chassis_uuid', 'instance_info', 'driver_info'},
            set(_data(payload)))
        self.assertEqual('8a1b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
                         payload.chassis_uuid)

    def test_provision_payload_fields(self):
        payload = node_payloads.NodeSetProvisionStatePayload(
            make_node(), 'deploying', 'active', 'done')
        self.assertEqual(
            NODE_FIELDS | {'instance_info', 'previous_provision_state',
                           'previous_target_provision_state', 'event'},
            set(_data(payload)))
        self.assertEqual('deploying', payload.previous_provision_state)
        self.assertEqual('active', payload.previous_target_provision_state)
        self.assertEqual('done', payload.event)
        self.assertNotIn('driver_info', _data(payload))

    def test_secrets_are_masked(self):
        for payload in (
                node_payloads.NodePayload(make_node()),
                node_payloads.NodeCRUDPayload(make_node()),
                node_payloads.NodeSetProvisionStatePayload(
                    make_node(), 'active', None, 'deploy')):
            text = json.dumps(payload.obj_to_primitive(), default=str)
            for secret in SECRETS:
                self.assertNotIn(secret, text, payload.obj_name())
        payload = node_payloads.NodeCRUDPayload(make_node())
        self.assertEqual('10.0.0.1', payload.driver_info['ipmi_address'])
        self.assertEqual('***', payload.driver_info['ipmi_password'])
        self.assertEqual('***', payload.instance_info['deploy_signal_token'])
        self.assertEqual('admin', payload.driver_info['accounts'][0]['user'])

    def test_masking_does_not_touch_the_node(self):
        node = make_node()
        node_payloads.NodeCRUDPayload(node)
        self.assertEqual('s3cr3t-pass', node.driver_info['ipmi_password'])

    def test_node_not_created_yet(self):
        # The API's create.start: a node built from the request.
        node = node_obj.Node(uuid=NODE_UUID, name='new', driver='fake')
        data = _data(node_payloads.NodeCRUDPayload(node))
        self.assertEqual(
            NODE_FIELDS | {'chassis_uuid', 'instance_info', 'driver_info'},
            set(data))
        self.assertIsNone(data['created_at'])
        self.assertEqual([], data['tags'])
        self.assertFalse(data['maintenance'])

    def test_labels_payload(self):
        diff = labels_mod.LabelDiff(to_set={'c': '4', 'd': '99'},
                                    to_remove=('b',))
        action = action_obj.Action(uuid=ACTION_UUID, name='update_labels')
        payload = node_payloads.NodeLabelsPayload(make_node(), action, diff)
        self.assertEqual({'node_uuid': NODE_UUID, 'node_name': 'cmp01',
                          'action_uuid': ACTION_UUID,
                          'to_set': {'c': '4', 'd': '99'},
                          'to_remove': ['b'], 'error': None},
                         _data(payload))

    def test_labels_payload_error_without_diff(self):
        payload = node_payloads.NodeLabelsPayload(make_node(), None, None,
                                                  'node not found')
        self.assertEqual({}, payload.to_set)
        self.assertEqual([], payload.to_remove)
        self.assertIsNone(payload.action_uuid)
        self.assertEqual('node not found', payload.error)


class TestInventoryPayloads(base.TestCase):

    def test_port_payload(self):
        port = port_obj.Port(
            id=3, uuid='0c9a5a44-2b3e-4a4c-9f6e-0b1b5f6c7d8e', node_id=1,
            node_uuid=NODE_UUID, address='52:54:00:12:34:56',
            pxe_enabled=True, local_link_connection={'switch_id': 'sw1'},
            extra={}, created_at=NOW, updated_at=None)
        data = _data(inventory_payloads.PortCRUDPayload(port))
        self.assertEqual(
            {'uuid', 'node_uuid', 'address', 'pxe_enabled',
             'local_link_connection', 'extra', 'created_at', 'updated_at'},
            set(data))
        self.assertEqual(NODE_UUID, data['node_uuid'])
        self.assertEqual({'switch_id': 'sw1'}, data['local_link_connection'])

    def test_chassis_payload(self):
        chassis = chassis_obj.Chassis(
            id=1, uuid='8a1b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
            description='rack 1', extra={'a': 'b'}, created_at=NOW,
            updated_at=NOW)
        data = _data(inventory_payloads.ChassisCRUDPayload(chassis))
        self.assertEqual({'uuid', 'description', 'extra', 'created_at',
                          'updated_at'}, set(data))
        self.assertEqual('rack 1', data['description'])


class TestActionPayloads(base.TestCase):

    def _action(self, **kw):
        values = dict(
            id=1, uuid=ACTION_UUID, name='deploy_site',
            parameters={'deployment_strategy': 'ds',
                        'auth': {'password': 's3cr3t-pass'}},
            state='running', result=None,
            task_uuid='3d1f0c57-7a3b-4b8e-9b54-2e9f6c1d8a7f',
            conductor='c1', owner=None,
            report={'groups': {'g1': {'nodes': ['a', 'b', 'c'],
                                      'critical': True}}},
            progress={}, started_at=NOW, finished_at=None,
            created_at=NOW, updated_at=NOW)
        values.update(kw)
        return action_obj.Action(**values)

    def test_action_payload(self):
        data = _data(action_payloads.ActionPayload(self._action()))
        self.assertEqual(
            {'uuid', 'name', 'parameters', 'state', 'result', 'task_uuid',
             'conductor', 'created_at', 'updated_at', 'started_at',
             'finished_at'}, set(data))
        self.assertEqual('ds', data['parameters']['deployment_strategy'])
        self.assertEqual('***', data['parameters']['auth']['password'])
        self.assertNotIn('report', data)
        self.assertNotIn('progress', data)

    def test_action_control_payload(self):
        action = self._action(state='pausing', control='pause',
                              state_reason='bad firmware wave')
        payload = action_payloads.ActionControlPayload(
            action, 'pause', reason='bad firmware wave', requester='u1')
        data = _data(payload)
        self.assertEqual(
            {'uuid', 'name', 'parameters', 'state', 'result', 'task_uuid',
             'conductor', 'created_at', 'updated_at', 'started_at',
             'finished_at', 'state_reason', 'verb', 'reason', 'requester'},
            set(data))
        self.assertEqual(
            ('pause', 'bad firmware wave', 'u1', 'bad firmware wave',
             'pausing'),
            (data['verb'], data['reason'], data['requester'],
             data['state_reason'], data['state']))
        self.assertEqual('ds', data['parameters']['deployment_strategy'])
        self.assertEqual('***', data['parameters']['auth']['password'])
        self.assertNotIn('s3cr3t-pass', json.dumps(data))
        # The action is not touched by the masking.
        self.assertEqual('s3cr3t-pass',
                         action.parameters['auth']['password'])
        self.assertNotIn('control', data)
        self.assertNotIn('report', data)
        self.assertEqual([], payload.missing_fields())

    def test_action_control_payload_without_reason(self):
        action = self._action(state='running', control=None,
                              state_reason=None)
        data = _data(action_payloads.ActionControlPayload(action, 'resume'))
        self.assertEqual(('resume', None, None, None),
                         (data['verb'], data['reason'], data['requester'],
                          data['state_reason']))

    def test_action_control_primitive_is_the_objects(self):
        # notify.action_control builds the primitive without the object:
        # it must be what the object sends.
        action = self._action(state='running', control='abort',
                              state_reason='wrong site')
        extra = {'verb': 'abort', 'reason': 'wrong site',
                 'requester': 'u1'}
        primitive = action_payloads.ActionControlPayload.primitive_of(
            {'action': action}, extra)
        expected = action_payloads.ActionControlPayload(
            action, **extra).obj_to_primitive()
        expected.pop('baremetal_orch_object.changes', None)
        self.assertEqual(json.loads(json.dumps(expected)),
                         json.loads(json.dumps(primitive)))
        self.assertEqual(
            '***', primitive['baremetal_orch_object.data']['parameters'][
                'auth']['password'])

    def test_group_payload_counts_and_misses(self):
        # (report, nodes, succeeded, failed)
        table = [
            ({'nodes': ['a', 'b', 'c'], 'succeeded_nodes': ['a'],
              'failed_nodes': ['b', 'c']}, 3, 1, 2),
            ({'nodes': 5, 'succeeded_nodes': 4, 'failed_nodes': 0}, 5, 4, 0),
            ({}, None, None, None),
        ]
        miss = {'criterion': 'percent_successful_nodes', 'needed': 90,
                'actual': 33.3}
        for report, nodes, succeeded, failed in table:
            report = dict(report, status='failed',
                          reason='prepare_criteria_not_met', critical=True,
                          misses=[miss])
            payload = action_payloads.DeploymentGroupPayload(
                self._action(), 'g1', 'prepare', report)
            data = _data(payload)
            self.assertEqual(
                {'action_uuid', 'action_name', 'group', 'phase', 'status',
                 'reason', 'critical', 'nodes', 'succeeded_nodes',
                 'failed_nodes', 'misses'}, set(data))
            self.assertEqual((nodes, succeeded, failed),
                             (data['nodes'], data['succeeded_nodes'],
                              data['failed_nodes']))
            self.assertEqual([miss], data['misses'])
            self.assertEqual('prepare_criteria_not_met', data['reason'])
            self.assertEqual('deploy_site', data['action_name'])

    def test_group_payload_without_report(self):
        payload = action_payloads.DeploymentGroupPayload(
            self._action(), 'g1', 'deploy')
        self.assertIsNone(payload.status)
        self.assertEqual([], payload.misses)
        self.assertEqual('deploy', payload.phase)

    def test_signal_payload_has_no_token(self):
        deployment = deployment_obj.Deployment(
            id=1, uuid='2f4e6d8c-1a3b-4c5d-8e7f-9a0b1c2d3e4f',
            node_uuid=NODE_UUID, action_uuid=ACTION_UUID, conductor='c1',
            status='FAILED', status_reason='boom', deploy_stdout='out',
            deploy_stderr='s3cr3t-nested in stderr', deploy_status_code=2,
            signal_url='http://api/v1/signals/x?token=s3cr3t-token',
            token_hash='s3cr3t-key', final=True, deleted=False,
            created_at=NOW, updated_at=NOW)
        payload = action_payloads.DeploymentSignalPayload(deployment)
        data = _data(payload)
        self.assertEqual(
            {'uuid', 'node_uuid', 'action_uuid', 'conductor', 'status',
             'status_reason', 'deploy_status_code', 'created_at',
             'updated_at'}, set(data))
        self.assertEqual(2, data['deploy_status_code'])
        text = json.dumps(payload.obj_to_primitive())
        for secret in SECRETS:
            self.assertNotIn(secret, text)


class TestRoundTrip(base.TestCase):
    """A consumer rebuilds every payload from its primitive."""

    def test_from_primitive(self):
        action = action_obj.Action(uuid=ACTION_UUID, name='deploy_site',
                                   state='running')
        payloads = [
            node_payloads.NodePayload(make_node()),
            node_payloads.NodeCRUDPayload(make_node()),
            node_payloads.NodeSetProvisionStatePayload(
                make_node(), 'available', None, 'deploy'),
            node_payloads.NodeLabelsPayload(make_node(), action),
            action_payloads.ActionPayload(action),
            action_payloads.ActionControlPayload(action, 'pause', 'r', 'u'),
            action_payloads.DeploymentGroupPayload(
                action, 'g', 'prepare', {'status': 'running'}),
        ]
        for payload in payloads:
            primitive = json.loads(json.dumps(payload.obj_to_primitive()))
            copy = obj_base.BaremetalOrchObject.obj_from_primitive(primitive)
            self.assertIsInstance(copy, type(payload))
            self.assertEqual(_data(payload), _data(copy))
