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
"""A RabbitMQ node of the drill's own, to stop and start at will.

Drill R2 takes the broker away in the middle of an action. Doing that to
the shared broker (port 5672) would break every other test using it at
the time, so :class:`RabbitMQNode` runs a second RabbitMQ node from the
installed server: its own node name, AMQP and distribution ports on
127.0.0.1, data, logs and Erlang cookie in a temporary directory, no
plugins. It starts in about ten seconds; ``stop_app``/``start_app``
(``rabbitmqctl``) take it down and up again, and the node is stopped on
cleanUp whatever happened.

The server is ``/usr/lib/rabbitmq/bin/rabbitmq-server`` (Debian's; the
``/usr/sbin`` wrapper would switch to the ``rabbitmq`` user and its
settings), or ``BAREMETAL_ORCH_RABBITMQ_SERVER``. When it is not installed
the test is skipped, unless ``BAREMETAL_ORCH_REQUIRE_BROKER`` is set.
"""

import os
import shutil
import subprocess

import fixtures
from oslo_utils import uuidutils

from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing.fixtures import broker

SERVER_ENV = 'BAREMETAL_ORCH_RABBITMQ_SERVER'
DEFAULT_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server'
START_TIMEOUT = 90


class RabbitMQNode(fixtures.Fixture):
    """A private RabbitMQ node; :attr:`transport_url` reaches it."""

    def setUp(self):
        self.server = os.environ.get(SERVER_ENV) or DEFAULT_SERVER
        if not os.access(self.server, os.X_OK):
            func_fixtures.unavailable(
                broker.REQUIRE_ENV,
                'no RabbitMQ server to run a private node (%s)'
                % self.server)
        super().setUp()

    def _setUp(self):
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.port = func_fixtures.free_port()
        self.node = 'bmo-drill-%s@localhost' % (
            uuidutils.generate_uuid(dashed=False)[:8])
        conf = os.path.join(self.dir, 'rabbitmq.conf')
        with open(conf, 'w') as f:
            f.write('listeners.tcp.local = 127.0.0.1:%d\n' % self.port)
        plugins = os.path.join(self.dir, 'enabled_plugins')
        with open(plugins, 'w') as f:
            f.write('[].\n')
        self.env = dict(
            os.environ, HOME=self.dir,  # the Erlang cookie
            RABBITMQ_NODENAME=self.node,
            RABBITMQ_NODE_PORT=str(self.port),
            RABBITMQ_DIST_PORT=str(func_fixtures.free_port()),
            RABBITMQ_CONFIG_FILE=conf,
            RABBITMQ_CONF_ENV_FILE=os.devnull,
            RABBITMQ_ENABLED_PLUGINS_FILE=plugins,
            RABBITMQ_MNESIA_BASE=os.path.join(self.dir, 'mnesia'),
            RABBITMQ_LOG_BASE=os.path.join(self.dir, 'log'),
            RABBITMQ_PID_FILE=os.path.join(self.dir, 'pid'),
            ERL_EPMD_ADDRESS='127.0.0.1',
            RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=(
                '-kernel inet_dist_use_interface {127,0,0,1}'))
        self.log_path = os.path.join(self.dir, 'server.log')
        with open(self.log_path, 'ab') as out:
            self.process = subprocess.Popen(
                [self.server], stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, env=self.env,
                start_new_session=True)
        self.log = func_fixtures.LogFile(self.log_path)
        self.addCleanup(self.log.save)
        self.addCleanup(func_fixtures.stop_process, self.process)
        self.addCleanup(self._stop_node)
        # 'wait' waits for the pid file, then for the node to be up
        # (await_startup fails at once while the node is not registered).
        self.ctl('wait', self.env['RABBITMQ_PID_FILE'], '--timeout',
                 str(START_TIMEOUT))
        self.transport_url = 'rabbit://%s:%s@127.0.0.1:%d/' % (
            broker.USER, broker.PASSWORD, self.port)

    def ctl(self, *args):
        """``rabbitmqctl -n <this node> -q ARGS``; its output."""
        ctl = shutil.which('rabbitmqctl', path=os.path.dirname(
            self.server)) or 'rabbitmqctl'
        try:
            proc = subprocess.run([ctl, '-n', self.node, '-q'] + list(args),
                                  stdin=subprocess.DEVNULL, env=self.env,
                                  capture_output=True, text=True,
                                  timeout=START_TIMEOUT + 30, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise broker.BrokerError('rabbitmqctl %s: %s'
                                     % (' '.join(args), exc))
        if proc.returncode != 0:
            raise broker.BrokerError('rabbitmqctl %s failed (exit %s): %s\n%s'
                                     % (' '.join(args), proc.returncode,
                                        (proc.stderr or proc.stdout).strip(),
                                        self.log.tail()))
        return proc.stdout

    def _stop_node(self):
        if self.process.poll() is None:
            try:
                self.ctl('stop')
            except broker.BrokerError:
                pass  # stop_process kills it

    def stop_app(self):
        """Stop the broker application (connections refused, transient
        queues gone); the Erlang node keeps running."""
        self.ctl('stop_app')

    def start_app(self):
        """Start the broker application again and wait until it serves
        (idempotent)."""
        self.ctl('start_app')
        self.ctl('await_startup', '--timeout', str(START_TIMEOUT))

    def answers(self):
        return broker.broker_answers('127.0.0.1', self.port)

    def log_details(self):
        return {'rabbitmq-node': self.log.content()}
