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
"""Service clients of the plugin, on tempest's ``RestClient``.

:class:`BaremetalOrchClient` speaks the baremetal_orch v1 API (found in the
catalog as ``baremetal-orchestration``), asking for a microversion with
``OpenStack-API-Version: baremetal-orchestration 1.N``. :class:`IronicClient`
is the little of Ironic's API the scenario needs (nodes and their states), to
prepare what the service then deploys.

Every call returns ``(resp, body)``; errors raise tempest's exceptions
(``Forbidden``, ``NotFound``...), whose ``resp`` and ``resp_body`` tests
read.
"""

import json
import time
from urllib import parse

from tempest.lib.common import rest_client
from tempest.lib import exceptions as lib_exc

MICROVERSION_HEADER = 'OpenStack-API-Version'
SERVICE_TYPE = 'baremetal-orchestration'
#: States an action ends in.
ACTION_DONE = ('complete', 'failed', 'cancelled')


class TimeoutException(lib_exc.TimeoutException):
    message = 'Request timed out: %(reason)s'


class _JsonClient(rest_client.RestClient):
    """JSON in, JSON out; ``None`` for an empty body."""

    def _call(self, method, url, body=None, headers=None, expect=None,
              raw=False):
        if body is not None and not raw:
            body = json.dumps(body)
        resp, text = self.request(method, url, headers=headers, body=body)
        if expect is not None:
            self.expected_success(expect, resp.status)
        return resp, json.loads(text) if text else None

    @staticmethod
    def _query(path, params):
        params = {k: v for k, v in (params or {}).items() if v is not None}
        return path + ('?' + parse.urlencode(params) if params else '')


