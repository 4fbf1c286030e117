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
"""The interface of label drivers (Kubernetes node labels).

A label driver makes the labels of one Kubernetes node equal to the full
label set baremetal_orch computed for it
(:func:`baremetal_orch.deployment.labels.full_label_set`). It does I/O and
nothing else: it never writes the baremetal_orch database; the caller records
the diff it returns.

Contract of :meth:`LabelDriver.apply`, for every driver:

* the diff is :func:`baremetal_orch.deployment.labels.diff` of the live
  labels against the wanted set: new and changed labels are applied first,
  then the labels not wanted are removed; labels of the kubernetes.io and
  k8s.io domains are never removed;
* an empty diff makes no change request at all;
* errors are :class:`~baremetal_orch.common.exception.InvalidLabel` (the
  wanted set is not valid; nothing was sent),
  :class:`~baremetal_orch.common.exception.LabelNodeNotFound` (no such
  Kubernetes node) and
  :class:`~baremetal_orch.common.exception.LabelUpdateFailed` (anything
  else: unreachable API, timeout, server error). All derive from
  BaremetalOrchException and carry a message naming the node. A failure may
  leave the node partially updated (new labels set, old ones not yet
  removed); there is no rollback, applying again completes it.
"""

import abc

from baremetal_orch.common import exception
from baremetal_orch.deployment import labels as labels_mod


class LabelDriver(metaclass=abc.ABCMeta):
    """Base class of the drivers in ``baremetal_orch.labels.drivers``."""

    #: Name of the entry point.
    name = None

    @abc.abstractmethod
    def apply(self, node_name, labels):
        """Apply the wanted labels to a Kubernetes node.

        Make the labels of the Kubernetes node ``node_name`` equal to
        ``labels`` (a dict), keeping labels of the kubernetes.io and k8s.io
        domains.

        :returns: the diff applied, a
            :class:`baremetal_orch.deployment.labels.LabelDiff` (empty when
            nothing changed).
        :raises: InvalidLabel, LabelNodeNotFound, LabelUpdateFailed
        """

    def close(self):
        """Release connections and other resources (nothing by default)."""

    @staticmethod
    def check_request(node_name, labels):
        """Validate the arguments of :meth:`apply` before any I/O.

        :returns: a copy of ``labels``.
        :raises: LabelUpdateFailed for a missing node name, InvalidLabel for
            labels that are not valid Kubernetes labels.
        """
        if not isinstance(node_name, str) or not node_name:
            raise exception.LabelUpdateFailed(
                node=node_name, reason='no Kubernetes node name given')
        labels_mod.validate_labels(labels, allow_reserved=True)
        return dict(labels)
