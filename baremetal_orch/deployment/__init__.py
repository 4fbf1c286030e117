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


"""Pure domain rules of site deployment, free of I/O.

* :mod:`~baremetal_orch.deployment.strategy`: the DeploymentStrategy
  document, its JSON schema, validation and dependency graph;
* :mod:`~baremetal_orch.deployment.selectors`: which nodes a group selects;
* :mod:`~baremetal_orch.deployment.criteria`: the success criteria;
* :mod:`~baremetal_orch.deployment.tracker`: the unique status of each node;
* :mod:`~baremetal_orch.deployment.site`: the processing rules of one
  deployment action, drivable by any executor;
* :mod:`~baremetal_orch.deployment.report`: the dry-run plan and the report;
* :mod:`~baremetal_orch.deployment.windows`: maintenance windows;
* :mod:`~baremetal_orch.deployment.progress`: node durations, progress
  per phase and the ETA.
* :mod:`~baremetal_orch.deployment.retry`: what a ``retry`` action re-runs.

Nothing here does I/O or imports the database, drivers, conductor or API.
"""
