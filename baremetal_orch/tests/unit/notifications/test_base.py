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
"""Tests of the notification base: event types, levels, emission."""

from unittest import mock

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.notifications import base as notification
from baremetal_orch.notifications import notifier
from baremetal_orch.notifications import notify  # noqa: F401  (payloads)
from baremetal_orch.objects import base as obj_base
from baremetal_orch.objects import fields
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.objects import utils


@obj_base.BaremetalOrchObjectRegistry.register_if(False)
class _Payload(notification.NotificationPayloadBase):
    VERSION = '1.0'
    SCHEMA = {
        'uuid': ('thing', 'uuid'),
        'name': ('thing', 'name'),
        'flag': ('thing', 'flag'),
        'secret_dict': ('thing', 'info'),
        'other': ('other', 'value'),
    }
    MASKED = ('secret_dict',)
    fields = {
        'uuid': fields.UUIDField(),
        'name': fields.StringField(nullable=True),
        'flag': fields.BooleanField(default=True),
        'secret_dict': fields.FlexibleDictField(nullable=True),
        'other': fields.StringField(nullable=True),
        'extra_field': fields.StringField(nullable=True),
    }


@obj_base.BaremetalOrchObjectRegistry.register_if(False)
class _Thing(obj_base.BaremetalOrchObject):
    VERSION = '1.0'
    fields = {
        'uuid': fields.UUIDField(),
        'name': fields.StringField(nullable=True),
        'flag': fields.BooleanField(),
        'info': fields.FlexibleDictField(nullable=True),
    }


@obj_base.BaremetalOrchObjectRegistry.register_if(False)
class _Notification(notification.NotificationBase):
    VERSION = '1.0'
    EVENT_TYPES = notification.event_types('thing', ('poke',),
                                           ('start', 'end', 'error'))
    fields = dict(notification.NotificationBase.fields,
                  payload=fields.ObjectField('_Payload'))


UUID = '9e0b2b1b-7e3c-4a86-8d1f-4f1f6a1c2d3e'


def _payload(**thing):
    values = {'uuid': UUID, 'name': 'n1', 'flag': False}
    values.update(thing)
    return _Payload().populate_schema(thing=_Thing(**values),
                                      other={'value': 'o'})


def _notification(status='start', level=None, payload=None):
    return _Notification(
        level=level or notification.level_for(status),
        event_type=notification.EventType(object='thing', action='poke',
                                          status=status),
        publisher=notification.NotificationPublisher(
            service='baremetal-orch-api', host='h1'),
        payload=payload or _payload())


class TestEventType(base.TestCase):

    def test_renders(self):
        for obj, action, status, expected in [
                ('node', 'create', 'start', 'baremetal.node.create.start'),
                ('node', 'provision_set', 'success',
                 'baremetal.node.provision_set.success'),
                ('deployment_group', 'prepare', 'error',
                 'baremetal.deployment_group.prepare.error')]:
            event = notification.EventType(object=obj, action=action,
                                           status=status)
            self.assertEqual(expected, event.to_event_type_field())
            self.assertEqual(expected, str(event))

    def test_status_must_be_allowed(self):
        for status in ('finish', 'START', '', 'in_progress', None):
            self.assertRaises(ValueError, notification.EventType,
                              object='node', action='create', status=status)

    def test_allowed_statuses(self):
        self.assertEqual(('start', 'end', 'error', 'success'),
                         notification.STATUSES)

    def test_names_must_be_dot_free_lowercase_words(self):
        for name in ('Node', 'node.create', 'node-x', '', '_x', 'x_',
                     'a__b', '1node'):
            self.assertRaises(ValueError, notification.EventType,
                              object=name, action='create', status='end')
            self.assertRaises(ValueError, notification.EventType,
                              object='node', action=name, status='end')

    def test_event_types_product(self):
        self.assertEqual(
            {'baremetal.x.a.start', 'baremetal.x.a.end',
             'baremetal.x.b.start', 'baremetal.x.b.end'},
            notification.event_types('x', ('a', 'b'), ('start', 'end')))


class TestPublisher(base.TestCase):

    def test_publisher_id(self):
        for service, host, expected in [
                ('baremetal-orch-api', 'ctl01', 'baremetal-orch-api.ctl01'),
                ('baremetal-orch-conductor', 'c.example.org',
                 'baremetal-orch-conductor.c.example.org')]:
            publisher = notification.NotificationPublisher(service=service,
                                                           host=host)
            self.assertEqual(expected, publisher.publisher_id)


class TestLevels(base.TestCase):

    def test_should_send(self):
        # configured level, notification level, sent?
        table = [
            (None, 'critical', False),
            (None, 'info', False),
            ('debug', 'debug', True),
            ('debug', 'info', True),
            ('info', 'debug', False),
            ('info', 'info', True),
            ('info', 'error', True),
            ('warning', 'info', False),
            ('warning', 'warning', True),
            ('error', 'info', False),
            ('error', 'warning', False),
            ('error', 'error', True),
            ('error', 'critical', True),
            ('critical', 'error', False),
            ('critical', 'critical', True),
        ]
        for configured, level, expected in table:
            self.config(notification_level=configured)
            self.assertEqual(expected, notification.should_send(level),
                             (configured, level))

    def test_level_for_status(self):
        for status, level in [('start', 'info'), ('end', 'info'),
                              ('success', 'info'), ('error', 'error')]:
            self.assertEqual(level, notification.level_for(status))


