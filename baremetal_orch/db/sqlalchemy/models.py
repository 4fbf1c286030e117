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
"""SQLAlchemy models of baremetal_orch.

Tags and labels live in their own tables with indexes on (tag) and
(key, value), so that deployment selectors become indexed queries.
"""

from oslo_db.sqlalchemy import models
from oslo_db.sqlalchemy import types as db_types
import sqlalchemy as sa
from sqlalchemy import orm


class Base(models.TimestampMixin, models.ModelBase, orm.DeclarativeBase):
    """Base of every table: id, created_at, updated_at."""

    def as_dict(self):
        return {c.name: getattr(self, c.name) for c in self.__table__.columns}


def _json():
    return sa.Column(db_types.JsonEncodedDict, nullable=True)


def _long_json(nullable=True):
    """A JSON document that grows with the number of nodes (a strategy
    naming them, an action's progress and report): LONGTEXT on MariaDB,
    whose TEXT stops at 64 KiB (an action over 1,000 nodes)."""
    return sa.Column(db_types.JsonEncodedDict(mysql_as_long=True),
                     nullable=nullable)


class Chassis(Base):
    __tablename__ = 'chassis'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_chassis0uuid'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    description = sa.Column(sa.String(255), nullable=True)
    extra = _json()


class Service(Base):
    __tablename__ = 'services'
    __table_args__ = (
        sa.UniqueConstraint('host', name='uniq_services0host'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    host = sa.Column(sa.String(255), nullable=False)
    binary = sa.Column(sa.String(64), nullable=False,
                       default='baremetal-orch-conductor')
    shard_key = sa.Column(sa.String(255), nullable=True, index=True)
    conductor_group = sa.Column(sa.String(255), nullable=True)
    forced_down = sa.Column(sa.Boolean, nullable=False, default=False)
    disabled = sa.Column(sa.Boolean, nullable=False, default=False)
    disabled_reason = sa.Column(sa.String(255), nullable=True)
    last_seen_at = sa.Column(sa.DateTime, nullable=True)


class Node(Base):
    __tablename__ = 'nodes'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_nodes0uuid'),
        sa.UniqueConstraint('name', name='uniq_nodes0name'),
        sa.Index('nodes_shard_idx', 'shard'),
        sa.Index('nodes_rack_idx', 'rack_name'),
        sa.Index('nodes_conductor_idx', 'conductor'),
        sa.Index('nodes_ironic_uuid_idx', 'ironic_uuid'),
        sa.Index('nodes_owner_idx', 'owner'),
        sa.Index('nodes_provision_state_idx', 'provision_state'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(255), nullable=True)
    driver = sa.Column(sa.String(64), nullable=False)
    ironic_uuid = sa.Column(sa.String(36), nullable=True)
    chassis_id = sa.Column(sa.Integer, sa.ForeignKey('chassis.id'),
                           nullable=True)
    rack_name = sa.Column(sa.String(255), nullable=True)
    shard = sa.Column(sa.String(255), nullable=True)
    conductor_group = sa.Column(sa.String(255), nullable=True)
    provision_state = sa.Column(sa.String(32), nullable=False)
    target_provision_state = sa.Column(sa.String(32), nullable=True)
    power_state = sa.Column(sa.String(32), nullable=True)
    maintenance = sa.Column(sa.Boolean, nullable=False, default=False)
    maintenance_reason = sa.Column(sa.Text, nullable=True)
    console_enabled = sa.Column(sa.Boolean, nullable=False, default=False)
    driver_info = _json()
    instance_info = _json()
    extra = _json()
    applied_labels = _json()
    deployed_groups = sa.Column(db_types.JsonEncodedList, nullable=True)
    conductor = sa.Column(sa.String(255), nullable=True)
    owner = sa.Column(sa.String(255), nullable=True)
    reservation = sa.Column(sa.String(255), nullable=True)
    last_error = sa.Column(sa.Text, nullable=True)
    tags = orm.relationship('NodeTag', cascade='all, delete-orphan',
                            lazy='selectin', passive_deletes=True)
    labels = orm.relationship('NodeLabel', cascade='all, delete-orphan',
                              lazy='selectin', passive_deletes=True)


# The chassis uuid of a node, read with the node in one query.
Node.chassis_uuid = orm.column_property(
    sa.select(Chassis.uuid).where(Chassis.id == Node.chassis_id)
    .correlate_except(Chassis).scalar_subquery())


class NodeTag(Base):
    __tablename__ = 'node_tags'
    __table_args__ = (
        sa.Index('node_tags_tag_idx', 'tag', 'node_id'),
    )
    node_id = sa.Column(sa.Integer,
                        sa.ForeignKey('nodes.id', ondelete='CASCADE'),
                        primary_key=True)
    tag = sa.Column(sa.String(255), primary_key=True)


class NodeLabel(Base):
    __tablename__ = 'node_labels'
    __table_args__ = (
        sa.Index('node_labels_kv_idx', 'key', 'value', 'node_id'),
    )
    node_id = sa.Column(sa.Integer,
                        sa.ForeignKey('nodes.id', ondelete='CASCADE'),
                        primary_key=True)
    key = sa.Column(sa.String(255), primary_key=True)
    value = sa.Column(sa.String(255), nullable=False)


class Port(Base):
    __tablename__ = 'ports'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_ports0uuid'),
        sa.UniqueConstraint('address', name='uniq_ports0address'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    node_id = sa.Column(sa.Integer, sa.ForeignKey('nodes.id'),
                        nullable=False, index=True)
    address = sa.Column(sa.String(18), nullable=False)
    pxe_enabled = sa.Column(sa.Boolean, nullable=False, default=True)
    local_link_connection = _json()
    extra = _json()
    node = orm.relationship('Node', lazy='joined')


class Strategy(Base):
    __tablename__ = 'deployment_strategies'
    __table_args__ = (
        sa.UniqueConstraint('name', name='uniq_strategies0name'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    name = sa.Column(sa.String(255), nullable=False)
    document = _long_json(nullable=False)


class Action(Base):
    __tablename__ = 'actions'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_actions0uuid'),
        sa.Index('actions_state_idx', 'state'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(64), nullable=False)
    parameters = _long_json()
    state = sa.Column(sa.String(32), nullable=False)
    # Why the action is in its state (a control's reason, outside_window).
    state_reason = sa.Column(sa.String(255), nullable=True)
    # The control its flow must carry out: null, pause or abort.
    control = sa.Column(sa.String(16), nullable=True)
    result = sa.Column(sa.String(32), nullable=True)
    task_uuid = sa.Column(sa.String(36), nullable=True)
    conductor = sa.Column(sa.String(255), nullable=True)
    owner = sa.Column(sa.String(255), nullable=True)
    report = _long_json()
    progress = _long_json()
    started_at = sa.Column(sa.DateTime, nullable=True)
    finished_at = sa.Column(sa.DateTime, nullable=True)


class Task(Base):
    __tablename__ = 'tasks'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_tasks0uuid'),
        sa.Index('tasks_parent_idx', 'parent_uuid'),
        sa.Index('tasks_action_idx', 'action_uuid'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    parent_uuid = sa.Column(sa.String(36), nullable=True)
    action_uuid = sa.Column(sa.String(36), nullable=False)
    kind = sa.Column(sa.String(16), nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    node_uuid = sa.Column(sa.String(36), nullable=True)
    status = sa.Column(sa.String(32), nullable=False)
    reason = sa.Column(sa.Text, nullable=True)
    details = _json()
    started_at = sa.Column(sa.DateTime, nullable=True)
    finished_at = sa.Column(sa.DateTime, nullable=True)


class Event(Base):
    __tablename__ = 'events'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_events0uuid'),
        sa.Index('events_resource_idx', 'resource_uuid'),
        sa.Index('events_action_idx', 'action_uuid'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    resource_uuid = sa.Column(sa.String(36), nullable=True)
    action_uuid = sa.Column(sa.String(36), nullable=True)
    event_type = sa.Column(sa.String(255), nullable=False)
    message = sa.Column(sa.Text, nullable=True)
    details = _json()


class Deployment(Base):
    __tablename__ = 'deployments'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_deployments0uuid'),
        sa.Index('deployments_node_idx', 'node_uuid'),
        sa.Index('deployments_action_idx', 'action_uuid'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    node_uuid = sa.Column(sa.String(36), nullable=False)
    action_uuid = sa.Column(sa.String(36), nullable=True)
    conductor = sa.Column(sa.String(255), nullable=True)
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=True)
    deploy_stdout = sa.Column(sa.Text, nullable=True)
    deploy_stderr = sa.Column(sa.Text, nullable=True)
    deploy_status_code = sa.Column(sa.Integer, nullable=True)
    signal_url = sa.Column(sa.String(1024), nullable=True)
    token_hash = sa.Column(sa.String(128), nullable=True)
    final = sa.Column(sa.Boolean, nullable=False, default=False)
    deleted = sa.Column(sa.Boolean, nullable=False, default=False)
