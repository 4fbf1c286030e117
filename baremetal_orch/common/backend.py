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
"""oslo.service's *threading* backend, selected on import.

No eventlet: oslo.messaging imports oslo.service, whose default backend is
eventlet, and the choice is made once per process by whoever first asks for
a backend. Every entry point of a server process imports this module (by
importing :mod:`baremetal_orch.cmd`) before any other module of the server;
the notification sender's child process imports it first. The
OpenStackClient plugin does not: an ``openstack`` process loads nothing of
the server.
"""

import sys
import warnings

# eventlet is installed (oslo.service requires it) but a server process never
# imports it: futurist, oslo.utils, oslo.messaging and kombu import it only
# to probe for it, and take their threading paths when the import fails.
# A None entry in sys.modules makes every "import eventlet" raise
# ImportError (unless something imported it before this module).
if 'eventlet' not in sys.modules:
    sys.modules['eventlet'] = None
# oslo.utils still warns that its eventletutils module is deprecated.
warnings.filterwarnings('ignore', message='eventletutils module is deprecated')

from oslo_service import backend as _backend  # noqa: E402


def select_threading_backend():
    """Make oslo.service use its threading backend in this process.

    Idempotent. A process where something already chose another backend
    keeps it (oslo.service cannot switch); the tests prove that no entry
    point of the server lets that happen.
    """
    try:
        _backend.init_backend(_backend.BackendType.THREADING)
    except _backend.exceptions.BackendAlreadySelected:
        pass


select_threading_backend()
