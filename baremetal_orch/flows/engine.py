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
action once the dead one's heartbeat is stale. With
``[taskflow]jobboard_enabled`` an admitted action is posted as a job on
the jobboard instead (:mod:`.jobboard`): the conductor that claims the job
runs or resumes it, under the same database claim.
"""

import contextlib
import threading
import time

from oslo_config import cfg
from oslo_log import log
from oslo_utils import timeutils
from taskflow import engines
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
        self._conductor = None
        self._stopped = threading.Event()

    # Starting, resuming, taking over ---------------------------------------

    def start(self, context, action, site=None):
        """Run a pending action.

        :param site: the action's SiteDeployment when admission built it
            in this process (its strategy is then not parsed again).

        With a jobboard the action is posted as a job instead, for the
        conductor that claims it (CoordinationUnavailable, and no action,
        when the jobboard's backend cannot be reached).
        """
        if jobboard.enabled():
            self._post(action)
            return
        self._start(context, action, site=site)

    def _start(self, context, action, site=None, book=None):
        kind = KINDS[action.name]
        runtime = kind.begin(context, action, self.host, self.dispatcher,
                             site=site)
        executor = kind.executor(runtime)
        engine = engines.load_from_factory(
            kind.flow_factory, factory_args=kind.factory_args(runtime),
            backend=dbapi.taskflow_backend(),
            book=book or tf_models.LogBook(action.uuid, uuid=action.uuid),
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
        """Resume the actions this host ran when it stopped.

        With a jobboard, start claiming jobs instead: this host's own
        actions are among them once its previous claims expired.
        """
        if jobboard.enabled():
            self._start_conductor()
            return
        for action in action_obj.Action.list(
                context, filters={'conductor': self.host,
                                  'state': list(action_obj.ACTIVE_STATES)}):
            self._resume_or_start(context, action)

    def take_over(self, context, dead_hosts):
        """Claim and resume the actions of conductors that died.

        With a jobboard their jobs are claimed through it; an action left
        without a job (its conductor died before posting it, or the
        backend lost it) is posted again.
        """
        if jobboard.enabled():
            self._repost_orphans(context, dead_hosts)
            return
        for action in action_obj.Action.list(
                context, filters={'state': list(action_obj.ACTIVE_STATES)}):
            if action.conductor not in dead_hosts:
                continue
            if dbapi.claim_action(
                    action.uuid, action.conductor, self.host,
                    heartbeat_timeout=CONF.conductor.heartbeat_timeout):
                LOG.warning('Taking over action %s of dead conductor %s',
                            action.uuid, action.conductor)
                event_obj.Event.record(
                    event_obj.ACTION_TAKEN_OVER, resource_uuid=action.uuid,
                    action_uuid=action.uuid,
                    message='conductor %s took over from dead conductor %s'
                    % (self.host, action.conductor),
                    details={'from': action.conductor, 'to': self.host})
                action.conductor = self.host
                action.obj_reset_changes(['conductor'])
                self._resume_or_start(context, action)

    def _resume_or_start(self, context, action):
        with self._lock:
            if action.uuid in self._threads:
                return
        try:
            if action.state == action_obj.PENDING:
                self.start(context, action)
            else:
                self.resume(context, action)
        except Exception as e:
            LOG.exception('Could not resume action %s', action.uuid)
            self.fail(context, action.uuid, str(e))

    def fail(self, context, action_uuid, reason):
        """End an action that cannot run, with ``reason`` (a retry's
        report still names the action it retries)."""
        report = {'error': reason}
        action = dbapi.get_action(action_uuid)
        if action.name == action_obj.RETRY:
            report['retry_of'] = (action.parameters or {}).get('action')
        dbapi.update_action(action_uuid, {
            'state': action_obj.FAILED, 'result': statuses.FAILED,
            'finished_at': timeutils.utcnow(), 'report': report})
        event_obj.action_finished(
            action_obj.Action.get(context, action_uuid), reason)

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
        """Stop claiming jobs. Running flows are resumed by the next
        conductor; nothing to undo."""
        self._stopped.set()
        if self._conductor is not None:
            self._conductor.stop()

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
        # Whoever claims the job will run it: the action has no conductor
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

    def _start_conductor(self):
        for name, target in (('jobboard-conductor', self._conduct),
                             ('jobboard-orphans', self._watch_orphans)):
            threading.Thread(target=target, daemon=True, name=name).start()

    def _watch_orphans(self):
        """Post again, every [conductor]heartbeat_timeout, the active
        actions that have no job (a backend that lost its data, an
        admitting conductor that died before posting)."""
        timeout = CONF.conductor.heartbeat_timeout
        while not self._stopped.wait(timeout):
            try:
                dead = {s.host for s in dbapi.list_services()
                        if not dbapi.is_alive(s, timeout)}
                self._repost_orphans(orch_context.get_admin_context(), dead)
            except Exception as e:
                LOG.warning('Looking for actions without a job failed: %s',
                            e)

    def _conduct(self):
        """Claim jobs until stopped; reconnect when the backend fails."""
        while not self._stopped.is_set():
            try:
                self._conductor = jobboard.ActionConductor(
                    jobboard.claimant(self.host), self.board(),
                    self.run_job)
                if self._stopped.is_set():
                    return
                self._conductor.run()
            except Exception as e:
                LOG.error('Jobboard %s: %s; trying again',
                          jobboard.backend_name(), e)
            self._stopped.wait(CONF.taskflow.jobboard_wait_timeout)

    def run_job(self, job):
        """Run the action of a job this conductor claimed; returns what
        to do with the job (:data:`jobboard.FINISHED` ...)."""
        uuid = (job.details or {}).get('action_uuid')
        context = orch_context.get_admin_context()
        try:
            action = action_obj.Action.get(context, uuid)
        except exception.ActionNotFound:
            return jobboard.FINISHED
        if action.state not in action_obj.ACTIVE_STATES:
            return jobboard.FINISHED
        if uuid in self.running():
            return jobboard.DUPLICATE
        if not self._claim(context, action):
            if self._has_other_job(job, action):
                return jobboard.DUPLICATE
            # Its conductor is alive: try again later.
            self._stopped.wait(CONF.taskflow.jobboard_wait_timeout)
            return jobboard.RETRY
        try:
            if action.state == action_obj.PENDING:
                with contextlib.closing(
                        dbapi.taskflow_backend().get_connection()) as conn:
                    book = conn.get_logbook(uuid)
                thread = self._start(context, action, book=book)
            else:
                thread = self.resume(context, action)
        except Exception as e:
            LOG.exception('Could not run action %s', uuid)
            self.fail(context, uuid, str(e))
            return jobboard.FINISHED
        thread.join()
        return jobboard.FINISHED

    def _claim(self, context, action):
        """Make this conductor the action's, in the database: a job whose
        claim expired is taken only from a conductor that is gone."""
        previous = action.conductor
        if previous in (None, self.host):
            claimed = dbapi.claim_action(action.uuid, previous, self.host)
        else:
            claimed = dbapi.claim_action(
                action.uuid, previous, self.host,
                heartbeat_timeout=CONF.conductor.heartbeat_timeout)
            if claimed:
                LOG.warning('Taking over action %s of dead conductor %s '
                            'from the jobboard', action.uuid, previous)
                event_obj.Event.record(
                    event_obj.ACTION_TAKEN_OVER, resource_uuid=action.uuid,
                    action_uuid=action.uuid,
                    message='conductor %s took over from dead conductor %s'
                    % (self.host, previous),
                    details={'from': previous, 'to': self.host})
        if claimed:
            action.conductor = self.host
            action.obj_reset_changes(['conductor'])
        return claimed

    def _has_other_job(self, job, action):
        """Whether the owner of ``action`` holds another job of it."""
        try:
            jobs = self.board().jobs().get(action.uuid, [])
        except Exception:
            return False
        return any(other.uuid != job.uuid and
                   jobboard.host_of(owner) == action.conductor
                   for other, owner in jobs)

    def _repost_orphans(self, context, dead_hosts):
        try:
            posted = self.board().jobs()
        except Exception as e:
            LOG.warning('Cannot list the jobs of %s: %s',
                        jobboard.backend_name(), e)
            return
        running = self.running()
        for action in action_obj.Action.list(
                context, filters={'state': list(action_obj.ACTIVE_STATES)}):
            if action.uuid in posted or action.uuid in running:
                continue
            if action.conductor is None:
                if not timeutils.is_older_than(
                        action.created_at,
                        CONF.conductor.heartbeat_timeout):
                    continue
            elif action.conductor not in dead_hosts:
                continue
            LOG.warning('Action %s of conductor %s has no job on %s: '
                        'posting it again', action.uuid, action.conductor,
                        jobboard.backend_name())
            try:
                self.board().post(action.uuid, book=self._book(action.uuid))
            except Exception as e:
                LOG.warning('Could not post action %s again: %s',
                            action.uuid, e)

    @staticmethod
    def _book(uuid):
        with contextlib.closing(
                dbapi.taskflow_backend().get_connection()) as conn:
            try:
                return conn.get_logbook(uuid)
            except Exception:
                book = tf_models.LogBook('action-%s' % uuid, uuid=uuid)
                conn.save_logbook(book)
                return book
