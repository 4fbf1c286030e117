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
"""The optional taskflow jobboard on which admitted actions wait for a
conductor.

With ``[taskflow]jobboard_enabled``, an admitted action is posted as a job
(its logbook, named by the action's uuid, lives in the service database)
instead of running on the conductor that admitted it. Every conductor
takes the jobs of the board (:meth:`Board.take`): it claims a job, takes
the action in the database, runs it, and consumes the job at once.

The board hands actions out; it does not decide who runs them. That is
the database's claim, the one claim of every mode (``actions.conductor``,
taken with a conditional ``UPDATE``): a job whose action a conductor
already took is consumed and left alone, and the actions of a conductor
that died are taken over through its stale heartbeat, as without a
jobboard. A claim on the board lives only from a job's claim to its
consumption, so a board that loses a claim (a Redis key that expired, a
ZooKeeper session that ended) while its conductor lives can never make
two conductors run one action, and no claim is renewed while an action
runs. Why a board claim held for the whole run cannot be the claim:
taskflow's persistence has no fencing, so a conductor that lost such a
claim while alive would go on writing the flow the next one resumes.

A claim on Redis expires ``[taskflow]jobboard_expiration_time`` seconds
after it was made; on ZooKeeper it ends with its conductor's session
(whose timeout is the same option): so a conductor that died between
claiming a job and consuming it leaves the job claimable again.

Octavia's amphora v2 flows (``[task_flow]``) are the model of the
options. Only taskflow's public jobboard API is used here.
"""

import contextlib

from oslo_config import cfg
from oslo_log import log
from taskflow import exceptions as tf_exc
from taskflow.jobs import backends as job_backends
from taskflow.persistence import models as tf_models

from baremetal_orch.common import exception
from baremetal_orch.conf import taskflow as taskflow_conf

CONF = cfg.CONF
LOG = log.getLogger(__name__)

#: Seconds a Redis command may take before the backend counts as down.
SOCKET_TIMEOUT = 5.0


def enabled():
    return CONF.taskflow.jobboard_enabled


def backend_name():
    """The backend as an operator names it, for messages."""
    conf = CONF.taskflow
    kind = ('redis' if conf.jobboard_backend_driver == taskflow_conf.REDIS
            else 'zookeeper')
    return '%s://%s:%s' % (kind, ','.join(conf.jobboard_backend_hosts),
                           conf.jobboard_backend_port)


def board_conf():
    """The configuration taskflow's jobboard backend takes."""
    conf = CONF.taskflow
    if conf.jobboard_backend_driver == taskflow_conf.REDIS:
        board = {'board': 'redis', 'host': conf.jobboard_backend_hosts[0],
                 'port': conf.jobboard_backend_port,
                 'db': conf.jobboard_redis_backend_db,
                 'namespace': conf.jobboard_backend_namespace,
                 'socket_timeout': SOCKET_TIMEOUT,
                 'socket_connect_timeout': SOCKET_TIMEOUT}
        if conf.jobboard_backend_password:
            board['password'] = conf.jobboard_backend_password
        return board
    return {'board': 'zookeeper',
            'hosts': ['%s:%s' % (host, conf.jobboard_backend_port)
                      for host in conf.jobboard_backend_hosts],
            'path': '/' + conf.jobboard_backend_namespace.strip('/'),
            'timeout': float(conf.jobboard_expiration_time)}


def action_of(job):
    """The uuid of the action a job was posted for."""
    return (job.details or {}).get('action_uuid')


class Board:
    """The jobboard of a conductor: posts the jobs of admitted actions,
    takes the jobs posted.

    :param persistence: taskflow's persistence backend (the service
        database), where the jobs' logbooks live.
    """

    def __init__(self, persistence):
        self.persistence = persistence
        self.board = job_backends.fetch(CONF.taskflow.jobboard_name,
                                        board_conf(),
                                        persistence=persistence)

    def connect(self):
        """Connect (CoordinationUnavailable when the backend is down)."""
        try:
            self.board.connect()
        except Exception as e:
            raise exception.CoordinationUnavailable(
                backend=backend_name(), reason=e)

    def close(self):
        with contextlib.suppress(Exception):
            self.board.close()

    def post(self, action_uuid):
        """Post the job of an action, with an empty logbook (the
        conductor that takes the job adds the flow).

        :raises: CoordinationUnavailable.
        """
        book = tf_models.LogBook('action-%s' % action_uuid, uuid=action_uuid)
        with contextlib.closing(self.persistence.get_connection()) as conn:
            conn.save_logbook(book)
        try:
            return self.board.post('action-%s' % action_uuid, book=book,
                                   details={'action_uuid': action_uuid})
        except Exception as e:
            LOG.error('Could not post action %s on the jobboard %s: %s',
                      action_uuid, backend_name(), e)
            raise exception.CoordinationUnavailable(
                backend=backend_name(), reason=e)

    def take(self, who, take, may_take):
        """Take the unclaimed jobs on the board, one at a time, while
        ``may_take()``: claim the job as ``who``, hand its action's uuid to
        ``take``, consume the job. A job another conductor claimed first
        is left to it. Returns how many jobs were taken."""
        taken = 0
        for job in self.board.iterjobs(only_unclaimed=True,
                                       ensure_fresh=True):
            if not may_take():
                break
            try:
                self._claim(job, who)
            except (tf_exc.UnclaimableJob, tf_exc.NotFound):
                continue
            try:
                take(action_of(job))
            finally:
                # The action is the database's now (or was never to be
                # run): the job is done with, whatever take did.
                try:
                    self.board.consume(job, who)
                except Exception as e:
                    LOG.warning('Could not consume job %s on %s: %s',
                                job.name, backend_name(), e)
            taken += 1
        return taken

    def _claim(self, job, who):
        if CONF.taskflow.jobboard_backend_driver == taskflow_conf.REDIS:
            self.board.claim(
                job, who, expiry=float(CONF.taskflow.jobboard_expiration_time))
        else:
            self.board.claim(job, who)
