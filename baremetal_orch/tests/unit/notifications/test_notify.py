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
"""Tests of baremetal_orch.notifications.notify: what each call site emits."""

import json
from unittest import mock

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import labels as labels_mod
from baremetal_orch.notifications import node as node_payloads
from baremetal_orch.notifications import notifier
from baremetal_orch.notifications import notify
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import chassis as chassis_obj
from baremetal_orch.objects import deployment as deployment_obj
from baremetal_orch.objects import port as port_obj
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.notifications import test_payloads
from baremetal_orch.tests.unit.objects import utils

ACTION_UUID = test_payloads.ACTION_UUID
NODE_UUID = test_payloads.NODE_UUID
DEPLOYMENT_UUID = '2f4e6d8c-1a3b-4c5d-8e7f-9a0b1c2d3e4f'


def _action():
    return action_obj.Action(
        uuid=ACTION_UUID, name='deploy_site', state='running',
        parameters={'deployment_strategy': 'ds', 'token': 's3cr3t-token'})


#: The entry of group ``ctl`` in its action's report.
CTL = {'nodes': ['a', 'b', 'c'], 'critical': True, 'status': 'running',
       'reason': None, 'misses': [], 'succeeded_nodes': ['a'],
       'failed_nodes': []}


def _deployment(status='IN_PROGRESS'):
    return deployment_obj.Deployment(
        uuid=DEPLOYMENT_UUID, node_uuid=NODE_UUID, action_uuid=ACTION_UUID,
        status=status, status_reason='r', deploy_status_code=None,
        token_hash='s3cr3t-key', signal_url='http://x/s3cr3t-list',
        final=False, deleted=False)


def _port():
    return port_obj.Port(uuid='0c9a5a44-2b3e-4a4c-9f6e-0b1b5f6c7d8e',
                         node_uuid=NODE_UUID, address='52:54:00:12:34:56',
                         pxe_enabled=True)


def _chassis():
    return chassis_obj.Chassis(uuid='8a1b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
                               description='c')


class NotifyTestCase(base.TestCase):

    level = 'debug'

    def setUp(self):
        super().setUp()
        self.bus = self.useFixture(utils.NotificationsFixture(self.level))
        self.context = orch_context.get_admin_context()
        self.node = test_payloads.make_node()


