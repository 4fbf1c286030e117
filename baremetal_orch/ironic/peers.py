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
"""The deprecated ``[ironic]peer_list`` mode: the nodes of a conductor group
spread over several peers on a tooz hash ring (:class:`PeerRing`), with a
warning at start-up (:func:`warn_deprecated_peer_list`). The way forward is
``[ironic]shard_key``, one conductor service per Ironic shard."""

from oslo_config import cfg
from oslo_log import log
from tooz import hashring

CONF = cfg.CONF
LOG = log.getLogger(__name__)

GROUP = 'ironic'


class PeerRing:
    """The legacy ``[ironic]peer_list`` mode: nodes spread on a hash ring.

    Deprecated: nodes move between peers whenever the ring
    changes. Use ``[ironic]shard_key`` with one service per shard.
    """

    def __init__(self, peers, partitions=2 ** 5):
        self.peers = sorted(set(peers))
        self._ring = hashring.HashRing(self.peers, partitions=partitions)

    def owner(self, node_uuid):
        """The peer that manages ``node_uuid``."""
        (owner,) = self._ring.get_nodes(node_uuid.encode('utf-8'))
        return owner

    def owns(self, host, node_uuid):
        """Whether ``host`` manages ``node_uuid``."""
        return self.owner(node_uuid) == host


def warn_deprecated_peer_list(conf=CONF):
    """Warn when the deprecated hash ring mode is in use.

    :returns: True when ``[ironic]peer_list`` names more than one peer (the
        hash ring is used), False otherwise.
    """
    peers = set(conf[GROUP].peer_list or ())
    if len(peers) <= 1:
        return False
    LOG.warning('[ironic]peer_list is deprecated: nodes are spread over '
                '%(count)d peers (%(peers)s) on a hash ring, and move '
                'between them whenever one goes down or comes back. Set '
                '[ironic]shard_key instead, one conductor service per Ironic '
                'shard, and move nodes with "baremetal-orch-manage node '
                'move".', {'count': len(peers),
                           'peers': ', '.join(sorted(peers))})
    return True


def peer_ring(conf=CONF):
    """The hash ring of ``[ironic]peer_list``, or None when not in use."""
    if not warn_deprecated_peer_list(conf):
        return None
    return PeerRing(conf[GROUP].peer_list)
