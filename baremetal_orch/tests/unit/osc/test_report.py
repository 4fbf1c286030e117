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
"""The report of an action: rows, node reasons, the summary."""

import json

from baremetal_orch.osc import report
from baremetal_orch.tests import base

MISS = {'criterion': 'minimum_successful_nodes', 'needed': 1, 'actual': 0}

#: A report as the API gives it (the example site's ntp-prepare failure,
#: cut down): ntp failed its criteria, ctl and cmp never ran, mon passed.
SITE_REPORT = {
    'order': ['ntp', 'mon'],
    'groups': {
        'mon': {'status': 'success', 'critical': False, 'reason': None,
                'nodes': ['mon01', 'mon02'],
                'succeeded_nodes': ['mon01', 'mon02'], 'failed_nodes': [],
                'misses': []},
        'ntp': {'status': 'failed', 'critical': True,
                'reason': 'prepare_criteria_not_met', 'nodes': ['ntp01'],
                'succeeded_nodes': [], 'failed_nodes': ['ntp01'],
                'misses': [MISS]},
        'ctl': {'status': 'failed', 'critical': True,
                'reason': 'dependency_failed', 'nodes': ['ctl01'],
                'succeeded_nodes': [], 'failed_nodes': [], 'misses': []},
        'cmp': {'status': 'failed', 'critical': False,
                'reason': 'dependency_failed', 'nodes': ['cmp01', 'ctl01'],
                'succeeded_nodes': [], 'failed_nodes': [], 'misses': []}},
    'nodes': {'cmp01': 'not_started', 'ctl01': 'not_started',
              'mon01': 'success', 'mon02': 'success', 'ntp01': 'failure'}}

NTP_REASON = ('Provisioning of node ntp01 failed: fake failure injected in '
              'the prepare phase')


def task(kind, name, status, reason=None, *subtasks):
    return {'kind': kind, 'name': name, 'status': status, 'reason': reason,
            'subtasks': list(subtasks)}


SITE_TREE = task(
    'action', 'deploy_site', 'failed', 'failed',
    task('group', 'ntp', 'failed', 'prepare_criteria_not_met',
         task('phase', 'prepare', 'failed', 'failed nodes: ntp01',
              task('node', 'ntp01', 'failed', NTP_REASON))),
    task('group', 'mon', 'success', None,
         task('phase', 'prepare', 'success', None,
              task('node', 'mon01', 'success'),
              task('node', 'mon02', 'success'))),
    task('group', 'ctl', 'failed', 'dependency_failed'),
    task('group', 'cmp', 'failed', 'dependency_failed'))


def machine(rows):
    return [tuple(getattr(v, 'machine_readable', lambda v=v: v)()
                  for v in row) for row in rows]


def human(rows):
    return [tuple(getattr(v, 'human_readable', lambda v=v: v)()
                  for v in row) for row in rows]


class TestSiteRows(base.TestCase):

    def test_a_row_per_group_then_per_node(self):
        columns, rows = report.report_rows(
            SITE_REPORT, report.node_reasons(SITE_TREE))
        self.assertEqual(('Group', 'Node', 'Critical', 'Status', 'Reason',
                          'Succeeded', 'Failed', 'Misses'), columns)
        # Started groups in their order, then the others by name; a node
        # listed by two groups is under each.
        self.assertEqual([
            ('ntp', None, True, 'failed', 'prepare_criteria_not_met', [],
             ['ntp01'], [MISS]),
            ('ntp', 'ntp01', None, 'failure', NTP_REASON, None, None, None),
            ('mon', None, False, 'success', None, ['mon01', 'mon02'], [],
             []),
            ('mon', 'mon01', None, 'success', None, None, None, None),
            ('mon', 'mon02', None, 'success', None, None, None, None),
            ('cmp', None, False, 'failed', 'dependency_failed', [], [], []),
            ('cmp', 'cmp01', None, 'not_started', None, None, None, None),
            ('cmp', 'ctl01', None, 'not_started', None, None, None, None),
            ('ctl', None, True, 'failed', 'dependency_failed', [], [], []),
            ('ctl', 'ctl01', None, 'not_started', None, None, None, None),
        ], machine(rows))

    def test_table_text(self):
        _columns, rows = report.report_rows(SITE_REPORT)
        self.assertEqual(
            [('ntp', '', 'True', 'failed', 'prepare_criteria_not_met', '0',
              '1', 'minimum_successful_nodes: needed 1, actual 0'),
             ('ntp', 'ntp01', '', 'failure', '', '', '', '')],
            human(rows)[:2])

    def test_json_is_the_api_structure(self):
        _columns, rows = report.report_rows(SITE_REPORT)
        doc = json.loads(json.dumps(machine(rows)))
        self.assertIsNone(doc[2][4])  # mon's reason: null, not ""
        self.assertEqual([MISS], doc[0][7])

    def test_no_report(self):
        for value in (None, {}):
            columns, rows = report.report_rows(value)
            self.assertEqual(report.SITE_COLUMNS, columns)
            self.assertEqual([], rows)

    def test_node_reasons(self):
        self.assertEqual({'ntp01': NTP_REASON},
                         report.node_reasons(SITE_TREE))
        self.assertEqual({}, report.node_reasons(None))