class BaremetalOrchClient(_JsonClient):
    """The baremetal_orch v1 API."""

    def __init__(self, auth_provider, service, region, microversion=None,
                 **kwargs):
        super().__init__(auth_provider, service, region, **kwargs)
        #: The microversion asked for (None: no header, the minimum).
        self.microversion = microversion

    def get_headers(self, accept_type=None, send_type=None):
        headers = super().get_headers(accept_type, send_type)
        if self.microversion:
            headers[MICROVERSION_HEADER] = '%s %s' % (SERVICE_TYPE,
                                                      self.microversion)
        return headers

    # --- versions ---------------------------------------------------------

    def get_root(self, headers=None):
        """``GET /``: the versions document (no token needed)."""
        return self._call('GET', '/', headers=headers, expect=200)

    def get_v1(self, headers=None):
        return self._call('GET', '/v1', headers=headers, expect=200)

    # --- generic resources ------------------------------------------------

    def list(self, collection, **params):
        return self._call('GET', self._query('/v1/%s' % collection,
                                             params), expect=200)

    def show(self, collection, ident, **params):
        return self._call('GET', self._query('/v1/%s/%s' % (
            collection, ident), params), expect=200)

    def create(self, collection, body, expect=201):
        return self._call('POST', '/v1/%s' % collection, body,
                          expect=expect)

    def update(self, collection, ident, patch):
        return self._call('PATCH', '/v1/%s/%s' % (collection, ident),
                          patch, expect=200)

    def delete(self, collection, ident):
        return self._call('DELETE', '/v1/%s/%s' % (collection, ident),
                          expect=204)

    # --- nodes ------------------------------------------------------------

    def create_node(self, **fields):
        fields.setdefault('driver', 'fake')
        return self.create('nodes', fields)

    def set_provision_state(self, ident, target):
        return self._call('PUT', '/v1/nodes/%s/states/provision' % ident,
                          {'target': target}, expect=202)

    def set_maintenance(self, ident, reason=None):
        body = {'reason': reason} if reason else {}
        return self._call('PUT', '/v1/nodes/%s/maintenance' % ident, body,
                          expect=202)

    def unset_maintenance(self, ident):
        return self._call('DELETE', '/v1/nodes/%s/maintenance' % ident,
                          expect=202)

    def filter_nodes(self, selectors):
        return self._call('POST', '/v1/nodes/filter',
                          {'selectors': selectors}, expect=200)

    # --- strategies and actions -------------------------------------------

    def create_strategy(self, document):
        return self.create('deployment_strategies', document)

    def create_strategy_yaml(self, text):
        headers = self.get_headers()
        headers['Content-Type'] = 'application/yaml'
        return self._call('POST', '/v1/deployment_strategies', text,
                          headers=headers, expect=201, raw=True)

    def validate_strategy(self, document):
        return self._call('POST', '/v1/deployment_strategies/validate',
                          document, expect=200)

    def create_action(self, name, parameters=None, dry_run=False):
        """``POST /v1/actions``: 201 and the action, or 200 and the plan
        of a dry run."""
        body = {'name': name, 'parameters': parameters or {}}
        if dry_run:
            body['dry_run'] = True
        return self._call('POST', '/v1/actions', body,
                          expect=200 if dry_run else 201)

    def control_action(self, uuid, verb, reason=None):
        """``POST /v1/actions/{uuid}/control``: ``pause``, ``resume`` or
        ``abort`` a running action; 202 and the action."""
        body = {'verb': verb}
        if reason is not None:
            body['reason'] = reason
        return self._call('POST', '/v1/actions/%s/control' % uuid, body,
                          expect=202)

    def retry_action(self, uuid):
        """``POST /v1/actions`` ``retry``: an ended site action's failed
        and never-started nodes again; 201 and the new action."""
        return self.create_action('retry', {'action': uuid})

    def show_task_tree(self, uuid):
        return self.show('tasks', uuid, tree='true')

    def wait_for_action(self, uuid, timeout=None):
        """Poll the action until it ends; return its document."""
        return self.wait_for_action_state(uuid, ACTION_DONE, timeout)

    def wait_for_action_state(self, uuid, states, timeout=None):
        """Poll the action until its state is one of ``states`` or it
        ends; return its document (the caller checks which)."""
        timeout = timeout or self.build_timeout
        deadline = time.monotonic() + timeout
        while True:
            _, action = self.show('actions', uuid)
            if action['state'] in tuple(states) + ACTION_DONE:
                return action
            if time.monotonic() > deadline:
                raise TimeoutException(
                    reason='action %s is still %s after %ss' % (
                        uuid, action['state'], timeout))
            time.sleep(self.build_interval)

    def wait_for_node(self, ident, timeout=None):
        """Poll ``GET /v1/nodes/{ident}`` until it exists; return it."""
        timeout = timeout or self.build_timeout
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.show('nodes', ident)[1]
            except lib_exc.NotFound:
                if time.monotonic() > deadline:
                    raise TimeoutException(
                        reason='node %s did not appear within %ss' % (
                            ident, timeout))
            time.sleep(self.build_interval)

    # --- services ---------------------------------------------------------

    def update_service(self, host, patch):
        return self.update('services', host, patch)


class IronicClient(_JsonClient):
    """The part of Ironic's v1 API the scenario uses (nodes)."""

    #: Shards on nodes need 1.82.
    microversion = '1.82'

    def get_headers(self, accept_type=None, send_type=None):
        headers = super().get_headers(accept_type, send_type)
        headers['X-OpenStack-Ironic-API-Version'] = self.microversion
        return headers

    def create_node(self, **fields):
        return self._call('POST', '/v1/nodes', fields, expect=201)

    def show_node(self, ident):
        return self._call('GET', '/v1/nodes/%s' % ident, expect=200)

    def set_maintenance(self, ident):
        return self._call('PUT', '/v1/nodes/%s/maintenance' % ident,
                          {'reason': 'tempest cleanup'}, expect=202)

    def delete_node(self, ident):
        return self._call('DELETE', '/v1/nodes/%s' % ident, expect=204)
