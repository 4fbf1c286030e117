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
"""baremetal-orch-conductor: an RPC server over oslo.messaging, on
oslo.service (SIGHUP reloads the mutable options, SIGTERM stops
gracefully, SIGUSR2 prints a guru meditation report)."""

import sys

from oslo_config import cfg

from baremetal_orch.common import exception
from baremetal_orch.common import extras
from baremetal_orch.common import launcher
from baremetal_orch.common import profiler
from baremetal_orch.conductor import rpc_service
from baremetal_orch import service

CONF = cfg.CONF


def main(argv=None):
    service.prepare_service(argv, binary='baremetal-orch-conductor')
    if CONF.rpc_transport == 'none':
        sys.exit('baremetal-orch-conductor needs [DEFAULT]rpc_transport = '
                 'oslo; use baremetal-orch for the all-in-one service.')
    try:
        extras.check(CONF)
    except exception.MissingExtra as e:
        sys.exit('baremetal-orch-conductor: %s' % e)
    profiler.setup_reports('baremetal-orch-conductor')
    launcher.serve(CONF, rpc_service.ConductorService(CONF.host))


if __name__ == '__main__':
    sys.exit(main())
