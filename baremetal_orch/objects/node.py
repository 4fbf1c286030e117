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
"""The Node object."""

import copy

from oslo_versionedobjects import base as ovo_base

from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import base
from baremetal_orch.objects import fields as f


@base.BaremetalOrchObjectRegistry.register
class Node(base.BaremetalOrchObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'id': f.IntegerField(),
        'uuid': f.UUIDField(),
        'name': f.StringField(nullable=True),
        'driver': f.StringField(),
        'ironic_uuid': f.UUIDField(nullable=True),
        'chassis_id': f.IntegerField(nullable=True),
        'chassis_uuid': f.UUIDField(nullable=True),
        'rack_name': f.StringField(nullable=True),
        'tags': f.ListOfStringsField(),
        'labels': f.DictOfStringsField(),
        'shard': f.StringField(nullable=True),
        'conductor_group': f.StringField(nullable=True),
        'provision_state': f.StringField(),
        'target_provision_state': f.StringField(nullable=True),
        'power_state': f.StringField(nullable=True),
        'maintenance': f.BooleanField(),
        'maintenance_reason': f.StringField(nullable=True),
        'console_enabled': f.BooleanField(),
        'driver_info': f.FlexibleDictField(nullable=True),
        'instance_info': f.FlexibleDictField(nullable=True),
        'extra': f.FlexibleDictField(nullable=True),
        'applied_labels': f.FlexibleDictField(nullable=True),
        'deployed_groups': f.ListOfStringsField(nullable=True),
        'conductor': f.StringField(nullable=True),
        'owner': f.StringField(nullable=True),
        'reservation': f.StringField(nullable=True),
        'last_error': f.StringField(nullable=True),
    }
    fields.update(base.BaremetalOrchObject.fields)

    _row_lock = 'locked_node'

    @classmethod
    def _db_value(cls, db_obj, field):
        if isinstance(db_obj, dict):
            # A record of the node reader (tags and labels included).
            return db_obj[field]
        if field == 'tags':
            return sorted(t.tag for t in db_obj.tags)
        if field == 'labels':
            return {lb.key: lb.value for lb in db_obj.labels}
        return getattr(db_obj, field)

    # Reading: one reader of node records, as objects or as plain dicts.

    @classmethod
    def get(cls, context, ident):
        """A node by uuid or name."""
        return cls._from_db_object(context, cls(),
                                   dbapi.get_node_dict(ident))

    @classmethod
    def list(cls, context, filters=None, limit=None, marker=None,
             sort_key=None, sort_dir=None):
        return cls._from_db_object_list(context, cls.list_records(
            context, filters, limit, marker, sort_key, sort_dir))

    @staticmethod
    def list_records(context, filters=None, limit=None, marker=None,
                     sort_key=None, sort_dir=None):
        """The nodes as the plain dicts :meth:`list` makes objects of
        (every field): what the API lists, with no object per node."""
        return dbapi.list_node_dicts(filters, limit, marker, sort_key,
                                     sort_dir)

    @staticmethod
    def names_matching(selectors):
        """The names of the nodes ``selectors`` select (one indexed query;
        the selector rules are :mod:`baremetal_orch.deployment.selectors`).
        """
        return dbapi.resolve_selectors(selectors)

    @staticmethod
    def resolve_groups(strategy):
        """The nodes the groups of ``strategy`` (a parsed
        :class:`~baremetal_orch.deployment.strategy.Strategy`) select:
        ``({group: [node uuids]}, {node uuid: name})``, one indexed query
        per group. Inside an action a node is its UUID; its name, as
        seen now, is for the reports."""
        group_nodes, names = {}, {}
        for group in strategy.groups:
            found = dbapi.select_nodes(group.selectors)
            group_nodes[group.name] = list(found)
            names.update(found)
        return group_nodes, names

    @staticmethod
    def count_by_shard():
        """``[(shard or None, number of nodes)]``."""
        return dbapi.count_nodes_by_shard()

    def create(self, context=None):
        values = self.obj_get_changes()
        values.pop('chassis_uuid', None)
        self._from_db_object(context or self._context, self,
                             dbapi.create_node(values))

    #: Changes that need more than one UPDATE of the nodes row.
    _COMPLEX_FIELDS = frozenset(['tags', 'labels', 'chassis_id', 'name'])

    def save(self, context=None):
        values = self.obj_get_changes()
        values.pop('chassis_uuid', None)
        if not values:
            return
        if self._COMPLEX_FIELDS.isdisjoint(values):
            # The hot path of the conductor (state changes): one UPDATE.
            updated_at = dbapi.update_node_fields(self.uuid, values)
            self.updated_at = base.as_utc(updated_at)
            self.obj_reset_changes()
            return
        self._from_db_object(context or self._context, self,
                             dbapi.update_node(self.uuid, values))

    @classmethod
    def reserve_many(cls, context, uuids, host):
        """Lock for ``host`` the nodes among ``uuids`` that nobody holds
        (one conditional UPDATE); returns ``{uuid: Node}`` of those locked.
        """
        return cls.from_rows(context, dbapi.reserve_nodes(uuids, host))

    @classmethod
    def from_rows(cls, context, rows):
        """``{uuid: Node}`` of node rows (dicts) the database API read.

        The batch path (a group's nodes at each phase): a row's values
        have their fields' types already (the schema's), so they are
        stored without the fields' coercion (about a quarter of a batch's
        CPU at 100 nodes, under yappi); the datetimes are made aware, as
        :meth:`_from_db_object` does, and the lists and dicts of strings
        are the coerced collections it makes, built without coercing
        their items again (:meth:`.fields.ListOfStringsField.trusted`;
        most of what was left).

        A value is stored where oslo.versionedobjects' setter stores it
        (its private ``_get_attrname``, pinned by
        ``tests/unit/test_private_overrides.py``). Retired when
        oslo.versionedobjects can build an object from trusted values
        without coercing them.
        """
        if cls._ROW_FIELDS is None:
            plain, times, collections = [], [], []
            for name, field in cls.fields.items():
                attr = ovo_base._get_attrname(name)
                if isinstance(field, f.DateTimeField):
                    times.append((name, attr))
                elif hasattr(field, 'trusted'):
                    collections.append((name, attr, field.trusted))
                else:
                    plain.append((name, attr))
            cls._ROW_FIELDS = plain, times, collections
        plain, times, collections = cls._ROW_FIELDS
        nodes = {}
        for row in rows:
            node = cls(context)
            attrs = node.__dict__
            for name, attr in plain:
                attrs[attr] = row[name]
            for name, attr in times:
                attrs[attr] = base.as_utc(row[name])
            for name, attr, trusted in collections:
                attrs[attr] = trusted(name, row[name])
            node.obj_reset_changes()
            nodes[row['uuid']] = node
        return nodes

    #: ``(plain, times, collections)``, for from_rows: ``[(field, its
    #: attribute)]`` of the values stored as they are and of the
    #: datetimes, ``[(field, its attribute, its Field's trusted)]`` of
    #: the lists and dicts of strings.
    _ROW_FIELDS = None

    @staticmethod
    def save_many(nodes, host, values):
        """Write the same plain-column ``values`` to many nodes ``host``
        holds, in one UPDATE (a state change of a group's nodes). The
        values are coerced once, for all the nodes."""
        if not nodes:
            return
        first = nodes[0]
        coerced = [(ovo_base._get_attrname(key),
                    first.fields[key].coerce(first, key, value))
                   for key, value in values.items()]
        updated_at = base.as_utc(dbapi.update_nodes(
            [n.uuid for n in nodes], host, values))
        coerced.append((ovo_base._get_attrname('updated_at'), updated_at))
        # A list or dict is each node's own copy, not shared; the others
        # (strings, numbers, datetimes) do not change in place.
        shared = [(a, v) for a, v in coerced
                  if not isinstance(v, (list, dict))]
        owned = [(a, v) for a, v in coerced if isinstance(v, (list, dict))]
        for node in nodes:
            for attr, value in shared:
                setattr(node, attr, value)
            for attr, value in owned:
                setattr(node, attr, copy.copy(value))
            node.obj_reset_changes()

    def destroy(self, context=None):
        dbapi.destroy_node(self.uuid)
        self.obj_reset_changes()

    def refresh(self, context=None):
        self.refresh_from(self.get(context or self._context, self.uuid))

    @property
    def ident(self):
        return self.name or self.uuid
