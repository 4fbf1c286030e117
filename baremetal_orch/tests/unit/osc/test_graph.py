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
"""The strategy DAG in DOT: a pure function, tested from tables."""

import os
import re

import fixtures
from osc_lib import exceptions
import yaml

from baremetal_orch.osc import graph
from baremetal_orch.tests import base

EXAMPLE = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..',
                       'etc', 'baremetal-orch', 'examples',
                       'deployment-strategy.yaml')


def strategy(*groups, name='s'):
    """A strategy document from ``(name, critical, depends_on)``."""
    return {'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': name},
            'data': {'groups': [
                {'name': g, 'critical': c, 'depends_on': list(d),
                 'selectors': []} for g, c, d in groups]}}


NODE_RE = re.compile(r'^  "(?P<id>[^"]+)" \[(?P<attrs>.*)\];$')
EDGE_RE = re.compile(r'^  "(?P<src>[^"]+)" -> "(?P<dst>[^"]+)";$')
ATTR_RE = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,\s]+)')


def parse_dot(text):
    """Nodes {id: {attr: value}} and edges [(src, dst)] of our DOT."""
    nodes, edges = {}, []
    lines = text.splitlines()
    assert lines[0].startswith('digraph '), lines[0]
    assert lines[-1] == '}', lines[-1]
    for line in lines[1:-1]:
        m = NODE_RE.match(line)
        if m:
            nodes[m.group('id')] = {
                k: v.strip('"') for k, v in ATTR_RE.findall(m.group('attrs'))}
            continue
        m = EDGE_RE.match(line)
        if m:
            edges.append((m.group('src'), m.group('dst')))
    return nodes, edges


