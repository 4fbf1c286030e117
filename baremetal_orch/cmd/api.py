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
"""baremetal-orch-api: the API server on its own, on oslo.service."""

import sys

from oslo_config import cfg

from baremetal_orch.api import wsgi_service
from baremetal_orch.common import launcher
from baremetal_orch.common import profiler
from baremetal_orch.notifications import notifier
from baremetal_orch import service

CONF = cfg.CONF


def main(argv=None):
    service.prepare_service(argv, binary='baremetal-orch-api')
    profiler.setup_reports('baremetal-orch-api')
    profiler.setup('baremetal-orch-api', CONF.host)
    # The notification sender is up before the first notification.
    notifier.start()
    launcher.serve(CONF, wsgi_service.WSGIService(
        on_stop=notifier.cleanup))


if __name__ == '__main__':
    sys.exit(main())
