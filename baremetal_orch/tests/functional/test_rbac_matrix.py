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
"""The RBAC matrix against a REAL Keystone, and the secrets scan (issue 8).

:data:`MATRIX_FILE` (``rbac_matrix.yaml``) holds, for every call of the v1
API, the status each persona must get. :class:`TestRbacMatrix` runs it
against one all-in-one ``baremetal-orch`` behind keystonemiddleware
(``[api]auth_strategy = keystone``) and one real Keystone, with the real
tokens of seven personas (no token included), collecting every mismatch
and failing once with the whole list. It then scans every response, every
versioned notification the service sent (a copy of each AMQP message taken
from a private RabbitMQ vhost by a queue of the test's own, context
included) and the service's log for the secrets: the ``S3CR3T`` values of
the nodes' ``driver_info``, a node's deployment signal token and the
personas' Keystone tokens.

:class:`TestRbacMatrixData` checks the data itself, without services:
every (method, route) of the v1 controllers has a row, every row names
every persona, DELETE rows come last on fresh fixtures.
"""

import inspect
import json
import os
import re
import secrets
import subprocess
import sys
import time
import uuid

import fixtures
import kombu
from pecan import rest
import requests
from testtools import content
import yaml

from baremetal_orch.api.controllers import v1
from baremetal_orch.tests import base as unit_base
from baremetal_orch.tests.functional import base
from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import keystone
from baremetal_orch_testing import helpers
from baremetal_orch_testing import services

MATRIX_FILE = os.path.join(os.path.dirname(__file__), 'rbac_matrix.yaml')
HTTP_TIMEOUT = 30
START_TIMEOUT = 90
WAIT_TIMEOUT = 120

#: The driver_info every node of the test carries (issue 8).
SECRET_DRIVER_INFO = {'ipmi_password': 'S3CR3T-pw',
                      'auth_token': 'S3CR3T-tok',
                      'ssh_key': 'S3CR3T-key'}
SECRET_VALUES = tuple(SECRET_DRIVER_INFO.values())

#: Fresh fixture kinds a row may ask for (see rbac_matrix.yaml).
FIXTURE_KINDS = ('node_a', 'node_free', 'port_a', 'chassis', 'strategy')

#: (controller method, HTTP verb, whether it takes its own identifier).
_VERBS = (('get', 'GET', False), ('get_all', 'GET', False),
          ('get_one', 'GET', True), ('post', 'POST', None),
          ('put', 'PUT', None), ('patch', 'PATCH', None),
          ('delete', 'DELETE', None))
_PLACEHOLDER = re.compile(r'\{[^{}]*\}')


def load_matrix(path=MATRIX_FILE):
    """``(personas, rows)`` of the matrix file, DELETE rows last."""
    with open(path) as f:
        data = yaml.safe_load(f)
    rows = data['rows']
    ordered = ([r for r in rows if r['route'].split()[0] != 'DELETE'] +
               [r for r in rows if r['route'].split()[0] == 'DELETE'])
    return tuple(data['personas']), ordered


def normalize(route):
    """``"PATCH /v1/nodes/{ident}"`` → ``("PATCH", "/v1/nodes/{}")``."""
    method, path = route.split()
    return method.upper(), _PLACEHOLDER.sub('{}', path)