class TestEventTypes(NotifyTestCase):
    """Each function, its event type, priority and payload class."""

    def _table(self):
        c, n, a = self.context, self.node, _action()
        err = RuntimeError('boom')
        diff = labels_mod.LabelDiff(to_set={'a': '1'}, to_remove=('b',))
        return [
            (lambda: notify.crud(c, 'node', 'create', 'start', n),
             'baremetal.node.create.start', 'INFO', 'NodeCRUDPayload'),
            (lambda: notify.crud(c, 'node', 'delete', 'error', n, exc=err),
             'baremetal.node.delete.error', 'ERROR', 'NodeCRUDPayload'),
            (lambda: notify.crud(c, 'port', 'update', 'end', _port()),
             'baremetal.port.update.end', 'INFO', 'PortCRUDPayload'),
            (lambda: notify.crud(c, 'chassis', 'create', 'end', _chassis()),
             'baremetal.chassis.create.end', 'INFO', 'ChassisCRUDPayload'),
            (lambda: notify.provision(c, n, 'start', 'available', None,
                                      'deploy'),
             'baremetal.node.provision_set.start', 'INFO',
             'NodeSetProvisionStatePayload'),
            (lambda: notify.provision(c, n, 'success', 'enroll', None,
                                      'manage'),
             'baremetal.node.provision_set.success', 'INFO',
             'NodeSetProvisionStatePayload'),
            (lambda: notify.provision(c, n, 'error', 'deploying', 'active',
                                      'fail'),
             'baremetal.node.provision_set.error', 'ERROR',
             'NodeSetProvisionStatePayload'),
            (lambda: notify.maintenance(c, n, 'end'),
             'baremetal.node.maintenance_set.end', 'INFO', 'NodePayload'),
            (lambda: notify.console(c, n, 'set', 'start'),
             'baremetal.node.console_set.start', 'INFO', 'NodePayload'),
            (lambda: notify.console(c, n, 'restore', 'error', exc=err),
             'baremetal.node.console_restore.error', 'ERROR', 'NodePayload'),
            (lambda: notify.action(c, a, 'end'),
             'baremetal.action.run.end', 'INFO', 'ActionPayload'),
            (lambda: notify.group(c, a, 'ctl', 'prepare', 'start'),
             'baremetal.deployment_group.prepare.start', 'INFO',
             'DeploymentGroupPayload'),
            (lambda: notify.group(c, a, 'ctl', 'deploy', 'error',
                                  report={'status': 'failed'}),
             'baremetal.deployment_group.deploy.error', 'ERROR',
             'DeploymentGroupPayload'),
            (lambda: notify.signal(c, _deployment(), 'IN_PROGRESS'),
             'baremetal.deployment.signal.success', 'INFO',
             'DeploymentSignalPayload'),
            (lambda: notify.signal(c, _deployment('COMPLETE'), 'COMPLETE'),
             'baremetal.deployment.signal.end', 'INFO',
             'DeploymentSignalPayload'),
            (lambda: notify.signal(c, _deployment('FAILED'), 'failed'),
             'baremetal.deployment.signal.error', 'ERROR',
             'DeploymentSignalPayload'),
            (lambda: notify.labels(c, a, n, 'end', diff=diff),
             'baremetal.node.labels_set.end', 'INFO', 'NodeLabelsPayload'),
        ]

    def test_table(self):
        for call, event_type, priority, payload in self._table():
            self.bus.messages.clear()
            before = len(self.bus.messages)
            self.assertTrue(call(), event_type)
            message = self.bus.messages[before]
            self.assertEqual(event_type, message['event_type'])
            self.assertEqual(priority, message['priority'], event_type)
            self.assertEqual(payload, message['payload'][
                'baremetal_orch_object.name'], event_type)
        self.assertEqual(len(self._table()), len(self.bus.messages))


class TestPublisher(NotifyTestCase):
    """The publisher names the component that emits, in every process."""

    def emit_both(self):
        """One notification of the API, one of the conductor: their
        publisher ids."""
        notify.maintenance(self.context, self.node, 'start')
        notify.console(self.context, self.node, 'set', 'start')
        return [m['publisher_id'] for m in self.bus.messages[-2:]]

    def test_component_whatever_the_process(self):
        for binary in ('baremetal-orch-api', 'baremetal-orch-conductor',
                       'baremetal-orch'):
            notify.set_publisher(binary, 'h1')
            self.assertEqual(['baremetal-orch-api.h1',
                              'baremetal-orch-conductor.h1'],
                             self.emit_both(), binary)

    def test_before_set_publisher_the_host_is_the_config(self):
        self.config(host='cond-7')
        self.assertEqual(['baremetal-orch-api.cond-7',
                          'baremetal-orch-conductor.cond-7'],
                         self.emit_both())

    def test_signals_received_and_timed_out(self):
        notify.set_publisher('baremetal-orch', 'aio')
        for component in (notify.API_SERVICE, notify.CONDUCTOR_SERVICE):
            notify.signal(self.context, _deployment('COMPLETE'), 'COMPLETE',
                          component=component)
            self.assertEqual('%s.aio' % component,
                             self.bus.messages[-1]['publisher_id'])

    def test_provision_is_the_conductor(self):
        notify.set_publisher('baremetal-orch-api', 'a1')
        notify.provision(self.context, self.node, 'start', 'enroll', None,
                         'manage')
        self.assertEqual('baremetal-orch-conductor.a1',
                         self.bus.messages[-1]['publisher_id'])


