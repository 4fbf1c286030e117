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
"""Where P2's time over its bound goes.

One all-in-one P2 run (:mod:`tools.benchmarks.makespan`) with the steps of
a group's path timed: the conductor's own functions are wrapped in this
process, no code of the service changes. Then one JSON line:

* ``seconds``, ``bound``, ``ratio``: the run, as ``makespan`` measures it;
* ``start_s``: from the admission to the first group's prepare, and
  ``start_ms``, where it goes (:func:`_start_ms`); ``end_ms``, where
  the time after the last group's end goes (:func:`_end_ms`);
* ``groups``: each group's seconds over its own phases' simulated time,
  from the end of the groups it depends on (or of the flow's loading) to
  its end, and the part of it spent before its prepare started;
* ``steps_ms``: the mean milliseconds a group spent in each timed call,
  under the atom that made it (``run_prepare``, ``check_prepare``,
  ``run_deploy``, ``check_deploy``) or the batches of node work of the
  group's two phases (``batch``), for the first layer and for the later
  ones. The simulated time itself is in no step; a timed call made by
  another (``list_tasks`` by ``_phase_task``) counts in both.

``python -m tools.benchmarks.p2_timeline [--mode serial|parallel]
[--connection URL] [--nodes N] [--quick]``
"""

import argparse
import collections
import functools
import importlib
import json
import os
import sys
import threading
import time

from tools.benchmarks import harness
from tools.benchmarks import makespan

#: The atoms' calls (and the batch's) that set the context of the calls
#: they make: {(module, class or None, function): label of the group}.
CONTEXTS = {
    ('baremetal_orch.flows.runtime', 'SiteRuntime', 'run_prepare'):
        lambda a, k: a[1],
    ('baremetal_orch.flows.runtime', 'SiteRuntime', 'check_prepare'):
        lambda a, k: a[1],
    ('baremetal_orch.flows.runtime', 'SiteRuntime', 'run_deploy'):
        lambda a, k: a[1],
    ('baremetal_orch.flows.runtime', 'SiteRuntime', 'check_deploy'):
        lambda a, k: a[1],
    ('baremetal_orch.conductor.node_work', 'NodeWork', '_run'):
        lambda a, k: a[5].get('group'),
}

#: The calls timed inside those contexts, and the action's own steps.
STEPS = [
    ('baremetal_orch.conductor.admission', None, 'admit'),
    ('baremetal_orch.flows.site_deploy', None, 'begin'),
    ('baremetal_orch.flows.engine', 'engines', 'load_from_factory'),
    ('baremetal_orch.flows.site_deploy', None, 'finish'),
    ('baremetal_orch.flows.engine', None, '_forget'),
    ('baremetal_orch.flows.runtime', 'SiteRuntime', 'checkpoint'),
    ('baremetal_orch.flows.runtime', 'SiteRuntime', '_phase_task'),
    ('baremetal_orch.flows.slots', 'GroupSlots', 'start'),
    ('baremetal_orch.notifications.notify', None, 'group'),
    ('baremetal_orch.objects.event', 'Event', 'record'),
    ('baremetal_orch.objects.event', 'Event', 'record_many'),
    ('baremetal_orch.objects.node', 'Node', 'reserve_many'),
    ('baremetal_orch.objects.deployment', None, 'create_many'),
    ('baremetal_orch.conductor.node_work', 'NodeWork', '_add_group'),
] + [('baremetal_orch.db.api', None, name) for name in (
    'node_refs', 'list_tasks', 'create_task', 'create_tasks',
    'update_task', 'start_batch', 'ended_tasks', 'update_nodes',
    'release_nodes')]

ATOMS = ('run_prepare', 'check_prepare', 'run_deploy', 'check_deploy')


class Recorder:
    """Wraps functions in place; each call is a span ``(name, label,
    start, end, context)``, ``context`` being ``(atom or 'batch', group)``
    of the call that this thread is in."""

    def __init__(self):
        self.spans = []
        self._local = threading.local()
        self._undo = []

    def wrap(self, module, owner, name, label=None):
        target = importlib.import_module(module)
        if owner is not None:
            target = getattr(target, owner)
        original = target.__dict__.get(name) if owner else None
        function = getattr(target, name)
        context = 'batch' if name == '_run' else name

        @functools.wraps(function)
        def timed(*args, **kwargs):
            outer = getattr(self._local, 'context', None)
            group = label(args, kwargs) if label else None
            if label:
                self._local.context = (context, group)
            start = time.monotonic()
            try:
                return function(*args, **kwargs)
            finally:
                self.spans.append((name, group, start, time.monotonic(),
                                   outer if not label else None))
                if label:
                    self._local.context = outer

        static = isinstance(original, (classmethod, staticmethod))
        setattr(target, name, staticmethod(timed) if static else timed)
        self._undo.append((target, name, original if owner else function))

    def install(self):
        for (module, owner, name), label in CONTEXTS.items():
            self.wrap(module, owner, name, label)
        for module, owner, name in STEPS:
            self.wrap(module, owner, name)

    def uninstall(self):
        for target, name, original in reversed(self._undo):
            setattr(target, name, original)
        self._undo = []


