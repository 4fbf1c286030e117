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
"""oslo.messaging RPC plumbing: the transport, servers and clients.

With ``[DEFAULT]rpc_transport = none`` no transport is created for RPC: the
API calls the in-process conductor directly (the all-in-one service).
Notifications have their own transport
(:mod:`baremetal_orch.notifications.notifier`).
"""

from oslo_config import cfg
import oslo_messaging as messaging

from baremetal_orch.common import context as orch_context

CONF = cfg.CONF

TOPIC = 'baremetal_orch.conductor'

#: Exceptions raised by a conductor come back to the caller as themselves
#: (with their HTTP status), not as a generic RemoteError.
ALLOWED_EXMODS = ['baremetal_orch.common.exception']

_TRANSPORT = None

messaging.set_transport_defaults('baremetal_orch')


class RequestContextSerializer(messaging.Serializer):
    """Serializes the request context around a serializer of entities
    (the versioned objects' serializer, given by the caller)."""

    def __init__(self, base):
        self._base = base

    def serialize_entity(self, ctxt, entity):
        return self._base.serialize_entity(ctxt, entity)

    def deserialize_entity(self, ctxt, entity):
        return self._base.deserialize_entity(ctxt, entity)

    def serialize_context(self, ctxt):
        return ctxt.to_dict()

    def deserialize_context(self, ctxt):
        return orch_context.from_dict(ctxt)


def get_transport():
    global _TRANSPORT
    if _TRANSPORT is None:
        _TRANSPORT = messaging.get_rpc_transport(
            CONF, allowed_remote_exmods=ALLOWED_EXMODS)
    return _TRANSPORT


def get_client(serializer, topic=TOPIC, version='1.0', timeout=None,
               version_cap=None):
    """An RPC client; ``serializer`` serializes the entities;
    ``version_cap`` the highest version it may send (``can_send_version``).
    """
    target = messaging.Target(topic=topic, version=version)
    return messaging.get_rpc_client(
        get_transport(), target, version_cap=version_cap,
        serializer=RequestContextSerializer(serializer), timeout=timeout)


def get_server(host, endpoints, serializer, topic=TOPIC):
    """An RPC server on the threading executor; ``serializer`` serializes
    the entities."""
    target = messaging.Target(topic=topic, server=host)
    return messaging.get_rpc_server(
        get_transport(), target, endpoints, executor='threading',
        serializer=RequestContextSerializer(serializer))


def cleanup():
    global _TRANSPORT
    if _TRANSPORT is not None:
        _TRANSPORT.cleanup()
    _TRANSPORT = None
