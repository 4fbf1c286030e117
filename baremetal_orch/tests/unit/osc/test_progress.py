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
"""The progress of an action: summary and status line."""

import io

from baremetal_orch.osc import progress
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.osc import fakes


def group(status, nodes, succeeded=(), failed=(), critical=False,
          reason=None):
    return {'status': status, 'critical': critical, 'reason': reason,
            'nodes': list(nodes), 'succeeded_nodes': list(succeeded),
            'failed_nodes': list(failed)}


def task(kind, name, status, *subtasks):
    return {'kind': kind, 'name': name, 'status': status,
            'subtasks': list(subtasks)}


RUNNING_REPORT = {
    'order': ['ntp', 'ctl'],
    'groups': {'ntp': group('success', ['ntp01'], ['ntp01']),
               'ctl': group('running', ['ctl01', 'ctl02']),
               'cmp': group('pending', ['cmp01'])},
    'nodes': {'ntp01': 'success', 'ctl01': 'prepared',
              'ctl02': 'prepared', 'cmp01': 'not_started'}}

RUNNING_TREE = task(
    'action', 'deploy_site', 'running',
    task('group', 'ntp', 'success'),
    task('group', 'ctl', 'running',
         task('phase', 'prepare', 'success',
              task('node', 'ctl01', 'success'),
              task('node', 'ctl02', 'success')),
         task('phase', 'deploy', 'running',
              task('node', 'ctl01', 'success'),
              task('node', 'ctl02', 'running'))),
    task('group', 'cmp', 'pending'))

FAILED_REPORT = {
    'order': ['ntp', 'ctl', 'cmp'],
    'groups': {
        'ntp': group('failed', ['ntp01'], failed=['ntp01'], critical=True,
                     reason='prepare_criteria_not_met'),
        'ctl': group('failed', ['ctl01', 'ctl02'], critical=True,
                     reason='dependency_failed'),
        'cmp': group('failed', ['cmp01', 'ctl01'],
                     reason='dependency_failed')},
    'nodes': {'ntp01': 'failure', 'ctl01': 'not_started',
              'ctl02': 'not_started', 'cmp01': 'not_started'}}

LABELS_TREE = task('action', 'update_labels', 'running',
                   task('node', 'cmp01', 'success'),
                   task('node', 'cmp02', 'failed'),
                   task('node', 'cmp03', 'running'))


class TestSummarizeSteering(base.TestCase):

    def test_reason_and_eta(self):
        action = {'state': 'paused', 'state_reason': 'outside_window',
                  'report': RUNNING_REPORT,
                  'progress': {'phases': {}, 'eta': 42.0}}
        summary = progress.summarize(action, RUNNING_TREE)
        self.assertEqual(('paused', 'outside_window', True, 42.0, 1, 3),
                         (summary.state, summary.reason, summary.with_eta,
                          summary.eta, summary.groups_done,
                          summary.groups_total))

    def test_an_api_without_progress(self):
        summary = progress.summarize({'state': 'running'})
        self.assertEqual((None, False, None),
                         (summary.reason, summary.with_eta, summary.eta))


class TestSummarize(base.TestCase):

    # (action, tree, expected Progress)
    CASES = [
        ({'state': 'pending', 'result': None, 'report': None}, None,
         progress.Progress('pending')),
        ({'state': 'running', 'report': RUNNING_REPORT}, None,
         progress.Progress('running', None, 1, 3, 1, 4,
                           (('ctl', None, None, None),))),
        ({'state': 'running', 'report': RUNNING_REPORT}, RUNNING_TREE,
         progress.Progress('running', None, 1, 3, 1, 4,
                           (('ctl', 'deploy', 1, 2),))),
        # Nodes of groups skipped for a failed dependency are not done:
        # one node failed, three never started (ctl01 is in two groups,
        # counted once).
        ({'state': 'failed', 'result': 'failed', 'report': FAILED_REPORT},
         None, progress.Progress('failed', 'failed', 3, 3, 1, 4, (), 3)),
        ({'state': 'running', 'report': None}, LABELS_TREE,
         progress.Progress('running', nodes_done=2, nodes_total=3)),
        ({'state': 'complete', 'result': 'success', 'report': {
            'requested': ['a', 'b'], 'relabeled': ['a'],
            'not_relabeled': ['b'], 'errors': {'b': 'boom'}}}, None,
         progress.Progress('complete', 'success', nodes_done=2,
                           nodes_total=2)),
    ]

    def test_table(self):
        for action, tree, expected in self.CASES:
            self.assertEqual(expected, progress.summarize(action, tree),
                             (action, tree))

    def test_phase_of_a_group_between_phases(self):
        # prepare done, deploy not created yet: the last phase is shown.
        tree = task('action', 'deploy_site', 'running',
                    task('group', 'ctl', 'running',
                         task('phase', 'prepare', 'success',
                              task('node', 'ctl01', 'success'))))
        summary = progress.summarize(
            {'state': 'running', 'report': RUNNING_REPORT}, tree)
        self.assertEqual((('ctl', 'prepare', 1, 1),), summary.current)


