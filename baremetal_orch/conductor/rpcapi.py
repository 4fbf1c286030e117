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
"""Client side of the conductor RPC API.

``[DEFAULT]rpc_transport = oslo``: oslo.messaging calls to the conductor
that owns a node, or to any live conductor. ``none``: direct calls to the
conductor of this process (the all-in-one service).
"""

from kombu import exceptions as kombu_exc
from oslo_config import cfg
from oslo_log import log
import oslo_messaging as messaging
from tooz import hashring

from baremetal_orch.common import exception
from baremetal_orch.common import rpc
from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import base as objects_base

CONF = cfg.CONF
LOG = log.getLogger(__name__)

_LOCAL_MANAGER = None

#: Reconnections a call tries when the broker is unreachable. oslo.messaging
#: would try forever, and an API request needing a conductor hung until the
#: broker came back (the broker drill, doc/source/contributor/drills.rst);
#: after these (a few seconds) it is a 503.
#: Casts keep the default: conductor work waits for the broker.
CALL_RETRY = 2

#: What a call raises when the broker cannot be reached: oslo.messaging's
#: own errors, or kombu's when a new connection of the pool fails.
_UNREACHABLE = (messaging.exceptions.MessagingException,
                kombu_exc.OperationalError)


def _refused(e, method):
    """The 503 of a message above ``[DEFAULT]rpc_version_cap``: what a
    method of a later RPC API version gets while conductors of the release
    before still run (oslo.messaging sends nothing)."""
    reason = ('%s needs conductor RPC API %s, above '
              '[DEFAULT]rpc_version_cap %s: not every conductor runs the '
              'release that has it yet')
    return exception.ServiceUnavailable(
        reason=reason % (method, e.version, e.version_cap))


def set_local_manager(manager):
    """Register the in-process conductor (rpc_transport = none)."""
    global _LOCAL_MANAGER
    _LOCAL_MANAGER = manager


def get_local_manager():
    return _LOCAL_MANAGER


def live_hosts():
    return [s.host for s in dbapi.live_services(
        CONF.conductor.heartbeat_timeout)]


def pick_host(key, hosts=None, shard=None):
    """The conductor for ``key`` (a node or action uuid).

    A node in a shard goes to the live service owning that shard; anything
    else is spread over the live services without a shard key on a tooz
    hash ring (all live services when none is unsharded).
    """
    services = [s for s in dbapi.live_services(
        CONF.conductor.heartbeat_timeout)]
    if hosts is not None:
        services = [s for s in services if s.host in hosts]
    if shard:
        owners = sorted(s.host for s in services if s.shard_key == shard)
        if owners:
            return owners[0]
    candidates = sorted(s.host for s in services if not s.shard_key) or \
        sorted(s.host for s in services)
    if not candidates:
        raise exception.NoConductorAvailable(what=key)
    ring = hashring.HashRing(candidates)
    return sorted(ring.get_nodes(key.encode()))[0]


