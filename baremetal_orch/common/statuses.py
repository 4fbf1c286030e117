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
"""The one vocabulary of states, statuses and results of running work.

The domain rules (``deployment/``), the objects, the flows and the
conductor all name an action's state, a group's or task's status and a
node's status with these constants, never with a bare string, so the words
an operator reads in ``GET /v1/actions`` and ``GET /v1/tasks`` are defined
once (``tests/unit/test_layers.py`` keeps the flows and the conductor free
of literals). The node *provision* states are Ironic's, in
:mod:`baremetal_orch.common.states`.
"""

# --- actions: ``state`` ----------------------------------------------------
PENDING = 'pending'
RUNNING = 'running'
COMPLETE = 'complete'
FAILED = 'failed'
CANCELLED = 'cancelled'
# A pause was asked for: no new node work starts, what is in flight ends.
PAUSING = 'pausing'
# Nothing in flight, nothing starts until resumed (or a window opens).
PAUSED = 'paused'
ACTION_STATES = (PENDING, RUNNING, PAUSING, PAUSED, COMPLETE, FAILED,
                 CANCELLED)
ACTION_FINAL_STATES = (COMPLETE, FAILED, CANCELLED)
#: The states of an action a conductor runs (or is about to).
ACTION_ACTIVE_STATES = (PENDING, RUNNING, PAUSING, PAUSED)

# --- actions: ``result`` (null while running) -------------------------------
SUCCESS = 'success'
SUCCESS_WITH_FAILURES = 'success_with_failures'
ACTION_RESULTS = (SUCCESS, SUCCESS_WITH_FAILURES, FAILED)

# --- groups and tasks: ``status`` ------------------------------------------
# A group or task is PENDING, RUNNING, then SUCCESS or FAILED.
TASK_STATUSES = (PENDING, RUNNING, SUCCESS, FAILED)
TASK_FINAL_STATUSES = (SUCCESS, FAILED)

# --- nodes of a site deployment: the report's ``nodes`` --------------------
NOT_STARTED = 'not_started'
PREPARED = 'prepared'
FAILURE = 'failure'
NODE_STATUSES = (NOT_STARTED, PREPARED, SUCCESS, FAILURE)
