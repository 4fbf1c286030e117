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
"""baremetal-orch-conductor: an RPC server over oslo.messaging."""

import signal
import sys
import threading

from oslo_config import cfg
from oslo_log import log

from baremetal_orch.common import rpc
from baremetal_orch.conductor import manager as manager_mod
from baremetal_orch.notifications import notifier
from baremetal_orch.objects import base as objects_base
from baremetal_orch import service

CONF = cfg.CONF
LOG = log.getLogger(__name__)


def main(argv=None):
    service.prepare_service(argv, binary='baremetal-orch-conductor')
    if CONF.rpc_transport == 'none':
        sys.exit('baremetal-orch-conductor needs [DEFAULT]rpc_transport = '
                 'oslo; use baremetal-orch for the all-in-one service.')
    # The notification sender is up before the first notification.
    notifier.start(conductor=True)
    manager = manager_mod.ConductorManager(CONF.host)
    manager.prepare_host()
    server = rpc.get_server(CONF.host, [manager],
                            objects_base.BaremetalOrchObjectSerializer())
    server.start()
    # Registered (alive for the others) only once the server listens.
    manager.init_host()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    LOG.info('Conductor %s serving RPC on topic %s', CONF.host, rpc.TOPIC)
    stop.wait()
    server.stop()
    server.wait()
    manager.del_host()
    rpc.cleanup()
    notifier.cleanup()


if __name__ == '__main__':
    sys.exit(main())
