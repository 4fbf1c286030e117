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
"""Running a process's services on oslo.service (threading backend).

Every server process (conductor, API, all-in-one) is an
:class:`oslo_service.service.Service` run by oslo.service's in-process
:class:`~oslo_service.service.Launcher` with ``restart_method='mutate'``,
and answers the signals an operator of Ironic or Nova expects:

``SIGHUP``
    ``Launcher.restart()``: the configuration files are read again and the
    *mutable* options change in place (oslo.config logs each change), then
    every service's ``reset()`` runs. The process, its RPC server, its
    listener and its running actions stay.
``SIGTERM`` / ``SIGINT``
    a graceful stop: every service's ``stop()``; the process exits 0, or 1
    past ``[DEFAULT]graceful_shutdown_timeout``.
``SIGUSR2``
    a guru meditation report (oslo.reports, :mod:`.profiler`).

oslo.service's ``ServiceLauncher`` of the threading backend would run the
service in a cotyledon child process and answer SIGHUP by ending that
child and forking a new one: a conductor would stop its actions on every
reload. The in-process launcher keeps one process (the pid operators and
systemd signal), and its ``restart()`` is a real mutate.
"""

import gc
import logging
import os
import signal
import sys
import threading

from oslo_log import log
from oslo_service import opts as service_opts
from oslo_service import service
from oslo_service import systemd

LOG = log.getLogger(__name__)

#: Seconds between two looks at the services while no signal comes.
POLL = 0.5


class ProcessService(service.Service):
    """An oslo.service Service whose start may fail and which may end.

    Subclasses implement :meth:`_start` and :meth:`_stop`; ``wait()``
    returns once the service stopped (after :meth:`stop`, a failed start,
    or :meth:`finish`). :attr:`exit_status` is the process's exit status
    (1 after a failed start).
    """

    def __init__(self):
        super().__init__()
        self.started = threading.Event()
        self.ended = threading.Event()
        self.exit_status = 0
        self._stop_lock = threading.Lock()
        self._stopped = False

    def start(self):
        super().start()
        try:
            self._start()
        except Exception:
            LOG.exception('%s could not start', type(self).__name__)
            self.exit_status = 1
            self.ended.set()
            raise
        self.started.set()

    def stop(self, graceful=True):
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        try:
            self._stop()
        finally:
            self.ended.set()
            super().stop(graceful)

    def finish(self, status=0):
        """The service's work is done: the process stops and exits with
        ``status``."""
        self.exit_status = self.exit_status or status
        self.ended.set()

    def wait(self):
        self.ended.wait()

    def reset(self):
        """After a SIGHUP: the mutable options changed already."""

    def _start(self):
        raise NotImplementedError

    def _stop(self):
        raise NotImplementedError


def freeze_heap():
    """Keep what the process built to start (modules, options, the
    application, the conductor) out of the garbage collector's passes:
    once, when every service of the process has started.

    A full pass walks every object the collector tracks and stalls every
    thread meanwhile. Beside a working conductor those passes took 128 to
    171 ms with the start's objects in them, and 7 to 31 ms without (P10
    in doc/source/contributor/benchmarks.rst). What is garbage now is
    collected first. A frozen object is still freed when its last
    reference goes; only a cycle of frozen objects would stay, and what a
    start builds lives as long as the process.
    """
    gc.collect()
    gc.freeze()


class SignalLauncher:
    """oslo.service's Launcher, driven by the process's signals."""

    def __init__(self, conf):
        self.conf = conf
        service_opts.register_service_opts(conf)
        self.launcher = service.Launcher(conf, restart_method='mutate')
        self.services = []
        self._signals = []
        self._wake = threading.Event()

    def _on_signal(self, signo, frame):
        # Runs in the main thread between two bytecodes: record only.
        self._signals.append(signo)
        self._wake.set()

    def _on_alarm(self, signo, frame):
        LOG.error('Graceful shutdown took more than %ss: exiting now',
                  self.conf.graceful_shutdown_timeout)
        os._exit(1)

    def install_signal_handlers(self):
        handler = service.SignalHandler()
        handler.clear()
        handler.add_handlers(('SIGTERM', 'SIGINT', 'SIGHUP'),
                             self._on_signal)
        handler.add_handler('SIGALRM', self._on_alarm)

    def launch(self, svc):
        self.services.append(svc)
        self.launcher.launch_service(svc)

    def reload(self):
        LOG.info('Caught SIGHUP: reloading the mutable options')
        self.launcher.restart()

    def stop(self, signo=None):
        if signo is not None:
            LOG.info('Caught %s: stopping gracefully',
                     signal.Signals(signo).name)
        timeout = self.conf.graceful_shutdown_timeout
        if timeout:
            signal.alarm(timeout)
        self.launcher.stop()
        signal.alarm(0)

    def run(self):
        """Serve until SIGTERM/SIGINT or a service ended; return the exit
        status (the largest of the services')."""
        ready = False
        while True:
            self._wake.wait(POLL)
            self._wake.clear()
            if not ready and all(s.started.is_set() for s in self.services):
                # systemd (Type=notify): the service is up.
                systemd.notify_once()
                freeze_heap()
                ready = True
            while self._signals:
                signo = self._signals.pop(0)
                if signo == signal.SIGHUP:
                    try:
                        self.reload()
                    except Exception:
                        LOG.exception('Reloading the configuration failed')
                else:
                    self.stop(signo)
                    return self._status()
            if any(s.ended.is_set() for s in self.services):
                self.stop()
                return self._status()

    def _status(self):
        return max([s.exit_status for s in self.services] or [0])


def exit_now(status):
    """End the process once its services stopped, with ``status``.

    What the services left (an action's thread between two groups, a
    node work past the stop's bound) must not hold the process: it is
    resumable from the database, as after a crash. oslo.service's process
    launcher ends the same way after a graceful stop.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    logging.shutdown()
    os._exit(status)


def serve(conf, *services):
    """Launch ``services``, serve until a signal stops them (or one
    ends), then end the process with the exit status."""
    launcher = SignalLauncher(conf)
    launcher.install_signal_handlers()
    for svc in services:
        launcher.launch(svc)
    exit_now(launcher.run())
