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
"""Periodic work of a conductor, on futurist's PeriodicWorker (as Ironic).

The tasks: ``heartbeat`` (``[conductor]heartbeat_interval``),
``take_over`` of dead peers' nodes and actions
(``[conductor]take_over_interval``), ``restore_consoles`` of dead peers'
nodes (``[conductor]console_restore_interval``),
``sweep_pending_actions`` (a quarter of
``[conductor]pending_action_timeout``) and, with an Ironic
backend, ``ironic_sync`` (``[conductor]sync_interval``). Each has its own
spacing; futurist never runs a task again before its previous run ended
(no overlap), and the tasks run on a small pool of their own
(``[conductor]periodic_max_workers``), so a slow sync never delays the
heartbeat (and none of it runs in the API's or the RPC server's threads).
"""

import threading

import futurist
from futurist import periodics
from oslo_config import cfg
from oslo_log import log

from baremetal_orch.common import context as orch_context
from baremetal_orch.conductor import recovery
from baremetal_orch.db import api as dbapi

CONF = cfg.CONF
LOG = log.getLogger(__name__)

#: Seconds stop() waits for a periodic task that is running.
STOP_TIMEOUT = 10


def periodic_task(name, spacing, func):
    """``func`` as a futurist periodic task named ``name``."""
    @periodics.periodic(spacing, run_immediately=False)
    def task():
        func()
    task.__name__ = task.__qualname__ = name
    return task


class Periodics:
    def __init__(self, manager):
        self.manager = manager
        self._worker = None
        self._thread = None
        #: (name, spacing, callable) of the tasks beyond the built-in ones.
        self.extra_jobs = []
        #: Dead hosts whose consoles this conductor restored already.
        self._consoles_restored = set()

    def jobs(self):
        """(name, spacing in seconds, callable) of every periodic task."""
        conductor = CONF.conductor
        every = conductor.heartbeat_interval
        jobs = [('heartbeat', conductor.heartbeat_interval, self.heartbeat),
                ('take_over', conductor.take_over_interval or every,
                 self.take_over),
                ('restore_consoles',
                 conductor.console_restore_interval or every,
                 self.restore_consoles)]
        if conductor.pending_action_timeout > 0:
            jobs.append(('sweep_pending_actions',
                         max(1, conductor.pending_action_timeout // 4),
                         self.sweep_pending_actions))
        jobs.extend(self.extra_jobs)
        return [(name, spacing, func) for name, spacing, func in jobs
                if spacing is not None and spacing > 0]

    def start(self):
        tasks = [(periodic_task(name, spacing, func), (), {})
                 for name, spacing, func in self.jobs()]
        workers = CONF.conductor.periodic_max_workers
        self._worker = periodics.PeriodicWorker(
            tasks, executor_factory=lambda: futurist.ThreadPoolExecutor(
                max_workers=workers))
        self._thread = threading.Thread(
            target=self._worker.start, kwargs={'allow_empty': True},
            name='periodics', daemon=True)
        self._thread.start()
        LOG.debug('Periodic tasks started: %s', ', '.join(
            '%s every %ss' % (name, spacing)
            for name, spacing, _f in self.jobs()))

    def stop(self, timeout=STOP_TIMEOUT):
        """Stop scheduling; wait (at most ``timeout``) for a running task."""
        if self._worker is None:
            return
        self._worker.stop()
        self._thread.join(timeout)
        self._worker.wait(timeout)
        self._worker = self._thread = None

    def _dead_hosts(self):
        timeout = CONF.conductor.heartbeat_timeout
        return {s.host for s in dbapi.list_services()
                if s.host != self.manager.host
                and not dbapi.is_alive(s, timeout)}

    def heartbeat(self):
        dbapi.heartbeat(self.manager.host)

    def take_over(self):
        """Recover the nodes and resume the actions of conductors whose
        heartbeat is stale; take the actions no conductor took."""
        timeout = CONF.conductor.heartbeat_timeout
        dead = self._dead_hosts()
        ctx = orch_context.get_admin_context()
        for host in sorted(dead):
            recovery.recover_host(ctx, host, self.manager.host,
                                  heartbeat_timeout=timeout)
        self.manager.actions.take_over(ctx, dead)

    def sweep_pending_actions(self):
        """Remove actions of this conductor left pending (see
        ConductorManager.sweep_pending_actions)."""
        self.manager.sweep_pending_actions(
            orch_context.get_admin_context())

    def restore_consoles(self):
        """Re-enable, once per death, the consoles of dead conductors'
        nodes that this conductor now serves."""
        dead = self._dead_hosts()
        # A host that came back may die again: its consoles then need
        # restoring again.
        self._consoles_restored &= dead
        if dead - self._consoles_restored:
            ctx = orch_context.get_admin_context()
            for host in sorted(dead - self._consoles_restored):
                self.manager.restore_consoles(ctx, dead_host=host)
                self._consoles_restored.add(host)
