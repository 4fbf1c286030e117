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
"""The interface of provisioning drivers.

A provisioning driver moves one node through its provision states on real or
simulated hardware. It does I/O and nothing else: it never writes the
baremetal_orch database. The conductor hands it the node (a
:class:`baremetal_orch.objects.node.Node` or any object with the same
attributes: uuid, name, ironic_uuid, driver_info, instance_info,
provision_state, shard, conductor_group) and records what it reports.

Errors are raised as :class:`baremetal_orch.common.exception.DriverError`
subclasses: ``ProvisioningFailed`` (with the backend's reason) and
``ProvisioningTimeout``.

The conductor moves nodes through :meth:`ProvisioningDriver.call_many`
only, a batch of nodes at a time (a single node is a batch of one). By
default each node's call holds a thread of the conductor's pool while it
waits; a driver that can wait for many nodes without a thread each
overrides it (the fake driver does).
"""

import abc
from concurrent import futures
import contextlib

#: The driver methods that move a node, as :meth:`call_many` names them.
CALLS = frozenset(['manage', 'provide', 'deploy', 'undeploy'])


class ProvisioningDriver(metaclass=abc.ABCMeta):
    """Base class of the drivers in ``baremetal_orch.provisioning.drivers``."""

    #: Name of the entry point, as stored in the node's ``driver`` field.
    name = None

    def call_many(self, method, nodes, timeout, instance_infos=None,
                  pool=None):
        """Run ``method`` (one of :data:`CALLS`) on each of ``nodes``,
        side by side; return once every call ended.

        :param instance_infos: ``{node uuid: instance info}`` for
            ``deploy``.
        :param pool: an executor for the calls that wait in a thread of
            their own; None runs them in this thread, one after the other.
        :returns: ``{node uuid: exception}`` of the calls that raised.
        """
        return self.outcomes(self.submit_many(method, nodes, timeout,
                                              instance_infos, pool))

    def submit_many(self, method, nodes, timeout, instance_infos=None,
                    pool=None):
        """Start ``method`` of each node in ``pool`` (done now, in this
        thread, when ``pool`` is None): ``[(node, future)]`` for
        :meth:`outcomes`."""
        if method not in CALLS:
            raise ValueError('%r is not one of %s' % (method, sorted(CALLS)))
        infos = instance_infos or {}
        calls = []
        for node in nodes:
            if pool is not None:
                calls.append((node, pool.submit(self._call, method, node,
                                                timeout, infos)))
                continue
            future = futures.Future()
            try:
                future.set_result(self._call(method, node, timeout, infos))
            except Exception as e:
                future.set_exception(e)
            calls.append((node, future))
        return calls

    @staticmethod
    def outcomes(calls):
        """``{node uuid: exception}`` of the ``[(node, future)]`` that
        raised, once all of them ended."""
        failed = {}
        for node, future in calls:
            try:
                future.result()
            except Exception as e:
                failed[node.uuid] = e
        return failed

    def _call(self, method, node, timeout, instance_infos):
        if method == 'deploy':
            return self.deploy(node, instance_infos.get(node.uuid) or {},
                               timeout)
        return getattr(self, method)(node, timeout)

    @abc.abstractmethod
    def manage(self, node, timeout):
        """Bring the node to ``manageable`` (PUT states/provision manage).

        The conductor's prepare phase calls it for a node in ``enroll``,
        then :meth:`provide`.

        :param timeout: seconds the call may take.
        :raises: ProvisioningFailed, ProvisioningTimeout, NodeNotInShard
        """

    @abc.abstractmethod
    def provide(self, node, timeout):
        """Bring a manageable (or clean failed) node to ``available``.

        Idempotent: a node already ``available`` returns at once.

        :raises: ProvisioningFailed, ProvisioningTimeout, NodeNotInShard
        """

    @abc.abstractmethod
    def deploy(self, node, instance_info, timeout):
        """Bring the node to ``active`` with the given instance info.

        Idempotent: a node already ``active`` returns at once.

        :param instance_info: dict handed to the node (includes the signal
            URL and token of its deployment record).
        :raises: ProvisioningFailed, ProvisioningTimeout, NodeNotInShard
        """

    @abc.abstractmethod
    def undeploy(self, node, timeout):
        """Tear the node down back to ``available``."""

    def abort(self, node):
        """Stop the node's current step if the backend holds the node in a
        wait state it can abort (Ironic's ``wait call-back``, ``clean
        wait``, ``inspect wait``, ``rescue wait``); leave it alone
        otherwise. Does not wait: the deploy or provide waiting on the
        node then fails with the backend's reason.

        :returns: True when an abort was sent; False when the node was in
            no such state (nothing sent). A driver without wait states
            returns False.
        :raises: DriverError when the backend could not be asked.
        """
        return False

    @abc.abstractmethod
    def set_console(self, node, enabled):
        """Enable or disable the node's serial console."""

    @abc.abstractmethod
    def set_maintenance(self, node, enabled, reason=None):
        """Set or clear maintenance mode on the backend."""

    def validate(self, node):
        """Check the node's driver_info; raise InvalidParameterValue."""

    def outages(self, key, nodes, tell):
        """A context manager: while it is open, ``tell(kind, details)``
        hears when the backend of ``nodes`` stops answering (``kind``
        ``started``) and answers again (``ended``), once per outage for
        ``key`` (an action), however many nodes and registrations it
        has. A backend without outages to tell says nothing.
        """
        return contextlib.nullcontext()
