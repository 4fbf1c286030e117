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
"""The root of the API: version discovery."""

import pecan
from pecan import rest

from baremetal_orch.api.controllers import v1
from baremetal_orch.api import microversion


class RootController(rest.RestController):
    v1 = v1.V1Controller()

    @pecan.expose('json')
    def get(self):
        return {'name': 'OpenStack Bare Metal Orchestration API',
                'description': 'Declarative, shard-aware deployment of '
                               'bare-metal fleets through Ironic.',
                'default_version': microversion.version_info(
                    pecan.request.host_url),
                'versions': [microversion.version_info(
                    pecan.request.host_url)]}
