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
"""The ``ironic`` provisioning driver: nodes deployed by a real Ironic.

The node's ``ironic_uuid`` names its Ironic node. Every action first checks
that it is still in this service's Ironic shard and conductor group
(:class:`~baremetal_orch.common.exception.NodeNotInShard` otherwise), then
starts from the state Ironic reports, so each action is idempotent. The
check and the waits read Ironic through the client's shared poller
(:mod:`baremetal_orch.ironic.poller`): while many nodes are waited on, one
scoped listing per poll shows them all; otherwise a GET of the node:

=============  ============================================================
action         Ironic calls, by the node's current provision state
=============  ============================================================
``manage``     manageable: none; verifying: none, waits; otherwise
               ``manage``. Waits for ``manageable``.
``provide``    available: none; cleaning, clean wait: none, waits; clean
               failed, inspect failed: ``manage``, then ``provide``;
               otherwise ``provide``. Waits for ``available``.
``deploy``     active: none; available or deploy failed: JSON patch of
               ``instance_info`` when the node's own differs from Ironic's,
               then ``active`` with a config drive. Waits for ``active``.
``undeploy``   available: none; otherwise ``deleted``. Waits for
               ``available``.
``abort``      wait call-back, clean wait, inspect wait, rescue wait:
               ``abort`` (microversion 1.110 for wait call-back); any
               other state: none. Does not wait.
=============  ============================================================

``abort`` stops what Ironic holds in a wait state (a deploy, cleaning,
inspection or rescue waiting for its agent): the node ends ``deploy
failed`` (``clean failed``, ...) with Ironic's ``last_error`` "By request,
the deploy operation was aborted ...", and a deploy or prepare waiting on
it here fails with that reason. A node in any other state is left alone:
its step finishes. Ironic's ``deploy hold``, ``clean hold`` and the
servicing states accept ``abort`` too, but there it tears the node down or
ends a servicing this service did not start, so they are not aborted. An
abort Ironic refuses because the node left its wait state meanwhile (400,
409) or because it is older than microversion 1.110 (406) returns False.

What the node reads at deploy time (its instance info and the inputs of
its deployment signal, :func:`baremetal_orch.objects.deployment.instance_info`)
travels in the config drive of the ``active`` request
(:mod:`baremetal_orch.ironic.configdrive`, under ``meta`` of its
``meta_data.json``), as a real node reads it; Ironic's ``instance_info``
gets only the node's own (``image_source`` and the like, which Ironic's
deploy reads), in a JSON patch sent only when Ironic's differs.

A node already in a working state (verifying, cleaning, deploying, ...) is
waited for, not sent again.

Provision requests that count against Ironic's concurrency limits
(deploy; provide and undeploy, which clean) queue in this process's
throttle for the Ironic endpoint (:mod:`baremetal_orch.ironic.throttle`):
a 503 for Ironic's limit never fails a node, it waits for a slot, and the
phase's timeout starts when Ironic accepts the request. An Ironic that
does not answer for a while (:mod:`baremetal_orch.ironic.outage`) fails a
node only once ``[ironic]outage_tolerance`` is spent; a provision request
whose answer was lost is reconciled by reading the node, never sent blind
a second time. Waits look every ``[ironic]poll_interval``
seconds until the phase's timeout (``ProvisioningTimeout``); a node that
ends in a failure state raises ``ProvisioningFailed`` with Ironic's
``last_error``.
"""

import threading

import jsonpatch
from oslo_config import cfg
from oslo_log import log
from oslo_utils import timeutils
from oslo_utils import uuidutils

from baremetal_orch.common import exception
from baremetal_orch.drivers.provisioning import base
from baremetal_orch.ironic import client as ironic_client
from baremetal_orch.ironic import configdrive
from baremetal_orch.ironic import outage
from baremetal_orch.ironic import throttle

CONF = cfg.CONF
LOG = log.getLogger(__name__)

