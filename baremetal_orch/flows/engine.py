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
action once the dead one's heartbeat is stale.
"""

import contextlib
import threading

from oslo_config import cfg
from oslo_log import log
from oslo_utils import timeutils
from taskflow import engines
from taskflow.persistence import models as tf_models

from baremetal_orch.db import api as dbapi
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
}


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

    # Starting, resuming, taking over ---------------------------------------

    def start(self, context, action, site=None):
        """Run a pending action.

        :param site: the action's SiteDeployment when admission built it
            in this process (its strategy is then not parsed again).
        """
        kind = KINDS[action.name]
        runtime = kind.begin(context, action, self.host, self.dispatcher,
                             site=site)
        executor = kind.executor(runtime)
        engine = engines.load_from_factory(
            kind.flow_factory, factory_args=kind.factory_args(runtime),
            backend=dbapi.taskflow_backend(),
            book=tf_models.LogBook(action.uuid, uuid=action.uuid),
            engine='parallel', executor=executor)
        self._launch(kind, runtime, engine, executor)

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
        self._launch(kind, runtime, engine, executor)

    def resume_own(self, context):
        """Resume the actions this host ran when it stopped."""
        for action in action_obj.Action.list(
                context, filters={'conductor': self.host,
                                  'state': [action_obj.RUNNING,
                                            action_obj.PENDING]}):
            self._resume_or_start(context, action)

    def take_over(self, context, dead_hosts):
        """Claim and resume the actions of conductors that died."""
        for action in action_obj.Action.list(
                context, filters={'state': [action_obj.RUNNING,
                                            action_obj.PENDING]}):
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
        """End an action that cannot run, with ``reason``."""
        dbapi.update_action(action_uuid, {
            'state': action_obj.FAILED, 'result': 'failed',
            'finished_at': timeutils.utcnow(),
            'report': {'error': reason}})
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

    def _run(self, kind, runtime, engine, executor):
        error = None
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
        """Wait for every running action (tests, shutdown)."""
        with self._lock:
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(timeout)

    def stop(self):
        """Flows are resumed by the next conductor; nothing to undo."""
