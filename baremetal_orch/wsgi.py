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
"""The API as a WSGI module for uwsgi or mod_wsgi.

``uwsgi --module baremetal_orch.wsgi:application``; the configuration is
read from the default locations or from ``BAREMETAL_ORCH_CONFIG_FILES``
(comma separated).
"""

import os

# First: selects oslo.service's threading backend for this process.
from baremetal_orch import cmd  # noqa: F401
from baremetal_orch.api import app  # noqa: H306  (after cmd, on purpose)
from baremetal_orch.common import profiler
from baremetal_orch import service


def _config_files():
    files = os.environ.get('BAREMETAL_ORCH_CONFIG_FILES')
    return [f for f in files.split(',') if f] if files else None


def init_application():
    service.prepare_service([], binary='baremetal-orch-api',
                            default_config=_config_files())
    # Under uwsgi or mod_wsgi the server owns the signals: reports come
    # from [oslo_reports]file_event_handler only.
    profiler.setup_reports('baremetal-orch-api', setup_signal=False)
    profiler.setup('baremetal-orch-api', service.CONF.host)
    return app.setup_app()


application = init_application()
