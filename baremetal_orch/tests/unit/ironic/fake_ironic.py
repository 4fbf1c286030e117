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
"""An in-memory Ironic API behind requests-mock, for unit tests.

It answers at the HTTP level, so the client under test runs its real
keystoneauth session and openstacksdk proxy, and the tests can assert on
the URLs actually sent (:meth:`FakeIronic.requests`) and the states a node
went through (:meth:`FakeIronic.states_entered`). It mimics what the
unit tests rely on, including Ironic's traps:

* ``GET /v1/nodes`` and ``/v1/nodes/detail`` filter by ``shard``,
  ``conductor_group`` and ``provision_state``, page with ``limit`` and
  ``marker``, and give a ``next`` link that drops ``shard=`` (as Ironic
  does), so a client following it would walk every shard;
* a provision request moves the node through the working states one poll
  at a time (each GET of the node moves it one state on, after answering);
* errors use Ironic's doubly encoded ``error_message`` body.

Steering: :attr:`FakeIronic.fail` (``{uuid: (target, state, last_error)}``)
ends a transition in a failure state, :attr:`FakeIronic.stuck` keeps nodes in
their working state forever (a node in a wait state, ``wait call-back``
and the like, leaves it by ``abort``), :attr:`FakeIronic.late_error`
(``{uuid: N}``) leaves a failed node reserved without ``last_error`` for
N more polls (as Ironic's error handlers do), :attr:`FakeIronic.locked`
answers the next N writes to a node with Ironic's "is locked" 409,
:attr:`FakeIronic.errors` answers the next write with a given status and
message.
"""

import json
import re
import urllib.parse

import jsonpatch
from oslo_utils import uuidutils
import requests
import requests_mock

ENDPOINT = 'http://ironic.test:6385'

#: (current state, target) -> the states the node goes through.
TRANSITIONS = {
    ('enroll', 'manage'): ['verifying', 'manageable'],
    ('available', 'manage'): ['manageable'],
    ('clean failed', 'manage'): ['manageable'],
    ('manageable', 'provide'): ['cleaning', 'available'],
    ('available', 'active'): ['deploying', 'active'],
    ('deploy failed', 'active'): ['deploying', 'active'],
    ('active', 'deleted'): ['deleting', 'cleaning', 'available'],
    ('deploy failed', 'deleted'): ['deleting', 'cleaning', 'available'],
}

#: Wait state -> the state Ironic's ``abort`` ends it in (Ironic's state
#: machine), with Ironic's ``last_error`` of an aborted deploy.
ABORTS = {
    'wait call-back': 'deploy failed',
    'clean wait': 'clean failed',
    'inspect wait': 'inspect failed',
    'rescue wait': 'rescue failed',
}
ABORTED_ERROR = ('By request, the deploy operation was aborted during or '
                 'after the completion of step "deploy.deploy"')

VERSION_DOC = {'id': 'v1', 'status': 'CURRENT', 'min_version': '1.1',
               'version': '1.115',
               'links': [{'href': ENDPOINT + '/v1/', 'rel': 'self'}]}

LIST_FIELDS = ('uuid', 'name', 'provision_state', 'maintenance',
               'instance_uuid', 'power_state')


def _error(context, status, message):
    context.status_code = status
    return {'error_message': json.dumps({'faultcode': 'Client',
                                         'faultstring': message,
                                         'debuginfo': None})}


