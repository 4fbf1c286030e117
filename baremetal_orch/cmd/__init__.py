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
"""The server's console scripts.

Importing this package selects oslo.service's *threading* backend
(:mod:`baremetal_orch.common.backend`), so every entry point of a server
process imports it before any other module of the server: the console
scripts below, :mod:`baremetal_orch.wsgi` and the tests. The OpenStackClient
plugin does not, and neither does the package's ``__init__``: an
``openstack`` process loads nothing of the server.
"""

from baremetal_orch.common import backend  # noqa: F401
