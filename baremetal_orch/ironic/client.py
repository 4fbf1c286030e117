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
"""A shard-aware client of the Ironic API.

:class:`IronicClient` talks to Ironic through openstacksdk's baremetal proxy
with a keystoneauth session loaded from the ``[ironic]`` options. The rules
of the Ironic shards specification it enforces:

* with ``[ironic]shard_key`` set, every node listing carries ``shard=``,
  and with ``[ironic]conductor_group`` set, ``conductor_group=``: all
  listings go through :meth:`IronicClient._node_pages`, the one method that
  adds the scope filters, so a full listing cannot happen by accident;
* listings page with ``marker`` and the original query, not Ironic's
  ``next`` link (which drops ``shard=``);
* looking a node up by uuid is never restricted to the shard
  (:meth:`~IronicClient.get_node`, :meth:`~IronicClient.node_exists_anywhere`);
* before acting on a node, :meth:`~IronicClient.check_in_scope` confirms it
  is still in this service's shard and conductor group.

Nodes are returned as the plain dictionaries of Ironic's JSON (``uuid``,
``provision_state``, ``last_error``, ``shard``, ...).

Retries: openstacksdk retries every 409 and 503 five times with a growing
delay (about 15 s) before it gives up. Here openstacksdk does not retry at
all; :meth:`IronicClient._request` decides:

* a 409 saying the node is locked is sent again ``[ironic]api_max_retries``
  times every ``[ironic]api_retry_interval`` seconds; any other conflict is
  final and raised at once;
* no answer (refused, reset, timed out) or a 5xx other than Ironic's
  concurrency limit is an outage, not Ironic's word: the request is sent
  again with a growing delay for up to ``[ironic]outage_tolerance``
  seconds (:mod:`.outage`), except a provision request, which is never
  sent blind a second time: its caller reads the node to learn whether
  Ironic took it (:class:`IronicRequestFailed` ``answered`` is False);
* Ironic's concurrency limit (a 503 "The concurrent action limit ... has
  been reached") is raised at once with ``busy`` set: the caller queues
  the node (:mod:`.throttle`).

The deprecated ``[ironic]peer_list`` mode is in :mod:`.peers`.
"""

import threading
import time

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import noauth
from openstack import connection
from openstack import exceptions as sdk_exc
from oslo_config import cfg
from oslo_log import log
from oslo_utils import timeutils

from baremetal_orch.common import exception
from baremetal_orch.conf import ironic as ironic_conf
from baremetal_orch.ironic import outage as outage_mod
from baremetal_orch.ironic import poller as poller_mod
from baremetal_orch.ironic import retries

CONF = cfg.CONF
LOG = log.getLogger(__name__)

GROUP = 'ironic'
#: The first microversion with shards (``shard`` field, ``?shard=``,
#: ``GET /v1/shards``).
SHARD_VERSION = '1.82'
#: The microversion used without a shard key: it has ``conductor_group``.
BASE_VERSION = '1.46'
#: The microversion of user deploy steps in a provision request.
DEPLOY_STEPS_VERSION = '1.69'
#: The first microversion whose ``abort`` verb applies to a node in
#: ``wait call-back`` (clean and inspect waits accept it from 1.13 and
#: 1.41, below :data:`BASE_VERSION`).
DEPLOY_ABORT_VERSION = '1.110'
#: Nodes per page of a listing (Ironic's default ``[api]max_limit``).
PAGE_SIZE = 1000
#: Filters only the configuration may set.
SCOPE_FILTERS = frozenset(['shard', 'conductor_group', 'sharded'])
#: Stable states a provision state change ends in, per target.
FAIL_STATES = {
    'manage': ('enroll', 'inspect failed', 'error'),
    'provide': ('clean failed', 'error'),
    'active': ('deploy failed', 'error'),
    'deleted': ('clean failed', 'error'),
}


IronicRequestFailed = retries.IronicRequestFailed
IronicUnreachable = retries.IronicUnreachable


def _version_tuple(version):
    return tuple(int(part) for part in version.split('.'))