class TestLevelFiltering(NotifyTestCase):

    def test_provision_sent_follows_the_level(self):
        self.config(notification_level=None)
        self.assertFalse(notify.provision_sent('error'))
        self.config(notification_level='error')
        self.assertEqual((False, True), (notify.provision_sent('start'),
                                         notify.provision_sent('error')))
        self.config(notification_level='info')
        self.assertTrue(notify.provision_sent('success'))

    def test_provision_sent_refuses_an_unknown_status_sent_or_not(self):
        # A wrong call site shows even where nothing is sent.
        for level in (None, 'info'):
            self.config(notification_level=level)
            self.assertRaises(exception.InvalidParameterValue,
                              notify.provision_sent, 'done')

    def test_group_sent_follows_the_level(self):
        self.config(notification_level=None)
        self.assertFalse(notify.group_sent('deploy', 'error'))
        self.config(notification_level='error')
        self.assertEqual((False, True),
                         (notify.group_sent('prepare', 'end'),
                          notify.group_sent('prepare', 'error')))
        self.config(notification_level='info')
        self.assertTrue(notify.group_sent('deploy', 'start'))

    def test_group_sent_refuses_an_unknown_phase_or_status(self):
        for level in (None, 'info'):
            self.config(notification_level=level)
            self.assertRaises(exception.InvalidParameterValue,
                              notify.group_sent, 'deploy', 'done')
            self.assertRaises(exception.InvalidParameterValue,
                              notify.group_sent, 'verify', 'start')

    def test_unset_sends_nothing_and_builds_nothing(self):
        self.config(notification_level=None)
        with mock.patch.object(node_payloads, 'NodeSetProvisionStatePayload',
                               autospec=True) as payload:
            self.assertFalse(notify.provision(
                self.context, self.node, 'error', 'deploying', 'active',
                'fail'))
        payload.assert_not_called()
        self.assertEqual([], self.bus.messages)

    def test_error_level_drops_info(self):
        self.config(notification_level='error')
        notify.provision(self.context, self.node, 'start', 'available',
                         None, 'deploy')
        notify.provision(self.context, self.node, 'end', 'deploying',
                         'active', 'done')
        notify.provision(self.context, self.node, 'error', 'deploying',
                         'active', 'fail')
        notify.action(self.context, _action(), 'start')
        notify.action(self.context, _action(), 'error')
        self.assertEqual(['baremetal.node.provision_set.error',
                          'baremetal.action.run.error'],
                         self.bus.event_types())

    def test_info_level_sends_info_and_error(self):
        self.config(notification_level='info')
        notify.console(self.context, self.node, 'set', 'start')
        notify.console(self.context, self.node, 'set', 'error')
        self.assertEqual(['INFO', 'ERROR'],
                         [m['priority'] for m in self.bus.messages])


class TestMasking(NotifyTestCase):

    def test_secrets_never_on_the_bus(self):
        c, n = self.context, self.node
        for status in ('start', 'end', 'error'):
            for action in ('create', 'update', 'delete'):
                notify.crud(c, 'node', action, status, n)
            notify.maintenance(c, n, status)
            notify.console(c, n, 'set', status)
            notify.labels(c, _action(), n, status)
            notify.action(c, _action(), status)
        for status in ('start', 'end', 'error', 'success'):
            notify.provision(c, n, status, 'active', None, 'deploy')
        for status in ('IN_PROGRESS', 'COMPLETE', 'FAILED'):
            notify.signal(c, _deployment(status), status)
        self.assertEqual(28, len(self.bus.messages))
        text = json.dumps(self.bus.messages, default=str)
        for secret in test_payloads.SECRETS:
            self.assertNotIn(secret, text)
        self.assertNotIn('token_hash', text)
        self.assertNotIn('signal_url', text)
        self.assertIn('ipmi_password', text)   # masked, not dropped


