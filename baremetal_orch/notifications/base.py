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
"""Versioned notifications: event types, publishers, payloads.

A notification is a versioned object that carries a priority (``level``),
an :class:`EventType`, a :class:`NotificationPublisher` and a payload, a
subclass of :class:`NotificationPayloadBase`. :meth:`NotificationBase.emit`
sends the payload's primitive through the oslo.messaging notifier, after
filtering by ``[DEFAULT]notification_level``.

Every notification class declares the event types it may carry in
``EVENT_TYPES``; emitting any other one is refused, so the catalogue of the
code (:func:`all_event_types`) is exactly what can reach the bus.
"""

import itertools
import re

from oslo_config import cfg
from oslo_versionedobjects import fields as ovo_fields

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.notifications import notifier
from baremetal_orch.objects import base
from baremetal_orch.objects import fields

CONF = cfg.CONF

#: Priorities from the lowest to the highest.
LEVELS = fields.NotificationLevel.ALL

#: The statuses an event type may end with.
STATUSES = fields.NotificationStatus.ALL

EVENT_TYPE_PREFIX = 'baremetal'


def _level_rank(level):
    return LEVELS.index(level)


def should_send(level):
    """True when ``level`` passes ``[DEFAULT]notification_level``.

    Unset sends nothing; otherwise a notification is sent when its priority
    is at least the configured one.
    """
    configured = CONF.notification_level
    if not configured:
        return False
    return _level_rank(level) >= _level_rank(configured)


def level_for(status):
    """The priority of a status: ERROR for ``error``, INFO otherwise."""
    if status == fields.NotificationStatus.ERROR:
        return fields.NotificationLevel.ERROR
    return fields.NotificationLevel.INFO


def event_type_name(obj, action, status):
    """``baremetal.<obj>.<action>.<status>``."""
    return '%s.%s.%s.%s' % (EVENT_TYPE_PREFIX, obj, action, status)


def event_types(obj, actions, statuses):
    """``baremetal.<obj>.<action>.<status>`` for every action and status."""
    return frozenset(event_type_name(obj, a, s)
                     for a, s in itertools.product(actions, statuses))


def publisher_id(service, host):
    """``<service>.<host>``: who sends."""
    return '%s.%s' % (service, host)


class EventTypeName(ovo_fields.StringPattern):
    """One dot-free part of an event type: lowercase words joined by _."""

    PATTERN = r'^[a-z][a-z0-9]*(_[a-z0-9]+)*$'

    @classmethod
    def coerce(cls, obj, attr, value):
        value = str(value)
        if not re.match(cls.PATTERN, value):
            raise ValueError('%s must match %s, not %r'
                             % (attr, cls.PATTERN, value))
        return value


class EventTypeNameField(ovo_fields.AutoTypedField):
    AUTO_TYPE = EventTypeName()


class NotificationObject(base.BaremetalOrchObject):
    """Base of the notification objects: no database, no timestamps."""

    fields = {}


@base.BaremetalOrchObjectRegistry.register
class EventType(NotificationObject):
    """``baremetal.<object>.<action>.<status>``."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'object': EventTypeNameField(),
        'action': EventTypeNameField(),
        'status': fields.NotificationStatusField(),
    }

    def to_event_type_field(self):
        return event_type_name(self.object, self.action, self.status)

    def __str__(self):
        return self.to_event_type_field()


@base.BaremetalOrchObjectRegistry.register
class NotificationPublisher(NotificationObject):
    """The service that sends: ``publisher_id`` is ``<service>.<host>``."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'service': ovo_fields.StringField(),
        'host': ovo_fields.StringField(),
    }

    @property
    def publisher_id(self):
        return publisher_id(self.service, self.host)


