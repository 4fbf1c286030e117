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
"""The noop label driver: records the label sets instead of applying them.

It behaves as if every node existed in Kubernetes with no labels at first:
``apply`` returns the diff against the set it applied last to that node.
The record is shared by every instance in the process (the conductor and a
test can each hold their own instance) and is thread-safe.

For tests and demonstrations, the nodes named in ``fail_nodes`` (default:
``[labels]noop_fail_nodes``, read at each call) fail with
LabelUpdateFailed and keep their previous record.
"""

import threading

from oslo_config import cfg
from oslo_log import log

from baremetal_orch.common import exception
from baremetal_orch.deployment import labels as labels_mod
from baremetal_orch.drivers.labels import base

CONF = cfg.CONF
LOG = log.getLogger(__name__)


class NoopLabelDriver(base.LabelDriver):
    """Keeps the applied label set per node in memory."""

    name = 'noop'

    _lock = threading.Lock()
    _applied = {}

    def __init__(self, fail_nodes=None):
        """Create the driver.

        :param fail_nodes: names of the nodes to fail; None means
            ``[labels]noop_fail_nodes``.
        """
        self._fail_nodes = (None if fail_nodes is None
                            else frozenset(fail_nodes))

    def _fails(self, node_name):
        if self._fail_nodes is not None:
            return node_name in self._fail_nodes
        return node_name in (CONF.labels.noop_fail_nodes or ())

    def apply(self, node_name, labels):
        wanted = self.check_request(node_name, labels)
        if self._fails(node_name):
            raise exception.LabelUpdateFailed(
                node=node_name,
                reason='the noop driver was told to fail this node')
        with self._lock:
            existing = self._applied.get(node_name, {})
            label_diff = labels_mod.diff(existing, wanted)
            if not label_diff.is_empty():
                self._applied[node_name] = labels_mod.apply_diff(
                    existing, label_diff)
        LOG.debug('noop label driver: node %(node)s, diff %(diff)s',
                  {'node': node_name, 'diff': label_diff.to_dict()})
        return label_diff

    def applied(self, node_name):
        """The labels last applied to ``node_name`` (a copy), or None."""
        with self._lock:
            labels = self._applied.get(node_name)
            return None if labels is None else dict(labels)

    @classmethod
    def reset(cls):
        """Forget every record (for tests)."""
        with cls._lock:
            cls._applied.clear()
