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
"""A small REST client of the baremetal-orch API on keystoneauth1.

Every request carries ``OpenStack-API-Version: baremetal-orchestration 1.N``;
with ``latest`` the client first reads the API's root document, which lists
the minimum and maximum microversion of each major version, and asks for
the maximum. An error answer (an API-SIG document ``{"errors": [{"status",
"code", "title", "detail", "request_id"}]}``) becomes an :class:`ApiError`, a
:class:`osc_lib.exceptions.CommandError` whose message is the detail the
service gave, so the CLI prints it as it is.
"""

import json
import logging
import urllib.parse

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc
from osc_lib import exceptions
from osc_lib import utils as osc_utils

LOG = logging.getLogger(__name__)

SERVICE_TYPE = 'baremetal-orchestration'
#: The service name in the ``OpenStack-API-Version`` header.
HEADER_SERVICE = SERVICE_TYPE
VERSION_HEADER = 'OpenStack-API-Version'
#: The newest microversion this client knows: 1.LAST_KNOWN_MINOR.
LAST_KNOWN_MINOR = 0
#: The API version option that asks for the newest the server offers.
LATEST = 'latest'
DEFAULT_TIMEOUT = 60


class ApiError(exceptions.CommandError):
    """The service answered with an error.

    :ivar status: the HTTP status.
    :ivar code: the stable dotted code (``baremetal_orch.node_not_found``).
    :ivar detail: what went wrong, in words.
    :ivar request_id: the request id, for the service logs.
    """

    def __init__(self, status, code=None, title=None, detail=None,
                 request_id=None):
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.request_id = request_id
        super().__init__(self._message())

    def _message(self):
        text = self.detail or self.title or 'HTTP %s' % self.status
        extra = ['HTTP %s' % self.status]
        if self.code:
            extra.append(self.code)
        if self.request_id:
            extra.append('request %s' % self.request_id)
        return '%s (%s)' % (text, ', '.join(extra))

    def __str__(self):
        return self._message()

    @classmethod
    def from_response(cls, resp):
        """The error of an HTTP answer, from its API-SIG document if any."""
        request_id = resp.headers.get('X-OpenStack-Request-Id')
        try:
            body = resp.json()
        except ValueError:
            body = None
        if isinstance(body, dict) and body.get('errors'):
            err = body['errors'][0]
            return cls(err.get('status') or resp.status_code,
                       code=err.get('code'), title=err.get('title'),
                       detail=err.get('detail'),
                       request_id=err.get('request_id') or request_id)
        text = (resp.text or '').strip()
        return cls(resp.status_code, title=resp.reason,
                   detail=text[:500] or None, request_id=request_id)


def is_latest(api_version):
    """Whether the API version option asks for the server's newest."""
    return api_version in (LATEST, '1.' + LATEST)


def version_header(api_version):
    """The microversion to ask for, from the CLI's API version option.

    None for ``latest``: the server's maximum, known once negotiated.
    """
    if is_latest(api_version):
        return None
    if api_version in (None, '', '1'):
        return '1.%d' % LAST_KNOWN_MINOR
    return api_version


def max_version(root):
    """``(min, max)`` microversion of v1 in the API's root document.

    The root lists ``versions`` (``id``, ``min_version``, ``version``, the
    maximum) and the ``default_version``. None when it names no v1 maximum.
    """
    if not isinstance(root, dict):
        return None
    candidates = [v for v in root.get('versions') or ()
                  if isinstance(v, dict)]
    candidates.append(root.get('default_version'))
    for entry in candidates:
        if (isinstance(entry, dict) and entry.get('id') == 'v1'
                and entry.get('version')):
            return entry.get('min_version'), entry['version']
    return None