class TestFormat(base.TestCase):

    # (Progress, elapsed, line)
    LINES = [
        (progress.Progress('pending'), 0,
         'pending | nodes 0/0 | elapsed 0:00'),
        (progress.Progress('running', None, 1, 3, 1, 4,
                           (('ctl', 'deploy', 1, 2),)), 7.9,
         'running | groups 1/3 | nodes 1/4 | current: ctl (deploy 1/2) | '
         'elapsed 0:07'),
        (progress.Progress('running', None, 1, 3, 1, 4,
                           (('a', None, None, None),
                            ('b', 'prepare', 0, 0))), 125,
         'running | groups 1/3 | nodes 1/4 | current: a, b (prepare) | '
         'elapsed 2:05'),
        (progress.Progress('failed', 'failed', 3, 3, 1, 4, (), 3), 3725,
         'failed (failed) | groups 3/3 | nodes 1/4 (3 not started) | '
         'current: - | elapsed 1:02:05'),
        (progress.Progress('running', nodes_done=2, nodes_total=3), None,
         'running | nodes 2/3'),
        # Paused: the line says why; the ETA of an API that gives one.
        (progress.Progress('paused', None, 1, 3, 1, 4, (), 0,
                           'change freeze', True, 250.4), 8,
         'paused: change freeze | groups 1/3 | nodes 1/4 | current: - | '
         'eta 4m 10s | elapsed 0:08'),
        (progress.Progress('pausing', nodes_total=2, reason='outside_window',
                           with_eta=True), None,
         'pausing: outside_window | nodes 0/2 | eta unknown'),
        # An action that ended has no ETA.
        (progress.Progress('cancelled', 'failed', reason='aborted',
                           with_eta=True, eta=3), None,
         'cancelled (failed): aborted | nodes 0/0'),
    ]

    def test_lines(self):
        for summary, elapsed, line in self.LINES:
            self.assertEqual(line, progress.format_line(summary, elapsed))

    def test_eta(self):
        for seconds, text in ((None, 'unknown'), (0, '0s'), (44.6, '45s'),
                              (60, '1m 0s'), (250, '4m 10s'),
                              (3599.4, '59m 59s'), (7530, '2h 5m'),
                              (-3, '0s')):
            self.assertEqual(text, progress.format_eta(seconds), seconds)

    def test_progress_lines(self):
        doc = {'phases': {
            'deploy': {'done': 1, 'failed': 0, 'in_flight': 2,
                       'pending': 5},
            'prepare': {'done': 7, 'failed': 1, 'in_flight': 0,
                        'pending': 0},
            'signal': {'done': 0}},
            'eta': 250}
        self.assertEqual(
            ['prepare: 7 done, 1 failed, 0 in flight, 0 pending',
             'deploy: 1 done, 0 failed, 2 in flight, 5 pending',
             'signal: 0 done, 0 failed, 0 in flight, 0 pending',
             'eta: 4m 10s'], progress.format_progress(doc))
        self.assertEqual(['eta: unknown'],
                         progress.format_progress({'phases': {},
                                                   'eta': None}))
        self.assertEqual([], progress.format_progress(None))


class FakeStream(io.StringIO):

    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


