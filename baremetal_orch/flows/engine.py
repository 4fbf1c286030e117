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
"""The life of an action's taskflow flow in a conductor: build, load, run,
resume, finish.

Each kind of action is a module of this package with the same parts
(:mod:`.site_deploy` for ``deploy_site`` and ``update_site``,
:mod:`.labels` for ``update_labels``):

* ``begin(context, action, host, dispatcher, site=None)``: start a pending
  action (its task tree, state and events); returns its runtime, the live
  state its atoms are given as the transient ``runtime`` of taskflow's
  storage;
* ``restore(context, action, dispatcher)``: the runtime of a running
  action, from its last checkpoint;
* ``flow_factory`` and ``factory_args(runtime)``: the flow, built from
  plain data, so taskflow rebuilds it from the persisted flow detail;
* ``executor(runtime)``: the threads of its flow;
* ``finish(runtime, error)``: record the end.

Flows are persisted in the service database (taskflow's SQL backend): a
conductor that dies mid-action is resumed by another, which claims the
action once the dead one's heartbeat is stale. That database claim
(``actions.conductor``) is the one claim of every mode. With
``[taskflow]jobboard_enabled`` an admitted action is posted as a job on
the jobboard instead of running where it was admitted (:mod:`.jobboard`):
the conductor that takes the job claims the action in the database and
runs it.
"""

import contextlib
import threading
import time

from oslo_config import cfg
from oslo_log import log
from oslo_utils import timeutils
from taskflow import engines
from taskflow import exceptions as tf_exc
from taskflow.patterns import linear_flow
from taskflow.persistence import models as tf_models

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.common import statuses
from baremetal_orch.db import api as dbapi
from baremetal_orch.flows import jobboard
from baremetal_orch.flows import labels
from baremetal_orch.flows import site_deploy
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import event as event_obj

CONF = cfg.CONF
LOG = log.getLogger(__name__)

#: The module of each kind of action.
KINDS = {
    action_obj.DEPLOY_SITE: site_deploy,
    action_obj.UPDATE_SITE: site_deploy,
    action_obj.UPDATE_LABELS: labels,
    action_obj.RETRY: site_deploy,
}


def warm_up():
    """Pay at the conductor's start what its first action would: taskflow's
    SQL backend (its module and tables' metadata) and the parallel engine
    (its plugin lookup), about a second of Python before the first group
    started."""
    dbapi.taskflow_backend().get_connection()
    engines.load(linear_flow.Flow('warm-up'), engine='parallel')