class FakeIronic:
    """The fake; call :meth:`install` with a requests-mock fixture."""

    def __init__(self):
        self.nodes = {}
        self.pending = {}
        self.fail = {}
        self.stuck = set()
        self.late_error = {}
        self.locked = {}
        self.errors = {}
        #: {uuid: n}: the next n requests of a node find the connection
        #: reset, as an overloaded Ironic API answers.
        self.resets = {}
        #: {uuid: n}: the next n provision requests of a node are carried
        #: out, then the connection is reset before the answer.
        self.lost = {}
        #: {uuid: n}: the next n provision requests of a node are refused
        #: with Ironic's concurrency limit (503).
        self.busy = {}
        #: {uuid: [state, ...]}: the provision states each node entered
        #: after a provision request, in order (:meth:`states_entered`).
        self.entered = {}
        self.mock = None

    def install(self, mock):
        self.mock = mock
        mock.register_uri(requests_mock.ANY,
                          re.compile('^' + re.escape(ENDPOINT)),
                          json=self._handle)
        return self

    # --- test helpers -------------------------------------------------------

    def add_node(self, name=None, shard=None, conductor_group='',
                 provision_state='enroll', **fields):
        uuid = fields.pop('uuid', None) or uuidutils.generate_uuid()
        node = {'uuid': uuid, 'name': name, 'shard': shard,
                'conductor_group': conductor_group,
                'provision_state': provision_state,
                'target_provision_state': None, 'last_error': None,
                'maintenance': False, 'maintenance_reason': None,
                'console_enabled': False, 'instance_info': {},
                'instance_uuid': None, 'power_state': None,
                'reservation': None}
        node.update(fields)
        self.nodes[uuid] = node
        return node

    def requests(self, method=None, path=None):
        """(method, path, query dict, headers) of the requests received."""
        found = []
        for req in self.mock.request_history:
            url = urllib.parse.urlsplit(req.url)
            if method and req.method != method:
                continue
            if path is not None and url.path != path:
                continue
            query = urllib.parse.parse_qs(url.query)
            found.append((req.method, url.path,
                          {k: v[0] for k, v in query.items()}, req.headers))
        return found

    def listings(self):
        """The node listing requests received."""
        return [r for r in self.requests('GET')
                if r[1] in ('/v1/nodes', '/v1/nodes/detail')]

    def provision_calls(self, uuid=None):
        """The targets of the provision requests, in order."""
        calls = []
        for req in self.mock.request_history:
            if req.method == 'PUT' and req.path.endswith('/states/provision'):
                if uuid is None or '/%s/' % uuid in req.path:
                    calls.append(req.json()['target'])
        return calls

    def states_entered(self, uuid):
        """The provision states the node went through, in order, since
        its first provision request."""
        return list(self.entered.get(uuid, ()))

    def _enter(self, node, state):
        node['provision_state'] = state
        self.entered.setdefault(node['uuid'], []).append(state)

    # --- dispatch -----------------------------------------------------------

    def _handle(self, request, context):
        path = urllib.parse.urlsplit(request.url).path.rstrip('/')
        query = {k: v[0] for k, v in urllib.parse.parse_qs(
            urllib.parse.urlsplit(request.url).query).items()}
        context.headers['Content-Type'] = 'application/json'
        if path == '':
            return {'versions': [VERSION_DOC], 'default_version': VERSION_DOC}
        if path == '/v1':
            return dict(VERSION_DOC, version=VERSION_DOC)
        if path == '/v1/shards':
            counts = {}
            for node in self.nodes.values():
                if node['shard']:
                    counts[node['shard']] = counts.get(node['shard'], 0) + 1
            return {'shards': [{'name': k, 'count': v}
                               for k, v in sorted(counts.items())]}
        if path in ('/v1/nodes', '/v1/nodes/detail'):
            return self._list(path, query)
        match = re.match(r'^/v1/nodes/([^/]+)(/.*)?$', path)
        if not match:
            return _error(context, 404, 'No route for %s' % path)
        node = self._find(match.group(1))
        if node is None:
            return _error(context, 404, 'Node %s could not be found.'
                          % match.group(1))
        if self.resets.get(node['uuid']):
            self.resets[node['uuid']] -= 1
            raise requests.exceptions.ConnectionError(
                "('Connection aborted.', ConnectionResetError(104, "
                "'Connection reset by peer'))")
        sub = match.group(2) or ''
        if request.method == 'GET' and not sub:
            shown = self._fields(node, query.get('fields'))
            self._advance(node)
            return shown
        refused = self._refuse(node, context)
        if refused:
            return refused
        if request.method == 'PATCH' and not sub:
            return self._patch(node, request.json(), context)
        if sub == '/states/provision':
            if self.busy.get(node['uuid']):
                self.busy[node['uuid']] -= 1
                return _error(context, 503, 'The concurrent action limit '
                              'for provisioning has been reached. Current '
                              'count is 4. Please try again later.')
            answer = self._provision(node, request.json()['target'],
                                     context)
            if self.lost.get(node['uuid']):
                self.lost[node['uuid']] -= 1
                raise requests.exceptions.ConnectionError(
                    "('Connection aborted.', RemoteDisconnected('Remote "
                    "end closed connection without response'))")
            return answer
        if sub == '/maintenance':
            node['maintenance'] = request.method == 'PUT'
            node['maintenance_reason'] = (
                (request.json() or {}).get('reason')
                if request.method == 'PUT' else None)
            context.status_code = 202
            return None
        if sub == '/states/console':
            node['console_enabled'] = request.json()['enabled']
            context.status_code = 202
            return None
        return _error(context, 405, 'Not allowed')

    def _find(self, ident):
        if ident in self.nodes:
            return self.nodes[ident]
        for node in self.nodes.values():
            if node['name'] == ident:
                return node
        return None

    @staticmethod
    def _fields(node, fields):
        if not fields:
            return dict(node)
        return {k: node.get(k) for k in fields.split(',')}

    def _list(self, path, query):
        nodes = sorted(self.nodes.values(), key=lambda n: n['uuid'])
        for key in ('shard', 'conductor_group', 'provision_state'):
            if key in query:
                values = query[key].split(',')
                nodes = [n for n in nodes if n[key] in values]
        if 'marker' in query:
            nodes = [n for n in nodes if n['uuid'] > query['marker']]
        limit = int(query.get('limit', 1000))
        page = nodes[:limit]
        if path.endswith('/detail'):
            body = {'nodes': [dict(n) for n in page]}
        else:
            fields = (query['fields'].split(',') if 'fields' in query
                      else LIST_FIELDS)
            body = {'nodes': [{k: n.get(k) for k in fields} for n in page]}
        if len(page) == limit and len(nodes) > limit:
            # Like Ironic: the next link keeps limit and marker only.
            body['next'] = '%s%s?limit=%d&marker=%s' % (
                ENDPOINT, path, limit, page[-1]['uuid'])
        # A listing is a poll of each node it shows.
        for node in page:
            self._advance(node)
        return body

    def _refuse(self, node, context):
        uuid = node['uuid']
        if self.locked.get(uuid):
            self.locked[uuid] -= 1
            return _error(context, 409, 'Node %s is locked by host '
                          'conductor-1, please retry after the current '
                          'operation is completed.' % uuid)
        if uuid in self.errors:
            status, message = self.errors.pop(uuid)
            return _error(context, status, message)
        return None

    def _patch(self, node, patch, context):
        if node['instance_uuid'] and any(
                op['path'] == '/instance_uuid' for op in patch):
            return _error(context, 409, 'Node %s is associated with '
                          'instance %s.' % (node['uuid'],
                                            node['instance_uuid']))
        node.update(jsonpatch.apply_patch(node, patch))
        return dict(node)

    def _provision(self, node, target, context):
        if target == 'abort' and node['provision_state'] in ABORTS:
            # Ironic's abort of a wait: the node leaves it at once.
            self._enter(node, ABORTS[node['provision_state']])
            node['target_provision_state'] = None
            node['last_error'] = ABORTED_ERROR
            self.pending.pop(node['uuid'], None)
            self.stuck.discard(node['uuid'])
            context.status_code = 202
            return None
        states = TRANSITIONS.get((node['provision_state'], target))
        if states is None:
            return _error(context, 400, 'The requested action "%s" can not '
                          'be performed on node "%s" while it is in state '
                          '"%s".' % (target, node['uuid'],
                                     node['provision_state']))
        states = list(states)
        failure = self.fail.get(node['uuid'])
        if failure and failure[0] == target:
            states[-1] = failure[1]
        node['last_error'] = None
        node['target_provision_state'] = states[-1]
        # The first working state is entered before Ironic answers.
        self._enter(node, states.pop(0))
        self.pending[node['uuid']] = (states, failure)
        context.status_code = 202
        return None

    def _advance(self, node):
        """After a poll (a GET of it, a listing showing it): the node moves
        one state on."""
        uuid = node['uuid']
        if uuid not in self.pending or uuid in self.stuck:
            return
        states, failure = self.pending[uuid]
        if states:
            self._enter(node, states.pop(0))
            if states:
                return
        if failure and node['provision_state'] == failure[1]:
            if self.late_error.get(uuid):
                # Like Ironic's error handlers: in the failure state, still
                # reserved, last_error not written yet.
                self.late_error[uuid] -= 1
                node['reservation'] = 'conductor-1'
                return
            node['last_error'] = failure[2]
        node['reservation'] = None
        node['target_provision_state'] = None
        del self.pending[uuid]
