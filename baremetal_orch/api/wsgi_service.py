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
"""The API's listener as an oslo.service Service."""

from oslo_config import cfg
from oslo_log import log

from baremetal_orch.api import app
from baremetal_orch.api import wsgi_server
from baremetal_orch.common import launcher

CONF = cfg.CONF
LOG = log.getLogger(__name__)


class WSGIService(launcher.ProcessService):
    """The API on ``[api]host_ip``:``[api]port``, ``[api]workers`` threads.

    Stop (SIGTERM): the listener closes; the requests running end first
    (the listener stops accepting, then its worker threads finish).
    """

    def __init__(self, application=None, on_stop=None):
        super().__init__()
        self.on_stop = on_stop
        self.server = wsgi_server.Server.from_config(
            application or app.setup_app(), CONF)
        self.port = self.server.port

    @property
    def endpoint(self):
        return 'http://%s:%s' % (CONF.api.host_ip, self.port)

    def _start(self):
        self.server.start()
        LOG.info('API listening on %s:%s with %d worker threads',
                 CONF.api.host_ip, self.port, CONF.api.workers)

    def _stop(self):
        self.server.stop()
        if self.on_stop is not None:
            # The notifications of the last requests are flushed.
            self.on_stop()