class IronicClient:
    """The Ironic API, as one conductor service of baremetal_orch sees it.

    :param conf: the configuration holding the ``[ironic]`` group.
    :param page_size: nodes asked for per listing page.
    """

    def __init__(self, conf=CONF, page_size=PAGE_SIZE, sleep=time.sleep,
                 clock=time.monotonic):
        self.conf = conf
        self.page_size = page_size
        self._conn = None
        self._lock = threading.Lock()
        self._sleep = sleep
        self._clock = clock
        #: Whether Ironic answers (one log line per outage).
        self.outage = outage_mod.outage_for(self.endpoint, clock)
        #: Serves the node states of every wait_for_state of this client.
        self.poller = poller_mod.StatePoller(
            self.list_nodes, self.get_node,
            spacing=self._opts.poll_interval / 2)

    # --- configuration -----------------------------------------------------

    @property
    def _opts(self):
        return self.conf[GROUP]

    @property
    def shard_key(self):
        """The shard this service owns, or None (every shard)."""
        return self._opts.shard_key or None

    @property
    def conductor_group(self):
        """The conductor group this service owns, or None (every group)."""
        group = self._opts.conductor_group
        return group.lower() if group else None

    @property
    def api_version(self):
        """The microversion requested by default."""
        return SHARD_VERSION if self.shard_key else BASE_VERSION

    @property
    def endpoint(self):
        """What names this Ironic: its endpoint, or the catalog's."""
        opts = self._opts
        return opts.endpoint_override or 'catalog:%s/%s' % (
            opts.region_name or '', opts.service_type)

    def scope_filters(self):
        """The query parameters restricting a listing to this service."""
        filters = {}
        if self.shard_key:
            filters['shard'] = self.shard_key
        if self.conductor_group:
            filters['conductor_group'] = self.conductor_group
        return filters

    # --- connection ---------------------------------------------------------

    @property
    def connection(self):
        """The openstacksdk connection, built on first use."""
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            return self._conn

    def _connect(self):
        opts = self._opts
        if opts.auth_type:
            auth = ks_loading.load_auth_from_conf_options(self.conf, GROUP)
        elif opts.endpoint_override:
            # No credentials but an endpoint: a noauth Ironic.
            auth = noauth.NoAuth()
        else:
            raise exception.DriverError(
                node='-', reason='[ironic] needs auth_type (or auth_type = '
                                 'none with endpoint_override)')
        session = ks_loading.load_session_from_conf_options(
            self.conf, GROUP, auth=auth)
        kwargs = {
            'baremetal_api_version': self.api_version,
            # Retries are decided by _request, not by openstacksdk.
            'baremetal_status_code_retries': 0,
        }
        # keystoneauth's retries of a request whose connection failed
        # (refused, reset by an overloaded Ironic): [ironic]connect_retries
        # and connect_retry_delay, off unless set.
        if opts.connect_retries is not None:
            kwargs['baremetal_connect_retries'] = opts.connect_retries
        if opts.connect_retry_delay is not None:
            kwargs['baremetal_connect_retry_delay'] = opts.connect_retry_delay
        if opts.endpoint_override:
            kwargs['baremetal_endpoint_override'] = opts.endpoint_override
        if opts.valid_interfaces:
            kwargs['baremetal_interface'] = opts.valid_interfaces[0]
        return connection.Connection(session=session,
                                     region_name=opts.region_name,
                                     app_name='baremetal-orch', **kwargs)

    @property
    def _proxy(self):
        return self.connection.baremetal

    def _request(self, method, path, retry=True, resend=True, settled=None,
                 **kwargs):
        """Send one request to Ironic; return the response.

        :param retry: whether a locked node is worth retrying, and an
            outage worth riding out (see the module documentation).
        :param resend: whether the request may be sent again after an
            answer was lost; False for requests that must not be sent
            blind twice (the caller reads the node first).
        :raises: IronicRequestFailed; IronicUnreachable once
            ``[ironic]outage_tolerance`` is spent.
        """
        return retries.call(
            lambda: self._send(method, path, **kwargs), self._opts,
            self.outage, sleep=self._sleep, clock=self._clock, retry=retry,
            resend=resend, settled=settled)

    #: The error of a request Ironic did not answer for ``seconds``.
    unreachable = staticmethod(retries.unreachable)

    def _send(self, method, path, **kwargs):
        kwargs.setdefault('microversion', self.api_version)
        # Never without a timeout: an answer that never comes would block
        # every wait sharing this request's poll.
        kwargs.setdefault('timeout', self._opts.timeout or (
            ironic_conf.REQUEST_TIMEOUT))
        request = '%s %s' % (method, path)
        try:
            response = self._proxy.request(path, method, **kwargs)
            sdk_exc.raise_from_response(response)
        except sdk_exc.HttpException as exc:
            raise IronicRequestFailed(
                request=request, status_code=exc.status_code,
                reason='HTTP %s: %s' % (exc.status_code, exc.details),
                details=exc.details)
        except (ks_exc.ClientException, sdk_exc.SDKException) as exc:
            raise IronicRequestFailed(request=request, reason=str(exc))
        return response

    # --- listings (always scoped) -------------------------------------------

    def _node_pages(self, path, query):
        """Yield the pages of a node listing, restricted to this service.

        The single place where Ironic's node collection is read: it adds
        ``shard`` and ``conductor_group`` from the configuration to every
        request, and follows pages with ``marker`` plus the original query.
        """
        overridden = SCOPE_FILTERS.intersection(query)
        if overridden:
            raise ValueError('%s come from [ironic] options, not from '
                             'callers' % ', '.join(sorted(overridden)))
        query = dict(query, limit=self.page_size, **self.scope_filters())
        marker = None
        while True:
            params = dict(query)
            if marker is not None:
                params['marker'] = marker
            body = self._request('GET', path, params=params).json()
            nodes = body.get('nodes', [])
            if nodes:
                yield nodes
            # Ironic announces a further page with "next"; its URL loses
            # shard=, so only the fact that there is one is used.
            if not nodes or not body.get('next'):
                return
            marker = nodes[-1]['uuid']

    def list_nodes(self, fields=None, **filters):
        """The Ironic nodes of this service's shard and conductor group.

        :param fields: Ironic field names to fetch (``uuid`` is always
            added); None fetches the details of every node.
        :param filters: further Ironic query filters (``provision_state``,
            ``maintenance``, ...); never ``shard`` or ``conductor_group``.
        :returns: a list of node dictionaries.
        """
        if fields:
            path = '/nodes'
            wanted = list(fields) + ([] if 'uuid' in fields else ['uuid'])
            filters = dict(filters, fields=','.join(wanted))
        else:
            path = '/nodes/detail'
        nodes = []
        for page in self._node_pages(path, filters):
            nodes.extend(page)
        return nodes

    def list_shards(self):
        """Ironic's shards: a list of ``{"name", "count"}``."""
        response = self._request('GET', '/shards', microversion=SHARD_VERSION)
        return response.json().get('shards', [])

    # --- single nodes (never scoped) ----------------------------------------

    def get_node(self, uuid, fields=None):
        """One Ironic node by uuid (or name), whatever its shard."""
        params = {'fields': ','.join(fields)} if fields else None
        return self._request('GET', '/nodes/%s' % uuid, params=params).json()

    def node_exists_anywhere(self, uuid):
        """Whether Ironic still has the node, in any shard or group.

        Used to confirm a deletion: only a 404 on the node itself counts,
        never the node's absence from a (scoped) listing.
        """
        try:
            self.get_node(uuid, fields=['uuid'])
        except IronicRequestFailed as exc:
            if exc.status_code == 404:
                return False
            raise
        return True

    def in_scope(self, ironic_node):
        """Whether an Ironic node dict is in this service's shard/group."""
        shard = self.shard_key
        if shard and ironic_node.get('shard') != shard:
            return False
        group = self.conductor_group
        if group and (ironic_node.get('conductor_group') or '').lower() != (
                group):
            return False
        return True

    def check_in_scope(self, node):
        """Confirm an Ironic node still belongs to this service.

        :param node: an Ironic node uuid, or a node dict just fetched.
        :returns: the Ironic node dict.
        :raises: NodeNotInShard when its shard or conductor group changed.
        """
        ironic_node = self.get_node(node) if isinstance(node, str) else node
        if not self.in_scope(ironic_node):
            LOG.warning('Ironic node %(node)s is in shard %(shard)s, '
                        'conductor group %(group)s: not ours (shard '
                        '%(ours)s, group %(our_group)s)',
                        {'node': ironic_node.get('uuid'),
                         'shard': ironic_node.get('shard'),
                         'group': ironic_node.get('conductor_group'),
                         'ours': self.shard_key,
                         'our_group': self.conductor_group})
            raise exception.NodeNotInShard(
                node=ironic_node.get('uuid'), shard=self.shard_key,
                group=self.conductor_group)
        return ironic_node

    def fresh_node(self, uuid):
        """The node now, confirmed in this service's scope, before acting
        on it.

        While many nodes are waited on, from the next shared listing of
        the shard (:attr:`poller`; in scope by construction, with only
        :data:`~baremetal_orch.ironic.poller.FIELDS`); otherwise, or when
        the listing does not show it, a GET of the node and
        :meth:`check_in_scope`.

        :raises: NodeNotInShard; IronicRequestFailed.
        """
        self.poller.register(uuid)
        try:
            node, _since = self.poller.node(uuid, get=self.check_in_scope)
        finally:
            self.poller.unregister(uuid)
        return node

    # --- actions ------------------------------------------------------------

    def set_provision_state(self, uuid, target, microversion=None,
                            settled=None, **kwargs):
        """Ask Ironic to move a node (``manage``, ``provide``, ``active``,
        ``abort``...).

        :param microversion: the least microversion the request needs
            (the client's own when it is newer).
        :param settled: what to ask after a lost answer instead of
            sending the request blind again (:func:`.retries.call`).
        :returns: True once Ironic took it, or what ``settled`` answered.
        :param kwargs: further members of the request body
            (``configdrive``, ``deploy_steps``, ``clean_steps``).
        """
        version = self.api_version
        if 'deploy_steps' in kwargs:
            microversion = max(microversion or version, DEPLOY_STEPS_VERSION,
                               key=_version_tuple)
        if microversion and _version_tuple(version) < (
                _version_tuple(microversion)):
            version = microversion
        body = dict(kwargs, target=target)
        # Never sent blind twice: after a lost answer, ``settled`` reads
        # the node to learn whether Ironic took it.
        response = self._request(
            'PUT', '/nodes/%s/states/provision' % uuid, json=body,
            microversion=version, resend=False, settled=settled)
        return response if isinstance(response, bool) else True

    def patch_node(self, uuid, patch, retry=True):
        """Apply an RFC 6902 JSON patch to a node; return the node."""
        return self._request('PATCH', '/nodes/%s' % uuid, json=patch,
                             retry=retry).json()

    def set_maintenance(self, uuid, enabled, reason=None):
        """Put a node in maintenance (with a reason), or take it out."""
        path = '/nodes/%s/maintenance' % uuid
        if enabled:
            body = {'reason': reason} if reason else {}
            self._request('PUT', path, json=body)
        else:
            self._request('DELETE', path)

    def set_console(self, uuid, enabled):
        """Enable or disable a node's serial console."""
        self._request('PUT', '/nodes/%s/states/console' % uuid,
                      json={'enabled': bool(enabled)})

    def wait_for_state(self, uuid, states, timeout, fail_states=(),
                       label=None):
        """Poll a node until its provision state is one of ``states``.

        Looks every ``[ironic]poll_interval`` seconds until a deadline;
        never openstacksdk's ``wait=True`` (2 s polls, no failure reason).
        The looks of every wait of this client are served by
        :attr:`poller`: one listing of the shard per poll when many nodes
        are waited on, a GET of the node otherwise.

        :param states: provision states that end the wait.
        :param timeout: seconds allowed.
        :param fail_states: provision states that mean failure.
        :param label: how to name the node in errors (default: uuid).
        :returns: the node dict in its final state.
        :raises: ProvisioningFailed with Ironic's ``last_error``;
            ProvisioningTimeout.

        Ironic may show a failure state before it has written
        ``last_error`` (a deploy callback timeout enters ``deploy failed``,
        then its error handler runs with the node still reserved): a node
        in a failure state is polled until it has a ``last_error`` or no
        ``reservation`` any more, within the same deadline.
        """
        label = label or uuid
        watch = timeutils.StopWatch(duration=timeout).start()
        since = None
        self.poller.register(uuid)
        try:
            while True:
                node, since = self.poller.node(uuid, since)
                state = node.get('provision_state')
                if state in states:
                    return node
                if state in fail_states and (
                        node.get('last_error') or not node.get('reservation')
                        or watch.expired()):
                    raise exception.ProvisioningFailed(
                        node=label,
                        reason=node.get('last_error') or 'Ironic moved the '
                        'node to %s' % state)
                # A failure state while the node is still reserved: Ironic
                # enters it before its error handler has written
                # last_error.
                if watch.expired():
                    raise exception.ProvisioningTimeout(
                        node=label, state='/'.join(states), timeout=timeout)
                interval = min(self._opts.poll_interval,
                               max(0.0, watch.leftover()))
                time.sleep(interval)
        finally:
            self.poller.unregister(uuid)