class NotificationPayloadBase(NotificationObject):
    """Base of the payloads.

    ``SCHEMA`` maps a payload field to ``(source name, source field)``;
    :meth:`populate_schema` copies the values from the sources given by
    name (versioned objects or dicts). Fields named in ``MASKED`` go through
    :func:`baremetal_orch.objects.base.mask_secrets`. Fields outside the
    schema are set by the constructor.
    """

    SCHEMA = {}
    MASKED = ()

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.populated = not self.SCHEMA

    @staticmethod
    def _source_value(source, name):
        """(found, value) of ``name`` in an object or a dict."""
        if source is None:
            return False, None
        if isinstance(source, dict):
            return name in source, source.get(name)
        if hasattr(source, 'obj_attr_is_set'):
            if not source.obj_attr_is_set(name):
                return False, None
            return True, getattr(source, name)
        return hasattr(source, name), getattr(source, name, None)

    def populate_schema(self, **sources):
        """Fill the schema fields from ``sources`` (name to object).

        A value the source does not have yet (a node not created yet) is
        the field's default, or None when the field is nullable; otherwise
        the field stays unset and :meth:`NotificationBase.emit` refuses to
        send the payload.
        """
        for field, (source_name, source_field) in self.SCHEMA.items():
            if source_name not in sources:
                raise exception.InvalidParameterValue(
                    reason='%s needs the source %r'
                    % (self.obj_name(), source_name))
            found, value = self._source_value(sources[source_name],
                                              source_field)
            if not found or value is None:
                spec = self.fields[field]
                if spec.default != ovo_fields.UnspecifiedDefault:
                    value = spec.default
                elif not spec.nullable:
                    continue
            if field in self.MASKED and value:
                value = base.mask_secrets(value)
            setattr(self, field, value)
        self.populated = True
        return self

    @classmethod
    def primitive_of(cls, sources, extra=None):
        """What ``cls(...)`` populated from ``sources``, with the fields
        ``extra`` set, gives through :meth:`obj_to_primitive` (without its
        change list, as :meth:`NotificationBase.emit` sends it), built
        without the object: each value goes through its field's coerce
        and to_primitive, as setting and serializing it would.

        :raises: InvalidParameterValue when a required field is missing.
        """
        fields_ = cls.fields
        data = {}
        for field, (source_name, source_field) in cls.SCHEMA.items():
            if source_name not in sources:
                raise exception.InvalidParameterValue(
                    reason='%s needs the source %r'
                    % (cls.obj_name(), source_name))
            found, value = cls._source_value(sources[source_name],
                                             source_field)
            spec = fields_[field]
            if not found or value is None:
                if spec.default != ovo_fields.UnspecifiedDefault:
                    value = spec.default
                elif not spec.nullable:
                    continue
            if field in cls.MASKED and value:
                value = base.mask_secrets(value)
            data[field] = spec.to_primitive(
                cls, field, spec.coerce(cls, field, value))
        for field, value in (extra or {}).items():
            spec = fields_[field]
            data[field] = spec.to_primitive(
                cls, field, spec.coerce(cls, field, value))
        missing = sorted(name for name, spec in fields_.items()
                         if not spec.nullable and name not in data)
        if missing:
            raise exception.InvalidParameterValue(
                reason='the payload %s lacks %s'
                % (cls.obj_name(), ', '.join(missing)))
        ns = cls.OBJ_SERIAL_NAMESPACE
        return {ns + '.name': cls.obj_name(),
                ns + '.namespace': cls.OBJ_PROJECT_NAMESPACE,
                ns + '.version': cls.VERSION,
                ns + '.data': data}

    def missing_fields(self):
        """The required fields that are not set, sorted."""
        return sorted(name for name, spec in self.fields.items()
                      if not spec.nullable and not self.obj_attr_is_set(name))


class NotificationBase(NotificationObject):
    """Base of the notifications.

    Subclasses add a ``payload`` field and declare ``EVENT_TYPES``.
    """

    EVENT_TYPES = frozenset()

    fields = {
        'level': fields.NotificationLevelField(),
        'event_type': ovo_fields.ObjectField('EventType'),
        'publisher': ovo_fields.ObjectField('NotificationPublisher'),
    }

    @classmethod
    def check_event_type(cls, name):
        """``name``, unless this notification cannot carry that event
        type (InvalidParameterValue, whether it is sent or not)."""
        if name not in cls.EVENT_TYPES:
            raise exception.InvalidParameterValue(
                reason='%s cannot carry the event type %s'
                % (cls.obj_name(), name))
        return name

    def _check(self):
        name = self.check_event_type(self.event_type.to_event_type_field())
        if not self.payload.populated:
            raise exception.InvalidParameterValue(
                reason='the payload %s of %s is not populated'
                % (self.payload.obj_name(), name))
        missing = self.payload.missing_fields()
        if missing:
            raise exception.InvalidParameterValue(
                reason='the payload %s of %s lacks %s'
                % (self.payload.obj_name(), name, ', '.join(missing)))
        return name

    def emit(self, context):
        """Send the notification when its level passes the filter.

        :returns: True when it was handed to the notifier.
        """
        return _send(context, self.level, self._check(),
                     self.publisher.publisher_id,
                     lambda: _snapshot(self.payload.obj_to_primitive()))


def _send(context, level, event_type, publisher, make_primitive):
    """Hand a payload's primitive to the notifier of ``publisher`` when
    ``level`` passes the filter; True when it was handed over."""
    if not should_send(level):
        return False
    prepared = notifier.get_versioned_notifier(publisher)
    if prepared is None:
        return False
    if context is None:
        context = orch_context.get_admin_context()
    getattr(prepared, level)(context, event_type=event_type,
                             payload=make_primitive())
    return True


def emit_primitive(context, cls, event_type, level, publisher_id,
                   make_primitive):
    """Send what :meth:`NotificationBase.emit` of a ``cls`` notification
    sends, from the payload's primitive (see
    :meth:`NotificationPayloadBase.primitive_of`): no versioned object per
    notification.

    :param make_primitive: a callable returning the payload's primitive,
        called only when the notification will be sent.
    :returns: True when it was handed to the notifier.
    """
    cls.check_event_type(event_type)
    return _send(context, level, event_type, publisher_id, make_primitive)


def _snapshot(primitive):
    """A payload's primitive without its change lists: a payload is a
    complete snapshot. (Cheaper than resetting the changes of the object
    and its child objects before serializing it.) Only object primitives
    are touched, never the user's dicts (driver_info...)."""
    ns = base.BaremetalOrchObject.OBJ_SERIAL_NAMESPACE
    if isinstance(primitive, dict) and ns + '.name' in primitive:
        primitive.pop(ns + '.changes', None)
        for value in (primitive.get(ns + '.data') or {}).values():
            for item in (value if isinstance(value, list) else [value]):
                _snapshot(item)
    return primitive


def notification_classes():
    """Every registered notification class."""
    return [classes[0] for classes in
            base.BaremetalOrchObjectRegistry.obj_classes().values()
            if issubclass(classes[0], NotificationBase)]


def all_event_types():
    """Every event type a registered notification class may carry."""
    return sorted(set().union(*(cls.EVENT_TYPES
                                for cls in notification_classes())))
