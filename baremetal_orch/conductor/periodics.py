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
"""Periodic work of a conductor: heartbeat and take-over of dead peers.

Each job runs in its own thread with its own interval, so a slow sync
never delays the heartbeat (and none of it runs in the API's threads).
"""

import threading

from oslo_config import cfg
from oslo_log import log

from baremetal_orch.common import context as orch_context
from baremetal_orch.conductor import recovery
from baremetal_orch.db import api as dbapi

CONF = cfg.CONF
LOG = log.getLogger(__name__)


class _Job(threading.Thread):
    def __init__(self, name, interval, func, stop_event):
        super().__init__(name=name, daemon=True)
        self.interval = interval
        self.func = func
        self.stop_event = stop_event

    def run(self):
        while not self.stop_event.wait(self.interval):
            try:
                self.func()
            except Exception:
                LOG.exception('Periodic job %s failed', self.name)


class Periodics:
    def __init__(self, manager):
        self.manager = manager
        self._stop = threading.Event()
        self._jobs = []
        self.extra_jobs = []
        #: Dead hosts whose consoles this conductor restored already.
        self._consoles_restored = set()

    def start(self):
        jobs = [('heartbeat', CONF.conductor.heartbeat_interval,
                 self.heartbeat),
                ('take_over', CONF.conductor.heartbeat_interval,
                 self.take_over)]
        jobs.extend(self.extra_jobs)
        for name, interval, func in jobs:
            if interval is None or interval <= 0:
                continue
            job = _Job(name, interval, func, self._stop)
            job.start()
            self._jobs.append(job)

    def stop(self):
        self._stop.set()
        for job in self._jobs:
            job.join(timeout=5)
        self._jobs = []

    def heartbeat(self):
        dbapi.heartbeat(self.manager.host)

    def take_over(self):
        """Resume the actions of conductors whose heartbeat is stale."""
        timeout = CONF.conductor.heartbeat_timeout
        dead = {s.host for s in dbapi.list_services()
                if s.host != self.manager.host
                and not dbapi.is_alive(s, timeout)}
        # A host that came back may die again: its consoles then need
        # restoring again.
        self._consoles_restored &= dead
        if dead:
            ctx = orch_context.get_admin_context()
            for host in sorted(dead):
                recovery.recover_host(ctx, host, self.manager.host,
                                      heartbeat_timeout=timeout)
            self.manager.actions.take_over(ctx, dead)
            for host in sorted(dead - self._consoles_restored):
                self.manager.restore_consoles(ctx, dead_host=host)
                self._consoles_restored.add(host)
