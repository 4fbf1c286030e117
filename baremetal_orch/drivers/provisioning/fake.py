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
"""The fake provisioning driver: simulates a node in-process.

Steered per node through ``driver_info`` (the ``prepare`` phase is the
driver's ``provide``, the step of an action's prepare phase that works):

* ``fake_fail_phase``: ``prepare`` or ``deploy`` makes that phase fail;
  ``console`` or ``maintenance`` makes setting the console or maintenance
  fail (to see the error paths, notifications included);
* ``fake_duration``: seconds each phase takes (default
  ``[fake_driver]default_duration``). The nodes of a batch wait out their
  durations side by side in the calling thread
  (:meth:`FakeDriver.call_many`), not in a thread each: a simulated site
  of 10,000 nodes costs the conductor no thread per node;
* ``fake_wait``: ``prepare`` or ``deploy`` holds the node in that phase
  (``cleaning`` or ``deploying``) as Ironic holds a node whose agent has
  not called back (``clean wait``, ``wait call-back``): until
  :meth:`FakeDriver.abort` stops it, which fails the phase with "By
  request, the fake <phase> was aborted while it waited", or until the
  phase's timeout (``ProvisioningTimeout``). ``abort`` of a node not held
  returns False and changes nothing. With ``[fake_driver]wait_dir`` set an
  abort from another process reaches the node too (files
  ``<node uuid>.wait`` and ``<node uuid>.abort`` there).

With ``[fake_driver]configdrive_dir`` set, a deploy writes the instance
info handed to the node (the Heat inputs of its deployment, the pre-signed
signal URL included) to ``<dir>/<node uuid>.json``, readable by its owner
only, where a test plays the node's agent::

    {"uuid": "<node uuid>", "name": "<node name>",
     "instance_info": {
         "deploy_signal_id": "http://.../v1/signals/<uuid>?token=...",
         "deploy_signal_verb": "POST", ...}}
"""

import json
import os
import threading
import time

from oslo_config import cfg
from oslo_log import log

from baremetal_orch.common import exception
from baremetal_orch.common import states
from baremetal_orch.drivers.provisioning import base

CONF = cfg.CONF
LOG = log.getLogger(__name__)

PHASES = ('prepare', 'deploy', 'console', 'maintenance')
#: Phases ``driver_info.fake_wait`` may hold a node in.
WAIT_PHASES = ('prepare', 'deploy')
#: The calls that last ``fake_duration``: {call: (phase, working state)}.
TIMED_CALLS = {'provide': ('prepare', states.CLEANING),
               'deploy': ('deploy', states.DEPLOYING)}
#: Seconds between two looks of a held node for an abort from another
#: process.
WAIT_POLL = 0.05


