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
"""The notification catalogue cannot drift from the code.

doc/source/admin/notifications.rst documents every event type with its
priority, payload class and version, and a sample from
doc/notification_samples/. These tests emit every event type for real
(objects in a sqlite database, notify.* functions, oslo.messaging's test
driver on the fake transport) and check the catalogue and the samples
against what was sent.

To rewrite the samples from the real emissions after a payload change::

    BAREMETAL_ORCH_WRITE_NOTIFICATION_SAMPLES=1 \
        python -m testtools.run \
        baremetal_orch.tests.unit.doc.test_notification_samples
"""

import datetime
import json
import os
import re

from oslo_utils import fixture as utils_fixture

from baremetal_orch.common import context as orch_context
from baremetal_orch.conductor import control
from baremetal_orch.conductor import provisioning
from baremetal_orch.deployment import labels as labels_mod
from baremetal_orch.flows import steering as steering_mod
from baremetal_orch.notifications import base as notification
from baremetal_orch.notifications import notify
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import base as obj_base
from baremetal_orch.objects import chassis as chassis_obj
from baremetal_orch.objects import deployment as deployment_obj
from baremetal_orch.objects import node as node_obj
from baremetal_orch.objects import port as port_obj
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.objects import utils

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..',
                                    '..', '..'))
DOC = os.path.join(ROOT, 'doc', 'source', 'admin', 'notifications.rst')
SAMPLES = os.path.join(ROOT, 'doc', 'notification_samples')
SAMPLE_REF = '../../notification_samples/%s.json'
WRITE_ENV = 'BAREMETAL_ORCH_WRITE_NOTIFICATION_SAMPLES'

NS = 'baremetal_orch_object.'
API_HOST = 'api-1'
CONDUCTOR_HOST = 'conductor-1'
NOW = datetime.datetime(2026, 3, 1, 12, 0, 0)
SECRET = 's3cr3t'

CHASSIS_UUID = '8a1b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d'
NODE_UUID = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123'
PORT_UUID = '0c9a5a44-2b3e-4a4c-9f6e-0b1b5f6c7d8e'
ACTION_UUID = '6f0a1f6e-5f3c-4a55-9d0f-6f5c1c7b2a10'
TASK_UUID = '3d1f0c57-7a3b-4b8e-9b54-2e9f6c1d8a7f'
LABELS_ACTION_UUID = '1262042e-721b-4d33-ac59-a8e3b0ee842d'
DEPLOYMENT_UUIDS = ('2f4e6d8c-1a3b-4c5d-8e7f-9a0b1c2d3e4f',
                    '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d')
#: The Keystone user who steers the action.
OPERATOR_ID = '9b7e3a1c4d2f4e8a9c6b5d4e3f2a1b0c'

# The event types are baremetal.*, and baremetal_orch.* for the controls
# of an action (doc/source/admin/steering.rst).
_SECTION = re.compile(
    r'^(baremetal(?:_orch)?\.[a-z_]+\.[a-z_]+\.[a-z_]+)\n~+\n', re.M)


def parse_catalogue(text):
    """{event type: {priority, payload, version, sample}} of the doc."""
    entries = {}
    parts = _SECTION.split(text)
    for event_type, body in zip(parts[1::2], parts[2::2]):
        priority = re.search(r'^:Priority: (\w+)$', body, re.M)
        payload = re.search(r'^:Payload: ``(\w+)`` (\d+\.\d+)$', body, re.M)
        sample = re.search(r'^\.\. literalinclude:: (\S+)$', body, re.M)
        entries[event_type] = {
            'priority': priority and priority.group(1),
            'payload': payload and payload.group(1),
            'version': payload and payload.group(2),
            'sample': sample and sample.group(1),
        }
    return entries


def _read_doc():
    with open(DOC, encoding='utf-8') as f:
        return f.read()


def _sample_path(event_type):
    return os.path.join(SAMPLES, '%s.json' % event_type)


def _read_sample(event_type):
    with open(_sample_path(event_type), encoding='utf-8') as f:
        return json.load(f)


def _sample_of(message):
    return {key: message[key] for key in
            ('event_type', 'priority', 'publisher_id', 'payload')}