class Client:
    """The REST client: one keystoneauth1 adapter, JSON in and out."""

    def __init__(self, session, api_version='1', endpoint_override=None,
                 region_name=None, interface=None, timeout=DEFAULT_TIMEOUT):
        self._api_version = version_header(api_version)
        self.adapter = adapter.Adapter(
            session, service_type=SERVICE_TYPE, region_name=region_name,
            interface=interface, endpoint_override=endpoint_override)
        self.timeout = timeout
        self._base = None

    @property
    def api_version(self):
        """The microversion sent (``1.N``); negotiated first for latest."""
        if self._api_version is None:
            self._api_version = self.negotiate_version()
        return self._api_version

    @api_version.setter
    def api_version(self, value):
        self._api_version = value

    def negotiate_version(self):
        """The newest microversion the server offers, from its root.

        :raises: CommandError when the root cannot be read or lists no
            v1 maximum.
        """
        url = self.base_url + '/'
        try:
            resp = self.adapter.get(url, headers={'Accept':
                                                  'application/json'},
                                    raise_exc=False, timeout=self.timeout)
        except ks_exc.ConnectionError as e:
            raise exceptions.CommandError(
                'Unable to reach the baremetal-orch API at %s: %s'
                % (self.base_url, e))
        if resp.status_code >= 400:
            raise exceptions.CommandError(
                'Cannot negotiate the latest API version: %s'
                % ApiError.from_response(resp))
        try:
            found = max_version(resp.json())
        except ValueError:
            found = None
        if found is None:
            raise exceptions.CommandError(
                'Cannot negotiate the latest API version: the root document '
                'at %s lists no v1 version range; give '
                '--os-baremetal-orch-api-version 1.N' % url)
        minimum, maximum = found
        LOG.debug('baremetal-orch API versions %s to %s: using %s',
                  minimum, maximum, maximum)
        return maximum

    @property
    def base_url(self):
        """The API root (without ``/v1``), resolved on first use."""
        if self._base is None:
            try:
                endpoint = self.adapter.get_endpoint()
            except ks_exc.ClientException as e:
                raise exceptions.CommandError(
                    'Cannot find the %s endpoint: %s' % (SERVICE_TYPE, e))
            if not endpoint:
                raise exceptions.CommandError(
                    'No endpoint for the service type %s: register it in '
                    'Keystone, or use --os-auth-type none --os-endpoint '
                    'http://HOST:PORT' % SERVICE_TYPE)
            endpoint = endpoint.rstrip('/')
            if endpoint.endswith('/v1'):
                endpoint = endpoint[:-len('/v1')]
            self._base = endpoint
        return self._base

    def url(self, path):
        return '%s/v1/%s' % (self.base_url, path.lstrip('/'))

    def request(self, method, path, body=None, params=None, data=None,
                content_type=None):
        """One call; the decoded JSON answer (None when it has no body).

        :raises: ApiError for an error answer, CommandError when the
            service cannot be reached.
        """
        headers = {'Accept': 'application/json',
                   VERSION_HEADER: '%s %s' % (HEADER_SERVICE,
                                              self.api_version)}
        kwargs = {'headers': headers, 'raise_exc': False,
                  'timeout': self.timeout}
        if body is not None:
            kwargs['data'] = json.dumps(body)
            headers['Content-Type'] = 'application/json'
        elif data is not None:
            kwargs['data'] = data
            headers['Content-Type'] = content_type or 'application/json'
        if params:
            kwargs['params'] = {k: v for k, v in params.items()
                                if v is not None}
        url = self.url(path)
        try:
            resp = self.adapter.request(url, method, **kwargs)
        except ks_exc.ConnectionError as e:
            raise exceptions.CommandError(
                'Unable to reach the baremetal-orch API at %s: %s'
                % (self.base_url, e))
        if resp.status_code >= 400:
            raise ApiError.from_response(resp)
        if not resp.content:
            return None
        try:
            return resp.json()
        except ValueError:
            raise exceptions.CommandError(
                '%s %s answered %s with a body that is not JSON'
                % (method, url, resp.status_code))

    def get(self, path, params=None):
        return self.request('GET', path, params=params)

    def post(self, path, body=None, data=None, content_type=None):
        return self.request('POST', path, body=body, data=data,
                            content_type=content_type)

    def put(self, path, body=None):
        return self.request('PUT', path, body=body)

    def patch(self, path, operations):
        """Apply an RFC 6902 JSON patch (a list of operations)."""
        return self.request('PATCH', path, body=list(operations))

    def delete(self, path, body=None):
        return self.request('DELETE', path, body=body)

    def list(self, resource, params=None, limit=None, path=None,
             sort=None):
        """Every item of a collection, following the ``next`` links.

        :param resource: the key of the list in the answer (``nodes``).
        :param limit: at most this many items (all when None).
        :param path: the URL path when it is not ``resource``.
        :param sort: ``--sort``'s ``<key>[:<dir>][,<key>[:<dir>]...]``;
            the API sorts by the first key (``params`` carries it), the
            items are then sorted by every key here, as osc-lib does.
        """
        params = dict(params or {})
        if limit:
            params['limit'] = limit
        items = []
        while True:
            body = self.get(path or resource, params=params) or {}
            items.extend(body.get(resource) or [])
            marker = _marker(body.get('next'))
            if marker is None or (limit and len(items) >= limit):
                break
            params['marker'] = marker
        items = items[:limit] if limit else items
        if sort and ',' in sort:
            items = sort_items(items, sort)
        return items


def sort_items(items, sort):
    """``items`` (API documents) sorted by every key of ``sort``.

    osc-lib's sort; a key whose values mix types (a name that is null on
    some nodes) compares as text.
    """
    try:
        return osc_utils.sort_items(items, sort)
    except TypeError:
        return osc_utils.sort_items(items, sort, sort_type=str)


def _marker(next_link):
    if not next_link:
        return None
    query = urllib.parse.parse_qs(urllib.parse.urlparse(next_link).query)
    values = query.get('marker')
    return values[0] if values else None
