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
"""Proof that the functional-test fixtures drive the real services."""

import os
import sys
import threading
import unittest

import fixtures
from keystoneauth1 import exceptions as ks_exceptions
from keystonemiddleware import auth_token
from oslo_config import cfg
import oslo_messaging
from oslo_utils import uuidutils
import requests
import sqlalchemy
import testscenarios
import testtools
from testtools import content
from testtools.testresult import doubles
import webob

from baremetal_orch.tests.functional import base
from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing.fixtures import keystone
from baremetal_orch_testing.fixtures import venvs
from baremetal_orch_testing import helpers

CONF = cfg.CONF
WAIT = 30  # seconds allowed for a message to arrive


def unique(prefix):
    return '%s-%s' % (prefix, uuidutils.generate_uuid(dashed=False)[:8])


class TestKeystoneFixture(base.FunctionalTestCase):
    """One real Keystone for the class (see keystone.KeystoneFixture)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.keystone = cls.use_class_fixture(keystone.KeystoneFixture())

    def _validate(self, token):
        """GET /v3/auth/tokens as the system admin."""
        return requests.get(
            self.keystone.auth_url + '/auth/tokens',
            headers={'X-Auth-Token': self.keystone.admin_token(),
                     'X-Subject-Token': token},
            timeout=keystone.HTTP_TIMEOUT)

    def test_admin_token_is_system_scoped(self):
        body = self.keystone.validate(self.keystone.admin_token())
        self.assertEqual({'all': True}, body['system'])
        self.assertNotIn('project', body)
        self.assertIn('admin', [role['name'] for role in body['roles']])

    def test_project_token_validates(self):
        project = unique('project')
        self.keystone.create_project(project)
        user = unique('member')
        self.keystone.create_user(user, 'secret', project=project,
                                  roles=['member'])
        token = self.keystone.token(user, 'secret', project=project)

        resp = self._validate(token)
        self.assertEqual(200, resp.status_code, resp.text)
        body = resp.json()['token']
        self.assertEqual(project, body['project']['name'])
        self.assertEqual(user, body['user']['name'])
        self.assertEqual(404, self._validate(token[:-4] + 'AAAA').status_code)

    def test_reader_gets_exactly_reader(self):
        project = unique('project')
        self.keystone.create_project(project)
        user = unique('reader')
        self.keystone.create_user(user, 'secret', project=project,
                                  roles=['reader'])
        body = self.keystone.validate(
            self.keystone.token(user, 'secret', project=project))
        self.assertEqual(['reader'], [role['name'] for role in body['roles']])

    def test_system_reader(self):
        user = unique('auditor')
        self.keystone.create_user(user, 'secret', system_roles=['reader'])
        body = self.keystone.validate(
            self.keystone.token(user, 'secret', system_scope='all'))
        self.assertEqual({'all': True}, body['system'])
        self.assertEqual(['reader'], [role['name'] for role in body['roles']])

    def test_wrong_password_is_refused(self):
        self.assertRaises(ks_exceptions.Unauthorized, self.keystone.token,
                          'admin', 'wrong', system_scope='all')

    def test_service_user_and_catalog(self):
        body = self.keystone.validate(self.keystone.service_token())
        roles = {role['name'] for role in body['roles']}
        self.assertTrue({'admin', 'service'} <= roles, roles)
        identity = [svc for svc in body['catalog']
                    if svc['type'] == 'identity']
        self.assertEqual({self.keystone.auth_url},
                         {ep['url'] for ep in identity[0]['endpoints']})

    def test_authtoken_options_drive_keystonemiddleware(self):
        # Our API's [keystone_authtoken] values, for real: the middleware
        # authenticates as the service user and validates user tokens.
        def app(environ, start_response):
            start_response('200 OK', [('Content-Type', 'text/plain')])
            return [environ['HTTP_X_ROLES'].encode()]

        conf = dict(self.keystone.authtoken_options())
        conf['delay_auth_decision'] = False
        # A private ConfigOpts keeps the password plugin's options (auth_url
        # is required) off the global cfg.CONF of later tests.
        private = cfg.ConfigOpts()
        private([], default_config_files=[])
        conf['oslo_config_config'] = private
        middleware = auth_token.AuthProtocol(app, conf)
        project = unique('project')
        self.keystone.create_project(project)
        user = unique('reader')
        self.keystone.create_user(user, 'secret', project=project,
                                  roles=['reader'])

        ok = webob.Request.blank('/', headers={
            'X-Auth-Token': self.keystone.token(user, 'secret',
                                                project=project)})
        resp = ok.get_response(middleware)
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual('reader', resp.text)
        bad = webob.Request.blank('/', headers={'X-Auth-Token': 'bogus'})
        self.assertEqual(401, bad.get_response(middleware).status_int)


class TestDatabaseFixture(testscenarios.WithScenarios,
                          base.FunctionalTestCase):
    scenarios = [(engine, {'engine': engine})
                 for engine in databases.ENGINES]

    def test_create_write_drop(self):
        db = databases.Database(self.engine)
        db.setUp()
        cleaned = False
        engine = sqlalchemy.create_engine(db.url)
        try:
            self.assertTrue(db.exists())
            with engine.begin() as conn:
                conn.exec_driver_sql(
                    'CREATE TABLE things (id INTEGER PRIMARY KEY, '
                    'name VARCHAR(32))')
                conn.exec_driver_sql(
                    "INSERT INTO things VALUES (1, 'node-1')")
            with engine.connect() as conn:
                self.assertEqual(
                    [(1, 'node-1')],
                    conn.exec_driver_sql('SELECT * FROM things').all())
                if self.engine != 'sqlite':
                    self.assertEqual(db.name,
                                     engine.url.database)
            # A forgotten open connection must not block the drop.
            leaked = engine.connect()
            leaked.exec_driver_sql('SELECT * FROM things').all()
            db.cleanUp()
            cleaned = True
            self.assertFalse(db.exists())
            leaked.invalidate()
        finally:
            engine.dispose()
            if not cleaned:
                db.cleanUp()

    def test_two_databases_are_separate(self):
        first = self.useFixture(databases.Database(self.engine))
        second = self.useFixture(databases.Database(self.engine))
        self.assertNotEqual(first.url, second.url)


class TestUnreachableServices(base.FunctionalTestCase):
    """The skip-or-fail rule, against a port where nothing listens."""

    def _closed_mysql(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'BAREMETAL_ORCH_MYSQL_URL',
            'mysql+pymysql://root@127.0.0.1:%d/' %
            func_fixtures.free_port()))

    def test_database_skips_when_not_required(self):
        self._closed_mysql()
        self.useFixture(fixtures.EnvironmentVariable(
            databases.REQUIRE_ENV, None))
        db = databases.Database('mysql')
        exc = self.assertRaises(self.skipException, db.setUp)
        self.assertIn('mysql server', str(exc))
        self.assertIn(databases.REQUIRE_ENV, str(exc))

    def test_database_fails_when_required(self):
        self._closed_mysql()
        self.useFixture(fixtures.EnvironmentVariable(
            databases.REQUIRE_ENV, '1'))
        db = databases.Database('mysql')
        exc = self.assertRaises(func_fixtures.ServiceUnavailable, db.setUp)
        self.assertIn(databases.REQUIRE_ENV, str(exc))

    def test_skip_inside_a_test_is_a_skip(self):
        # Through useFixture, the skip must reach the runner as a skip.
        self._closed_mysql()
        self.useFixture(fixtures.EnvironmentVariable(
            databases.REQUIRE_ENV, None))

        class Inner(base.FunctionalTestCase):
            def test_it(inner):
                inner.useFixture(databases.Database('mysql'))

        result = testtools.TestResult()
        Inner('test_it').run(result)
        self.assertEqual([], result.errors + result.failures)
        self.assertEqual(1, len(sum(result.skip_reasons.values(), [])))

    def test_broker_skip_and_fail(self):
        self.useFixture(fixtures.MonkeyPatch(
            'baremetal_orch_testing.fixtures.broker.PORT',
            func_fixtures.free_port()))
        self.useFixture(fixtures.EnvironmentVariable(
            broker.REQUIRE_ENV, None))
        self.assertRaises(self.skipException, broker.RabbitMQ().setUp)
        self.useFixture(fixtures.EnvironmentVariable(
            broker.REQUIRE_ENV, 'yes'))
        self.assertRaises(func_fixtures.ServiceUnavailable,
                          broker.RabbitMQ().setUp)


class Echo:
    """An RPC endpoint."""

    target = oslo_messaging.Target(version='1.0')

    def echo(self, ctxt, value):
        return {'value': value, 'thread': threading.current_thread().name}


class Collector:
    """A notification endpoint."""

    def __init__(self):
        self.received = []
        self.arrived = threading.Event()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self.received.append((publisher_id, event_type, payload))
        self.arrived.set()


class TestRabbitMQVhost(base.FunctionalTestCase):

    def test_vhost_lives_as_long_as_the_fixture(self):
        mq = broker.RabbitMQ()
        mq.setUp()
        try:
            self.assertTrue(mq.exists())
            self.assertEqual(
                'rabbit://guest:guest@127.0.0.1:5672/' + mq.vhost,
                mq.transport_url)
        finally:
            mq.cleanUp()
        self.assertFalse(mq.exists())


class TestRabbitMQFixture(base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        self.mq = self.useFixture(broker.RabbitMQ())

    def _rpc_transport(self, url=None):
        # oslo.messaging registers its options on the global cfg.CONF only
        # (REAL-COMPONENTS.md): use it, reset by the base class per test.
        transport = oslo_messaging.get_rpc_transport(
            CONF, url=url or self.mq.transport_url)
        self.addCleanup(transport.cleanup)
        return transport

    def _start(self, server):
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)

    def test_rpc_call(self):
        transport = self._rpc_transport()
        target = oslo_messaging.Target(topic='bmo-test', server='host-1')
        self._start(oslo_messaging.get_rpc_server(
            transport, target, [Echo()], executor='threading'))
        client = oslo_messaging.get_rpc_client(
            transport, oslo_messaging.Target(topic='bmo-test'),
            timeout=WAIT)
        for value in ('one', 'two'):
            reply = client.prepare(server='host-1').call({}, 'echo',
                                                         value=value)
            self.assertEqual(value, reply['value'])
        # The threading executor, not the caller's thread, ran it.
        self.assertNotEqual(threading.current_thread().name, reply['thread'])

    def test_vhosts_are_isolated(self):
        transport = self._rpc_transport()
        self._start(oslo_messaging.get_rpc_server(
            transport, oslo_messaging.Target(topic='bmo-test',
                                             server='host-1'),
            [Echo()], executor='threading'))
        other = self.useFixture(broker.RabbitMQ())
        client = oslo_messaging.get_rpc_client(
            self._rpc_transport(other.transport_url),
            oslo_messaging.Target(topic='bmo-test', server='host-1'),
            timeout=1)
        self.assertRaises(oslo_messaging.MessagingTimeout,
                          client.call, {}, 'echo', value='lost')

    def test_notification(self):
        transport = oslo_messaging.get_notification_transport(
            CONF, url=self.mq.transport_url)
        self.addCleanup(transport.cleanup)
        collector = Collector()
        listener = oslo_messaging.get_notification_listener(
            transport, [oslo_messaging.Target(topic='bmo_notifications')],
            [collector], executor='threading')
        self._start(listener)
        notifier = oslo_messaging.Notifier(
            transport, publisher_id='baremetal-orch.test',
            driver='messagingv2', topics=['bmo_notifications'])
        notifier.info({}, 'baremetal.node.create.end', {'uuid': 'n-1'})
        self.assertTrue(collector.arrived.wait(WAIT))
        self.assertEqual([('baremetal-orch.test', 'baremetal.node.create.end',
                           {'uuid': 'n-1'})], collector.received)


class LoggingFixture(fixtures.Fixture):
    """A fixture with logs, like KeystoneFixture, for the base class."""

    cleaned = False

    def _setUp(self):
        self.addCleanup(setattr, self, 'cleaned', True)

    def log_details(self):
        return {'fake/log': content.text_content('a line of log')}


class TestBase(base.FunctionalTestCase):
    """FunctionalTestCase: class fixtures, processes, wait_for_http."""

    def test_class_fixture_shared_and_logs_attached_on_failure(self):
        shared = LoggingFixture()
        seen = []

        class Inner(base.FunctionalTestCase):
            @classmethod
            def setUpClass(cls):
                super().setUpClass()
                cls.fx = cls.use_class_fixture(shared)

            def test_fails(inner):
                seen.append((inner.fx, inner.fx.cleaned))
                inner.fail('on purpose')

            def test_passes(inner):
                seen.append((inner.fx, inner.fx.cleaned))

        result = doubles.ExtendedTestResult()
        unittest.TestSuite([Inner('test_fails'),
                            Inner('test_passes')]).run(result)
        self.assertEqual([(shared, False), (shared, False)], seen)
        self.assertTrue(shared.cleaned)  # after the last test of the class
        outcomes = {event[1].id().rsplit('.', 1)[1]:
                    (event[0], event[2] if len(event) > 2 else {})
                    for event in result._events
                    if event[0] in ('addFailure', 'addSuccess')}
        outcome, details = outcomes['test_fails']
        self.assertEqual('addFailure', outcome)
        self.assertEqual('a line of log', details['fake/log'].as_text())
        outcome, details = outcomes['test_passes']
        self.assertEqual('addSuccess', outcome)
        self.assertNotIn('fake/log', details or {})

    def test_serves_then_stops_and_attaches_log_on_failure(self):
        port = func_fixtures.free_port()
        seen = {}

        class Inner(base.FunctionalTestCase):
            def test_it(inner):
                proc = inner.start_process(
                    [sys.executable, '-u', '-m', 'http.server', str(port),
                     '--bind', '127.0.0.1'], log_name='web')
                seen['proc'] = proc
                resp = inner.wait_for_http('http://127.0.0.1:%d/' % port,
                                           timeout=WAIT, process=proc)
                seen['status'] = resp.status_code
                inner.fail('on purpose')

        result = testtools.TestResult()
        Inner('test_it').run(result)
        self.assertEqual(200, seen['status'])
        self.assertEqual(1, len(result.failures))
        # Stopped on cleanUp, and the log (with the request) reported.
        self.assertIsNotNone(seen['proc'].poll())
        self.assertFalse(os.path.exists(seen['proc'].log_path))
        self.assertIn('"GET / HTTP/1.1" 200', seen['proc'].log.read()
                      .decode())

    def test_early_exit_is_reported(self):
        proc = self.start_process([sys.executable, '-c',
                                   'print("boom"); raise SystemExit(3)'],
                                  log_name='short')
        exc = self.assertRaises(helpers.ProcessError, self.wait_for_http,
                                'http://127.0.0.1:%d/' %
                                func_fixtures.free_port(),
                                timeout=WAIT, process=proc)
        self.assertIn('exited with 3', str(exc))
        self.assertIn('boom', str(exc))


class TestVenvs(testtools.TestCase):

    def test_key_ignores_order_and_follows_content(self):
        self.assertEqual(venvs.venv_key(['a', 'b']),
                         venvs.venv_key(['b', 'a']))
        self.assertNotEqual(venvs.venv_key(['a', 'b']),
                            venvs.venv_key(['a', 'b==1']))

    def test_cache_root_from_environment(self):
        self.useFixture(fixtures.EnvironmentVariable(
            venvs.CACHE_ENV, '/somewhere/else'))
        self.assertEqual('/somewhere/else/keystone-%s' %
                         venvs.venv_key(['keystone']),
                         venvs.venv_path('keystone', ['keystone']))

    def test_half_built_venv_is_not_ready(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        self.assertFalse(venvs.is_ready(tmp))
        open(os.path.join(tmp, venvs.MARKER), 'w').close()
        self.assertTrue(venvs.is_ready(tmp))
