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


"""Steering a running action: why it is in its state, and the control
(pause or abort) its flow must carry out.

Revision ID: 0003_action_steering
Revises: 0002_long_json_documents
Create Date: 2026-11-27

"""

from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = "0003_action_steering"
down_revision = "0002_long_json_documents"


def upgrade():
    op.add_column("actions", sa.Column("state_reason", sa.String(255),
                                       nullable=True))
    op.add_column("actions", sa.Column("control", sa.String(16),
                                       nullable=True))