VERIFYING = 'verifying'
MANAGEABLE = 'manageable'
AVAILABLE = 'available'
ACTIVE = 'active'
DEPLOYFAIL = 'deploy failed'
#: Ironic's wait states: Ironic waits for the node's agent (Ironic calls
#: ``wait call-back`` "deploy wait").
DEPLOYWAIT = 'wait call-back'
CLEANWAIT = 'clean wait'
INSPECTWAIT = 'inspect wait'
RESCUEWAIT = 'rescue wait'
CLEANING_STATES = ('cleaning', CLEANWAIT)
DEPLOYING_STATES = ('deploying', DEPLOYWAIT)
DELETING_STATES = ('deleting',)
#: Failure states Ironic leaves by ``manage`` only: ``provide`` of a node
#: in one manages it first.
MANAGE_FIRST = ('clean failed', 'inspect failed')

#: The provision verb that stops a wait.
ABORT = 'abort'
#: The wait states :meth:`IronicDriver.abort` aborts, with the state
#: Ironic's abort ends in and the microversion it needs (None: the
#: client's own).
ABORTABLE_STATES = {
    DEPLOYWAIT: (DEPLOYFAIL, ironic_client.DEPLOY_ABORT_VERSION),
    CLEANWAIT: ('clean failed', None),
    INSPECTWAIT: ('inspect failed', None),
    RESCUEWAIT: ('rescue failed', None),
}
#: Ironic's answers to an abort that no longer applies: the node left its
#: wait state meanwhile (400, 409), or Ironic predates the microversion
#: (406).
ABORT_REFUSED = (400, 406, 409)