class ActionEngines:
    """The flows of one conductor's actions, each run in its own thread.

    :param host: the conductor.
    :param dispatcher: what sends per-node work to the nodes' conductors
        (:class:`baremetal_orch.flows.dispatcher.NodeDispatcher`).
    """

    def __init__(self, host, dispatcher):
        self.host = host
        self.dispatcher = dispatcher
        self._threads = {}
        self._lock = threading.Lock()
        self._board = None
        self._board_lock = threading.Lock()
        self._stopped = threading.Event()

    # Starting, resuming, taking over ---------------------------------------

    def start(self, context, action, site=None):
        """Run a pending action here; with a jobboard, post it as a job
        instead, for the conductor that takes it (CoordinationUnavailable,
        and no action, when the jobboard's backend cannot be reached).

        :param site: the action's SiteDeployment when admission built it
            in this process (its strategy is then not parsed again).
        """
        if jobboard.enabled():
            self._post(action)
            return
        self._start(context, action, site=site)

    def _start(self, context, action, site=None):
        kind = KINDS[action.name]
        runtime = kind.begin(context, action, self.host, self.dispatcher,
                             site=site)
        executor = kind.executor(runtime)
        engine = engines.load_from_factory(
            kind.flow_factory, factory_args=kind.factory_args(runtime),
            backend=dbapi.taskflow_backend(), book=_logbook(action.uuid),
            engine='parallel', executor=executor)
        return self._launch(kind, runtime, engine, executor)

    def resume(self, context, action):
        """Resume a running action from its persisted flow."""
        kind = KINDS[action.name]
        runtime = kind.restore(context, action, self.dispatcher)
        backend = dbapi.taskflow_backend()
        with contextlib.closing(backend.get_connection()) as conn:
            book = conn.get_logbook(action.uuid)
        executor = kind.executor(runtime)
        engine = engines.load_from_detail(next(iter(book)), backend=backend,
                                          engine='parallel',
                                          executor=executor)
        LOG.info('Resuming action %s on %s', action.uuid, self.host)
        return self._launch(kind, runtime, engine, executor)

    def resume_own(self, context):
        """Resume the actions this host ran when it stopped; with a
        jobboard, also start taking the jobs posted on it."""
        if jobboard.enabled():
            threading.Thread(target=self._take_jobs, daemon=True,
                             name='jobboard-taker').start()
        for action in action_obj.Action.list(
                context, filters={'conductor': self.host,
                                  'state': list(action_obj.ACTIVE_STATES)}):
            self._resume_or_start(context, action)

    def take_over(self, context, dead_hosts):
        """Claim and resume the actions of conductors that died, and the
        actions no conductor took for [conductor]heartbeat_timeout seconds
        (their job was lost with the jobboard's backend, or their
        admitting conductor died before posting it)."""
        for action in action_obj.Action.list_to_take(
                context, dead_hosts, CONF.conductor.heartbeat_timeout):
            if action.conductor is None and not self._has_room():
                # Unheld: left for a conductor that has room, as its job
                # would be.
                continue
            if self._claim(action):
                self._resume_or_start(context, action)

    def _claim(self, action):
        """Make this conductor the action's, in the database: an action
        nobody holds, or one whose conductor's heartbeat is stale (checked
        in the same UPDATE, so one conductor wins and a conductor that came
        back keeps its work)."""
        previous = action.conductor
        if not dbapi.claim_action(
                action.uuid, previous, self.host,
                heartbeat_timeout=CONF.conductor.heartbeat_timeout):
            return False
        if previous is not None:
            LOG.warning('Taking over action %s of dead conductor %s',
                        action.uuid, previous)
            event_obj.Event.record(
                event_obj.ACTION_TAKEN_OVER, resource_uuid=action.uuid,
                action_uuid=action.uuid,
                message='conductor %s took over from dead conductor %s'
                % (self.host, previous),
                details={'from': previous, 'to': self.host})
        action.conductor = self.host
        action.obj_reset_changes(['conductor'])
        return True

    def _resume_or_start(self, context, action):
        with self._lock:
            if action.uuid in self._threads:
                return
        try:
            if action.state == action_obj.PENDING:
                self._start(context, action)
            else:
                self.resume(context, action)
        except Exception as e:
            LOG.exception('Could not resume action %s', action.uuid)
            self.fail(context, action.uuid, str(e))

    def fail(self, context, action_uuid, reason):
        """End an action that cannot run, with ``reason`` (a retry's
        report still names the action it retries)."""
        action = action_obj.Action.get(context, action_uuid)
        report = {'error': reason}
        if action.name == action_obj.RETRY:
            report['retry_of'] = (action.parameters or {}).get('action')
        action.state = action_obj.FAILED
        action.result = statuses.FAILED
        action.finished_at = timeutils.utcnow()
        action.report = report
        event_obj.action_finished(action, reason)

    # Running ---------------------------------------------------------------

    def _launch(self, kind, runtime, engine, executor):
        engine.storage.inject({'runtime': runtime}, transient=True)
        thread = threading.Thread(
            target=self._run, args=(kind, runtime, engine, executor),
            name='action-%s' % runtime.action_uuid, daemon=True)
        with self._lock:
            self._threads[runtime.action_uuid] = thread
        thread.start()
        return thread

    def _run(self, kind, runtime, engine, executor):
        error = None
        # A site action's controls reach it here (flows.steering.wake).
        steering = getattr(runtime, 'steering', None)
        with steering or contextlib.nullcontext():
            try:
                engine.run()
            except Exception as e:
                LOG.exception('Action %s failed', runtime.action_uuid)
                error = e
            finally:
                executor.shutdown(wait=False)
                try:
                    kind.finish(runtime, error)
                    _forget(runtime.action_uuid)
                finally:
                    with self._lock:
                        self._threads.pop(runtime.action_uuid, None)

    def running(self):
        """The uuids of the actions this conductor runs now."""
        with self._lock:
            return set(self._threads)

    def wait(self, timeout=None):
        """Wait for every running action (tests, benchmarks), at most
        ``timeout`` seconds in all."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(None if deadline is None
                        else max(0.0, deadline - time.monotonic()))

    def stop(self):
        """Stop taking jobs. Running flows are resumed by the next
        conductor; nothing to undo."""
        self._stopped.set()

    # The jobboard --------------------------------------------------------

    def board(self):
        """The connected jobboard (CoordinationUnavailable if its backend
        cannot be reached)."""
        with self._board_lock:
            if self._board is None:
                board = jobboard.Board(dbapi.taskflow_backend())
                board.connect()
                self._board = board
            return self._board

    def _post(self, action):
        # Whoever takes the job will run it: the action has no conductor
        # until then. What admission resolved is in the action's snapshot.
        dbapi.claim_action(action.uuid, action.conductor, None)
        action.conductor = None
        action.obj_reset_changes(['conductor'])
        try:
            self.board().post(action.uuid)
        except exception.CoordinationUnavailable:
            dbapi.discard_action(action.uuid)
            raise
        LOG.info('Action %s posted on the jobboard %s', action.uuid,
                 jobboard.backend_name())

    def _take_jobs(self):
        """Take the jobs of the board until stopped, at most
        [conductor]workers actions running here at once."""
        while not self._stopped.wait(CONF.taskflow.jobboard_wait_timeout):
            try:
                self.board().take(self.host, self.take_job, self._may_take)
            except Exception as e:
                LOG.error('Jobboard %s: %s; trying again',
                          jobboard.backend_name(), e)

    def _may_take(self):
        return not self._stopped.is_set() and self._has_room()

    def _has_room(self):
        """Whether this conductor takes one more action nobody holds:
        fewer than [conductor]workers run here."""
        return len(self.running()) < CONF.conductor.workers

    def take_job(self, action_uuid):
        """Run the action of a job taken from the board, unless a
        conductor holds it already (it ended, or another took it: the
        periodic take-over of an action whose job was lost)."""
        context = orch_context.get_admin_context()
        try:
            action = action_obj.Action.get(context, action_uuid)
        except exception.ActionNotFound:
            return
        if (action.state in action_obj.ACTIVE_STATES and
                action.conductor is None and self._claim(action)):
            self._resume_or_start(context, action)


def _forget(uuid):
    """The flow of an ended action (its logbook) goes, in every mode,
    unless ``[taskflow]jobboard_save_logbook``: nothing resumes it."""
    if CONF.taskflow.jobboard_save_logbook:
        return
    try:
        dbapi.destroy_logbook(uuid)
    except tf_exc.StorageFailure as e:
        LOG.warning('The flow of ended action %s was not removed: %s',
                    uuid, e)


def _logbook(uuid):
    """An action's logbook: with a jobboard, the one its job was posted
    with; else a new one (nothing to read)."""
    if not jobboard.enabled():
        return tf_models.LogBook(uuid, uuid=uuid)
    with contextlib.closing(
            dbapi.taskflow_backend().get_connection()) as conn:
        try:
            return conn.get_logbook(uuid)
        except tf_exc.NotFound:
            return tf_models.LogBook(uuid, uuid=uuid)
