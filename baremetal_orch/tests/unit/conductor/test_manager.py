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
"""The conductor manager through the in-process conductor."""

import contextlib
import threading
from unittest import mock

import fixtures
import oslo_messaging as messaging
from oslo_utils import uuidutils

from baremetal_orch.common import context as orch_context
from baremetal_orch.common import exception
from baremetal_orch.conductor import admission
from baremetal_orch.db import api as dbapi
from baremetal_orch.drivers.provisioning import fake
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import node as node_obj
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.objects import utils


class ManagerTestCase(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = orch_context.get_admin_context()

    def node(self, name='n1', **kw):
        return self.create_node(name=name, **kw)

    def assertRefused(self, exc_class, endpoint, *args, **kwargs):
        """An error the conductor's RPC endpoint declares expected: the
        RPC server sends it back as itself, without a traceback in the
        conductor's log."""
        e = self.assertRaises(messaging.ExpectedException, endpoint,
                              *args, **kwargs)
        self.assertIsInstance(e.exc_info[1], exc_class)
        return e.exc_info[1]

    def state_is(self, ident, state):
        def check():
            node = dbapi.get_node(ident)
            if node.provision_state == state and node.reservation is None:
                return node
        return check

    def provision(self, ident, target, expect):
        self.manager.do_provisioning_action(self.ctx, ident, target)
        return self.wait_for(self.state_is(ident, expect))


class TestProvisioning(ManagerTestCase):

    def test_full_cycle(self):
        node = self.node()
        got = self.provision(node.uuid, 'manage', 'manageable')
        self.assertIsNone(got.target_provision_state)
        self.provision(node.uuid, 'provide', 'available')
        self.provision(node.uuid, 'active', 'active')
        got = self.provision(node.uuid, 'deleted', 'available')
        self.assertIsNone(got.last_error)

    def test_working_state_and_lock_while_the_driver_works(self):
        node = self.node(provision_state='available')
        release = threading.Event()
        real_calls = fake.FakeDriver.call_many

        def slow_deploy(driver, *args, **kwargs):
            self.assertTrue(release.wait(30))
            return real_calls(driver, *args, **kwargs)

        with mock.patch.object(fake.FakeDriver, 'call_many', slow_deploy):
            self.manager.do_provisioning_action(self.ctx, node.uuid,
                                                'active')
            now = dbapi.get_node(node.uuid)
            self.assertEqual(('deploying', 'active', 'test-conductor'),
                             (now.provision_state,
                              now.target_provision_state, now.reservation))
            # The lock is held: a second request is refused.
            self.assertRefused(exception.NodeLocked,
                               self.manager.set_maintenance, self.ctx,
                               node.uuid, True)
            release.set()
            got = self.wait_for(self.state_is(node.uuid, 'active'))
        self.assertIsNone(got.target_provision_state)

    def test_illegal_transition(self):
        node = self.node()
        e = self.assertRefused(exception.InvalidStateRequested,
                               self.manager.do_provisioning_action,
                               self.ctx, node.uuid, 'active')
        self.assertIn('enroll', str(e))
        got = dbapi.get_node(node.uuid)
        self.assertEqual('enroll', got.provision_state)
        self.assertIsNone(got.reservation, 'the lock leaked')

    def test_unknown_target(self):
        node = self.node()
        self.assertRefused(exception.InvalidParameterValue,
                           self.manager.do_provisioning_action,
                           self.ctx, node.uuid, 'rebuild')

    def test_locked_node(self):
        node = self.node()
        dbapi.reserve_node(node.uuid, 'someone-else')
        e = self.assertRefused(exception.NodeLocked,
                               self.manager.do_provisioning_action,
                               self.ctx, node.uuid, 'manage')
        self.assertIn('someone-else', str(e))
        got = dbapi.get_node(node.uuid)
        self.assertEqual(('enroll', 'someone-else'),
                         (got.provision_state, got.reservation))

    def test_invalid_driver_info_refused_before_any_change(self):
        node = self.node(driver_info={'fake_fail_phase': 'lunch'})
        self.assertRefused(exception.InvalidParameterValue,
                           self.manager.do_provisioning_action,
                           self.ctx, node.uuid, 'manage')
        got = dbapi.get_node(node.uuid)
        self.assertEqual(('enroll', None),
                         (got.provision_state, got.reservation))

    def test_prepare_failure_leaves_clean_failed(self):
        node = self.node(provision_state='manageable',
                         driver_info={'fake_fail_phase': 'prepare'})
        got = self.provision(node.uuid, 'provide', 'clean failed')
        self.assertIsNone(got.target_provision_state)
        self.assertIn('fake failure injected in the prepare phase',
                      got.last_error)
        # Fixed, provide again: the error goes.
        dbapi.update_node(node.uuid, {'driver_info': {}})
        got = self.provision(node.uuid, 'provide', 'available')
        self.assertIsNone(got.last_error)

    def test_deploy_failure_leaves_deploy_failed(self):
        node = self.node(provision_state='available',
                         driver_info={'fake_fail_phase': 'deploy'})
        got = self.provision(node.uuid, 'active', 'deploy failed')
        self.assertIn('fake failure injected in the deploy phase',
                      got.last_error)
        # deploy failed -> deleted is allowed and cleans the node.
        got = self.provision(node.uuid, 'deleted', 'available')
        self.assertIsNone(got.last_error)

    def test_timeout_is_a_failure(self):
        self.config(group='conductor', deploy_timeout=1)
        node = self.node(provision_state='available',
                         driver_info={'fake_duration': 5})
        got = self.provision(node.uuid, 'active', 'deploy failed')
        self.assertIn('did not reach active within 1 s', got.last_error)


class TestStableTransitions(ManagerTestCase):
    """manage of an available or clean failed node: straight back to
    manageable once the driver did it (provision_set.success)."""

    def setUp(self):
        super().setUp()
        self.bus = self.useFixture(utils.NotificationsFixture('info'))

    def provision_events(self):
        return [(m['event_type'].rsplit('.', 1)[1],
                 m['payload']['baremetal_orch_object.data']['event'],
                 m['payload']['baremetal_orch_object.data'][
                     'previous_provision_state'])
                for m in self.bus.messages
                if '.provision_set.' in m['event_type']]

    def test_manage_from_available_and_clean_failed(self):
        for state in ('available', 'clean failed'):
            node = self.node('n-' + state.replace(' ', '-'),
                             provision_state=state,
                             last_error='an old error')
            got = self.provision(node.uuid, 'manage', 'manageable')
            self.assertIsNone(got.last_error)
            self.assertIsNone(got.target_provision_state)
        self.assertEqual([('success', 'manage', 'available'),
                          ('success', 'manage', 'clean failed')],
                         self.provision_events())

    def test_driver_failure_keeps_the_state(self):
        node = self.node(provision_state='available')
        error = exception.ProvisioningFailed(node='n1', reason='BMC away')
        with mock.patch.object(fake.FakeDriver, 'manage', autospec=True,
                               side_effect=error):
            self.manager.do_provisioning_action(self.ctx, node.uuid,
                                                'manage')
            got = self.wait_for(lambda: (
                dbapi.get_node(node.uuid).reservation is None and
                dbapi.get_node(node.uuid).last_error and
                dbapi.get_node(node.uuid)))
        self.assertEqual('available', got.provision_state)
        self.assertIn('BMC away', got.last_error)
        self.assertEqual([('error', 'manage', 'available')],
                         self.provision_events())


class TestMaintenanceConsole(ManagerTestCase):

    def test_maintenance(self):
        node = self.node()
        got = self.manager.set_maintenance(self.ctx, node.uuid, True,
                                           'broken fan')
        self.assertTrue(got.maintenance)
        row = dbapi.get_node(node.uuid)
        self.assertEqual((True, 'broken fan', None),
                         (row.maintenance, row.maintenance_reason,
                          row.reservation))
        got = self.manager.set_maintenance(self.ctx, node.uuid, False,
                                           'ignored')
        row = dbapi.get_node(node.uuid)
        self.assertEqual((False, None), (row.maintenance,
                                         row.maintenance_reason))

    def test_maintenance_locked(self):
        node = self.node()
        dbapi.reserve_node(node.uuid, 'other')
        self.assertRefused(exception.NodeLocked, self.manager.set_maintenance,
                           self.ctx, node.uuid, True)
        self.assertFalse(dbapi.get_node(node.uuid).maintenance)

    def test_console(self):
        node = self.node()
        self.manager.set_console(self.ctx, node.uuid, True)
        self.assertTrue(dbapi.get_node(node.uuid).console_enabled)
        self.manager.set_console(self.ctx, node.uuid, False)
        row = dbapi.get_node(node.uuid)
        self.assertEqual((False, None), (row.console_enabled,
                                         row.reservation))

    def test_console_driver_error_changes_nothing(self):
        node = self.node()
        error = exception.DriverError(node='n1', reason='x')
        with mock.patch.object(fake.FakeDriver, 'set_console',
                               autospec=True, side_effect=error):
            self.assertRefused(exception.DriverError,
                               self.manager.set_console, self.ctx, node.uuid,
                               True)
        row = dbapi.get_node(node.uuid)
        self.assertEqual((False, None), (row.console_enabled,
                                         row.reservation))


class TestLifeCycle(ManagerTestCase):

    def test_prepare_host_recovers_before_any_rpc(self):
        """Before the RPC server starts: the nodes this host's previous
        life left locked in a working state are failed out, its locks
        released."""
        node = self.node('cleaning-1', provision_state='cleaning',
                         reservation='restarting')
        idle = self.node('idle-1', reservation='restarting')
        from baremetal_orch.conductor import manager
        restarting = manager.ConductorManager('restarting')
        restarting.prepare_host()
        self.addCleanup(restarting.del_host, False)
        got = dbapi.get_node(node.uuid)
        self.assertEqual(('clean failed', None),
                         (got.provision_state, got.reservation))
        self.assertIn('conductor restarting stopped', got.last_error)
        self.assertIsNone(dbapi.get_node(idle.uuid).reservation)
        # Not registered yet: nobody sends it work before init_host().
        self.assertRaises(exception.ServiceNotFound, dbapi.get_service,
                          'restarting')

    def test_init_host_registers_and_clears_own_locks(self):
        svc = dbapi.get_service('test-conductor')
        self.assertIsNotNone(svc.last_seen_at)
        node = self.node()
        dbapi.reserve_node(node.uuid, 'test-conductor')
        other = self.node('n2')
        dbapi.reserve_node(other.uuid, 'another-host')
        from baremetal_orch.conductor import manager
        second = manager.ConductorManager('test-conductor')
        second.init_host()
        self.addCleanup(second.del_host, False)
        self.assertIsNone(dbapi.get_node(node.uuid).reservation)
        self.assertEqual('another-host',
                         dbapi.get_node(other.uuid).reservation)


class TestConsoleRestore(ManagerTestCase):
    """console_restore at start-up and when taking nodes over."""

    def setUp(self):
        super().setUp()
        self.bus = self.useFixture(utils.NotificationsFixture('info'))
        self.calls = []
        real = fake.FakeDriver.set_console

        def record(driver, node, enabled):
            self.calls.append((node.name, enabled))
            return real(driver, node, enabled)
        self.useFixture(fixtures.MockPatchObject(
            fake.FakeDriver, 'set_console', autospec=True,
            side_effect=record))

    def restore_events(self):
        return sorted((m['payload']['baremetal_orch_object.data']['name'],
                       m['event_type'].rsplit('.', 1)[1])
                      for m in self.bus.messages
                      if '.console_restore.' in m['event_type'])

    def test_start_up_restores_own_enabled_consoles(self):
        # Another host than setUp's conductor, whose own start-up restore
        # may still be running.
        self.node('on', console_enabled=True, conductor='starting')
        self.node('off', console_enabled=False, conductor='starting')
        self.node('bad', console_enabled=True, conductor='starting',
                  driver_info={'fake_fail_phase': 'console'})
        self.node('theirs', console_enabled=True, conductor='elsewhere')
        from baremetal_orch.conductor import manager
        second = manager.ConductorManager('starting')
        second.init_host()
        self.addCleanup(second.del_host, False)
        self.wait_for(lambda: len(self.restore_events()) == 4)
        self.assertEqual([('bad', 'error'), ('bad', 'start'),
                          ('on', 'end'), ('on', 'start')],
                         self.restore_events())
        self.assertEqual({('bad', True), ('on', True)}, set(self.calls))

    def test_take_over_restores_the_dead_hosts_consoles_once(self):
        dbapi.register_service('dead-host')
        dbapi.update_service('dead-host', {'forced_down': True})
        self.node('d1', console_enabled=True, conductor='dead-host')
        self.node('d2', console_enabled=False, conductor='dead-host')
        self.manager.periodics.restore_consoles()
        self.assertEqual([('d1', 'end'), ('d1', 'start')],
                         self.restore_events())
        # Still dead at the next round: not restored again.
        self.manager.periodics.restore_consoles()
        self.assertEqual([('d1', True)], self.calls)
        # Back, then dead again: restored again.
        dbapi.update_service('dead-host', {'forced_down': False})
        dbapi.heartbeat('dead-host')
        self.manager.periodics.restore_consoles()
        dbapi.update_service('dead-host', {'forced_down': True})
        self.manager.periodics.restore_consoles()
        self.assertEqual([('d1', True), ('d1', True)], self.calls)


class TestActionWhoseConductorDied(ManagerTestCase):
    """A pending action whose admitting conductor died before it started
    it (a conductor taking it over, or one that took its job from the
    jobboard) runs on the snapshot admission stored in the same row:
    its selectors are never resolved again."""

    def test_it_runs_on_its_snapshot(self):
        for name, tag in (('ntp01', 'ntp'), ('ctl01', 'control')):
            self.create_node(name=name, tags=[tag])
        dbapi.create_strategy('old', {
            'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 'old'},
            'data': {'groups': [
                {'name': 'ntp', 'critical': True, 'depends_on': [],
                 'selectors': [{'node_tags': ['ntp']}]},
                {'name': 'control', 'critical': True,
                 'depends_on': ['ntp'],
                 'selectors': [{'node_tags': ['control']}]}]}})
        # Admitted, then its conductor died: nothing else was stored.
        admitted = admission.admit(self.ctx, uuidutils.generate_uuid(),
                                   'deploy_site',
                                   {'deployment_strategy': 'old'}, 'dead')
        # Meanwhile a node joins a group's selectors, another is renamed.
        self.create_node(name='ctl02', tags=['control'])
        dbapi.update_node('ntp01', {'name': 'ntp-renamed'})
        resolve = self.useFixture(fixtures.MockPatchObject(
            node_obj.Node, 'resolve_groups')).mock
        self.manager.actions.start(
            self.ctx, action_obj.Action.get(self.ctx, admitted.action.uuid))
        self.manager.actions.wait(60)
        resolve.assert_not_called()
        done = dbapi.get_action(admitted.action.uuid)
        self.assertEqual(('complete', 'success'), (done.state, done.result))
        self.assertEqual(['ntp', 'control'], done.report['order'])
        # The nodes it held, named as admission saw them.
        self.assertEqual({'ntp01': 'success', 'ctl01': 'success'},
                         done.report['nodes'])
        self.assertEqual(admitted.site.snapshot(),
                         done.parameters['snapshot'])


class TestEndedActionsFlow(ManagerTestCase):
    """The flow of an ended action (its taskflow logbook) goes once the
    action ended, without a jobboard too, unless
    ``[taskflow]jobboard_save_logbook``: nothing resumes it, and the
    taskflow tables would grow with every action."""

    def run_action(self):
        self.create_node(name='n1', tags=['t'])
        dbapi.create_strategy('s', {
            'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 's'},
            'data': {'groups': [
                {'name': 'g', 'critical': True, 'depends_on': [],
                 'selectors': [{'node_tags': ['t']}]}]}})
        admitted = admission.admit(self.ctx, uuidutils.generate_uuid(),
                                   'deploy_site',
                                   {'deployment_strategy': 's'}, 'dead')
        self.manager.actions.start(
            self.ctx, action_obj.Action.get(self.ctx, admitted.action.uuid))
        self.manager.actions.wait(60)
        done = dbapi.get_action(admitted.action.uuid)
        self.assertEqual(('complete', 'success'), (done.state, done.result))
        with contextlib.closing(
                dbapi.taskflow_backend().get_connection()) as conn:
            return done.uuid, [b.uuid for b in conn.get_logbooks()]

    def test_its_logbook_goes(self):
        uuid, books = self.run_action()
        self.assertNotIn(uuid, books)

    def test_kept_when_asked(self):
        self.config(group='taskflow', jobboard_save_logbook=True)
        uuid, books = self.run_action()
        self.assertIn(uuid, books)
