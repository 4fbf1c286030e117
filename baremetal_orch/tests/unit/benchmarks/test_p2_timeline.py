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
"""P2's timeline: the spans of a run summed per group and per step; the
wrappers time the service's calls and leave them as they were."""

import sys

from baremetal_orch.tests import base

from tools.benchmarks import p2_timeline

GROUPS = ['a', 'b', 'c']
DEPENDS = {'c': ['a', 'b']}
PHASE = {'a': 1.0, 'b': 2.0, 'c': 1.0}


def spans():
    """a and b from 0.5 (the flow loaded at 0.4), c after b."""
    return [
        ('admit', None, 0.0, 0.2, None),
        ('begin', None, 0.2, 0.25, None),
        ('load_from_factory', None, 0.3, 0.4, None),
        ('run_prepare', 'a', 0.5, 1.6, None),
        ('check_deploy', 'a', 2.7, 2.8, None),
        ('run_prepare', 'b', 0.6, 2.7, None),
        ('check_deploy', 'b', 4.8, 5.0, None),
        ('run_prepare', 'c', 5.1, 6.2, None),
        ('check_deploy', 'c', 7.2, 7.5, None),
        ('finish', None, 7.6, 7.9, None),
        ('_forget', None, 7.9, 8.0, None),
        # Calls under the atoms and batches.
        ('checkpoint', None, 0.50, 0.52, ('run_prepare', 'a')),
        ('checkpoint', None, 0.60, 0.64, ('run_prepare', 'b')),
        ('checkpoint', None, 5.10, 5.13, ('run_prepare', 'c')),
        ('reserve_many', None, 0.55, 0.60, ('batch', 'a')),
        ('reserve_many', None, 5.15, 5.18, ('batch', 'c')),
        # A call of no group (a periodic task) counts nowhere.
        ('update_task', None, 1.0, 1.5, None),
    ]


class TestSummarise(base.TestCase):

    def test_groups_and_start(self):
        doc = p2_timeline.summarise(spans(), GROUPS, DEPENDS, PHASE)
        self.assertEqual(0.5, doc['start_s'])
        self.assertEqual({'admit': 200.0, 'begin': 50.0,
                          'load_from_factory': 100.0,
                          'to_first_atom': 100.0}, doc['start_ms'])
        self.assertEqual({'to_finish': 100.0, 'finish': 300.0,
                          '_forget': 100.0}, doc['end_ms'])
        for group, over, wait in (
                # from the flow's load (0.4) to 2.8, 2 s simulated
                ('a', 0.4, 0.1),
                # from 0.4 to 5.0, 4 s simulated
                ('b', 0.6, 0.2),
                # from b's end (5.0), the later of its dependencies
                ('c', 0.5, 0.1)):
            self.assertAlmostEqual(over, doc['groups'][group]['over_s'],
                                   places=3, msg=group)
            self.assertAlmostEqual(wait, doc['groups'][group]['wait_s'],
                                   places=3, msg=group)

    def test_steps_per_layer(self):
        steps = p2_timeline.summarise(spans(), GROUPS, DEPENDS,
                                      PHASE)['steps_ms']
        # a and b are the first layer: means over its two groups.
        self.assertAlmostEqual(30.0,
                               steps['first layer']['run_prepare/checkpoint'])
        self.assertAlmostEqual(25.0,
                               steps['first layer']['batch/reserve_many'])
        self.assertAlmostEqual(30.0,
                               steps['later layers']['run_prepare/checkpoint'])
        self.assertAlmostEqual(30.0,
                               steps['later layers']['batch/reserve_many'])
        self.assertNotIn('update_task', str(steps))


class TestRecorder(base.TestCase):

    def test_wraps_and_restores(self):
        from baremetal_orch.db import api as dbapi
        from baremetal_orch.flows import runtime
        from baremetal_orch.objects import node as node_obj
        before = (dbapi.list_tasks, runtime.SiteRuntime.__dict__['checkpoint'],
                  node_obj.Node.__dict__['reserve_many'])
        recorder = p2_timeline.Recorder()
        recorder.install()
        try:
            self.assertIsNot(before[0], dbapi.list_tasks)
            self.assertIsNot(before[1],
                             runtime.SiteRuntime.__dict__['checkpoint'])
            # A class method stays callable on the class.
            self.assertIsInstance(node_obj.Node.__dict__['reserve_many'],
                                  staticmethod)
        finally:
            recorder.uninstall()
        self.assertEqual(before, (
            dbapi.list_tasks, runtime.SiteRuntime.__dict__['checkpoint'],
            node_obj.Node.__dict__['reserve_many']))

    def test_calls_take_the_context_of_their_atom(self):
        recorder = p2_timeline.Recorder()

        class Runtime:
            def run_prepare(self, group):
                return self.checkpoint()

            def checkpoint(self):
                return 'saved'

        module = type(sys)('fake_module')
        module.Runtime = Runtime
        sys.modules['fake_module'] = module
        self.addCleanup(sys.modules.pop, 'fake_module')
        recorder.wrap('fake_module', 'Runtime', 'run_prepare',
                      lambda a, k: a[1])
        recorder.wrap('fake_module', 'Runtime', 'checkpoint')
        self.assertEqual('saved', Runtime().run_prepare('g1'))
        recorder.uninstall()
        self.assertEqual(
            [('checkpoint', None, ('run_prepare', 'g1')),
             ('run_prepare', 'g1', None)],
            [(n, label, context)
             for n, label, _s, _e, context in recorder.spans])
