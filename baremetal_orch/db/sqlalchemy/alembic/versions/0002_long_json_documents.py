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


"""Strategy documents and action parameters, progress and report as
LONGTEXT on MariaDB: TEXT stops at 64 KiB, which an action over about
1,000 nodes exceeds (its progress holds every node's status).

Revision ID: 0002_long_json_documents
Revises: 0001_initial
Create Date: 2026-11-24

"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# revision identifiers, used by Alembic.
revision = "0002_long_json_documents"
down_revision = "0001_initial"

COLUMNS = (("deployment_strategies", "document", False),
           ("actions", "parameters", True),
           ("actions", "report", True),
           ("actions", "progress", True))


def upgrade():
    if op.get_bind().dialect.name != "mysql":
        return  # TEXT has no such limit on sqlite and PostgreSQL
    for table, column, nullable in COLUMNS:
        op.alter_column(table, column, type_=mysql.LONGTEXT(),
                        existing_type=sa.Text(),
                        existing_nullable=nullable)
