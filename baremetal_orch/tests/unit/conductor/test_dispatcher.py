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
"""The node dispatcher sends work again when it was lost, and work sent
twice does the node's phase once."""

from unittest import mock

from oslo_utils import uuidutils

from baremetal_orch.common import context as orch_context
from baremetal_orch.db import api as dbapi
from baremetal_orch.flows import dispatcher as runtime_mod
from baremetal_orch.tests import base


class TestResend(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.config(group='conductor', heartbeat_timeout=5)
        self.rpcapi = mock.Mock(spec=['live_hosts', 'host_for_node',
                                      'run_nodes_phase'])
        self.rpcapi.live_hosts.return_value = ['alive']
        self.rpcapi.host_for_node.return_value = 'alive'
        self.dispatcher = runtime_mod.NodeDispatcher(self.rpcapi)
        self.runtime = mock.Mock(context=orch_context.get_admin_context(),
                                 action_uuid=uuidutils.generate_uuid())
        self.node = self.create_node(name='n1')
        self.task = dbapi.create_task({
            'action_uuid': self.runtime.action_uuid, 'kind': 'node',
            'name': 'n1', 'node_uuid': self.node.uuid})

    def resend(self, host, status, sent_ago, inflight=None):
        if inflight is None:
            inflight = {}
        inflight[self.task] = ('n1', self.node, host)
        clock = 1000.0
        with mock.patch.object(runtime_mod.time, 'monotonic',
                               autospec=True, return_value=clock):
            self.back = self.dispatcher._resend_orphans(
                self.runtime, inflight, 'deploy', {}, 60,
                {self.task: status}, {self.task: clock - sent_ago})
        return self.rpcapi.run_nodes_phase.call_count

    def test_while_paused_work_not_started_comes_back_unsent(self):
        # A conductor of another process gives back what it receives while
        # the action is paused; the phase keeps it, to send on the resume.
        self.runtime.steering.may_start.return_value = False
        for ago in (1, 6):
            self.rpcapi.run_nodes_phase.reset_mock()
            inflight = {}
            self.assertEqual(0, self.resend('alive', 'pending', ago,
                                            inflight))
            self.assertEqual(({}, [('n1', self.node, self.task)]),
                             (inflight, self.back))
        # Work running is in flight, paused or not.
        inflight = {}
        self.assertEqual(0, self.resend('alive', 'running', 60, inflight))
        self.assertEqual(([], [self.task]), (self.back, list(inflight)))

    def test_table(self):
        # (host of the work, task status, seconds since sent, resent)
        table = [('alive', 'pending', 1, 0),    # not yet started: wait
                 ('alive', 'pending', 6, 1),    # lost: send again
                 ('alive', 'running', 60, 0),   # being done
                 ('dead', 'running', 1, 1)]     # its conductor is gone
        for host, status, ago, resent in table:
            self.rpcapi.run_nodes_phase.reset_mock()
            self.assertEqual(resent, self.resend(host, status, ago),
                             (host, status, ago))


class TestSentTwice(base.ConductorTestCase):

    def test_the_second_copy_does_nothing(self):
        from baremetal_orch.drivers.provisioning import fake

        node = self.create_node(name='n1', provision_state='available')
        action = self.running_action()
        task = dbapi.create_task({'action_uuid': action, 'kind': 'node',
                                  'name': 'n1', 'node_uuid': node.uuid})
        ctx = orch_context.get_admin_context()
        runner = self.manager.node_work
        items = [(task, node.uuid)]
        with mock.patch.object(fake.FakeDriver, 'call_many', autospec=True,
                               wraps=fake.FakeDriver.call_many) as calls:
            runner.run(ctx, action, items, 'deploy', {})
            self.assertEqual('success', dbapi.get_task(task).status)
            # A copy sent again while the first ran (the task was running
            # when it came): it finds the task ended under the lock.
            dbapi.update_task(task, {'status': 'running'})
            real = dbapi.get_task_statuses
            with mock.patch.object(
                    dbapi, 'get_task_statuses', autospec=True,
                    side_effect=lambda uuids: dict(
                        real(uuids), **{task: 'success'})) as ended:
                runner.run(ctx, action, items, 'deploy', {})
            ended.assert_called_once_with([task])
        self.assertEqual([('deploy', [node.uuid])],
                         [(c.args[1], [n.uuid for n in c.args[2]])
                          for c in calls.call_args_list])
        self.assertIsNone(dbapi.get_node(node.uuid).reservation)
