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
"""The conductor as an oslo.service Service: its RPC server, its manager
and their life cycle (start, SIGHUP reset, graceful stop)."""

from oslo_config import cfg
from oslo_log import log

from baremetal_orch.common import launcher
from baremetal_orch.common import profiler
from baremetal_orch.common import rpc
from baremetal_orch.conductor import manager as manager_mod
from baremetal_orch.notifications import notifier
from baremetal_orch.objects import base as objects_base

CONF = cfg.CONF
LOG = log.getLogger(__name__)

#: The options a reload (SIGHUP) changes for the next group or action.
MUTABLE = ('max_concurrent_groups', 'max_concurrent_nodes',
           'prepare_timeout', 'deploy_timeout', 'signal_timeout')


def stop_timeout():
    """Seconds a graceful stop waits for running node work: within
    ``[DEFAULT]graceful_shutdown_timeout``, with time left to flush the
    notifications."""
    total = CONF.graceful_shutdown_timeout or 60
    return max(1, total - CONF.notification_flush_timeout - 5)


def log_mutable_options(host):
    LOG.info('Conductor %s: %s', host, ', '.join(
        '%s=%s' % (name, CONF.conductor[name]) for name in MUTABLE))


class ConductorService(launcher.ProcessService):
    """baremetal-orch-conductor.

    Start: the notification sender, the manager's recovery, the RPC server,
    then the registration and the periodic tasks. Stop (SIGTERM): the RPC
    server takes no new message, the periodic tasks end, the node work
    running finishes (at most :func:`stop_timeout` seconds; what is left
    resumes at the next start or on a peer), the notifications are
    flushed.
    """

    def __init__(self, host=None):
        super().__init__()
        self.host = host or CONF.host
        self.manager = None
        self.server = None

    def _start(self):
        profiler.setup('baremetal-orch-conductor', self.host)
        # The notification sender is up before the first notification.
        notifier.start(conductor=True)
        self.manager = manager_mod.ConductorManager(self.host)
        self.manager.prepare_host()
        self.server = rpc.get_server(
            self.host, [self.manager],
            objects_base.BaremetalOrchObjectSerializer())
        self.server.start()
        # Registered (alive for the others) only once the server listens.
        self.manager.init_host()
        LOG.info('Conductor %s serving RPC on topic %s', self.host,
                 rpc.TOPIC)
        log_mutable_options(self.host)

    def reset(self):
        # The options are read where they are used: the next group sees
        # the new values. Say which are in force now.
        log_mutable_options(self.host)

    def _stop(self):
        LOG.info('Conductor %s stopping: no new work', self.host)
        if self.server is not None:
            self.server.stop()
        if self.manager is not None:
            self.manager.del_host(wait=True, timeout=stop_timeout())
        if self.server is not None:
            self.server.wait()
        rpc.cleanup()
        notifier.flush_at_stop('Conductor %s' % self.host)
        notifier.cleanup()
