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
"""Group slots: granted in the plan's order, whichever thread asks first.
Checkpoints: shared by the callers that queue, never written twice."""

import random
import threading
from unittest import mock

import fixtures

from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import groups
from baremetal_orch.deployment import site as site_mod
from baremetal_orch.deployment import strategy as strategy_mod
from baremetal_orch.flows import dispatcher
from baremetal_orch.flows import runtime
from baremetal_orch.flows import site_deploy
from baremetal_orch.flows import slots as slots_mod
from baremetal_orch.tests import base

GROUPS = ['g%d' % i for i in range(10)]


def wide_site():
    """Ten independent groups of one node, listed in document order."""
    strategy = strategy_mod.parse({
        'schema': 'shipyard/DeploymentStrategy/v1',
        'metadata': {'name': 'wide'},
        'data': {'groups': [
            {'name': g, 'critical': False, 'depends_on': [],
             'selectors': [{'node_names': [g]}]} for g in GROUPS]}})
    return site_mod.SiteDeployment(strategy, {g: [g] for g in GROUPS})


def chain_site():
    """g0 <- g1 <- g2: each group depends on the one before."""
    strategy = strategy_mod.parse({
        'schema': 'shipyard/DeploymentStrategy/v1',
        'metadata': {'name': 'chain'},
        'data': {'groups': [
            {'name': g, 'critical': False,
             'depends_on': ['g%d' % (i - 1)] if i else [],
             'selectors': [{'node_names': [g]}]}
            for i, g in enumerate(GROUPS[:3])]}})
    return site_mod.SiteDeployment(strategy, {g: [g] for g in GROUPS[:3]})


def waiter(test, slots, group):
    """``slots.start(group)`` in a thread, checked to be waiting."""
    answer = []
    thread = threading.Thread(
        target=lambda: answer.append(slots.start(group)), daemon=True)
    thread.start()
    thread.join(0.2)
    test.assertTrue(thread.is_alive())
    return thread, answer


class TestGroupSlots(base.TestCase):

    def run_groups(self, size, seed):
        site = wide_site()
        slots = slots_mod.GroupSlots(size, site)
        started = []
        lock = threading.Lock()

        def group(name):
            slots.start(name)
            with lock:
                started.append(name)
            site.finish_prepare(name, {n: True
                                       for n in site.prepare_targets(name)})
            site.finish_deploy(name, {n: True
                                      for n in site.deploy_targets(name)})
            slots.release(name)

        names = list(GROUPS)
        random.Random(seed).shuffle(names)
        threads = [threading.Thread(target=group, args=(n,)) for n in names]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        self.assertFalse(any(t.is_alive() for t in threads))
        return started, site

    def test_one_slot_takes_the_plan_order(self):
        for seed in range(5):
            started, site = self.run_groups(1, seed)
            self.assertEqual(GROUPS, started, seed)
            self.assertEqual(GROUPS, site.order(), seed)

    def test_more_slots_keep_the_priority(self):
        for seed in range(5):
            _started, site = self.run_groups(3, seed)
            order = site.order()
            self.assertEqual(sorted(GROUPS), sorted(order))
            # No group started before one that was ahead of it in the
            # plan by more than the number of slots.
            for position, name in enumerate(order):
                self.assertLess(GROUPS.index(name), position + 3, order)

    def test_start_is_idempotent_per_group(self):
        site = wide_site()
        slots = slots_mod.GroupSlots(1, site)
        slots.start('g0')
        slots.start('g0')
        self.assertEqual(['g0'], site.order())
        slots.release('g0')
        slots.release('g0')

    def test_size_read_at_each_decision(self):
        # A reload (SIGHUP) of max_concurrent_groups reaches a running
        # action: a waiting group starts once the size grows, without any
        # release.
        site = wide_site()
        size = [1]
        slots = slots_mod.GroupSlots(lambda: size[0], site)
        slots.recheck_interval = 0.05
        slots.start('g0')
        second = threading.Thread(target=slots.start, args=('g1',))
        second.start()
        second.join(0.3)
        self.assertTrue(second.is_alive())
        self.assertEqual(['g0'], site.order())
        size[0] = 2
        second.join(10)
        self.assertFalse(second.is_alive())
        self.assertEqual(['g0', 'g1'], site.order())

    def test_dependencies_hold_a_group_back(self):
        # The slots are the one place a group's order is kept: with free
        # slots, g1 still waits for g0 to succeed.
        site = chain_site()
        slots = slots_mod.GroupSlots(3, site)
        thread, answer = waiter(self, slots, 'g1')
        self.assertTrue(slots.start('g0'))
        site.finish_prepare('g0', {n: True
                                   for n in site.prepare_targets('g0')})
        site.finish_deploy('g0', {n: True
                                  for n in site.deploy_targets('g0')})
        slots.release('g0')
        thread.join(10)
        self.assertEqual([True], answer)
        self.assertEqual(['g0', 'g1'], site.order())

    def test_a_blocked_group_ends_without_a_slot(self):
        site = chain_site()
        slots = slots_mod.GroupSlots(3, site)
        thread, answer = waiter(self, slots, 'g2')
        slots.start('g0')
        site.prepare_targets('g0')
        site.fail('g0', groups.TIMEOUT)
        self.assertEqual(['g1', 'g2'], site.skip_blocked())
        slots.wake()
        thread.join(10)
        self.assertEqual([False], answer)
        self.assertEqual(['g0'], site.order())
        self.assertFalse(slots.start('g1'))

    def test_closed_slots_start_nothing(self):
        # A failed flow: the groups waiting for a slot give up.
        site = wide_site()
        slots = slots_mod.GroupSlots(1, site)
        slots.start('g0')
        thread, answer = waiter(self, slots, 'g1')
        slots.close()
        thread.join(10)
        self.assertEqual([False], answer)
        self.assertEqual(['g0'], site.order())

    def test_a_step_that_raises_closes_the_slots(self):
        action = type('Action', (), {
            'uuid': 'a-uuid', 'progress': None, 'parameters': None,
            'state': 'running', 'control': None, 'state_reason': None})()
        rt = runtime.SiteRuntime(None, action, wide_site(), None, {}, None)
        self.assertEqual(('g0', 1), rt.guard(lambda g, n: (g, n), 'g0', 1))
        self.assertTrue(rt.slots.start('g0'))

        def boom(group):
            raise RuntimeError(group)

        self.assertRaises(RuntimeError, rt.guard, boom, 'g0')
        self.assertFalse(rt.slots.start('g1'))

    def test_runtime_slots_follow_the_option(self):
        self.config(max_concurrent_groups=1, group='conductor')
        action = type('Action', (), {
            'uuid': 'a-uuid', 'progress': None, 'parameters': None,
            'state': 'running', 'control': None, 'state_reason': None})()
        rt = runtime.SiteRuntime(None, action, wide_site(), None, {}, None)
        rt.slots.start('g0')
        self.assertFalse(rt.slots._may_start('g1'))
        self.config(max_concurrent_groups=2, group='conductor')
        self.assertTrue(rt.slots._may_start('g1'))


