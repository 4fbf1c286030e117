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
"""baremetal_orch: declarative deployment of bare-metal fleets."""

import warnings

# oslo.messaging and futurist still probe for an installed eventlet; nothing
# here uses or monkey-patches it. Keep their deprecation notices out of every
# command's output.
warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
warnings.filterwarnings('ignore', message='eventletutils module is deprecated')

# No eventlet: oslo.messaging imports oslo.service, whose default backend is
# eventlet. Choose the threading backend before anything imports it.
from oslo_service import backend as _oslo_service_backend  # noqa: E402

try:
    _oslo_service_backend.init_backend(
        _oslo_service_backend.BackendType.THREADING)
except _oslo_service_backend.exceptions.BackendAlreadySelected:
    pass