def v1_routes(root=None):
    """Every (method, path template) the v1 pecan controllers serve.

    Walks :class:`~baremetal_orch.api.controllers.v1.V1Controller`: the
    exposed REST methods of each controller (a method with one more
    positional argument than its parents' identifiers takes its own
    ``/{}``), its ``_custom_actions`` (the same rule: ``/{}/<action>``
    when the method takes its own identifier, as
    ``POST /v1/actions/{uuid}/control``) and its sub-controllers (reached
    under the parent's ``/{}``).
    """
    routes = set()

    def takes_own_ident(func, depth):
        params = [p for p in inspect.signature(func).parameters.values()
                  if p.kind == p.POSITIONAL_OR_KEYWORD][1:]
        return len(params) > depth

    def walk(controller, prefix, depth):
        cls = type(controller)
        for attr, verb, own_ident in _VERBS:
            func = getattr(cls, attr, None)
            if not getattr(func, 'exposed', False):
                continue
            if own_ident is None:
                own_ident = takes_own_ident(func, depth)
            routes.add((verb, prefix + ('/{}' if own_ident else '')))
        for action, verbs in getattr(cls, '_custom_actions', {}).items():
            own = takes_own_ident(getattr(cls, action), depth)
            for verb in verbs:
                routes.add((verb.upper(), '%s%s/%s' % (
                    prefix, '/{}' if own else '', action)))
        for name in sorted(vars(cls)):
            child = vars(cls)[name]
            if name.startswith('_') or not isinstance(
                    child, rest.RestController):
                continue
            if depth < 0:  # the version root: /v1/<resource>
                walk(child, '%s/%s' % (prefix, name), 0)
            else:
                walk(child, '%s/{}/%s' % (prefix, name), depth + 1)

    walk(root or v1.V1Controller(), '/v1', -1)
    return routes


class TestRbacMatrixData(unit_base.TestCase):
    """The matrix file is complete and well formed (no services)."""

    def setUp(self):
        super().setUp()
        self.personas, self.rows = load_matrix()

    def test_route_walk_finds_known_routes(self):
        routes = v1_routes()
        for route in ('GET /v1/nodes', 'PATCH /v1/nodes/{ident}',
                      'PUT /v1/nodes/{ident}/states/provision',
                      'DELETE /v1/nodes/{ident}/maintenance',
                      'GET /v1/nodes/{ident}/states',
                      'POST /v1/nodes/filter',
                      'POST /v1/signals/{deployment_uuid}',
                      'GET /v1/tasks/{uuid}',
                      'POST /v1/actions/{uuid}/control'):
            self.assertIn(normalize(route), routes)
        self.assertNotIn(('POST', '/v1/nodes/{}'), routes)
        self.assertNotIn(('POST', '/v1/actions/control'), routes)
        self.assertNotIn(('GET', '/v1/tasks'), routes)

    def test_every_route_has_a_row(self):
        covered = {normalize(r['route']) for r in self.rows}
        missing = sorted(v1_routes() - covered)
        self.assertEqual([], missing, 'routes without a row in %s'
                         % MATRIX_FILE)

    def test_every_row_is_a_route(self):
        unknown = sorted({r['route'] for r in self.rows
                          if normalize(r['route']) not in v1_routes()})
        self.assertEqual([], unknown)

    def test_rows_are_well_formed(self):
        self.assertEqual(7, len(self.personas))
        names = [r['name'] for r in self.rows]
        self.assertEqual(sorted(set(names)), sorted(names))
        for row in self.rows:
            self.assertEqual(set(self.personas), set(row['expect']),
                             row['name'])
            for status in row['expect'].values():
                self.assertIn(status, (200, 201, 202, 204, 400, 401, 403,
                                       404, 409), row['name'])
            self.assertIn(row.get('fixture'), FIXTURE_KINDS + (None,),
                          row['name'])
            self.assertEqual('fixture' in row, '{fresh}' in row['path'],
                             row['name'])
            for personas in (row.get('sees') or {}).values():
                self.assertLessEqual(set(personas), set(self.personas),
                                     row['name'])
            # The path has the route's shape: same segments, same literals.
            route = normalize(row['route'])[1].split('/')
            path = row['path'].split('?')[0].split('/')
            self.assertEqual(len(route), len(path), row['name'])
            for want, got in zip(route, path):
                if want != '{}':
                    self.assertEqual(want, got, row['name'])

    def test_destructive_rows_run_last_on_fresh_fixtures(self):
        methods = [r['route'].split()[0] for r in self.rows]
        first_delete = methods.index('DELETE')
        self.assertNotIn('DELETE', set(methods[:first_delete]))
        self.assertEqual({'DELETE'}, set(methods[first_delete:]))
        for row in self.rows[first_delete:]:
            self.assertIn('fixture', row, row['name'])


