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
"""The adversarial suite, the resources: every call of the API reference
with generated bodies, patches and queries (see
:mod:`baremetal_orch.tests.functional.adversarial_base` for what each
answer is checked for)."""

import json

import hypothesis
from hypothesis import strategies as st

from baremetal_orch.tests.functional import adversarial
from baremetal_orch.tests.functional import adversarial_base as adv
from baremetal_orch.tests.unit.fuzz import base as fuzz
from baremetal_orch.tests.unit.fuzz import bodies


class TestResources(adv.ServiceClass):
    """Every resource call with generated bodies, patches and queries."""

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(body=bodies.NODE_BODIES)
    def test_nodes(self, body):
        self.case()
        resp = self.send('POST', '/v1/nodes', body)
        if resp.status == 201:
            uuid = resp.json()['uuid']
            for path in ('/v1/nodes/%s' % uuid,
                         '/v1/nodes/%s?fields=driver_info,instance_info'
                         % uuid):
                self.send('GET', path, content_type=None)
            # Deleted again: the lists stay short.
            self.send('DELETE', '/v1/nodes/%s' % uuid, content_type=None)

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(
        ident=st.one_of(st.just('@node'), st.just('@node'),
                        bodies.NODE_IDENTS),
        patch=st.one_of(bodies.PATCHES, bodies.PATCHES,
                        st.sampled_from([s[2] for s in adversarial.SIZED
                                         if s[0] == 'PATCH'])))
    def test_node_patch(self, ident, patch):
        self.case()
        ident = bodies.resolve(ident, self.known)
        self.send('PATCH', '/v1/nodes/%s' % bodies.path_segment(ident),
                  patch)

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(
        ident=st.one_of(st.sampled_from(['@node', '@active']),
                        bodies.NODE_IDENTS),
        call=st.sampled_from([('PUT', '/states/provision'),
                              ('PUT', '/states/console'),
                              ('PUT', '/maintenance'),
                              ('DELETE', '/maintenance'),
                              ('GET', '/states')]),
        body=st.one_of(
            st.fixed_dictionaries({'target': st.one_of(st.sampled_from(
                ['manage', 'provide', 'rebuild', 'inspect']),
                fuzz.SCALARS)}),
            st.fixed_dictionaries({'enabled': st.one_of(st.booleans(),
                                                        fuzz.SCALARS)}),
            st.fixed_dictionaries({}, optional={
                'reason': bodies.OPTIONAL_TEXT}),
            fuzz.JSON))
    def test_node_states(self, ident, call, body):
        self.case()
        method, suffix = call
        ident = bodies.resolve(ident, self.known)
        self.send(method, '/v1/nodes/%s%s' % (bodies.path_segment(ident),
                                              suffix),
                  body if method == 'PUT' else None)

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(body=st.one_of(
        bodies.FILTER_BODIES, bodies.FILTER_BODIES,
        st.sampled_from([s[2] for s in adversarial.SIZED
                         if s[1] == '/v1/nodes/filter'])))
    def test_node_filter(self, body):
        self.case()
        self.send('POST', '/v1/nodes/filter', body)

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(
        resource=st.sampled_from(['ports', 'chassis']),
        port=bodies.PORT_BODIES, chassis=bodies.CHASSIS_BODIES,
        patch=bodies.PATCHES,
        ident=st.one_of(st.sampled_from(['@port', '@chassis', 'new']),
                        bodies.UUIDS))
    def test_ports_and_chassis(self, resource, port, chassis, patch, ident):
        self.case()
        resp = self.send('POST', '/v1/%s' % resource,
                         port if resource == 'ports' else chassis)
        created = resp.json()['uuid'] if resp.status == 201 else None
        ident = created if ident == 'new' and created else bodies.resolve(
            ident, self.known)
        path = '/v1/%s/%s' % (resource, bodies.path_segment(ident))
        self.send('PATCH', path, patch)
        self.send('GET', path, content_type=None)
        if created:
            self.send('DELETE', '/v1/%s/%s' % (resource, created),
                      content_type=None)

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(body=bodies.ACTION_BODIES, dry_run=st.booleans())
    def test_actions(self, body, dry_run):
        self.case()
        if isinstance(body, dict) and body.get('name') in (
                'deploy_site', 'update_site') and dry_run:
            # Mostly dry runs: a real one keeps the conductor busy.
            body = dict(body, dry_run=True)
        self.send('POST', '/v1/actions', body)

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(
        ident=st.one_of(st.just('@deployment'), st.just('@deployment'),
                        bodies.UUIDS),
        token=st.one_of(st.sampled_from(['@token', '@token', None, '']),
                        bodies.HEADER_TEXT),
        in_query=st.booleans(), method=st.sampled_from(['POST', 'PUT']),
        body=bodies.SIGNAL_BODIES,
        raw=st.one_of(st.none(), st.none(), bodies.RAW_BODIES),
        content_type=st.one_of(
            st.sampled_from(['application/json',
                             'application/x-www-form-urlencoded', '']),
            bodies.CONTENT_TYPES))
    def test_signals(self, ident, token, in_query, method, body, raw,
                     content_type):
        self.case()
        ident = bodies.resolve(ident, self.known)
        path = '/v1/signals/' + bodies.path_segment(ident)
        headers = {}
        if token is not None:
            token = token.replace('@token', self.known['@token'])
            if in_query:
                path += '?' + bodies.query_string([('token', token)])
            else:
                headers['X-Signal-Token'] = token
        if raw is None:
            raw = json.dumps(bodies.resolve(body, self.known)).encode()
        self.send(method, path, raw=raw, headers=headers,
                  content_type=content_type)

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(
        resource=st.sampled_from([
            'nodes', 'nodes/detail', 'ports', 'chassis',
            'deployment_strategies', 'actions', 'events', 'deployments',
            'services', 'shards']),
        query=bodies.QUERIES)
    def test_list_queries(self, resource, query):
        self.case()
        query = [(k, bodies.resolve(v, self.known)) for k, v in query]
        self.send('GET', '/v1/%s?%s' % (resource, bodies.query_string(
            query)), content_type=None)

    @hypothesis.seed(adv.SEED)
    @adv.examples()
    @hypothesis.given(
        resource=st.sampled_from([
            'nodes', 'ports', 'chassis', 'deployment_strategies',
            'actions', 'tasks', 'deployments', 'services',
            'nodes/@node/states']),
        ident=st.one_of(st.sampled_from(bodies.PLACEHOLDERS),
                        bodies.UUIDS, bodies.NODE_IDENTS),
        query=bodies.QUERIES,
        patch=st.one_of(st.none(), bodies.PATCHES))
    def test_show_and_services(self, resource, ident, query, patch):
        self.case()
        ident = bodies.resolve(ident, self.known)
        path = '/v1/%s/%s?%s' % (resource, bodies.path_segment(ident),
                                 bodies.query_string(query))
        self.send('GET', self.resolve_path(path), content_type=None)
        if patch is not None and resource == 'services':
            self.send('PATCH', '/v1/services/%s' % bodies.path_segment(
                ident), patch)
