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
"""The database API: the only way the rest of the service reaches the DB.

Every function is declared here, by table family; each is implemented in
one module of db/sqlalchemy/, named beside it. Callers write
``dbapi.get_node(...)``.
"""

from baremetal_orch.db.sqlalchemy import api as _base
from baremetal_orch.db.sqlalchemy import batches as _batches
from baremetal_orch.db.sqlalchemy import inventory as _inventory
from baremetal_orch.db.sqlalchemy import ironic_records as _ironic
from baremetal_orch.db.sqlalchemy import operations as _operations
from baremetal_orch.db.sqlalchemy import services as _services

# Engine (db/sqlalchemy/api.py) ---------------------------------------------
get_engine = _base.get_engine
reset_engine = _base.reset_engine
masked_url = _base.masked_url
taskflow_backend = _base.taskflow_backend
destroy_logbook = _base.destroy_logbook
#: ``with transaction(): ...``: one write transaction; the calls of this
#: API inside the block join it, all or nothing.
transaction = _base.writer

# Nodes (db/sqlalchemy/inventory.py) ----------------------------------------
get_node = _inventory.get_node
get_node_dict = _inventory.get_node_dict
get_nodes_by_names = _inventory.get_nodes_by_names
create_node = _inventory.create_node
update_node = _inventory.update_node
update_node_fields = _inventory.update_node_fields
destroy_node = _inventory.destroy_node
locked_node = _inventory.locked_node
list_nodes = _inventory.list_nodes
list_node_dicts = _inventory.list_node_dicts
resolve_selectors = _inventory.resolve_selectors
select_nodes = _inventory.select_nodes
count_nodes_by_shard = _inventory.count_nodes_by_shard

# Node locks (db/sqlalchemy/inventory.py) -----------------------------------
reserve_node = _inventory.reserve_node
release_node = _inventory.release_node
steal_reservation = _inventory.steal_reservation
clear_reservations = _inventory.clear_reservations

# The node work of a group in batches (db/sqlalchemy/batches.py) -----------
start_batch = _batches.start_batch
ended_tasks = _batches.ended_tasks
node_refs = _batches.node_refs
reserve_nodes = _batches.reserve_nodes
update_nodes = _batches.update_nodes
release_nodes = _batches.release_nodes
create_deployments = _batches.create_deployments

# Ports and chassis (db/sqlalchemy/inventory.py) ----------------------------
get_port = _inventory.get_port
create_port = _inventory.create_port
update_port = _inventory.update_port
destroy_port = _inventory.destroy_port
locked_port = _inventory.locked_port
list_ports = _inventory.list_ports
get_chassis = _inventory.get_chassis
create_chassis = _inventory.create_chassis
update_chassis = _inventory.update_chassis
destroy_chassis = _inventory.destroy_chassis
locked_chassis = _inventory.locked_chassis
list_chassis = _inventory.list_chassis

# Records of Ironic nodes, for the sync (db/sqlalchemy/ironic_records.py) ---
IRONIC_DRIVER = _ironic.DRIVER
IRONIC_SYNCED_COLUMNS = _ironic.SYNCED
ironic_records_in_scope = _ironic.records_in_scope
ironic_records_by_uuid = _ironic.records_by_ironic_uuid
node_ids_by = _ironic.node_ids_by
insert_ironic_records = _ironic.insert_records
update_ironic_records = _ironic.update_records

# Deployment strategies (db/sqlalchemy/operations.py) -----------------------
create_strategy = _operations.create_strategy
get_strategy = _operations.get_strategy
list_strategies = _operations.list_strategies
destroy_strategy = _operations.destroy_strategy

# Actions (db/sqlalchemy/operations.py) -------------------------------------
create_action = _operations.create_action
admitting = _operations.admitting
discard_action = _operations.discard_action
get_action = _operations.get_action
update_action = _operations.update_action
list_actions = _operations.list_actions
list_active_actions = _operations.list_active_actions
list_actions_to_take = _operations.list_actions_to_take
active_actions_mentioning = _operations.active_actions_mentioning
claim_action = _operations.claim_action
steering_of = _operations.steering_of
steer_action = _operations.steer_action

# Tasks (db/sqlalchemy/operations.py) ---------------------------------------
create_task = _operations.create_task
create_tasks = _operations.create_tasks
update_task = _operations.update_task
start_task = _operations.start_task
get_task = _operations.get_task
list_tasks = _operations.list_tasks
get_task_statuses = _operations.get_task_statuses

# Events (db/sqlalchemy/operations.py) --------------------------------------
create_event = _operations.create_event
create_events = _operations.create_events
list_events = _operations.list_events

# Deployment records (db/sqlalchemy/operations.py) --------------------------
create_deployment = _operations.create_deployment
get_deployment = _operations.get_deployment
update_deployment = _operations.update_deployment
list_deployments = _operations.list_deployments

# Services (db/sqlalchemy/services.py) --------------------------------------
register_service = _services.register_service
heartbeat = _services.heartbeat
get_service = _services.get_service
list_services = _services.list_services
update_service = _services.update_service
locked_service = _services.locked_service
is_alive = _services.is_alive
live_services = _services.live_services
move_node_to_service = _services.move_node_to_service