class TestDetails(NotifyTestCase):

    def _data(self, index=-1):
        return self.bus.messages[index]['payload'][
            'baremetal_orch_object.data']

    def test_group_start_counts_planned_nodes(self):
        notify.group(self.context, _action(), 'ctl', 'prepare', 'start',
                     report=CTL)
        data = self._data()
        self.assertEqual('running', data['status'])
        self.assertEqual(3, data['nodes'])
        self.assertTrue(data['critical'])
        self.assertIsNone(data['succeeded_nodes'])

    def test_group_end_takes_the_report(self):
        notify.group(self.context, _action(), 'ctl', 'prepare', 'error',
                     report={'status': 'failed', 'phase': 'prepare',
                             'nodes': ['a', 'b', 'c'], 'critical': True,
                             'reason': 'prepare_criteria_not_met',
                             'misses': [{'criterion':
                                         'minimum_successful_nodes',
                                         'needed': 3, 'actual': 1}],
                             'succeeded_nodes': ['a'],
                             'failed_nodes': ['b', 'c']})
        data = self._data()
        self.assertEqual(('failed', 'prepare_criteria_not_met', 3, 1, 2),
                         (data['status'], data['reason'], data['nodes'],
                          data['succeeded_nodes'], data['failed_nodes']))
        self.assertEqual('minimum_successful_nodes',
                         data['misses'][0]['criterion'])

    def test_group_report_without_nodes(self):
        notify.group(self.context, _action(), 'other', 'deploy', 'end',
                     report={'status': 'success'})
        data = self._data()
        self.assertEqual('success', data['status'])
        self.assertIsNone(data['nodes'])

    def test_labels_error_carries_the_reason(self):
        notify.labels(self.context, _action(), self.node, 'error',
                      exc=RuntimeError('kube said no'))
        self.assertEqual('kube said no', self._data()['error'])

    def test_provision_payload(self):
        notify.provision(self.context, self.node, 'end', 'deploying',
                         'active', 'done')
        data = self._data()
        self.assertEqual(('deploying', 'active', 'done'),
                         (data['previous_provision_state'],
                          data['previous_target_provision_state'],
                          data['event']))


class TestNeverRaises(NotifyTestCase):

    def _calls(self):
        c, n, a = self.context, self.node, _action()
        return [
            lambda: notify.crud(c, 'node', 'create', 'start', n),
            lambda: notify.provision(c, n, 'start', 'available', None,
                                     'deploy'),
            lambda: notify.maintenance(c, n, 'start'),
            lambda: notify.console(c, n, 'set', 'start'),
            lambda: notify.action(c, a, 'start'),
            lambda: notify.group(c, a, 'ctl', 'prepare', 'start'),
            lambda: notify.signal(c, _deployment(), 'IN_PROGRESS'),
            lambda: notify.labels(c, a, n, 'start'),
        ]

    def test_notifier_that_raises_is_logged(self):
        prepared = mock.Mock()
        prepared.info.side_effect = OSError('broker gone')
        with mock.patch.object(notifier, 'get_versioned_notifier',
                               autospec=True, return_value=prepared), \
                mock.patch.object(notify, 'LOG', autospec=True) as log:
            for call in self._calls():
                self.assertIsNone(call())
        self.assertEqual(len(self._calls()), prepared.info.call_count)
        self.assertEqual(len(self._calls()), log.exception.call_count)

    def test_wrong_arguments_are_logged(self):
        c, n = self.context, self.node
        calls = [
            lambda: notify.crud(c, 'strategy', 'create', 'start', n),
            lambda: notify.crud(c, 'node', 'create', 'finished', n),
            lambda: notify.crud(c, 'node', 'create', 'start', None),
            lambda: notify.provision(c, n, 'done', 'a', None, 'x'),
            lambda: notify.console(c, n, 'toggle', 'start'),
            lambda: notify.group(c, _action(), 'g', 'cleanup', 'start'),
            lambda: notify.signal(c, _deployment(), 'WHATEVER'),
            lambda: notify.labels(c, _action(), n, 'success'),
            lambda: notify.maintenance(c, object(), 'start'),
        ]
        with mock.patch.object(notify, 'LOG', autospec=True) as log:
            for call in calls:
                self.assertIsNone(call())
        self.assertEqual(len(calls), log.exception.call_count)
        self.assertEqual([], self.bus.messages)

    def test_wrong_event_type_is_logged_when_off(self):
        self.config(notification_level=None)
        with mock.patch.object(notify, 'LOG', autospec=True) as log:
            notify.crud(self.context, 'node', 'create', 'finished',
                        self.node)
        log.exception.assert_called_once()