class AllInOne(fixtures.Fixture):
    """One all-in-one ``baremetal-orch`` and a copy of all it notifies.

    Keystone auth with ``keystone_fixture``'s ``[keystone_authtoken]``;
    versioned notifications (``notification_level = info``, messagingv2)
    on ``transport_url``, where a queue of our own, bound to the
    notification topic before the service starts, keeps a copy of every
    message exactly as it travels on the bus (context included); sqlite;
    the fake driver writes each node's config drive to
    :attr:`configdrive`. :attr:`endpoint` is the API's URL.
    """

    HOST = 'rbac-aio'
    EXCHANGE = 'baremetal_orch'  # rpc.py: set_transport_defaults
    TOPIC = 'baremetal_orch_versioned_notifications'

    def __init__(self, keystone_fixture, transport_url):
        super().__init__()
        self.keystone = keystone_fixture
        self.transport_url = transport_url

    def log_details(self):
        return {name: log.content() for name, log in self.logs.items()}

    def _setUp(self):
        self.logs = {}
        self.captured = []
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.configdrive = os.path.join(self.tmp, 'configdrive')
        port = services.free_port()
        self.endpoint = 'http://127.0.0.1:%d' % port
        sections = services.base_sections(
            self.tmp, port,
            'sqlite:///%s' % os.path.join(self.tmp, 'rbac.sqlite'),
            DEFAULT={'host': self.HOST, 'rpc_transport': 'none',
                     'transport_url': self.transport_url,
                     'notification_level': 'info'},
            api={'auth_strategy': 'keystone'},
            fake_driver={'configdrive_dir': self.configdrive},
            oslo_messaging_notifications={'driver': 'messagingv2'})
        sections['keystone_authtoken'] = self.keystone.authtoken_options()
        conf = services.write_config(os.path.join(self.tmp, 'rbac.conf'),
                                     sections)
        self.amqp = kombu.Connection(
            self.transport_url.replace('rabbit://', 'amqp://', 1),
            connect_timeout=10)
        self.addCleanup(self.amqp.release)
        # As oslo.messaging declares them (not durable, no auto-delete).
        exchange = kombu.Exchange(self.EXCHANGE, type='topic',
                                  durable=False, auto_delete=False)
        self.queue = kombu.Queue('rbac-capture', exchange,
                                 routing_key=self.TOPIC + '.*',
                                 durable=False, auto_delete=False)
        self.queue = self.queue(self.amqp.default_channel)
        self.queue.declare()
        self.process = self._start('baremetal-orch', ['--config-file', conf])
        helpers.wait_for_http(self.endpoint + '/v1', START_TIMEOUT,
                              status=200, process=self.process)

    def _start(self, binary, args):
        argv = [os.path.join(os.path.dirname(sys.executable), binary)] + args
        log = func_fixtures.LogFile(os.path.join(self.tmp, binary + '.log'))
        self.logs[binary] = log
        self.addCleanup(log.save)
        with open(log.path, 'ab') as out:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, cwd=self.tmp,
                start_new_session=True)
        proc.log = log
        self.addCleanup(func_fixtures.stop_process, proc, 5)
        return proc

    def notifications(self):
        """Every notification captured so far.

        Dicts with ``raw`` (the AMQP body as text), ``event_type``,
        ``payload`` and ``context`` (the ``_context_*`` keys the driver
        packed into the message, without their prefix).
        """
        while True:
            message = self.queue.get(no_ack=True)
            if message is None:
                return list(self.captured)
            raw = message.body
            if isinstance(raw, bytes):
                raw = raw.decode('utf-8')
            outer = json.loads(raw)
            inner = json.loads(outer['oslo.message'])
            self.captured.append({
                'raw': raw, 'event_type': inner.get('event_type'),
                'message_id': inner.get('message_id'),
                'payload': inner.get('payload'),
                'context': {k[len('_context_'):]: v
                            for k, v in inner.items()
                            if k.startswith('_context_')}})


