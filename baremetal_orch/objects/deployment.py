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
"""The Deployment object: one node deployment and its signals.

Each deploy of a node gets a record with a signal URL and a secret token.
The node receives Heat's own software-deployment inputs, as strings, so
that stock heat-config agents signal unchanged (:func:`instance_info`):
``deploy_signal_id`` is a pre-signed URL that carries the token in its
query, as Heat's CFN-signed and Swift temp URLs do. Only a hash of the
token is stored; the record's ``signal_url`` is the URL without it.
:func:`process` applies a node's signal.
"""

import hashlib
import hmac
import secrets
import time
import urllib.parse

from oslo_config import cfg
from oslo_db import api as oslo_db_api
from oslo_log import log
from oslo_utils import netutils
from oslo_utils import uuidutils

from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import signals
from baremetal_orch.objects import base
from baremetal_orch.objects import fields as f

CONF = cfg.CONF
LOG = log.getLogger(__name__)

IN_PROGRESS = signals.IN_PROGRESS
COMPLETE = signals.COMPLETE
FAILED = signals.FAILED
STATUSES = signals.STATUSES


@base.BaremetalOrchObjectRegistry.register
class Deployment(base.BaremetalOrchObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'id': f.IntegerField(),
        'uuid': f.UUIDField(),
        'node_uuid': f.UUIDField(),
        'action_uuid': f.UUIDField(nullable=True),
        'conductor': f.StringField(nullable=True),
        'status': f.EnumField(valid_values=STATUSES),
        'status_reason': f.StringField(nullable=True),
        'deploy_stdout': f.StringField(nullable=True),
        'deploy_stderr': f.StringField(nullable=True),
        'deploy_status_code': f.IntegerField(nullable=True),
        'signal_url': f.StringField(nullable=True),
        'token_hash': f.StringField(nullable=True),
        'final': f.BooleanField(),
        'deleted': f.BooleanField(),
    }
    fields.update(base.BaremetalOrchObject.fields)

    @classmethod
    def get(cls, context, uuid):
        return cls._from_db_object(context, cls(),
                                   dbapi.get_deployment(uuid))

    @classmethod
    def list(cls, context, filters=None, limit=None, marker=None,
             sort_key=None, sort_dir=None):
        return cls._from_db_object_list(context, dbapi.list_deployments(
            filters, limit, marker, sort_key, sort_dir))

    def create(self, context=None):
        self._from_db_object(context or self._context, self,
                             dbapi.create_deployment(self.obj_get_changes()))

    def save(self, context=None):
        values = self.obj_get_changes()
        if values:
            self._from_db_object(context or self._context, self,
                                 dbapi.update_deployment(self.uuid, values))


#: The query parameter of a pre-signed signal URL that holds the token.
TOKEN_PARAM = 'token'  # noqa: S105 (a parameter name)
#: How Heat names the transport of a pre-signed URL signalled with a plain
#: HTTP request (its agents treat every such transport alike).
SIGNAL_TRANSPORT = 'CFN_SIGNAL'
SIGNAL_VERB = 'POST'

#: The event recorded when no final signal came in time.
TIMEOUT_EVENT = 'deployment.signal.timeout'


def hash_token(token):
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(record, token):
    """Whether ``token`` is the record's, compared in constant time."""
    if not token or not record.token_hash:
        return False
    return hmac.compare_digest(record.token_hash.encode(),
                               hash_token(token).encode())


def signed_url(record, token):
    """The record's signal URL with ``token`` in its query."""
    return '%s?%s' % (record.signal_url,
                      urllib.parse.urlencode({TOKEN_PARAM: token}))


_WILDCARDS = ('0.0.0.0', '::', '')  # nosec B104: compared, not bound
_warned = []


def public_endpoint():
    """Where nodes reach the API.

    ``[api]public_endpoint``, else ``http://[api]host_ip:[api]port`` (which
    a node can only use when host_ip is a real address: set
    public_endpoint otherwise).
    """
    if CONF.api.public_endpoint:
        return CONF.api.public_endpoint.rstrip('/')
    host = CONF.api.host_ip
    if host in _WILDCARDS and not _warned:
        _warned.append(True)
        LOG.warning('[api]public_endpoint is not set and [api]host_ip is '
                    '%r: nodes cannot reach the signal URLs handed to '
                    'them. Set [api]public_endpoint.', host)
    return 'http://%s:%s' % (netutils.escape_ipv6(host), CONF.api.port)


def current(node_uuid, action_uuid=None):
    """The node's live (not superseded) deployment record, or None.

    With ``action_uuid``, only a record of that action: what a resumed
    deploy phase waits for instead of deploying the node again.
    """
    rows = Deployment.list(
        None, {'node_uuid': node_uuid, 'action_uuid': action_uuid}, limit=1,
        sort_key='id', sort_dir='desc')
    return rows[0] if rows else None