def emit_all(context):
    """Emit every event type once, from real objects in the database."""
    err = RuntimeError('the sample error')

    # API: chassis, nodes, ports, maintenance, signals.
    notify.set_publisher(notify.API_SERVICE, API_HOST)
    chassis = chassis_obj.Chassis(uuid=CHASSIS_UUID,
                                  description='Rack 1, chassis A', extra={})
    notify.crud(context, 'chassis', 'create', 'start', chassis)
    notify.crud(context, 'chassis', 'create', 'error', chassis, exc=err)
    chassis.create(context)
    notify.crud(context, 'chassis', 'create', 'end', chassis)
    notify.crud(context, 'chassis', 'update', 'start', chassis)
    notify.crud(context, 'chassis', 'update', 'error', chassis, exc=err)
    chassis.extra = {'location': 'row 4'}
    chassis.save()
    notify.crud(context, 'chassis', 'update', 'end', chassis)

    node = node_obj.Node(
        uuid=NODE_UUID, name='cmp01', driver='fake',
        chassis_id=chassis.id, rack_name='rack1', tags=['compute', 'gpu'],
        labels={'role': 'compute'}, shard='shard-a',
        conductor_group='group-1', provision_state='enroll',
        driver_info={'fake_duration': '0', 'ipmi_address': '10.0.0.11',
                     'ipmi_password': SECRET},
        instance_info={}, extra={'asset': 'A-0042'},
        conductor=CONDUCTOR_HOST)
    notify.crud(context, 'node', 'create', 'start', node)
    notify.crud(context, 'node', 'create', 'error', node, exc=err)
    node.create(context)
    notify.crud(context, 'node', 'create', 'end', node)
    notify.crud(context, 'node', 'update', 'start', node)
    notify.crud(context, 'node', 'update', 'error', node, exc=err)
    node.extra = {'asset': 'A-0042', 'owner_team': 'hpc'}
    node.save()
    notify.crud(context, 'node', 'update', 'end', node)

    notify.maintenance(context, node, 'start')
    notify.maintenance(context, node, 'error', exc=err)
    node.maintenance = True
    node.maintenance_reason = 'replacing a DIMM'
    node.save()
    notify.maintenance(context, node, 'end')
    node.maintenance = False
    node.maintenance_reason = None
    node.save()

    port = port_obj.Port(uuid=PORT_UUID, node_id=node.id,
                         address='52:54:00:12:34:56', pxe_enabled=True,
                         local_link_connection={'switch_id': 'sw-1',
                                                'port_id': 'Eth1/12'},
                         extra={})
    notify.crud(context, 'port', 'create', 'start', port)
    notify.crud(context, 'port', 'create', 'error', port, exc=err)
    port.create(context)
    notify.crud(context, 'port', 'create', 'end', port)
    notify.crud(context, 'port', 'update', 'start', port)
    notify.crud(context, 'port', 'update', 'error', port, exc=err)
    port.pxe_enabled = False
    port.save()
    notify.crud(context, 'port', 'update', 'end', port)

    # Conductor: provisioning, consoles, actions, groups, controls,
    # labels.
    notify.set_publisher(notify.CONDUCTOR_SERVICE, CONDUCTOR_HOST)
    provisioning.begin(context, node, 'manage')       # start
    provisioning.begin(context, node, 'done')         # end
    provisioning.begin(context, node, 'provide')      # start
    node.last_error = 'cleaning failed: the sample error'
    provisioning.begin(context, node, 'fail')         # error
    node.instance_info = {'deploy_signal_url': 'http://192.0.2.1:6390/v1/'
                          'signals/' + DEPLOYMENT_UUIDS[0],
                          'deploy_signal_token': SECRET,
                          'deploy_status_aware': True}
    node.save()
    notify.provision(context, node, 'success', 'available', None, 'manage')

    for action in ('set', 'restore'):
        notify.console(context, node, action, 'start')
        notify.console(context, node, action, 'error', exc=err)
        node.console_enabled = True
        node.save()
        notify.console(context, node, action, 'end')

    action = action_obj.Action(
        uuid=ACTION_UUID, name='deploy_site',
        parameters={'deployment_strategy': 'deployment-strategy'},
        state='pending')
    action.create(context)
    action.state = 'running'
    action.task_uuid = TASK_UUID
    action.conductor = CONDUCTOR_HOST
    action.started_at = NOW
    action.save()
    notify.action(context, action, 'start')
    for phase in ('prepare', 'deploy'):
        notify.group(context, action, 'compute-nodes', phase, 'start',
                     report={'status': 'running', 'critical': True,
                             'reason': None, 'nodes': ['cmp01', 'cmp02'],
                             'succeeded_nodes': [], 'failed_nodes': [],
                             'misses': []})
        notify.group(context, action, 'compute-nodes', phase, 'end',
                     report={'status': 'running', 'phase': phase,
                             'reason': None, 'misses': [],
                             'nodes': ['cmp01', 'cmp02'],
                             'succeeded_nodes': ['cmp01', 'cmp02'],
                             'failed_nodes': []})
        notify.group(context, action, 'compute-nodes', phase, 'error',
                     report={'status': 'failed', 'phase': phase,
                             'reason': '%s_criteria_not_met' % phase,
                             'misses': [{'criterion':
                                         'percent_successful_nodes',
                                         'needed': 100, 'actual': 50}],
                             'nodes': ['cmp01', 'cmp02'],
                             'succeeded_nodes': ['cmp01'],
                             'failed_nodes': ['cmp02']})

    # Controls, as the conductor takes them for POST
    # /v1/actions/{uuid}/control, by an operator, while the action's flow
    # runs here: the pause starts, the flow (nothing in flight) drains and
    # pauses the action, then the resume starts and ends at once.
    operator = orch_context.RequestContext(
        user_id=OPERATOR_ID, project_id='admin', is_admin=True,
        roles=['admin', 'reader', 'member'], system_scope='all')
    with steering_mod.ActionSteering(context, action) as steering:
        control.take(operator, ACTION_UUID, 'pause',
                     reason='firmware 2.3 breaks the NICs of rack1')
        steering.current()
        control.take(operator, ACTION_UUID, 'resume')
        steering.current()
    action = action_obj.Action.get(context, ACTION_UUID)
    action.state = 'complete'
    action.result = 'success'
    action.finished_at = NOW
    action.save()
    notify.action(context, action, 'end')
    action.state = 'failed'
    action.result = 'failed'
    action.save()
    notify.action(context, action, 'error', exc=err)

    labels_action = action_obj.Action(
        uuid=LABELS_ACTION_UUID, name='update_labels', state='running',
        parameters={'target_nodes': ['cmp01']})
    labels_action.create(context)
    notify.labels(context, labels_action, node, 'start')
    notify.labels(context, labels_action, node, 'end',
                  diff=labels_mod.LabelDiff(
                      to_set={'role': 'compute',
                              'baremetal-orch.openstack.org/rack': 'rack1'},
                      to_remove=('obsolete',)))
    notify.labels(context, labels_action, node, 'error',
                  exc=RuntimeError('Kubernetes node cmp01 not found'))

    # API again: signals from the node, then the deletions.
    notify.set_publisher(notify.API_SERVICE, API_HOST)
    for uuid, final in zip(DEPLOYMENT_UUIDS, ('COMPLETE', 'FAILED')):
        deployment = deployment_obj.Deployment(
            uuid=uuid, node_uuid=node.uuid, action_uuid=ACTION_UUID,
            conductor=CONDUCTOR_HOST, status='IN_PROGRESS',
            token_hash='sha256:' + SECRET, final=False, deleted=False,
            signal_url='http://192.0.2.1:6390/v1/signals/' + uuid)
        deployment.create(context)
        deployment.status_reason = 'applying the configuration'
        deployment.save()
        notify.signal(context, deployment, 'IN_PROGRESS')
        deployment.status = final
        deployment.final = True
        deployment.deploy_status_code = 0 if final == 'COMPLETE' else 2
        deployment.status_reason = ('deployment succeeded'
                                    if final == 'COMPLETE'
                                    else 'puppet apply failed')
        deployment.save()
        notify.signal(context, deployment, final)

    for resource, obj in (('port', port), ('node', node),
                          ('chassis', chassis)):
        notify.crud(context, resource, 'delete', 'start', obj)
        notify.crud(context, resource, 'delete', 'error', obj, exc=err)
        obj.destroy()
        notify.crud(context, resource, 'delete', 'end', obj)