class IronicDriver(base.ProvisioningDriver):
    """Provisioning through Ironic, within this service's shard.

    :param conf: the configuration with the ``[ironic]`` group.
    :param client: an :class:`~baremetal_orch.ironic.client.IronicClient`
        (built from ``conf`` on first use when not given).
    """

    name = 'ironic'

    def __init__(self, conf=None, client=None):
        self._conf = conf if conf is not None else CONF
        self._client = client
        self._lock = threading.Lock()

    @property
    def client(self):
        """The one Ironic client of this driver."""
        with self._lock:
            if self._client is None:
                self._client = ironic_client.IronicClient(self._conf)
            return self._client

    def outages(self, key, nodes, tell):
        """Tell ``key`` of the outages of this driver's Ironic endpoint
        (:meth:`baremetal_orch.ironic.outage.Outage.watch`)."""
        return self.client.outage.watch(key, len(nodes), tell)

    # --- helpers ------------------------------------------------------------

    def validate(self, node):
        uuid = node.ironic_uuid
        if uuid is not None and not uuidutils.is_uuid_like(uuid):
            raise exception.InvalidParameterValue(
                reason='ironic_uuid must be the UUID of an Ironic node, not '
                       '%r' % (uuid,))

    def _ironic_node(self, node):
        """Check the node is ours in Ironic; return its Ironic dict."""
        if not node.ironic_uuid:
            raise exception.InvalidParameterValue(
                reason='node %s has no ironic_uuid: the ironic driver does '
                       'not know which Ironic node to act on' % node.ident)
        try:
            return self.client.fresh_node(node.ironic_uuid)
        except ironic_client.IronicRequestFailed as exc:
            raise exception.ProvisioningFailed(node=node.ident,
                                               reason=exc.message)

    def _move(self, node, target, wanted, timeout, before, **kwargs):
        """Ask Ironic for ``target`` and wait until the node is ``wanted``.

        The request waits for a slot of the throttle of its kind of work
        (:mod:`baremetal_orch.ironic.throttle`) and holds it until the
        wait ends; a refusal for Ironic's concurrency limit puts it back
        at the head of the queue. ``timeout`` starts when Ironic accepts
        the request.

        :param before: the node's provision state the request leaves.
        :returns: ``(Ironic node, seconds queued)``.
        """
        LOG.info('Node %(node)s: Ironic node %(uuid)s -> %(target)s',
                 {'node': node.ident, 'uuid': node.ironic_uuid,
                  'target': target})
        kind = throttle.KINDS.get(target)
        queue = None
        if kind is not None:
            queue = throttle.throttle_for(
                self.client.endpoint, kind,
                self._conf.ironic.max_concurrent_provisioning)
        queued = 0.0
        slot = None
        try:
            again = False
            while True:
                if queue is not None:
                    slot = queue.acquire(again=again)
                    queued += slot.queued
                if self._provision(node, target, before, **kwargs):
                    break
                if slot is None:
                    # No throttle for this kind: Ironic's limit is not
                    # expected here, wait a little.
                    self.client._sleep(outage.FIRST_DELAY)
                else:
                    slot.refuse()
                again = True
            if slot is not None:
                slot.accept()
            return self._wait(node, wanted, timeout, target), queued
        finally:
            if slot is not None:
                slot.release()

    def _provision(self, node, target, before, **kwargs):
        """Send the provision request once Ironic takes it.

        A lost answer is never followed by the same request blind: the
        node is read, and a node that left ``before`` (or has a target)
        shows Ironic took it.

        :returns: True once Ironic accepted it; False when Ironic refused
            it for its concurrency limit.
        :raises: ProvisioningFailed with Ironic's answer, or once
            ``[ironic]outage_tolerance`` is spent.
        """
        def settled():
            return True if self._took(node, before) else None
        try:
            return self.client.set_provision_state(
                node.ironic_uuid, target, settled=settled, **kwargs)
        except ironic_client.IronicRequestFailed as exc:
            if exc.busy:
                return False
            if exc.outage:
                raise exception.ProvisioningFailed(node=node.ident,
                                                   reason=exc.message)
            raise exception.ProvisioningFailed(
                node=node.ident, reason='Ironic refused %s: %s' % (
                    target, exc.details))

    def _took(self, node, before):
        """Whether Ironic took a provision request whose answer was lost
        (read from the node; the read rides out an outage itself)."""
        try:
            inode = self.client.get_node(
                node.ironic_uuid,
                fields=['provision_state', 'target_provision_state'])
        except ironic_client.IronicRequestFailed as exc:
            raise exception.ProvisioningFailed(node=node.ident,
                                               reason=exc.message)
        return (inode.get('provision_state') != before or
                inode.get('target_provision_state') is not None)

    def _wait(self, node, wanted, timeout, target):
        try:
            return self.client.wait_for_state(
                node.ironic_uuid, (wanted,), timeout,
                fail_states=ironic_client.FAIL_STATES[target],
                label=node.ident)
        except ironic_client.IronicRequestFailed as exc:
            raise exception.ProvisioningFailed(node=node.ident,
                                               reason=exc.message)

    @staticmethod
    def _left(watch):
        return max(0.0, watch.leftover())

    @staticmethod
    def _wrong_state(node, action, state):
        return exception.ProvisioningFailed(
            node=node.ident, reason='cannot %s a node Ironic shows in state '
                                    '%s' % (action, state))

    # --- provision states ---------------------------------------------------

    def manage(self, node, timeout):
        inode = self._ironic_node(node)
        state = inode['provision_state']
        if state == MANAGEABLE:
            return
        if state == VERIFYING:
            self._wait(node, MANAGEABLE, timeout, 'manage')
            return
        self._move(node, 'manage', MANAGEABLE, timeout, state)

    def provide(self, node, timeout):
        watch = timeutils.StopWatch(duration=timeout).start()
        inode = self._ironic_node(node)
        state = inode['provision_state']
        if state == AVAILABLE:
            return
        if state in CLEANING_STATES:
            self._wait(node, AVAILABLE, timeout, 'provide')
            return
        if state in MANAGE_FIRST:
            # Ironic provides a manageable node only.
            self._move(node, 'manage', MANAGEABLE, self._left(watch), state)
            state = MANAGEABLE
        # The time queued for Ironic's cleaning limit is not counted.
        self._move(node, 'provide', AVAILABLE, self._left(watch), state)

    def deploy(self, node, instance_info, timeout):
        inode = self._ironic_node(node)
        state = inode['provision_state']
        if state == ACTIVE:
            LOG.info('Node %s is already active in Ironic: not deployed '
                     'again', node.ident)
            return
        if state in DEPLOYING_STATES:
            self._wait(node, ACTIVE, timeout, 'active')
            return
        if state not in (AVAILABLE, DEPLOYFAIL):
            raise self._wrong_state(node, 'deploy', state)
        self._set_instance_info(node, inode, node.instance_info or {})
        drive = configdrive.build(configdrive.meta_data(
            node, instance_info or node.instance_info or {}))
        self._move(node, 'active', ACTIVE, timeout, state,
                   configdrive=drive)

    def _set_instance_info(self, node, inode, instance_info):
        current = dict(inode.get('instance_info') or {})
        # Ironic keeps the config drive of the last deploy there.
        current.pop('configdrive', None)
        wanted = dict(current, **instance_info)
        patch = jsonpatch.make_patch({'instance_info': current},
                                     {'instance_info': wanted}).patch
        if not patch:
            return
        try:
            self.client.patch_node(node.ironic_uuid, patch)
        except ironic_client.IronicRequestFailed as exc:
            raise exception.ProvisioningFailed(
                node=node.ident, reason='Ironic refused the instance info: '
                                        '%s' % exc.details)

    def undeploy(self, node, timeout):
        inode = self._ironic_node(node)
        state = inode['provision_state']
        if state == AVAILABLE:
            return
        if state in DELETING_STATES + CLEANING_STATES:
            self._wait(node, AVAILABLE, timeout, 'deleted')
            return
        self._move(node, 'deleted', AVAILABLE, timeout, state)

    # --- abort --------------------------------------------------------------

    def abort(self, node):
        """Send Ironic's ``abort`` when Ironic holds the node in a wait
        state (:data:`ABORTABLE_STATES`).

        :returns: True when the abort was sent and Ironic took it; False
            when the node is in no such state, or left it before Ironic
            took the abort (nothing changed).
        :raises: NodeNotInShard; DriverError when Ironic refused it for
            another reason, or once ``[ironic]outage_tolerance`` is spent.
        """
        inode = self._ironic_node(node)
        state = inode['provision_state']
        if state not in ABORTABLE_STATES:
            LOG.info('Node %(node)s: Ironic node %(uuid)s is %(state)s, '
                     'not in a wait state: not aborted',
                     {'node': node.ident, 'uuid': node.ironic_uuid,
                      'state': state})
            return False
        return self._send_abort(node, state)

    def _send_abort(self, node, state):
        """The abort request of a node Ironic showed in ``state``.

        Like a provision request, never sent blind a second time: after
        a lost answer the node is read; a node in the state the abort
        ends in shows Ironic took it; one still waiting is sent it again
        (Ironic takes a second abort of a waiting node as the first).
        """
        client = self.client
        aborted, version = ABORTABLE_STATES[state]
        LOG.info('Node %(node)s: Ironic node %(uuid)s in %(state)s -> '
                 'abort', {'node': node.ident, 'uuid': node.ironic_uuid,
                           'state': state})

        def settled():
            now_state = self._state(node)
            return None if now_state == state else now_state == aborted
        try:
            return client.set_provision_state(
                node.ironic_uuid, ABORT, microversion=version,
                settled=settled)
        except ironic_client.IronicRequestFailed as exc:
            if exc.status_code in ABORT_REFUSED:
                LOG.info('Node %(node)s: Ironic did not abort it: '
                         '%(error)s', {'node': node.ident,
                                       'error': exc.details})
                return False
            if exc.outage:
                raise exception.DriverError(node=node.ident,
                                            reason=exc.message)
            raise exception.DriverError(
                node=node.ident, reason='Ironic refused abort: %s'
                % exc.details)

    def _state(self, node):
        """The node's provision state in Ironic (the read rides out an
        outage itself)."""
        try:
            return self.client.get_node(
                node.ironic_uuid, fields=['provision_state']).get(
                    'provision_state')
        except ironic_client.IronicRequestFailed as exc:
            raise exception.DriverError(node=node.ident, reason=exc.message)

    # --- console and maintenance --------------------------------------------

    def set_console(self, node, enabled):
        self._ironic_node(node)
        try:
            self.client.set_console(node.ironic_uuid, enabled)
        except ironic_client.IronicRequestFailed as exc:
            raise exception.DriverError(node=node.ident, reason=exc.details)

    def set_maintenance(self, node, enabled, reason=None):
        self._ironic_node(node)
        try:
            self.client.set_maintenance(node.ironic_uuid, enabled,
                                        reason=reason)
        except ironic_client.IronicRequestFailed as exc:
            raise exception.DriverError(node=node.ident, reason=exc.details)
