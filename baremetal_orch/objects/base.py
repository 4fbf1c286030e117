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
"""Base of the versioned objects of baremetal_orch."""

import contextlib
import datetime

from oslo_utils import strutils
from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields as ovo_fields

from baremetal_orch.db import api as dbapi


def as_utc(value):
    """A datetime the database gave: naive ones are UTC, made aware here
    (None stays None)."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=datetime.timezone.utc)
    return value


class BaremetalOrchObjectRegistry(ovo_base.VersionedObjectRegistry):
    pass


class BaremetalOrchObject(ovo_base.VersionedObject,
                          ovo_base.VersionedObjectDictCompat):
    """Base of every persistent object.

    Subclasses declare ``fields`` and the ``dbapi`` calls they use; the
    generic code here copies database rows in and changes out.
    """

    OBJ_SERIAL_NAMESPACE = 'baremetal_orch_object'
    OBJ_PROJECT_NAMESPACE = 'baremetal_orch'

    fields = {
        'created_at': ovo_fields.DateTimeField(nullable=True),
        'updated_at': ovo_fields.DateTimeField(nullable=True),
    }

    #: Fields that are not columns of the row and are set by _from_db_object.
    _extra_db_fields = ()

    #: The name of the database API's row lock of this kind of object
    #: (``locked_node``...), which :meth:`updating` holds.
    _row_lock = None

    @classmethod
    def from_trusted(cls, context=None, **values):
        """An object of ``values`` that have their fields' types already
        (UUIDs this service generated, its status constants): stored
        without the fields' coercion, for the batch path (a group's
        deployment records, hundreds at once). A value is stored where
        oslo.versionedobjects' setter stores it (its private
        ``_get_attrname``, pinned by
        ``tests/unit/test_private_overrides.py``).

        :raises: KeyError naming a value that is not a field.
        """
        unknown = values.keys() - cls.fields.keys()
        if unknown:
            raise KeyError('%s has no field %s' % (
                cls.obj_name(), ', '.join(sorted(unknown))))
        obj = cls(context)
        for name, value in values.items():
            setattr(obj, ovo_base._get_attrname(name), value)
        obj.obj_reset_changes()
        return obj

    @classmethod
    @contextlib.contextmanager
    def updating(cls, context, ident):
        """The object, read again under its row lock, in a write
        transaction that lasts the block: change and save it inside, and
        no concurrent change is lost (a PATCH)."""
        with getattr(dbapi, cls._row_lock)(ident):
            yield cls.get(context, ident)

    @classmethod
    def _db_value(cls, db_obj, field):
        return getattr(db_obj, field)

    @classmethod
    def _from_db_object(cls, context, obj, db_obj):
        for field in obj.fields:
            value = cls._db_value(db_obj, field)
            if isinstance(obj.fields[field], ovo_fields.DateTimeField):
                value = as_utc(value)
            obj[field] = value
        obj._context = context
        obj.obj_reset_changes()
        return obj

    @classmethod
    def _from_db_object_list(cls, context, db_objs):
        return [cls._from_db_object(context, cls(), row) for row in db_objs]

    def as_dict(self):
        return {k: getattr(self, k) for k in self.fields
                if self.obj_attr_is_set(k)}

    def refresh_from(self, other):
        for field in self.fields:
            if other.obj_attr_is_set(field):
                self[field] = other[field]
        self.obj_reset_changes()


class BaremetalOrchObjectSerializer(ovo_base.VersionedObjectSerializer):
    OBJ_BASE_CLASS = BaremetalOrchObject


SECRET_WORDS = ('password', 'secret', 'token', 'key')
MASK = '***'
#: The names oslo.utils masks as secrets (its catalogue is private: none if
#: it moves).
_OSLO_SECRET_KEYS = tuple(getattr(strutils, '_SANITIZE_KEYS', ()))


def is_secret_key(key):
    """Whether a value stored under ``key`` is a secret.

    A key is secret when it contains password, secret, token or key, in
    any case, or one of the names oslo.utils knows for secrets
    (``strutils.mask_dict_password``'s catalogue): see
    doc/source/admin/limits.rst.
    """
    if not isinstance(key, str):
        return False
    lowered = key.lower()
    return (any(w in lowered for w in SECRET_WORDS)
            or any(k in lowered for k in _OSLO_SECRET_KEYS))


def _mask(value):
    if isinstance(value, dict):
        return {k: MASK if is_secret_key(k) else _mask(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_mask(v) for v in value]
    if isinstance(value, str):
        # A secret written inside a string ("--password x", a URL).
        return strutils.mask_password(value, secret=MASK)
    return value


def mask_secrets(value):
    """A copy of ``value`` with every secret masked, at any depth.

    The whole value under a secret key (see :func:`is_secret_key`) becomes
    ``***``, whatever its type: a string, a number, a list or a map (a map
    under ``private_key`` is not searched for more secret keys, it is
    hidden whole). Strings elsewhere go through
    ``strutils.mask_password``, which masks ``password=...`` and the like
    inside them. (``strutils.mask_dict_password`` is not enough: it walks
    into a map under a secret key and shows its values.)
    """
    if not value:
        return value
    return _mask(value)