class TestCatalogue(base.TestCase):
    """The document lists exactly what the code can emit."""

    def setUp(self):
        super().setUp()
        self.catalogue = parse_catalogue(_read_doc())

    def test_every_event_type_is_documented(self):
        self.assertEqual(notification.all_event_types(),
                         sorted(self.catalogue))

    def test_every_entry_is_complete(self):
        for event_type, entry in self.catalogue.items():
            for key, value in entry.items():
                self.assertIsNotNone(value, '%s has no %s'
                                     % (event_type, key))
            self.assertEqual(SAMPLE_REF % event_type, entry['sample'])
            self.assertTrue(os.path.exists(_sample_path(event_type)),
                            event_type)

    def test_no_stray_samples(self):
        self.assertEqual(
            sorted('%s.json' % e for e in notification.all_event_types()),
            sorted(os.listdir(SAMPLES)))

    def test_samples_are_valid_payloads(self):
        for event_type in self.catalogue:
            sample = _read_sample(event_type)
            payload = obj_base.BaremetalOrchObject.obj_from_primitive(
                sample['payload'])
            self.assertEqual(sample['payload'][NS + 'name'],
                             payload.obj_name())
            self.assertEqual([], payload.missing_fields(), event_type)

    def test_samples_hold_no_secret(self):
        for event_type in self.catalogue:
            with open(_sample_path(event_type), encoding='utf-8') as f:
                self.assertNotIn(SECRET, f.read(), event_type)


