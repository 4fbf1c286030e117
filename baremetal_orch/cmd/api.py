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
"""baremetal-orch-api: the API server on its own."""

import sys

from oslo_config import cfg
from oslo_log import log

from baremetal_orch.api import app
from baremetal_orch.api import wsgi_server
from baremetal_orch.notifications import notifier
from baremetal_orch import service

CONF = cfg.CONF
LOG = log.getLogger(__name__)


def main(argv=None):
    service.prepare_service(argv, binary='baremetal-orch-api')
    # The notification sender is up before the first notification.
    notifier.start()
    server = wsgi_server.Server.from_config(app.setup_app(), CONF)
    LOG.info('API listening on %s:%s', CONF.api.host_ip, server.port)
    server.serve_forever()


if __name__ == '__main__':
    sys.exit(main())