class TestDatabaseRows(NotifyTestCase):
    """The signal call site passes the database row, not an object."""

    def test_signal_from_a_row(self):
        self.useFixture(utils.DatabaseFixture())
        node = dbapi.create_node({'driver': 'fake', 'name': 'n1',
                                  'provision_state': 'active'})
        record = dbapi.create_deployment({'node_uuid': node.uuid,
                                          'token_hash': 's3cr3t-key'})
        row = dbapi.update_deployment(record.uuid, {
            'status': 'FAILED', 'final': True, 'deploy_status_code': 3,
            'status_reason': 'exit 3'})
        self.assertTrue(notify.signal(self.context, row, 'FAILED'))
        message = self.bus.messages[-1]
        self.assertEqual('baremetal.deployment.signal.error',
                         message['event_type'])
        data = message['payload']['baremetal_orch_object.data']
        self.assertEqual((record.uuid, node.uuid, 'FAILED', 3, 'exit 3'),
                         (data['uuid'], data['node_uuid'], data['status'],
                          data['deploy_status_code'],
                          data['status_reason']))
        self.assertNotIn('s3cr3t-key', json.dumps(message))


class TestPrimitiveWithoutObject(NotifyTestCase):
    """The provision payload is sent as a primitive built without the
    versioned object; it is what the object (the schema) gives."""

    def _nodes(self):
        import datetime
        naive = datetime.datetime(2026, 1, 2, 3, 4, 5, 678)
        return [
            test_payloads.make_node(),
            # Unset and None values: defaults and nullable fields.
            test_payloads.make_node(
                name=None, tags=[], labels={}, instance_info=None,
                extra=None, updated_at=None, provision_state='enroll',
                last_error='boom', maintenance=True,
                maintenance_reason='r'),
            test_payloads.make_node(created_at=naive, updated_at=naive,
                                    instance_info={}),
            _partial_node(),
        ]

    def test_equal_to_the_object_primitive(self):
        from baremetal_orch.notifications import base as notification
        cls = node_payloads.NodeSetProvisionStatePayload
        for node in self._nodes():
            for prev in (('available', None, 'deploy'),
                         ('deploying', 'active', 'done'),
                         (None, None, None)):
                expected = notification._snapshot(
                    cls(node, *prev).obj_to_primitive())
                got = cls.primitive_of(
                    {'node': node},
                    dict(zip(('previous_provision_state',
                              'previous_target_provision_state', 'event'),
                             prev)))
                self.assertEqual(expected, got, prev)
                self.assertEqual(json.dumps(expected, sort_keys=True),
                                 json.dumps(got, sort_keys=True))

    def test_sent_in_order(self):
        for status, prev, event in (('start', 'available', 'deploy'),
                                    ('end', 'deploying', 'done'),
                                    ('error', 'deploying', 'fail')):
            notify.provision(self.context, self.node, status, prev, None,
                             event)
        self.assertEqual(
            ['baremetal.node.provision_set.start',
             'baremetal.node.provision_set.end',
             'baremetal.node.provision_set.error'],
            [m['event_type'] for m in self.bus.messages])
        self.assertEqual(['deploy', 'done', 'fail'],
                         [m['payload']['baremetal_orch_object.data']['event']
                          for m in self.bus.messages])
        self.assertNotIn('s3cr3t', json.dumps(self.bus.messages))

    def test_a_missing_required_field_is_refused(self):
        from baremetal_orch.common import exception
        node = _partial_node()
        node.obj_reset_changes()
        del node.uuid
        self.assertRaises(
            exception.InvalidParameterValue,
            node_payloads.NodeSetProvisionStatePayload.primitive_of,
            {'node': node}, {})


def _partial_node():
    """A node object with only some fields set (a node not created yet)."""
    from baremetal_orch.objects import node as node_obj
    return node_obj.Node(uuid=NODE_UUID, driver='fake',
                         provision_state='enroll')