def create(node, action_uuid, host):
    """A new record for ``node``; returns (record, token)."""
    return create_many([node], action_uuid, host)[0]


# On MariaDB the record's INSERT after the UPDATE that supersedes the
# node's previous records (a gap lock on the node index when there is none)
# deadlocks with another node's: 16 nodes deploying at once hit it (the
# crash drill, doc/source/contributor/drills.rst). The transaction is rolled
# back whole, so it is simply tried again.
@oslo_db_api.wrap_db_retry(max_retries=5, retry_on_deadlock=True,
                           retry_interval=0.05, inc_retry_interval=True)
def create_many(nodes, action_uuid, host):
    """New records for many nodes in one transaction, superseding their
    previous ones; returns ``[(record, token)]`` in the order of
    ``nodes``."""
    made, rows = [], []
    endpoint = public_endpoint()
    for node in nodes:
        token = secrets.token_urlsafe(32)
        uuid = uuidutils.generate_uuid()
        values = {'uuid': uuid, 'node_uuid': node.uuid,
                  'action_uuid': action_uuid, 'conductor': host,
                  'status': IN_PROGRESS,
                  'signal_url': '%s/v1/signals/%s' % (endpoint, uuid),
                  'token_hash': hash_token(token)}
        rows.append(values)
        made.append((Deployment.from_trusted(final=False, deleted=False,
                                             **values), token))
    dbapi.create_deployments(rows)
    return made


def instance_info(node, record, token):
    """What the node reads at deploy time.

    The node's own instance info plus the inputs Heat gives a software
    deployment signalled over HTTP, under Heat's names and, as Heat hands
    every input, as strings (heat-config hooks pass inputs to scripts as
    environment variables and fail on anything else):

    * ``deploy_signal_id``: the pre-signed signal URL (token in the query);
    * ``deploy_signal_verb``: ``POST`` (``PUT`` is accepted as well);
    * ``deploy_signal_transport``: ``CFN_SIGNAL``;
    * ``deploy_status_aware``: ``"true"``: IN_PROGRESS signals are
      understood;
    * ``deployment_uuid``: the record's UUID.
    """
    info = dict(node.instance_info or {})
    info.update({'deploy_signal_id': signed_url(record, token),
                 'deploy_signal_verb': SIGNAL_VERB,
                 'deploy_signal_transport': SIGNAL_TRANSPORT,
                 'deploy_status_aware': 'true',
                 'deployment_uuid': record.uuid})
    return info


def wait_for_final(record_uuid, timeout, poll=0.1, context=None):
    """Wait for the final signal; returns the record.

    :raises: ProvisioningTimeout when none comes within ``timeout`` (the
        record is then FAILED, with the event ``deployment.signal.timeout``).
    """
    deadline = time.monotonic() + timeout
    while True:
        record = Deployment.get(context, record_uuid)
        if record.final:
            return record
        if time.monotonic() >= deadline:
            reason = 'timeout: no final signal within %s s' % timeout
            try:
                # Conditional: a final signal that arrives in between wins.
                record = Deployment._from_db_object(
                    context, Deployment(), dbapi.update_deployment(
                        record_uuid, {'status': FAILED, 'final': True,
                                      'status_reason': reason},
                        only_if_not_final=True))
            except exception.SignalAfterFinal:
                return Deployment.get(context, record_uuid)
            dbapi.create_event(
                TIMEOUT_EVENT, resource_uuid=record.node_uuid,
                action_uuid=record.action_uuid, message=reason,
                details={'deployment_uuid': record.uuid, 'status': FAILED,
                         'reason': reason})
            raise exception.ProvisioningTimeout(
                node=record.node_uuid, state='a final signal',
                timeout=timeout)
        time.sleep(poll)


def process(context, record, body, token=None):
    """Apply a signal: update the record, record the event
    (:func:`baremetal_orch.deployment.signals.decide` is the rule). The
    caller sends the notification of the updated record.

    :param token: the signal token the node sent, masked wherever the
        body repeats it.

    :returns: the updated record.
    :raises: SignalAfterFinal (also when another final signal won a race,
        or the record was superseded by a newer deployment of its node);
        InvalidParameterValue.
    """
    if record.deleted and not record.final:
        raise exception.SignalAfterFinal(
            message='Deployment %s was superseded by a newer deployment of '
                    'node %s and takes no more signals.'
                    % (record.uuid, record.node_uuid))
    decision = signals.decide(record, signals.scrub(body, token))
    updated = Deployment._from_db_object(
        context, Deployment(), dbapi.update_deployment(
            record.uuid, decision.values, only_if_not_final=True))
    dbapi.create_event(decision.event_type, resource_uuid=record.node_uuid,
                       action_uuid=record.action_uuid,
                       message=decision.message, details=decision.details)
    return updated