class AbortedSteering:
    """An action aborted before its first group started."""

    def wait(self):
        return False

    def aborting(self):
        return True


class TestAbortBeforeStart(base.DbTestCase):

    def test_the_groups_after_an_unstarted_group_end_too(self):
        # g1 waits for a slot behind g0; g0 is aborted before it starts:
        # no check of g0 runs, so its abort itself must end g1, or g1's
        # chain waits forever and the flow never ends.
        action = dbapi.create_action({'name': 'deploy_site',
                                      'state': 'running'})
        tasks = {g: dbapi.create_task({'action_uuid': action.uuid,
                                       'kind': 'group', 'name': g})
                 for g in GROUPS[:3]}
        rt = runtime.SiteRuntime(None, action, chain_site(), None, tasks,
                                 None)
        thread, answer = waiter(self, rt.slots, 'g1')
        rt.steering = AbortedSteering()
        self.assertEqual({}, rt.run_prepare('g0'))
        thread.join(10)
        self.assertEqual([False], answer)
        for group in GROUPS[:3]:
            self.assertEqual(('failed', 'aborted'), (
                rt.site.group_status(group)['status'],
                rt.site.group_status(group)['reason']), group)
        self.assertEqual([], rt.site.order())


class TestCheckpoints(base.DbTestCase):

    def setUp(self):
        super().setUp()
        action = dbapi.create_action({'name': 'deploy_site',
                                      'state': 'running'})
        self.site = wide_site()
        self.rt = runtime.SiteRuntime(None, action, self.site, None,
                                      {'g0': 'task-g0'}, None)
        self.writes = []
        real = dbapi.update_action

        def update(uuid, values, **kwargs):
            self.writes.append(values)
            return real(uuid, values, **kwargs)

        self.update = update
        self.useFixture(mockpatch(update))

    def saved(self):
        return dbapi.get_action(self.rt.action_uuid)

    def restored(self):
        """The rules as a resumed flow rebuilds them from the record."""
        return site_mod.SiteDeployment.from_dict(
            self.site.snapshot(), self.saved().progress['site'])

    def test_an_unchanged_state_is_written_once(self):
        self.rt.checkpoint()
        self.rt.checkpoint()
        self.assertEqual(1, len(self.writes))
        self.site.start('g0')
        self.site.prepare_targets('g0')
        self.rt.checkpoint()
        self.assertEqual(2, len(self.writes))
        self.assertEqual(['g0'], self.saved().progress['site']['order'])
        self.assertEqual({'g0': 'g0'}, self.restored().tracker.claims())
        # The report is a view of the record, not written with it.
        self.assertEqual({}, self.saved().report)
        # Claiming again the nodes the group holds changes nothing.
        self.site.prepare_targets('g0')
        self.rt.checkpoint()
        self.assertEqual(2, len(self.writes))
        self.site.finish_prepare('g0', {'g0': True})
        self.rt.checkpoint()
        self.assertEqual(3, len(self.writes))
        self.assertEqual('prepared', self.restored().tracker.status('g0'))

    def test_callers_queued_behind_a_save_share_the_next(self):
        entered, go = threading.Event(), threading.Event()
        first = [True]

        def slow(uuid, values, **kwargs):
            if first[0]:
                first[0] = False
                entered.set()
                go.wait(30)
            return self.update(uuid, values, **kwargs)

        self.useFixture(mockpatch(slow))
        self.site.start('g0')
        writer = threading.Thread(target=self.rt.checkpoint)
        writer.start()
        self.assertTrue(entered.wait(30))
        # While the first save is on its way, every group changes the
        # state and asks for a checkpoint.
        waiters = []
        for group in GROUPS[1:]:
            self.site.start(group)
            thread = threading.Thread(target=self.rt.checkpoint)
            thread.start()
            waiters.append(thread)
        go.set()
        for thread in [writer] + waiters:
            thread.join(30)
            self.assertFalse(thread.is_alive())
        # The first save, then one for all the queued callers.
        self.assertEqual(2, len(self.writes))
        self.assertEqual(sorted(GROUPS),
                         sorted(self.saved().progress['site']['order']))

    def test_a_failed_save_is_retried_by_the_next_call(self):
        down = [True]

        def flaky(uuid, values, **kwargs):
            if down[0]:
                raise RuntimeError('database gone')
            return self.update(uuid, values, **kwargs)

        self.useFixture(mockpatch(flaky))
        self.site.start('g0')
        self.assertRaises(RuntimeError, self.rt.checkpoint)
        down[0] = False
        self.rt.checkpoint()
        self.assertEqual(['g0'], self.saved().progress['site']['order'])


