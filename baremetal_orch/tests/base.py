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
"""Base classes of the unit tests."""

import gc

import fixtures
from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslotest import base

from baremetal_orch import conf  # noqa: F401  (registers the options)
from baremetal_orch_testing import helpers

CONF = cfg.CONF


class TestCase(base.BaseTestCase):
    """Base of every unit test: a clean configuration per test."""

    def setUp(self):
        super().setUp()
        # A launcher run here froze the heap (launcher.freeze_heap): what
        # this test made becomes collectable again after it.
        self.addCleanup(gc.unfreeze)
        self.cfg_fixture = self.useFixture(config_fixture.Config(CONF))
        CONF([], project='baremetal_orch', default_config_files=[])
        # Tests make fake nodes as the all-in-one does, and ironic ones.
        self.config(enabled_drivers=['fake', 'ironic'])

    def wait_for(self, predicate, timeout=120, interval=0.05):
        """:func:`helpers.wait_for`: poll until predicate() is true."""
        return helpers.wait_for(predicate, timeout, interval)

    def config(self, group=None, **kw):
        """Override options for this test only."""
        self.cfg_fixture.config(group=group, **kw)


class DbTestCase(TestCase):
    """A test with a fresh, migrated sqlite database of its own."""

    def setUp(self):
        super().setUp()
        import os

        from baremetal_orch.db import migration
        from baremetal_orch.db.sqlalchemy import api as sqla_api
        from baremetal_orch import notifications
        from baremetal_orch import objects

        objects.register_all()
        notifications.register_all()
        tmp = self.useFixture(fixtures.TempDir()).path
        self.config(group='database',
                    connection='sqlite:///%s' % os.path.join(tmp, 'db.sqlite'))
        self.config(rpc_transport='none', host='test-conductor')
        self.config(group='conductor', heartbeat_interval=1)
        sqla_api.reset_engine()
        self.addCleanup(sqla_api.reset_engine)
        migration.upgrade()

    def create_node(self, **values):
        from baremetal_orch.db import api as dbapi
        values.setdefault('driver', 'fake')
        values.setdefault('provision_state', 'enroll')
        return dbapi.create_node(values)

    def running_action(self):
        """The UUID of a new ``deploy_site`` action row, running: what
        node work asks whether it may start."""
        from baremetal_orch.db import api as dbapi
        return dbapi.create_action({'name': 'deploy_site',
                                    'state': 'running'}).uuid


class ConductorTestCase(DbTestCase):
    """A database plus an in-process conductor (rpc_transport = none)."""

    def setUp(self):
        super().setUp()
        from baremetal_orch.conductor import manager
        from baremetal_orch.conductor import rpcapi

        self.manager = manager.ConductorManager('test-conductor')
        self.manager.init_host()
        rpcapi.set_local_manager(self.manager)
        self.addCleanup(rpcapi.set_local_manager, None)
        self.addCleanup(self.manager.del_host, False)
        # Before the conductor stops and the database goes: a flow left
        # running would go on against the next test's database (and one
        # of its groups could wait for a slot until the process exits).
        self.addCleanup(self.manager.actions.wait, self.ACTIONS_END_WITHIN)

    #: Seconds a test's running actions are given to end after it.
    ACTIONS_END_WITHIN = 5.0


class ApiTestCase(ConductorTestCase):
    """The WSGI application through webtest, with personas.

    ``self.get/post/...`` take ``persona=`` among PERSONAS; the default is
    a system admin. Authentication is replaced by the headers
    keystonemiddleware would set, so policy is enforced for real.
    """

    PERSONAS = {
        'system_admin': {'roles': 'admin,member,reader', 'system': 'all'},
        'system_reader': {'roles': 'reader', 'system': 'all'},
        'project_admin': {'roles': 'admin,member,reader',
                          'project': 'project-a'},
        'project_member': {'roles': 'member,reader', 'project': 'project-a'},
        'project_reader': {'roles': 'reader', 'project': 'project-a'},
        'other_member': {'roles': 'member,reader', 'project': 'project-b'},
    }

    def setUp(self):
        super().setUp()
        import webtest

        from baremetal_orch.api import app
        from baremetal_orch.common import policy

        self.config(group='api', auth_strategy='keystone')
        policy.reset()
        self.addCleanup(policy.reset)
        self.useFixture(fixtures.MonkeyPatch(
            'baremetal_orch.api.app.AuthTokenMiddleware',
            lambda application: application))
        self.app = webtest.TestApp(app.setup_app())

    def headers(self, persona='system_admin', version=None, extra=None):
        p = self.PERSONAS[persona]
        headers = {'X-Roles': p['roles'], 'X-User-Id': 'user-' + persona,
                   'X-Identity-Status': 'Confirmed'}
        if p.get('system'):
            headers['OpenStack-System-Scope'] = p['system']
        if p.get('project'):
            headers['X-Project-Id'] = p['project']
        if version:
            headers['OpenStack-API-Version'] = 'baremetal-orch %s' % version
        headers.update(extra or {})
        return headers

    def _call(self, method, path, body=None, persona='system_admin',
              status=None, version=None, headers=None, content_type=None):
        kwargs = {'headers': self.headers(persona, version, headers),
                  'expect_errors': True}
        if method in ('post', 'put', 'patch'):
            if isinstance(body, (bytes, str)):
                kwargs['params'] = body
                kwargs['content_type'] = content_type or 'application/json'
                resp = getattr(self.app, method)(path, **kwargs)
            else:
                resp = getattr(self.app, method + '_json')(
                    path, body, **kwargs)
        else:
            resp = getattr(self.app, method)(path, **kwargs)
        if status is not None:
            self.assertEqual(status, resp.status_int,
                             '%s %s: %s' % (method.upper(), path, resp.text))
        return resp

    def get(self, path, **kw):
        return self._call('get', path, **kw)

    def post(self, path, body=None, **kw):
        return self._call('post', path, body, **kw)

    def put(self, path, body=None, **kw):
        return self._call('put', path, body, **kw)

    def patch(self, path, body=None, **kw):
        return self._call('patch', path, body, **kw)

    def delete(self, path, **kw):
        return self._call('delete', path, **kw)

    def assertError(self, resp, status, code=None, detail_contains=None):
        """An API-SIG error document with this status (and code)."""
        self.assertEqual(status, resp.status_int, resp.text)
        error = resp.json['errors'][0]
        self.assertEqual(status, error['status'])
        if code is not None:
            self.assertEqual(code, error['code'])
        if detail_contains is not None:
            self.assertIn(detail_contains, error['detail'])
        return error