class TestRbacMatrix(base.FunctionalTestCase):
    """Every row of the matrix with every persona's real token."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.keystone = cls.use_class_fixture(keystone.KeystoneFixture())
        cls.rabbit = cls.use_class_fixture(broker.RabbitMQ())
        cls.aio = cls.use_class_fixture(AllInOne(
            cls.keystone, cls.rabbit.transport_url))
        cls.personas, cls.rows = load_matrix()
        cls._make_personas()
        cls._make_shared_fixtures()
        cls._results = None

    # --- personas and fixtures -----------------------------------------------

    @classmethod
    def _make_personas(cls):
        ks = cls.keystone
        suffix = uuid.uuid4().hex[:8]
        password = secrets.token_urlsafe(12)
        cls.project_a_id = ks.create_project('rbac-a-' + suffix)
        cls.project_b_id = ks.create_project('rbac-b-' + suffix)
        # One role each: Keystone's implied roles (admin > member > reader)
        # give the rest, as in a real cloud.
        users = {
            'system_reader': dict(system_roles=['reader']),
            'project_a_admin': dict(project='rbac-a-' + suffix,
                                    roles=['admin']),
            'project_a_member': dict(project='rbac-a-' + suffix,
                                     roles=['member']),
            'project_a_reader': dict(project='rbac-a-' + suffix,
                                     roles=['reader']),
            'project_b_member': dict(project='rbac-b-' + suffix,
                                     roles=['member']),
        }
        cls.tokens = {'system_admin': ks.admin_token(system=True)}
        for persona, grants in users.items():
            name = '%s-%s' % (persona, suffix)
            ks.create_user(name, password, **grants)
            scope = ({'system_scope': 'all'} if 'system_roles' in grants
                     else {'project': grants['project']})
            cls.tokens[persona] = ks.token(name, password, **scope)
        cls.sessions = {}
        for persona in cls.personas:
            session = requests.Session()
            if persona in cls.tokens:
                session.headers['X-Auth-Token'] = cls.tokens[persona]
            cls.addClassCleanup(session.close)
            cls.sessions[persona] = session

    @classmethod
    def admin(cls, method, path, body=None, status=None):
        """A call as the system admin; fails unless ``status`` answers."""
        resp = cls.sessions['system_admin'].request(
            method, cls.aio.endpoint + path, json=body,
            timeout=HTTP_TIMEOUT)
        if status is not None and resp.status_code != status:
            raise AssertionError('%s %s: expected %s, got %s: %s' % (
                method, path, status, resp.status_code, resp.text))
        return resp.json() if resp.content else None

    @classmethod
    def _new_node(cls, owner, **extra):
        body = {'driver': 'fake', 'name': 'rbac-%s' % uuid.uuid4().hex[:12],
                'driver_info': dict(SECRET_DRIVER_INFO)}
        if owner:
            body['owner'] = owner
        body.update(extra)
        return cls.admin('POST', '/v1/nodes', body, 201)

    @classmethod
    def _new_port(cls, node_uuid):
        return cls.admin('POST', '/v1/ports', {
            'node_uuid': node_uuid, 'address': cls._mac()}, 201)['uuid']

    @staticmethod
    def _mac():
        raw = uuid.uuid4().bytes[:5]
        return '52:' + ':'.join('%02x' % b for b in raw)

    @staticmethod
    def _strategy_doc(name, tag):
        return {'schema': 'shipyard/DeploymentStrategy/v1',
                'metadata': {'schema': 'metadata/Document/v1',
                             'name': name},
                'data': {'groups': [{
                    'name': 'rbac', 'critical': True, 'depends_on': [],
                    'selectors': [{'node_tags': [tag]}]}]}}

    @classmethod
    def _make_shared_fixtures(cls):
        chassis = cls.admin('POST', '/v1/chassis',
                            {'description': 'rbac'}, 201)['uuid']
        node_a = cls._new_node(cls.project_a_id, tags=['rbac-deploy'],
                               chassis_uuid=chassis)
        node_free = cls._new_node(None)
        node_b = cls._new_node(cls.project_b_id)
        cls.admin('POST', '/v1/deployment_strategies',
                  cls._strategy_doc('rbac-strategy', 'rbac-deploy'), 201)
        # A real deploy of node A: an action, its task tree, events, the
        # deployment record and its signal token.
        action = cls.admin('POST', '/v1/actions', {
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'rbac-strategy'}}, 201)
        deadline = time.monotonic() + WAIT_TIMEOUT
        while action['state'] in ('pending', 'running'):
            if time.monotonic() > deadline:
                raise AssertionError('deploy_site did not end: %s' % action)
            time.sleep(0.1)
            action = cls.admin('GET', '/v1/actions/%s' % action['uuid'],
                               status=200)
        if action['result'] != 'success':
            raise AssertionError('deploy_site failed: %s' % action)
        deployment = cls.admin('GET', '/v1/deployments?node_uuid=%s'
                               % node_a['uuid'],
                               status=200)['deployments'][0]
        with open(os.path.join(cls.aio.configdrive,
                               '%s.json' % node_a['uuid'])) as f:
            signal_token = services.signal_token(
                json.load(f)['instance_info'])
        cls.values = {
            'node_a': node_a['uuid'], 'node_a_name': node_a['name'],
            'node_free': node_free['uuid'], 'node_b': node_b['uuid'],
            'port_a': cls._new_port(node_a['uuid']),
            'port_free': cls._new_port(node_free['uuid']),
            'chassis': chassis, 'strategy': 'rbac-strategy',
            'action': action['uuid'], 'task': action['task_uuid'],
            'deployment': deployment['uuid'],
            'signal_token': signal_token, 'service': AllInOne.HOST,
            'project_a_id': cls.project_a_id,
            'project_b_id': cls.project_b_id,
        }

    @classmethod
    def _fresh(cls, kind):
        """A new resource of ``kind`` (see FIXTURE_KINDS); its id."""
        if kind == 'node_a':
            return cls._new_node(cls.project_a_id)['uuid']
        if kind == 'node_free':
            return cls._new_node(None)['uuid']
        if kind == 'port_a':
            return cls._new_port(cls.values['node_a'])
        if kind == 'chassis':
            return cls.admin('POST', '/v1/chassis', {}, 201)['uuid']
        name = 'rbac-%s' % uuid.uuid4().hex[:12]
        cls.admin('POST', '/v1/deployment_strategies',
                  cls._strategy_doc(name, 'rbac-nothing'), 201)
        return name

    # --- running the matrix ---------------------------------------------

    @classmethod
    def fill(cls, value, extra):
        if isinstance(value, str):
            return _PLACEHOLDER.sub(
                lambda m: str(extra.get(m.group()[1:-1],
                                        cls.values.get(m.group()[1:-1],
                                                       m.group()))),
                value)
        if isinstance(value, dict):
            return {k: cls.fill(v, extra) for k, v in value.items()}
        if isinstance(value, list):
            return [cls.fill(v, extra) for v in value]
        return value

    @classmethod
    def _call(cls, row, persona):
        extra = {'unique': uuid.uuid4().hex[:12], 'mac': cls._mac()}
        if row.get('fixture'):
            extra['fresh'] = cls._fresh(row['fixture'])
        method = row['route'].split()[0]
        kwargs = {'headers': cls.fill(row.get('headers') or {}, extra),
                  'timeout': HTTP_TIMEOUT}
        if 'body' in row:
            kwargs['json'] = cls.fill(row['body'], extra)
        return cls.sessions[persona].request(
            method, cls.aio.endpoint + cls.fill(row['path'], extra),
            **kwargs)

    @staticmethod
    def _error_format(resp):
        """'api-sig', 'keystone' (keystonemiddleware's own 401 document)
        or 'other'."""
        try:
            doc = resp.json()
        except ValueError:
            return 'other'
        try:
            if doc['errors'][0]['status'] == resp.status_code:
                return 'api-sig'
        except (KeyError, IndexError, TypeError):
            pass
        if isinstance(doc, dict) and isinstance(doc.get('error'), dict):
            return 'keystone'
        return 'other'

    @classmethod
    def _check(cls, row, persona, resp):
        """The mismatches of one call, as strings."""
        where = '%s [%s %s] as %s' % (row['name'], row['route'].split()[0],
                                      row['path'], persona)
        problems = []
        expected = row['expect'][persona]
        if resp.status_code != expected:
            problems.append('%s: expected %s, got %s: %s' % (
                where, expected, resp.status_code, resp.text[:300]))
        for key, who in (row.get('sees') or {}).items():
            seen = cls.values[key] in resp.text
            if seen != (persona in who):
                problems.append('%s: %s %s %s' % (
                    where, 'sees' if seen else 'does not see', key,
                    cls.values[key]))
        return where, problems

    @classmethod
    def results(cls):
        """Run the matrix once for the class.

        :returns: {'mismatches': [str], 'errors': {format: [str]} (the
            refusals by error document format), 'responses': [(str,
            Response)], 'calls': int, 'seconds': float}
        """
        if cls._results is None:
            started = time.monotonic()
            mismatches, responses = [], []
            errors = {'api-sig': [], 'keystone': [], 'other': []}
            for row in cls.rows:
                for persona in cls.personas:
                    resp = cls._call(row, persona)
                    where, problems = cls._check(row, persona, resp)
                    responses.append((where, resp))
                    mismatches.extend(problems)
                    if resp.status_code >= 400:
                        errors[cls._error_format(resp)].append(
                            '%s: %s %s' % (where, resp.status_code,
                                           resp.text[:200]))
            cls._results = {'mismatches': mismatches, 'errors': errors,
                            'responses': responses,
                            'calls': len(responses),
                            'seconds': time.monotonic() - started}
        return cls._results

    # --- the tests ------------------------------------------------------

    def test_matrix(self):
        results = self.results()
        self.addDetail('rbac-matrix', content.text_content(
            '%d rows x %d personas = %d calls in %.1f s' % (
                len(self.rows), len(self.personas), results['calls'],
                results['seconds'])))
        self.assertEqual(len(self.rows) * len(self.personas),
                         results['calls'])
        self.assertEqual([], results['mismatches'],
                         '%d mismatches:\n%s' % (
                             len(results['mismatches']),
                             '\n'.join(results['mismatches'])))

    def test_refusals_are_api_sig_documents(self):
        errors = self.results()['errors']
        self.assertGreater(len(errors['api-sig']), 100)
        self.assertEqual([], errors['other'])

    def test_missing_token_401_is_an_api_sig_document(self):
        # keystonemiddleware answers 401 in its own format; the API's
        # ErrorDocumentMiddleware turns it into an API-SIG document.
        self.assertEqual([], self.results()['errors']['keystone'])

    def _wait_for_quiet(self):
        """Every provision verb ended, then a sentinel notification came
        through: everything sent before it has been captured."""
        deadline = time.monotonic() + WAIT_TIMEOUT
        while any(n['target_provision_state'] for n in self.admin(
                'GET', '/v1/nodes?fields=uuid,target_provision_state'
                '&limit=1000', status=200)['nodes']):
            self.assertLess(time.monotonic(), deadline,
                            'provision verbs still running')
            time.sleep(0.1)
        sentinel = self.admin('POST', '/v1/chassis',
                              {'description': 'sentinel'}, 201)['uuid']
        while not any(n['event_type'] == 'baremetal.chassis.create.end' and
                      sentinel in n['raw']
                      for n in self.aio.notifications()):
            self.assertLess(time.monotonic(), deadline,
                            'the sentinel notification never came')
            time.sleep(0.1)
        return self.aio.notifications()

    def _secrets(self, keystone_tokens=True):
        """{secret value: what it is}."""
        wanted = {value: 'driver_info secret' for value in SECRET_VALUES}
        wanted[self.values['signal_token']] = 'signal token'
        if keystone_tokens:
            for persona, token in self.tokens.items():
                wanted[token] = 'Keystone token of %s' % persona
        return wanted

    @staticmethod
    def _scan(texts, wanted):
        """['<where>: <what>'] for each secret found in (where, text)."""
        return ['%s: %s' % (where, kind) for where, text in texts
                for value, kind in wanted.items() if value in text]

    def test_no_secret_in_responses(self):
        results = self.results()
        # The scan sees what it must: node A's secrets are there, masked.
        shown = {where: resp for where, resp in results['responses']}[
            'node_show_own_secret_fields [GET /v1/nodes/{node_a}'
            '?fields=driver_info,instance_info] as project_a_member'].json()
        self.assertEqual(set(SECRET_DRIVER_INFO), set(shown['driver_info']))

        leaks = self._scan(
            (('response of %s' % where,
              resp.text + json.dumps(dict(resp.headers)))
             for where, resp in results['responses']), self._secrets())
        self.assertEqual([], leaks, '%d leaks:\n%s' % (
            len(leaks), '\n'.join(leaks)))

    def test_no_secret_in_notifications_or_logs(self):
        self.results()
        notifications = self._wait_for_quiet()
        node_a = self.values['node_a']
        # The scan sees what it must: node A's create notification carries
        # its driver_info keys, masked, and every kind of node event came.
        created = [n for n in notifications
                   if n['event_type'] == 'baremetal.node.create.end' and
                   node_a in n['raw']]
        self.assertEqual(1, len(created))
        data = created[0]['payload']['baremetal_orch_object.data']
        self.assertEqual(set(SECRET_DRIVER_INFO), set(data['driver_info']))
        types = {n['event_type'] for n in notifications}
        for event_type in ('baremetal.node.update.end',
                           'baremetal.node.provision_set.end',
                           'baremetal.node.maintenance_set.end',
                           'baremetal.node.console_set.end',
                           'baremetal.node.delete.end',
                           'baremetal.port.create.end'):
            self.assertIn(event_type, types)

        payloads = [('notification %s (%s) payload' % (
                     n['event_type'], n['message_id']),
                     json.dumps(n['payload'])) for n in notifications]
        contexts = [('notification %s (%s) context' % (
                     n['event_type'], n['message_id']),
                     json.dumps(n['context'])) for n in notifications]
        logs = [('log of %s' % name, log.read().decode('utf-8', 'replace'))
                for name, log in self.aio.logs.items()]
        # Keystone tokens in the contexts: see the test after this one.
        leaks = (self._scan(payloads + logs, self._secrets()) +
                 self._scan(contexts, self._secrets(keystone_tokens=False)))
        self.addDetail('secrets-scan', content.text_content(
            '%d notifications scanned' % len(notifications)))
        self.assertEqual([], leaks, '%d leaks:\n%s' % (
            len(leaks), '\n'.join(leaks)))

    def test_no_keystone_token_on_the_notification_bus(self):
        self.results()
        notifications = self._wait_for_quiet()
        # The messages carry the caller's context (oslo.messaging drops
        # the token from it): the project member's patches name its user.
        member = self.keystone.validate(
            self.tokens['project_a_member'])['user']['id']
        self.assertTrue(any(
            n['event_type'] == 'baremetal.node.update.end' and
            n['context'].get('user_id', n['context'].get('user')) == member
            for n in notifications))
        leaks = self._scan(
            (('notification %s (%s)' % (n['event_type'], n['message_id']),
              n['raw']) for n in notifications),
            {token: 'Keystone token of %s' % persona
             for persona, token in self.tokens.items()})
        self.assertEqual([], leaks, '%d leaks:\n%s' % (
            len(leaks), '\n'.join(leaks)))