class FakeDriver(base.ProvisioningDriver):
    name = 'fake'

    _log_lock = threading.Lock()

    def __init__(self):
        self._held_lock = threading.Lock()
        #: node uuid -> Event set by abort(), for the nodes held now.
        self._held = {}

    def validate(self, node):
        info = node.driver_info or {}
        phase = info.get('fake_fail_phase')
        if phase is not None and phase not in PHASES:
            raise exception.InvalidParameterValue(
                reason='driver_info.fake_fail_phase must be one of %s, not %r'
                       % (', '.join(PHASES), phase))
        wait = info.get('fake_wait')
        if wait is not None and wait not in WAIT_PHASES:
            raise exception.InvalidParameterValue(
                reason='driver_info.fake_wait must be one of %s, not %r'
                       % (', '.join(WAIT_PHASES), wait))
        duration = info.get('fake_duration')
        if duration is not None:
            try:
                seconds = float(duration)
            except (TypeError, ValueError, OverflowError):
                seconds = None
            if seconds is None or not 0 <= seconds < float('inf'):
                raise exception.InvalidParameterValue(
                    reason='driver_info.fake_duration must be a finite '
                           'number of seconds >= 0, not %r' % (duration,))

    @staticmethod
    def _duration(node, default):
        """Seconds a phase of ``node`` lasts (``default``: the value of
        ``[fake_driver]default_duration``, read once a batch)."""
        info = node.driver_info or {}
        return float(info.get('fake_duration', default) or 0)

    def _record(self, node, call, stage='start'):
        path = CONF.fake_driver.call_log
        if not path:
            return
        line = json.dumps({'node': node.uuid, 'name': node.name,
                           'call': call, 'stage': stage,
                           'time': time.time()})
        with self._log_lock, open(path, 'a') as f:
            f.write(line + '\n')

    def manage(self, node, timeout):
        self._record(node, 'manage')

    def provide(self, node, timeout):
        self._alone('provide', node, timeout)

    def deploy(self, node, instance_info, timeout):
        self._alone('deploy', node, timeout, instance_info)

    def call_many(self, method, nodes, timeout, instance_infos=None,
                  pool=None):
        """The nodes' calls side by side, without a thread a node: the
        calls start together and each ends once its own duration passed
        (:meth:`_timeline`); only a node held by ``fake_wait`` waits in
        ``pool``, for its abort."""
        if method not in TIMED_CALLS:
            # manage and undeploy do not wait: each node's, in turn.
            return super().call_many(method, nodes, timeout, instance_infos)
        held, timed = [], []
        for node in nodes:
            (held if self._held_in(node, method) else timed).append(node)
        waits = self.submit_many(method, held, timeout, instance_infos,
                                 pool)
        failed = self._timeline(method, timed, timeout, instance_infos or {})
        failed.update(self.outcomes(waits))
        return failed

    def _alone(self, method, node, timeout, instance_info=None):
        """One node's call: its wait when ``fake_wait`` holds it, else a
        timeline of one."""
        if self._held_in(node, method):
            if self._begin(method, node, {node.uuid: instance_info}):
                phase, working = TIMED_CALLS[method]
                self._hold(node, phase, timeout, working)
            return
        failed = self._timeline(method, [node], timeout,
                                {node.uuid: instance_info})
        if failed:
            raise failed[node.uuid]

    @staticmethod
    def _held_in(node, method):
        phase = TIMED_CALLS.get(method, (None,))[0]
        return (phase is not None and
                (node.driver_info or {}).get('fake_wait') == phase)

    def _begin(self, method, node, instance_infos):
        """The start of a node's call; False when it has nothing to do
        (a deploy of an active node)."""
        if method == 'deploy' and node.provision_state == states.ACTIVE:
            return False
        self._record(node, method)
        if method == 'deploy':
            self._write_configdrive(node, instance_infos.get(node.uuid))
        return True

    def _timeline(self, method, nodes, timeout, instance_infos):
        """The calls of ``nodes`` in this thread: each starts in turn, and
        ends once its duration (or ``timeout``) passed since its own
        start, the earliest end first.

        :returns: ``{node uuid: exception}`` of the calls that failed.
        """
        failed, ends = {}, []
        default = CONF.fake_driver.default_duration
        for index, node in enumerate(nodes):
            try:
                if self._begin(method, node, instance_infos):
                    seconds = self._duration(node, default)
                    ends.append((time.monotonic() + min(seconds, timeout),
                                 index, node, seconds))
            except Exception as e:
                failed[node.uuid] = e
        for end, _index, node, seconds in sorted(ends,
                                                 key=lambda e: e[:2]):
            left = end - time.monotonic()
            if left > 0:
                time.sleep(left)
            try:
                self._end(method, node, timeout, seconds)
            except Exception as e:
                failed[node.uuid] = e
        return failed

    def _end(self, method, node, timeout, seconds):
        phase, working = TIMED_CALLS[method]
        if seconds > timeout:
            raise exception.ProvisioningTimeout(
                node=node.ident, state=states.target_of(working),
                timeout=timeout)
        self._fail_if_asked(node, phase)
        self._record(node, method, 'end')

    def undeploy(self, node, timeout):
        self._record(node, 'undeploy')

    # --- the wait abort() stops -------------------------------------------

    def _wait_file(self, node, kind):
        directory = CONF.fake_driver.wait_dir
        if not directory:
            return None
        return os.path.join(directory, '%s.%s' % (node.uuid, kind))

    def _hold(self, node, phase, timeout, working):
        """Hold the node until abort() or ``timeout``; an abort fails the
        phase."""
        aborted = threading.Event()
        with self._held_lock:
            self._held[node.uuid] = aborted
        marker = self._wait_file(node, 'wait')
        request = self._wait_file(node, 'abort')
        if marker:
            os.makedirs(os.path.dirname(marker), exist_ok=True)
            if os.path.exists(request):
                os.unlink(request)  # an abort of an earlier wait
            open(marker, 'w').close()
        self._record(node, phase, 'wait')
        deadline = time.monotonic() + timeout
        try:
            while not aborted.is_set():
                if request and os.path.exists(request):
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise exception.ProvisioningTimeout(
                        node=node.ident, state=states.target_of(working),
                        timeout=timeout)
                aborted.wait(min(left, WAIT_POLL) if marker else left)
        finally:
            with self._held_lock:
                self._held.pop(node.uuid, None)
            for path in (marker, request):
                if path and os.path.exists(path):
                    os.unlink(path)
        self._record(node, phase, 'aborted')
        raise exception.ProvisioningFailed(
            node=node.ident, reason='By request, the fake %s was aborted '
                                    'while it waited' % phase)

    def abort(self, node):
        """Stop the wait of a node held by ``driver_info.fake_wait``.

        :returns: True when the node was held (its phase fails now);
            False otherwise.
        """
        with self._held_lock:
            aborted = self._held.get(node.uuid)
            if aborted is not None:
                aborted.set()
        if aborted is None:
            marker = self._wait_file(node, 'wait')
            if not marker or not os.path.exists(marker):
                return False
            open(self._wait_file(node, 'abort'), 'w').close()
        self._record(node, 'abort')
        return True

    def _fail_if_asked(self, node, phase):
        if (node.driver_info or {}).get('fake_fail_phase') == phase:
            raise exception.ProvisioningFailed(
                node=node.ident,
                reason='fake failure injected in the %s phase' % phase)

    def set_console(self, node, enabled):
        self._record(node, 'console_on' if enabled else 'console_off')
        self._fail_if_asked(node, 'console')

    def set_maintenance(self, node, enabled, reason=None):
        self._record(node, 'maintenance_on' if enabled else 'maintenance_off')
        self._fail_if_asked(node, 'maintenance')

    def _write_configdrive(self, node, instance_info):
        directory = CONF.fake_driver.configdrive_dir
        if not directory:
            return
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, '%s.json' % node.uuid)
        tmp = path + '.tmp'
        # It holds the deployment's secret: the owner's only, as a config
        # drive is the node's only.
        if os.path.exists(tmp):
            os.unlink(tmp)
        with os.fdopen(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY,
                               0o600), 'w') as f:
            json.dump({'uuid': node.uuid, 'name': node.name,
                       'instance_info': instance_info or {}}, f)
        os.replace(tmp, path)
