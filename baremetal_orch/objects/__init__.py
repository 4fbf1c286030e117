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
"""Versioned objects. Import the modules here so the registry knows them."""


def register_all():
    __import__('baremetal_orch.objects.action')
    __import__('baremetal_orch.objects.chassis')
    __import__('baremetal_orch.objects.deployment')
    __import__('baremetal_orch.objects.event')
    __import__('baremetal_orch.objects.node')
    __import__('baremetal_orch.objects.port')
    __import__('baremetal_orch.objects.service')
    __import__('baremetal_orch.objects.strategy')
    __import__('baremetal_orch.objects.task')