class TestDisplay(base.TestCase):

    def test_pipe_writes_a_line_per_change(self):
        stream = FakeStream(tty=False)
        display = progress.Display(stream)
        display.update(progress.Progress('running', nodes_total=2), 1)
        display.update(progress.Progress('running', nodes_total=2), 2)
        display.update(progress.Progress('running', nodes_done=1,
                                         nodes_total=2), 3)
        display.finish()
        self.assertEqual('running | nodes 0/2 | elapsed 0:01\n'
                         'running | nodes 1/2 | elapsed 0:03\n',
                         stream.getvalue())

    def test_terminal_rewrites_one_line(self):
        stream = FakeStream(tty=True)
        display = progress.Display(stream)
        display.update(progress.Progress('running', nodes_total=2), 1)
        display.update(progress.Progress('running', nodes_total=2), 2)
        display.finish()
        self.assertEqual('\rrunning | nodes 0/2 | elapsed 0:01\x1b[K'
                         '\rrunning | nodes 0/2 | elapsed 0:02\x1b[K\n',
                         stream.getvalue())


class FakeClock:

    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


class TestWatch(base.TestCase):

    def _api(self, *states):
        return fakes.FakeClient({
            ('GET', 'actions/a1'): [
                {'uuid': 'a1', 'state': s, 'task_uuid': 't1',
                 'report': RUNNING_REPORT} for s in states],
            ('GET', 'tasks/t1'): RUNNING_TREE})

    def test_polls_until_the_action_ends(self):
        api = self._api('pending', 'running', 'complete')
        clock = FakeClock()
        stream = FakeStream(tty=False)
        action = progress.watch(api, 'a1', progress.Display(stream),
                                interval=0.5, sleep=clock.sleep,
                                clock=clock)
        self.assertEqual('complete', action['state'])
        self.assertEqual([0.5, 0.5], clock.sleeps)
        self.assertIn(('GET', 'tasks/t1', None, {'tree': 'true'}, None,
                       None), api.calls)
        self.assertEqual(
            ['pending | groups 1/3 | nodes 1/4 | current: ctl (deploy 1/2) '
             '| elapsed 0:00',
             'running | groups 1/3 | nodes 1/4 | current: ctl (deploy 1/2) '
             '| elapsed 0:00',
             'complete | groups 1/3 | nodes 1/4 | current: ctl (deploy 1/2) '
             '| elapsed 0:01'],
            stream.getvalue().splitlines())

    def test_keeps_waiting_while_paused(self):
        def doc(state, reason=None, eta=None):
            return {'uuid': 'a1', 'state': state, 'state_reason': reason,
                    'task_uuid': None, 'report': RUNNING_REPORT,
                    'progress': {'phases': {}, 'eta': eta}}
        api = fakes.FakeClient({('GET', 'actions/a1'): [
            doc('running', eta=600), doc('pausing', 'change freeze', 600),
            doc('paused', 'change freeze', 590),
            doc('paused', 'change freeze', 590),
            doc('running', eta=300), doc('complete')]})
        clock = FakeClock()
        stream = FakeStream(tty=False)
        action = progress.watch(api, 'a1', progress.Display(stream),
                                interval=10, sleep=clock.sleep,
                                clock=clock)
        self.assertEqual('complete', action['state'])
        self.assertEqual(6, len(api.calls))
        self.assertEqual(
            ['running | groups 1/3 | nodes 1/4 | current: ctl | '
             'eta 10m 0s | elapsed 0:00',
             'pausing: change freeze | groups 1/3 | nodes 1/4 | '
             'current: ctl | eta 10m 0s | elapsed 0:10',
             'paused: change freeze | groups 1/3 | nodes 1/4 | '
             'current: ctl | eta 9m 50s | elapsed 0:20',
             'running | groups 1/3 | nodes 1/4 | current: ctl | '
             'eta 5m 0s | elapsed 0:40',
             'complete | groups 1/3 | nodes 1/4 | current: ctl | '
             'elapsed 0:50'],
            stream.getvalue().splitlines())

    def test_timeout(self):
        api = self._api('running')
        clock = FakeClock()
        e = self.assertRaises(TimeoutError, progress.watch, api, 'a1',
                              progress.Display(FakeStream(False)),
                              interval=1, timeout=3, sleep=clock.sleep,
                              clock=clock)
        self.assertIn('still running after 3 seconds', str(e))
        self.assertEqual([1, 1, 1], clock.sleeps)
