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
"""Version 1 of the API: the route table.

========================================  ===================================
path                                      controller
========================================  ===================================
/v1/nodes[/{ident}]                       nodes.NodesController
/v1/nodes/{ident}/states/provision        nodes.NodeStatesController
/v1/nodes/{ident}/states/console          nodes.NodeStatesController
/v1/nodes/{ident}/maintenance             nodes.NodeMaintenanceController
/v1/nodes/filter                          nodes.NodesController.filter
/v1/ports[/{uuid}]                        ports.PortsController
/v1/chassis[/{uuid}]                      chassis.ChassisController
/v1/deployment_strategies[/{name}]        strategies.StrategiesController
/v1/deployment_strategies/validate        strategies.StrategiesController
/v1/actions[/{uuid}]                      actions.ActionsController
/v1/tasks/{uuid}                          tasks.TasksController (no list)
/v1/services[/{host}]                     services.ServicesController
/v1/shards                                shards.ShardsController
/v1/events                                events.EventsController
/v1/deployments[/{uuid}]                  deployments.DeploymentsController
/v1/signals/{deployment_uuid}             signals.SignalsController
========================================  ===================================
"""

import pecan
from pecan import rest

from baremetal_orch.api.controllers.v1 import actions
from baremetal_orch.api.controllers.v1 import chassis
from baremetal_orch.api.controllers.v1 import deployments
from baremetal_orch.api.controllers.v1 import events
from baremetal_orch.api.controllers.v1 import nodes
from baremetal_orch.api.controllers.v1 import ports
from baremetal_orch.api.controllers.v1 import services
from baremetal_orch.api.controllers.v1 import shards
from baremetal_orch.api.controllers.v1 import signals
from baremetal_orch.api.controllers.v1 import strategies
from baremetal_orch.api.controllers.v1 import tasks
from baremetal_orch.api import microversion

RESOURCES = ('nodes', 'ports', 'chassis', 'deployment_strategies',
             'actions', 'services', 'shards', 'events', 'deployments')


class V1Controller(rest.RestController):
    nodes = nodes.NodesController()
    ports = ports.PortsController()
    chassis = chassis.ChassisController()
    deployment_strategies = strategies.StrategiesController()
    actions = actions.ActionsController()
    tasks = tasks.TasksController()
    services = services.ServicesController()
    shards = shards.ShardsController()
    events = events.EventsController()
    deployments = deployments.DeploymentsController()
    signals = signals.SignalsController()

    @pecan.expose('json')
    def get(self):
        # As Ironic's /v1: "version" is the version object that
        # keystoneauth's discovery reads from a versioned endpoint.
        version = microversion.version_info(pecan.request.host_url)
        info = {'id': version['id'], 'version': version,
                'links': version['links']}
        info['media_types'] = [{'base': 'application/json',
                                'type': 'application/vnd.openstack.'
                                        'baremetal-orch.v1+json'}]
        for name in RESOURCES:
            href = '%s/v1/%s' % (pecan.request.host_url, name)
            info[name] = [{'href': href, 'rel': 'self'}]
        return info