class TestPayloadBase(base.TestCase):

    def test_populate_from_object_and_dict(self):
        payload = _payload(info={'password': 'p', 'user': 'u'})
        self.assertTrue(payload.populated)
        self.assertEqual(UUID, payload.uuid)
        self.assertEqual('n1', payload.name)
        self.assertFalse(payload.flag)
        self.assertEqual('o', payload.other)
        self.assertEqual({'password': '***', 'user': 'u'},
                         payload.secret_dict)
        # Fields outside the schema are left to the constructor.
        self.assertFalse(payload.obj_attr_is_set('extra_field'))

    def test_unset_source_fields(self):
        # A thing not created yet: only a name.
        payload = _Payload().populate_schema(thing=_Thing(name='new'),
                                             other={})
        self.assertEqual('new', payload.name)
        self.assertTrue(payload.flag)           # the field's default
        self.assertIsNone(payload.other)        # nullable
        self.assertEqual({}, payload.secret_dict)
        self.assertFalse(payload.obj_attr_is_set('uuid'))  # no default

    def test_missing_source(self):
        self.assertRaises(exception.InvalidParameterValue,
                          _Payload().populate_schema, thing=_Thing())

    def test_not_populated_until_populate_schema(self):
        self.assertFalse(_Payload().populated)


class TestEmit(base.TestCase):

    def setUp(self):
        super().setUp()
        self.bus = self.useFixture(utils.NotificationsFixture(level='info'))
        self.context = orch_context.get_admin_context()

    def test_emit_sends_primitive_with_priority(self):
        self.assertTrue(_notification('start').emit(self.context))
        self.assertTrue(_notification('error').emit(self.context))
        start, error = self.bus.messages
        self.assertEqual('baremetal.thing.poke.start', start['event_type'])
        self.assertEqual('INFO', start['priority'])
        self.assertEqual('baremetal-orch-api.h1', start['publisher_id'])
        self.assertEqual('ERROR', error['priority'])
        payload = start['payload']
        self.assertEqual('_Payload', payload['baremetal_orch_object.name'])
        self.assertEqual('1.0', payload['baremetal_orch_object.version'])
        self.assertEqual(UUID, payload['baremetal_orch_object.data']['uuid'])
        self.assertNotIn('baremetal_orch_object.changes', payload)

    def test_unset_level_sends_nothing(self):
        self.config(notification_level=None)
        with mock.patch.object(notifier, 'get_versioned_notifier',
                               autospec=True) as get:
            self.assertFalse(_notification('error').emit(self.context))
        get.assert_not_called()
        self.assertEqual([], self.bus.messages)

    def test_error_level_drops_info(self):
        self.config(notification_level='error')
        self.assertFalse(_notification('end').emit(self.context))
        self.assertTrue(_notification('error').emit(self.context))
        self.assertEqual(['baremetal.thing.poke.error'],
                         self.bus.event_types())

    def test_notifier_method_of_the_level(self):
        prepared = mock.Mock()
        with mock.patch.object(notifier, 'get_versioned_notifier',
                               autospec=True, return_value=prepared) as get:
            _notification('end', level='warning').emit(self.context)
        get.assert_called_once_with('baremetal-orch-api.h1')
        prepared.warning.assert_called_once_with(
            self.context, event_type='baremetal.thing.poke.end',
            payload=mock.ANY)
        prepared.info.assert_not_called()

    def test_no_context_uses_an_admin_context(self):
        _notification('end').emit(None)
        self.assertEqual(1, len(self.bus.messages))

    def test_refuses_undeclared_event_type(self):
        notif = _notification('end')
        notif.event_type = notification.EventType(
            object='thing', action='poke', status='success')
        self.assertRaises(exception.InvalidParameterValue, notif.emit,
                          self.context)
        notif.event_type = notification.EventType(
            object='node', action='poke', status='end')
        self.assertRaises(exception.InvalidParameterValue, notif.emit,
                          self.context)
        self.assertEqual([], self.bus.messages)

    def test_refuses_payload_without_required_fields(self):
        payload = _Payload().populate_schema(thing=_Thing(name='x'),
                                             other={})
        self.assertEqual(['uuid'], payload.missing_fields())
        notif = _notification('end', payload=payload)
        self.assertRaises(exception.InvalidParameterValue, notif.emit,
                          self.context)
        self.assertEqual([], self.bus.messages)

    def test_refuses_unpopulated_payload(self):
        notif = _notification('end', payload=_Payload(uuid=UUID))
        self.assertRaises(exception.InvalidParameterValue, notif.emit,
                          self.context)
        self.assertEqual([], self.bus.messages)


class TestCatalogue(base.TestCase):
    """The event types of the notifications specification and
    doc/source/admin/notifications.rst, written out."""

    def test_all_event_types(self):
        expected = set()

        def add(obj, actions, statuses):
            for action in actions.split():
                for status in statuses.split():
                    expected.add('baremetal.%s.%s.%s'
                                 % (obj, action, status))

        for obj in ('node', 'port', 'chassis'):
            add(obj, 'create update delete', 'start end error')
        add('node', 'provision_set', 'start end error success')
        add('node', 'maintenance_set', 'start end error')
        add('node', 'console_set console_restore', 'start end error')
        add('node', 'labels_set', 'start end error')
        add('action', 'run', 'start end error')
        add('deployment_group', 'prepare deploy', 'start end error')
        add('deployment', 'signal', 'success end error')
        # doc/source/admin/steering.rst names the controls under the
        # service's prefix.
        expected.update(('baremetal_orch.action.control.start',
                         'baremetal_orch.action.control.end'))
        self.assertEqual(sorted(expected), notification.all_event_types())

    def test_every_notification_class_has_a_payload_and_version(self):
        classes = notification.notification_classes()
        self.assertEqual(11, len(classes))
        for cls in classes:
            self.assertIn('payload', cls.fields, cls.__name__)
            self.assertRegex(cls.VERSION, r'^\d+\.\d+$')
            self.assertTrue(cls.EVENT_TYPES, cls.__name__)