def _took_ms(first, last, names):
    """``{name: milliseconds}`` from the first start to the last end of
    each of the action's own steps ``names``."""
    return {name: round((last[(name, None)] - first[(name, None)]) * 1000,
                        1) for name in names}


def _start_ms(first, last, loaded, started):
    """Where ``start_s`` goes, in milliseconds: the admission, the
    action's begin (its task tree and state), the flow's load, and from
    the load to the first group's atom (the engine's compilation and
    taskflow's scheduling of the atoms)."""
    return dict(_took_ms(first, last, ('admit', 'begin',
                                       'load_from_factory')),
                to_first_atom=round((started - loaded) * 1000, 1))


def _end_ms(first, last, ended):
    """Where the time after the last group's end goes, in milliseconds:
    to the action's finish (the engine's end), the finish (its state,
    report and events written), and the removal of its flow's logbook."""
    return dict(_took_ms(first, last, ('finish', '_forget')),
                to_finish=round((first[('finish', None)] - ended) * 1000,
                                1))


def summarise(spans, groups, depends, phase_seconds):
    """The JSON document of a run's spans (the pure part, tested).

    :param phase_seconds: {group: simulated seconds of one of its phases}.
    """
    first, last = {}, {}
    for name, label, start, end, _context in spans:
        key = (name, label)
        first[key] = min(first.get(key, start), start)
        last[key] = max(last.get(key, end), end)
    origin = first[('admit', None)]
    loaded = last[('load_from_factory', None)]
    started = min(first[('run_prepare', g)] for g in groups)
    ended = max(last[('check_deploy', g)] for g in groups)
    out = {'start_s': round(started - origin, 3),
           'start_ms': _start_ms(first, last, loaded, started),
           'end_ms': _end_ms(first, last, ended),
           'groups': {}, 'steps_ms': {}}
    for group in groups:
        ready = max([last[('check_deploy', d)]
                     for d in depends.get(group, ())] or [loaded])
        out['groups'][group] = {
            'over_s': round(last[('check_deploy', group)] - ready -
                            2 * phase_seconds[group], 3),
            'wait_s': round(first[('run_prepare', group)] - ready, 3)}
    layer_of = {g: 'first layer' if not depends.get(g) else 'later layers'
                for g in groups}
    count = collections.Counter(layer_of.values())
    steps = collections.defaultdict(lambda: collections.defaultdict(float))
    for name, _label, start, end, context in spans:
        if context is None or context[1] not in layer_of:
            continue
        layer = layer_of[context[1]]
        steps[layer]['%s/%s' % (context[0], name)] += (end - start) * 1000
    for layer, totals in steps.items():
        out['steps_ms'][layer] = {
            key: round(value / count[layer], 1)
            for key, value in sorted(totals.items(),
                                     key=lambda item: -item[1])}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser()
    makespan.add_run_args(parser, mode='parallel')
    parser.add_argument(
        '--connection', default=os.environ.get(harness.CONNECTION_ENV))
    args = parser.parse_args(argv)
    nodes, unit = makespan.sizes(args.quick)
    nodes = args.nodes or nodes
    recorder = Recorder()
    recorder.install()
    try:
        seconds, limit, _extra = makespan.run(
            nodes, unit, args.mode == 'parallel', args.connection, 'aio')
    finally:
        recorder.uninstall()
    groups, depends, factor = makespan.dag()
    doc = summarise(recorder.spans, groups, depends,
                    {g: unit * factor[g] for g in groups})
    print(json.dumps(harness.figure(
        'P2-timeline-%s' % args.mode, round(seconds, 2), 's',
        baseline=round(limit, 2), goal=makespan.GOAL, nodes=nodes,
        database=harness.database_name(args.connection), **doc)))


if __name__ == '__main__':
    sys.exit(main())