def mockpatch(replacement):
    """Replace ``dbapi.update_action`` (the checkpoint's one write)."""
    return fixtures.MockPatchObject(dbapi, 'update_action', replacement)


class NodesSucceed:
    """The dispatcher of a phase whose nodes all succeed: it inserts the
    phase's row when new, as the real one does with its nodes' rows."""

    def __init__(self):
        self.phases = []

    def run(self, rt, phase_task, phase, uuids, timeout, params,
            keep_going=None, phase_row=None):
        if phase_row:
            dbapi.create_tasks([phase_row])
        self.phases.append((params['group'], phase, sorted(uuids)))
        return dispatcher.PhaseResults(dict.fromkeys(uuids, True), False)


class TestGroupAtoms(base.DbTestCase):
    """A group is one atom: its prepare phase, then its deploy phase,
    each ending with the check of the group's criteria."""

    def setUp(self):
        super().setUp()
        self.action = dbapi.create_action({'name': 'deploy_site',
                                           'state': 'running'})
        self.tasks = {g: dbapi.create_task({
            'action_uuid': self.action.uuid, 'kind': 'group', 'name': g})
            for g in GROUPS}
        self.dispatch = NodesSucceed()
        self.rt = self.runtime(wide_site())

    def runtime(self, site):
        return runtime.SiteRuntime(None, self.action, site, self.dispatch,
                                   self.tasks, None)

    def phase_row(self, group, phase):
        rows = [t for t in dbapi.list_tasks(parent_uuid=self.tasks[group],
                                            kind='phase')
                if t.name == phase]
        self.assertEqual(1, len(rows))
        return rows[0]

    def test_the_flow_is_one_atom_a_group(self):
        flow = site_deploy.flow_factory('a-uuid', ['g0', 'g1'])
        self.assertEqual(['group:g0', 'group:g1'],
                         sorted(atom.name for atom in flow))

    def test_the_report_of_a_notification_only_when_it_is_sent(self):
        # Every node of the group, named: built for a notification that
        # is sent, not for one the level filters out.
        for level, built in ((None, 0), ('info', 4)):
            self.config(notification_level=level)
            rt = self.runtime(wide_site())
            with mock.patch.object(rt.site, 'group_report',
                                   wraps=rt.site.group_report) as report:
                self.assertEqual(groups.SUCCESS, rt.run_group('g0'))
            # The group's end writes its report to its event too.
            self.assertEqual(built + 1, report.call_count, level)

    def test_a_group_prepares_then_deploys(self):
        self.assertEqual(groups.SUCCESS, self.rt.run_group('g0'))
        self.assertEqual([('g0', groups.PREPARE, ['g0']),
                          ('g0', groups.DEPLOY, ['g0'])],
                         self.dispatch.phases)
        for phase in (groups.PREPARE, groups.DEPLOY):
            self.assertEqual('success', self.phase_row('g0', phase).status)

    def test_a_phase_row_ends_with_the_checkpoint_of_its_results(self):
        results = self.rt.run_prepare('g0')
        # Ended by the rules' checkpoint, not before: a reader never sees
        # the phase ended while the record says the group prepares.
        self.assertEqual('running',
                         self.phase_row('g0', groups.PREPARE).status)
        self.assertTrue(self.rt.check_prepare('g0', results))
        self.assertEqual('success',
                         self.phase_row('g0', groups.PREPARE).status)
        saved = dbapi.get_action(self.action.uuid).progress['site']
        self.assertEqual(['g0'], saved['order'])

    def test_one_checkpoint_between_the_phases(self):
        # The group's start, its prepare's results with its deploy's
        # claims, its end: three snapshots of the rules' state taken, each
        # written (the deploy's start took a fourth, equal to the one
        # before it, and so not written).
        writes, snapshots = [], []
        real = dbapi.update_action
        self.useFixture(mockpatch(
            lambda *a, **k: (writes.append(a[1]), real(*a, **k))[1]))
        to_dict = self.rt.site.to_dict
        self.useFixture(fixtures.MockPatchObject(
            self.rt.site, 'to_dict',
            side_effect=lambda: snapshots.append(to_dict()) or
            snapshots[-1]))
        self.assertEqual(groups.SUCCESS, self.rt.run_group('g0'))
        self.assertEqual(3, len(snapshots))
        self.assertEqual(snapshots,
                         [w['progress']['site'] for w in writes])

    def test_a_group_started_here_inserts_its_phase_rows_unread(self):
        # None can exist before this runtime started the group; a
        # resumed runtime looks for them.
        with mock.patch.object(dbapi, 'list_tasks', autospec=True,
                               wraps=dbapi.list_tasks) as reads:
            self.assertTrue(self.rt.prepare('g0'))
            self.assertEqual([], reads.call_args_list)
            self.assertEqual(groups.SUCCESS, self.resumed().run_group('g0'))
        self.assertEqual([mock.call(parent_uuid=self.tasks['g0'],
                                    kind='phase')], reads.call_args_list)
        self.assertEqual('success',
                         self.phase_row('g0', groups.DEPLOY).status)

    def resumed(self):
        """A runtime rebuilt from the last checkpoint, as a conductor that
        resumes the flow makes it."""
        saved = dbapi.get_action(self.action.uuid).progress['site']
        return self.runtime(site_mod.SiteDeployment.from_dict(
            self.rt.site.snapshot(), saved))

    def test_a_resumed_prepare_keeps_its_recorded_verdict(self):
        # The flow stopped after the prepare's check was saved, before
        # the deploy: the group's atom runs again and deploys, without
        # preparing again.
        self.assertTrue(self.rt.prepare('g0'))
        again = self.resumed()
        self.assertEqual({'status': 'running', 'phase': groups.DEPLOY},
                         {k: again.site.group_status('g0')[k]
                          for k in ('status', 'phase')})
        self.assertEqual(groups.SUCCESS, again.run_group('g0'))
        self.assertEqual([('g0', groups.PREPARE, ['g0']),
                          ('g0', groups.DEPLOY, ['g0'])],
                         self.dispatch.phases)

    def test_a_resumed_group_that_ended_does_nothing_again(self):
        # The flow stopped after the deploy's check was saved, before
        # taskflow saved the atom's end.
        self.assertEqual(groups.SUCCESS, self.rt.run_group('g0'))
        self.assertEqual(groups.SUCCESS, self.resumed().run_group('g0'))
        self.assertEqual(2, len(self.dispatch.phases))
