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

import datetime

from oslo_utils import strutils
from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields as ovo_fields


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

    @classmethod
    def _db_value(cls, db_obj, field):
        return getattr(db_obj, field)

    @classmethod
    def _from_db_object(cls, context, obj, db_obj):
        for field in obj.fields:
            value = cls._db_value(db_obj, field)
            # Naive datetimes from the database are UTC.
            if (value is not None and
                    isinstance(obj.fields[field], ovo_fields.DateTimeField)
                    and value.tzinfo is None):
                value = value.replace(tzinfo=datetime.timezone.utc)
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


def _mask_keys(value):
    if isinstance(value, dict):
        return {k: (MASK if (isinstance(k, str) and v is not None
                             and not isinstance(v, (dict, list))
                             and any(w in k.lower() for w in SECRET_WORDS))
                    else _mask_keys(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_keys(v) for v in value]
    return value


def mask_secrets(value):
    """A copy of a dict whose secret values are masked, at any depth.

    oslo.utils masks its catalogue of secret keys; on top of it every key
    containing password, secret, token or key is masked (DESIGN section 3).
    """
    if not value:
        return value
    return _mask_keys(strutils.mask_dict_password(value, secret=MASK))
