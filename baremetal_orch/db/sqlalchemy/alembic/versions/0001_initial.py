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


"""Initial schema: inventory, services, strategies, actions, tasks, events,
deployment records.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-21

"""

from alembic import op
from oslo_db.sqlalchemy import types as db_types
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = "0001_initial"
down_revision = None


def upgrade():
    op.create_table(
        "actions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("parameters", db_types.JsonEncodedDict(), nullable=True),
        sa.Column("state", sa.String(length=32), nullable=False),
        sa.Column("result", sa.String(length=32), nullable=True),
        sa.Column("task_uuid", sa.String(length=36), nullable=True),
        sa.Column("conductor", sa.String(length=255), nullable=True),
        sa.Column("owner", sa.String(length=255), nullable=True),
        sa.Column("report", db_types.JsonEncodedDict(), nullable=True),
        sa.Column("progress", db_types.JsonEncodedDict(), nullable=True),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("uuid", name="uniq_actions0uuid"),
    )
    op.create_index("actions_state_idx", "actions", ["state"], unique=False)
    op.create_table(
        "chassis",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("description", sa.String(length=255), nullable=True),
        sa.Column("extra", db_types.JsonEncodedDict(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("uuid", name="uniq_chassis0uuid"),
    )
    op.create_table(
        "deployment_strategies",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("document", db_types.JsonEncodedDict(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name", name="uniq_strategies0name"),
    )
    op.create_table(
        "deployments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("node_uuid", sa.String(length=36), nullable=False),
        sa.Column("action_uuid", sa.String(length=36), nullable=True),
        sa.Column("conductor", sa.String(length=255), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("deploy_stdout", sa.Text(), nullable=True),
        sa.Column("deploy_stderr", sa.Text(), nullable=True),
        sa.Column("deploy_status_code", sa.Integer(), nullable=True),
        sa.Column("signal_url", sa.String(length=1024), nullable=True),
        sa.Column("token_hash", sa.String(length=128), nullable=True),
        sa.Column("final", sa.Boolean(), nullable=False),
        sa.Column("deleted", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("uuid", name="uniq_deployments0uuid"),
    )
    op.create_index(
        "deployments_action_idx", "deployments", ["action_uuid"], unique=False
    )
    op.create_index(
        "deployments_node_idx", "deployments", ["node_uuid"], unique=False
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("resource_uuid", sa.String(length=36), nullable=True),
        sa.Column("action_uuid", sa.String(length=36), nullable=True),
        sa.Column("event_type", sa.String(length=255), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("details", db_types.JsonEncodedDict(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("uuid", name="uniq_events0uuid"),
    )
    op.create_index(
        "events_action_idx", "events", ["action_uuid"], unique=False
    )
    op.create_index(
        "events_resource_idx", "events", ["resource_uuid"], unique=False
    )
    op.create_table(
        "services",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("binary", sa.String(length=64), nullable=False),
        sa.Column("shard_key", sa.String(length=255), nullable=True),
        sa.Column("conductor_group", sa.String(length=255), nullable=True),
        sa.Column("forced_down", sa.Boolean(), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("disabled_reason", sa.String(length=255), nullable=True),
        sa.Column("last_seen_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("host", name="uniq_services0host"),
    )
    op.create_index(
        op.f("ix_services_shard_key"), "services", ["shard_key"], unique=False
    )
    op.create_table(
        "tasks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("parent_uuid", sa.String(length=36), nullable=True),
        sa.Column("action_uuid", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("node_uuid", sa.String(length=36), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("details", db_types.JsonEncodedDict(), nullable=True),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("uuid", name="uniq_tasks0uuid"),
    )
    op.create_index("tasks_action_idx", "tasks", ["action_uuid"], unique=False)
    op.create_index("tasks_parent_idx", "tasks", ["parent_uuid"], unique=False)
    op.create_table(
        "nodes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("driver", sa.String(length=64), nullable=False),
        sa.Column("ironic_uuid", sa.String(length=36), nullable=True),
        sa.Column("chassis_id", sa.Integer(), nullable=True),
        sa.Column("rack_name", sa.String(length=255), nullable=True),
        sa.Column("shard", sa.String(length=255), nullable=True),
        sa.Column("conductor_group", sa.String(length=255), nullable=True),
        sa.Column("provision_state", sa.String(length=32), nullable=False),
        sa.Column(
            "target_provision_state", sa.String(length=32), nullable=True
        ),
        sa.Column("power_state", sa.String(length=32), nullable=True),
        sa.Column("maintenance", sa.Boolean(), nullable=False),
        sa.Column("maintenance_reason", sa.Text(), nullable=True),
        sa.Column("console_enabled", sa.Boolean(), nullable=False),
        sa.Column("driver_info", db_types.JsonEncodedDict(), nullable=True),
        sa.Column("instance_info", db_types.JsonEncodedDict(), nullable=True),
        sa.Column("extra", db_types.JsonEncodedDict(), nullable=True),
        sa.Column("applied_labels", db_types.JsonEncodedDict(), nullable=True),
        sa.Column(
            "deployed_groups", db_types.JsonEncodedList(), nullable=True
        ),
        sa.Column("conductor", sa.String(length=255), nullable=True),
        sa.Column("owner", sa.String(length=255), nullable=True),
        sa.Column("reservation", sa.String(length=255), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["chassis_id"],
            ["chassis.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name", name="uniq_nodes0name"),
        sa.UniqueConstraint("uuid", name="uniq_nodes0uuid"),
    )
    op.create_index(
        "nodes_conductor_idx", "nodes", ["conductor"], unique=False
    )
    op.create_index(
        "nodes_ironic_uuid_idx", "nodes", ["ironic_uuid"], unique=False
    )
    op.create_index("nodes_owner_idx", "nodes", ["owner"], unique=False)
    op.create_index(
        "nodes_provision_state_idx", "nodes", ["provision_state"], unique=False
    )
    op.create_index("nodes_rack_idx", "nodes", ["rack_name"], unique=False)
    op.create_index("nodes_shard_idx", "nodes", ["shard"], unique=False)
    op.create_table(
        "node_labels",
        sa.Column("node_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("value", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["node_id"], ["nodes.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("node_id", "key"),
    )
    op.create_index(
        "node_labels_kv_idx",
        "node_labels",
        ["key", "value", "node_id"],
        unique=False,
    )
    op.create_table(
        "node_tags",
        sa.Column("node_id", sa.Integer(), nullable=False),
        sa.Column("tag", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["node_id"], ["nodes.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("node_id", "tag"),
    )
    op.create_index(
        "node_tags_tag_idx", "node_tags", ["tag", "node_id"], unique=False
    )
    op.create_table(
        "ports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("node_id", sa.Integer(), nullable=False),
        sa.Column("address", sa.String(length=18), nullable=False),
        sa.Column("pxe_enabled", sa.Boolean(), nullable=False),
        sa.Column(
            "local_link_connection", db_types.JsonEncodedDict(), nullable=True
        ),
        sa.Column("extra", db_types.JsonEncodedDict(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["node_id"],
            ["nodes.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("address", name="uniq_ports0address"),
        sa.UniqueConstraint("uuid", name="uniq_ports0uuid"),
    )
    op.create_index(
        op.f("ix_ports_node_id"), "ports", ["node_id"], unique=False
    )
