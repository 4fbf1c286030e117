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

"""Load the example site and strategy of etc/baremetal-orch/examples/.

Also a fake executor that plays the ``fake`` driver's
``driver_info.fake_fail_phase`` and records every node it is sent.
"""

import copy
import os
import threading

import yaml

import baremetal_orch
from baremetal_orch.deployment import selectors
from baremetal_orch.deployment import strategy

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(baremetal_orch.__file__))), 'etc', 'baremetal-orch',
    'examples')


def load_yaml(name):
    with open(os.path.join(EXAMPLES, name)) as f:
        return yaml.safe_load(f)


def load_site(overlay=None):
    """The example nodes, with a ``failures/`` overlay merged in."""
    nodes = load_yaml('site.yaml')['nodes']
    if overlay:
        changes = load_yaml(os.path.join('failures', overlay))['nodes']
        by_name = {n['name']: n for n in nodes}
        for name, change in changes.items():
            node = by_name[name]
            for key, value in change.items():
                if isinstance(value, dict):
                    node[key] = dict(node.get(key) or {}, **value)
                else:
                    node[key] = value
    return nodes


def load_strategy():
    return strategy.parse(load_yaml('deployment-strategy.yaml'))


def resolve(strat, nodes):
    """``{group: [names]}``: the selectors resolved over ``nodes``."""
    return {g.name: selectors.select(g.selectors, nodes)
            for g in strat.groups}


class FakeExecutor:
    """Prepare/deploy callables failing nodes as their driver_info says."""

    def __init__(self, nodes, fail=None):
        self.fail = {n['name']: (n.get('driver_info') or {}).get(
            'fake_fail_phase') for n in nodes}
        self.fail.update(copy.deepcopy(fail or {}))
        self.sent = []
        self._lock = threading.Lock()

    def _run(self, phase, group, names):
        with self._lock:
            self.sent.extend((phase, group, n) for n in names)
        return {n: self.fail.get(n) != phase for n in names}

    def prepare(self, group, names):
        return self._run('prepare', group, names)

    def deploy(self, group, names):
        return self._run('deploy', group, names)

    def sent_nodes(self, phase):
        return [n for p, _g, n in self.sent if p == phase]

    def sent_by(self, phase, group):
        return [n for p, g, n in self.sent if p == phase and g == group]