class TestToDot(base.TestCase):

    def test_example_strategy(self):
        with open(EXAMPLE) as f:
            document = yaml.safe_load(f)
        nodes, edges = parse_dot(graph.to_dot(document))
        self.assertEqual({'ntp-node', 'monitoring-nodes', 'control-nodes',
                          'compute-nodes-1', 'compute-nodes-2'}, set(nodes))
        self.assertEqual({('ntp-node', 'control-nodes'),
                          ('control-nodes', 'compute-nodes-1'),
                          ('control-nodes', 'compute-nodes-2')},
                         set(edges))
        self.assertEqual(3, len(edges))
        self.assertIn('digraph "deployment-strategy" {',
                      graph.to_dot(document))

    # (groups, expected edges in order)
    EDGES = [
        ([('a', True, ())], []),
        ([('a', True, ()), ('b', False, ('a',))], [('a', 'b')]),
        ([('a', True, ()), ('b', False, ()), ('c', False, ('a', 'b'))],
         [('a', 'c'), ('b', 'c')]),
        ([('c', False, ('b',)), ('b', False, ('a',)), ('a', True, ())],
         [('b', 'c'), ('a', 'b')]),
    ]

    def test_edges_from_depends_on(self):
        for groups, expected in self.EDGES:
            nodes, edges = parse_dot(graph.to_dot(strategy(*groups)))
            self.assertEqual([g for g, _c, _d in groups], list(nodes))
            self.assertEqual(expected, edges, groups)

    def test_critical_groups_are_bold(self):
        nodes, _ = parse_dot(graph.to_dot(strategy(('a', True, ()),
                                                   ('b', False, ()))))
        self.assertEqual('2', nodes['a'].get('peripheries'))
        self.assertIn('critical', nodes['a']['label'])
        self.assertNotIn('peripheries', nodes['b'])
        self.assertNotIn('critical', nodes['b']['label'])

    # (group status in the report, fill colour)
    COLORS = [
        ('success', 'green'),
        ('failed', 'red'),
        ('running', 'yellow'),
        ('pending', 'grey'),
        ('something-new', 'white'),
        (None, 'white'),
    ]

    def test_colours_by_status(self):
        for status, color in self.COLORS:
            report = {'groups': {}}
            if status is not None:
                report['groups']['a'] = {
                    'status': status, 'nodes': ['n1', 'n2'],
                    'succeeded_nodes': ['n1'], 'failed_nodes': ['n2'],
                    'reason': 'deploy_criteria_not_met'
                    if status == 'failed' else None}
            nodes, _ = parse_dot(graph.to_dot(strategy(('a', False, ())),
                                              report))
            self.assertEqual(color, nodes['a']['fillcolor'], status)

    def test_without_report_no_status_colour(self):
        nodes, _ = parse_dot(graph.to_dot(strategy(('a', False, ()))))
        self.assertEqual('white', nodes['a']['fillcolor'])

    def test_label_shows_counts_and_reason(self):
        report = {'groups': {'a': {
            'status': 'failed', 'nodes': ['n1', 'n2', 'n3'],
            'succeeded_nodes': ['n1'], 'failed_nodes': ['n2'],
            'reason': 'deploy_criteria_not_met'}}}
        nodes, _ = parse_dot(graph.to_dot(strategy(('a', False, ())),
                                          report))
        self.assertEqual('a\\nfailed: 1/3 nodes\\ndeploy_criteria_not_met',
                         nodes['a']['label'])

    def test_skipped_is_drawn_apart_from_failed(self):
        report = {'groups': {
            'a': {'status': 'failed', 'nodes': ['n1'],
                  'reason': 'deploy_criteria_not_met'},
            'b': {'status': 'failed', 'nodes': ['n2', 'n3'],
                  'reason': 'dependency_failed'}}}
        nodes, _ = parse_dot(graph.to_dot(
            strategy(('a', False, ()), ('b', False, ('a',))), report))
        self.assertEqual('red', nodes['a']['fillcolor'])
        self.assertNotIn('style', nodes['a'])
        self.assertEqual('lightgrey', nodes['b']['fillcolor'])
        self.assertEqual('rounded,filled,dashed', nodes['b']['style'])
        self.assertEqual('b\\nskipped: 0/2 nodes\\ndependency_failed',
                         nodes['b']['label'])

    def test_aborted_and_skipped_are_drawn_apart_from_failed(self):
        report = {'groups': {
            'a': {'status': 'failed', 'nodes': ['n1'],
                  'failed_nodes': ['n1'],
                  'reason': 'deploy_criteria_not_met'},
            'b': {'status': 'failed', 'nodes': ['n2'],
                  'reason': 'dependency_failed'},
            'c': {'status': 'failed', 'nodes': ['n3', 'n4'],
                  'reason': 'aborted'}}}
        nodes, _ = parse_dot(graph.to_dot(
            strategy(('a', False, ()), ('b', False, ('a',)),
                     ('c', False, ())), report, 'cancelled'))
        looks = {name: (n['fillcolor'], n.get('style'))
                 for name, n in nodes.items()}
        self.assertEqual(
            {'a': (graph.STATUS_COLORS['failed'], None),
             'b': (graph.SKIPPED_COLOR, graph.SKIPPED_STYLE),
             'c': (graph.ABORTED_COLOR, graph.ABORTED_STYLE)}, looks)
        self.assertEqual(3, len({c for c, _s in looks.values()}))
        self.assertEqual(('orange', 'rounded,filled,dotted'), looks['c'])
        self.assertEqual('c\\naborted: 0/2 nodes\\naborted',
                         nodes['c']['label'])

    def test_groups_of_a_paused_action(self):
        report = {'groups': {
            'a': {'status': 'success', 'nodes': ['n1'],
                  'succeeded_nodes': ['n1']},
            'b': {'status': 'running', 'nodes': ['n2', 'n3'],
                  'succeeded_nodes': ['n2']},
            'c': {'status': 'pending', 'nodes': ['n4']}}}
        document = strategy(('a', False, ()), ('b', False, ('a',)),
                            ('c', False, ('b',)))
        for state in ('pausing', 'paused'):
            nodes, _ = parse_dot(graph.to_dot(document, report, state))
            self.assertEqual(('green', None), (nodes['a']['fillcolor'],
                                               nodes['a'].get('style')))
            for name, status in (('b', 'running'), ('c', 'pending')):
                self.assertEqual(
                    (graph.PAUSED_COLOR, graph.PAUSED_STYLE),
                    (nodes[name]['fillcolor'], nodes[name]['style']))
                self.assertIn('\\n%s, %s: ' % (status, state),
                              nodes[name]['label'])
        # Running again: the status colours.
        nodes, _ = parse_dot(graph.to_dot(document, report, 'running'))
        self.assertEqual(('yellow', 'grey'), (nodes['b']['fillcolor'],
                                              nodes['c']['fillcolor']))
        self.assertEqual('b\\nrunning: 1/2 nodes', nodes['b']['label'])

    def test_names_are_quoted(self):
        document = strategy(('we "quote"', False, ()),
                            ('back\\slash', False, ('we "quote"',)))
        text = graph.to_dot(document)
        self.assertIn('"we \\"quote\\"" -> "back\\\\slash";', text)

    def test_empty_document(self):
        self.assertEqual('digraph "strategy" {\n  rankdir=LR;\n'
                         '  node [shape=box, style="rounded,filled", '
                         'fontname="Helvetica"];\n}\n', graph.to_dot({}))


class TestToSvg(base.TestCase):

    def _fake_dot(self, script):
        """A ``dot`` on PATH that runs ``script`` (sh)."""
        directory = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(directory, 'dot')
        with open(path, 'w') as f:
            f.write('#!/bin/sh\n' + script)
        os.chmod(path, 0o700)
        self.useFixture(fixtures.EnvironmentVariable(
            'PATH', directory + os.pathsep + os.environ.get('PATH', '')))

    def test_without_graphviz(self):
        e = self.assertRaises(exceptions.CommandError, graph.to_svg,
                              'digraph {}', dot_binary='no-such-dot-xyz')
        self.assertIn('Graphviz', str(e))

    def test_pipes_the_text_through_dot(self):
        # The fake dot checks its option and echoes its input in an <svg>.
        self._fake_dot('[ "$1" = -Tsvg ] || exit 3\n'
                       'echo "<svg>$(cat)</svg>"\n')
        self.assertEqual(b'<svg>digraph {}</svg>\n',
                         graph.to_svg('digraph {}'))

    def test_dot_failure(self):
        self._fake_dot('echo "syntax error in line 1" >&2\nexit 1\n')
        e = self.assertRaises(exceptions.CommandError, graph.to_svg, 'x')
        self.assertIn('syntax error in line 1', str(e))