class TestSamplesMatchEmissions(base.TestCase):
    """Every event type, emitted for real, matches its doc and sample."""

    def setUp(self):
        super().setUp()
        self.useFixture(utils.DatabaseFixture())
        self.bus = self.useFixture(utils.NotificationsFixture('debug'))
        self.useFixture(utils_fixture.TimeFixture(NOW))
        emit_all(orch_context.get_admin_context())
        self.emitted = {}
        for message in self.bus.messages:
            self.emitted.setdefault(message['event_type'], message)
        if os.environ.get(WRITE_ENV):
            self._write_samples()

    def _write_samples(self):
        for event_type, message in self.emitted.items():
            with open(_sample_path(event_type), 'w', encoding='utf-8') as f:
                json.dump(_sample_of(message), f, indent=4, sort_keys=True)
                f.write('\n')

    def test_every_event_type_is_emitted(self):
        self.assertEqual(notification.all_event_types(),
                         sorted(self.emitted))

    def test_samples_and_doc_match_the_emission(self):
        catalogue = parse_catalogue(_read_doc())
        problems = []
        for event_type, message in sorted(self.emitted.items()):
            real = message['payload']
            sample = _read_sample(event_type)
            doc = catalogue.get(event_type, {})
            expected = {
                'event_type': event_type,
                'priority': message['priority'],
                'payload': real[NS + 'name'],
                'version': real[NS + 'version'],
                'fields': sorted(real[NS + 'data']),
            }
            for source, got in (
                    ('sample', {
                        'event_type': sample['event_type'],
                        'priority': sample['priority'],
                        'payload': sample['payload'][NS + 'name'],
                        'version': sample['payload'][NS + 'version'],
                        'fields': sorted(sample['payload'][NS + 'data'])}),
                    ('doc', dict(expected, priority=doc.get('priority'),
                                 payload=doc.get('payload'),
                                 version=doc.get('version')))):
                for key in expected:
                    if got[key] != expected[key]:
                        problems.append('%s: the %s says %s=%r, the code '
                                        'sends %r' % (event_type, source,
                                                      key, got[key],
                                                      expected[key]))
        self.assertEqual([], problems)

    def test_no_secret_is_sent(self):
        text = json.dumps(self.bus.messages, default=str)
        self.assertNotIn(SECRET, text)
        self.assertIn('ipmi_password', text)
