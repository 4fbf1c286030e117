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
"""baremetal_orch: declarative deployment of bare-metal fleets.

Nothing is imported here: the OpenStackClient plugin
(:mod:`baremetal_orch.osc`) lives in this package too, and an ``openstack``
process must not load the server's libraries. The server's entry points
select oslo.service's threading backend themselves
(:mod:`baremetal_orch.cmd`).
"""