class TestLabelRows(base.TestCase):

    def test_a_row_per_node(self):
        columns, rows = report.report_rows({
            'requested': ['a', 'b', 'c'], 'relabeled': ['a'],
            'not_relabeled': ['b'], 'errors': {'b': 'kube said no'}})
        self.assertEqual(('Node', 'Status', 'Error'), columns)
        self.assertEqual([('a', 'relabeled', None),
                          ('b', 'failed', 'kube said no'),
                          ('c', 'pending', None)], machine(rows))
        self.assertEqual(('a', 'relabeled', ''), human(rows)[0])


class TestSummary(base.TestCase):

    def test_site(self):
        self.assertEqual(
            'groups: 4 (3 failed, 1 success)\n'
            '  ntp: failed (prepare_criteria_not_met), 0/1 nodes '
            'succeeded; missed minimum_successful_nodes: needed 1, '
            'actual 0\n'
            '  cmp: failed (dependency_failed), 0/2 nodes succeeded\n'
            '  ctl: failed (dependency_failed), 0/1 nodes succeeded\n'
            'nodes: 5 (1 failure, 2 not_started, 2 success)\n'
            'failed nodes: ntp01\n'
            'started: ntp, mon\n'
            '(details: action show --report)', report.summary(SITE_REPORT))

    def test_a_successful_site_is_short(self):
        ok = {'order': ['mon'], 'groups': {'mon': SITE_REPORT['groups'][
            'mon']}, 'nodes': {'mon01': 'success', 'mon02': 'success'}}
        self.assertEqual(['groups: 1 (1 success)', 'nodes: 2 (2 success)',
                          'started: mon',
                          '(details: action show --report)'],
                         report.summary(ok).splitlines())

    def test_a_big_site_stays_a_summary(self):
        groups = {'g%03d' % i: {'status': 'failed', 'reason': 'timeout',
                                'nodes': ['n%03d' % i],
                                'succeeded_nodes': [],
                                'failed_nodes': ['n%03d' % i]}
                  for i in range(300)}
        big = {'order': sorted(groups), 'groups': groups,
               'nodes': {'n%03d' % i: 'failure' for i in range(300)}}
        lines = report.summary(big).splitlines()
        self.assertLess(len(lines), 2 * report.MAX_NAMED)
        self.assertIn('  ...', lines)
        self.assertIn('failed nodes: n000, n001, n002, n003, n004, n005, '
                      'n006, n007, n008, n009, ... (290 more)', lines)
        self.assertEqual('groups: 300 (300 failed)', lines[0])

    def test_labels(self):
        self.assertEqual(
            ['nodes: 2 requested, 1 relabeled, 1 not relabeled',
             'not relabeled: b (kube said no)',
             '(details: action show --report)'],
            report.summary({'requested': ['a', 'b'], 'relabeled': ['a'],
                            'not_relabeled': ['b'],
                            'errors': {'b': 'kube said no'}}).splitlines())

    def test_nothing_or_unknown(self):
        self.assertEqual('', report.summary(None))
        self.assertEqual('{"x": 1}', report.summary({'x': 1}))

    def test_column(self):
        column = report.ReportColumn(SITE_REPORT)
        self.assertIs(SITE_REPORT, column.machine_readable())
        self.assertEqual(report.summary(SITE_REPORT),
                         column.human_readable())