class ConductorAPI:
    """The API's (and other conductors') handle on the conductors."""

    # Version 1.0: Initial version
    RPC_API_VERSION = '1.0'

    def __init__(self, own=None):
        """:param own: the conductor manager of this process, if any: what
            is cast to its host is handed to it here, not sent through the
            broker and back."""
        self._own = own
        self._client = None
        if CONF.rpc_transport != 'none':
            self._client = rpc.get_client(
                objects_base.BaremetalOrchObjectSerializer(),
                version_cap=CONF.rpc_version_cap)

    def _local(self):
        manager = get_local_manager()
        if manager is None:
            raise exception.NoConductorAvailable(what='this request')
        return manager

    @staticmethod
    def _in_process(manager, method, context, kwargs):
        """A call handed to the conductor of this process: the errors
        its endpoints declare expected (which the RPC server unwraps) are
        raised as themselves."""
        try:
            return getattr(manager, method)(context, **kwargs)
        except messaging.ExpectedException as e:
            raise e.exc_info[1].with_traceback(e.exc_info[2])

    def _call(self, context, host, method, version=None, **kwargs):
        if self._client is None:
            return self._in_process(self._local(), method, context, kwargs)
        target = {'server': host, 'retry': CALL_RETRY}
        if version:
            target['version'] = version
        try:
            return self._client.prepare(**target).call(context, method,
                                                       **kwargs)
        except messaging.RPCVersionCapError as e:
            raise _refused(e, method)
        except _UNREACHABLE as e:
            if isinstance(e, messaging.RemoteError):
                raise
            LOG.warning('RPC %s to %s failed: %s', method, host, e)
            raise exception.ServiceUnavailable(
                reason='The conductor service is not reachable: %s'
                       % type(e).__name__)

    def runs_here(self, host):
        """Whether work cast to ``host`` runs in this process."""
        if self._client is None:
            return get_local_manager() is not None
        return self._own is not None and host == self._own.host

    def _cast(self, context, host, method, version=None, **kwargs):
        if self._client is None:
            return self._in_process(self._local(), method, context, kwargs)
        if self.runs_here(host):
            return self._in_process(self._own, method, context, kwargs)
        target = {'server': host}
        if version:
            target['version'] = version
        try:
            self._client.prepare(**target).cast(context, method, **kwargs)
        except messaging.RPCVersionCapError as e:
            raise _refused(e, method)
        except messaging.exceptions.MessagingException as e:
            LOG.warning('RPC cast %s to %s failed: %s', method, host, e)
            raise exception.ServiceUnavailable(
                reason='The conductor service is not reachable: %s'
                       % type(e).__name__)

    def live_hosts(self):
        if self._client is None:
            manager = get_local_manager()
            return [manager.host] if manager else []
        return live_hosts()

    def host_for_node(self, node, alive=None):
        """The conductor to act on ``node``: its owner while it lives.

        :param alive: the live hosts, when the caller already has them.
        """
        alive = live_hosts() if alive is None else alive
        if node.conductor and node.conductor in alive:
            return node.conductor
        return pick_host(node.uuid, shard=node.shard)

    # Calls -----------------------------------------------------------------

    def do_provisioning_action(self, context, node, target):
        return self._call(context, self.host_for_node(node),
                          'do_provisioning_action', node_uuid=node.uuid,
                          target=target)

    def set_maintenance(self, context, node, enabled, reason=None):
        return self._call(context, self.host_for_node(node),
                          'set_maintenance', node_uuid=node.uuid,
                          enabled=enabled, reason=reason)

    def set_console(self, context, node, enabled):
        return self._call(context, self.host_for_node(node), 'set_console',
                          node_uuid=node.uuid, enabled=enabled)

    def admit_action(self, context, uuid, name, parameters, dry_run=False):
        """Have a live conductor check, create and start an action (or
        plan it); returns the Action, or ``{"plan": ...}``."""
        return self._call(context, pick_host(uuid), 'admit_action',
                          uuid=uuid, name=name,
                          parameters=parameters, dry_run=dry_run)

    def run_nodes_phase(self, context, host, action_uuid, items, phase,
                        params=None):
        """Cast a batch of nodes' phase to ``host``: ``items`` is
        ``[(task uuid, node uuid)]``."""
        return self._cast(context, host, 'run_nodes_phase',
                          action_uuid=action_uuid,
                          items=[list(i) for i in items], phase=phase,
                          params=params)

    def control_action(self, context, uuid, verb, reason=None):
        """Pause, resume or abort an action, on its conductor while it
        lives (its flow sees the control at once), else on any: the one
        that takes the action over reads it. Returns the Action."""
        host = None
        if self._client is not None:
            conductor = dbapi.get_action(uuid).conductor
            host = (conductor if conductor in live_hosts()
                    else pick_host(uuid))
        return self._call(context, host, 'control_action', uuid=uuid,
                          verb=verb, reason=reason)

    def abort_nodes(self, context, host, node_uuids):
        """Cast to ``host``: abort what Ironic holds in a wait state for
        ``node_uuids``."""
        return self._cast(context, host, 'abort_nodes',
                          node_uuids=list(node_uuids))
