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
"""Base class of the plugin's tests.

Every test class names the personas it needs in ``credentials`` (tempest's
secure-RBAC credential types: ``system_admin``, ``system_reader``,
``project_member``, ``project_alt_member``...); :meth:`client` gives the
baremetal_orch client of a persona, asking for the microversion the class
selected from its range and the configured one. Resources are named with
:meth:`name` (unique per run, so tests may run side by side on one cloud)
and deleted by class cleanups, newest first.
"""

import time

from oslo_utils import uuidutils
from tempest import config
from tempest.lib.common import api_version_utils
from tempest.lib import exceptions as lib_exc
from tempest import test

CONF = config.CONF

#: The service's own microversion range this plugin knows.
MIN_MICROVERSION = '1.0'
MAX_MICROVERSION = 'latest'


class BaremetalOrchTest(api_version_utils.BaseMicroversionTest,
                        test.BaseTestCase):
    """Base of every baremetal_orch test."""

    credentials = ['system_admin']
    min_microversion = MIN_MICROVERSION
    max_microversion = MAX_MICROVERSION

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.service_available.baremetal_orch:
            raise cls.skipException('baremetal_orch is not available')
        cfg_min = (CONF.baremetal_orch.min_microversion
                   or MIN_MICROVERSION)
        api_version_utils.check_skip_with_microversion(
            cls.min_microversion, cls.max_microversion, cfg_min,
            CONF.baremetal_orch.max_microversion)

    @classmethod
    def setup_credentials(cls):
        # No networks: nothing here boots a server.
        cls.set_network_resources()
        super().setup_credentials()

    @classmethod
    def resource_setup(cls):
        super().resource_setup()
        cls.request_microversion = (
            api_version_utils.select_request_microversion(
                cls.min_microversion,
                CONF.baremetal_orch.min_microversion or MIN_MICROVERSION))

    @classmethod
    def setup_clients(cls):
        super().setup_clients()
        cls.admin = cls.client(cls.os_system_admin)

    @classmethod
    def client(cls, manager, microversion=None):
        """The baremetal_orch client of a persona's client manager."""
        factory = manager.baremetal_orch
        return factory.BaremetalOrchClient(
            microversion=microversion or getattr(
                cls, 'request_microversion', None) or MIN_MICROVERSION)

    @staticmethod
    def name(prefix):
        """A name unique to this run, valid as a node or group name."""
        return 'bmo-%s-%s' % (prefix, uuidutils.generate_uuid()[:8])

    # --- resources, deleted at class clean-up --------------------------------

    @classmethod
    def _cleanup(cls, call, *args):
        cls.addClassResourceCleanup(
            lambda: _ignore_missing(call, *args))

    @classmethod
    def create_node(cls, **fields):
        _, node = cls.admin.create_node(**fields)
        cls._cleanup(cls._delete_node, node['uuid'])
        return node

    @classmethod
    def _delete_node(cls, uuid):
        _, node = cls.admin.show('nodes', uuid)
        if node['provision_state'] == 'active':
            # An active node is torn down before it can go.
            cls.admin.set_provision_state(uuid, 'deleted')
            cls.wait_for_provision_state(uuid, 'available')
        for port in cls.admin.list('ports', node=uuid)[1]['ports']:
            _ignore_missing(cls.admin.delete, 'ports', port['uuid'])
        cls.admin.delete('nodes', uuid)

    @classmethod
    def create_port(cls, **fields):
        _, port = cls.admin.create('ports', fields)
        cls._cleanup(cls.admin.delete, 'ports', port['uuid'])
        return port

    @classmethod
    def create_chassis(cls, **fields):
        _, chassis = cls.admin.create('chassis', fields)
        cls._cleanup(cls.admin.delete, 'chassis', chassis['uuid'])
        return chassis

    @classmethod
    def create_strategy(cls, name, groups):
        _, strategy = cls.admin.create_strategy(strategy_document(name,
                                                                  groups))
        cls._cleanup(cls.admin.delete, 'deployment_strategies', name)
        return strategy

    @classmethod
    def wait_for_provision_state(cls, ident, state, timeout=None):
        def check():
            node = cls.admin.show('nodes', ident)[1]
            if node['provision_state'] == state:
                return node
            if node['provision_state'] in ('deploy failed', 'clean failed',
                                           'error'):
                raise AssertionError('node %s is %s: %s' % (
                    ident, node['provision_state'], node['last_error']))
        return wait_until(check, timeout or CONF.baremetal_orch.build_timeout,
                          CONF.baremetal_orch.build_interval,
                          'node %s did not reach %s' % (ident, state))

    def assertStatus(self, status, call, *args, **kwargs):
        """Call and check the HTTP status, error or not; return the body."""
        try:
            resp, body = call(*args, **kwargs)
        except lib_exc.RestClientException as exc:
            resp, body = exc.resp, exc.resp_body
        self.assertEqual(status, resp.status, body)
        return body

    def assertErrorDocument(self, status, body, *needles):
        """An API-SIG error document of ``status`` naming ``needles``.

        ``body`` is the document, or its ``errors`` list (tempest's client
        unwraps a body of one key).
        """
        errors = body['errors'] if isinstance(body, dict) else body
        self.assertIsInstance(errors, list, body)
        error = errors[0]
        self.assertEqual(status, error['status'])
        self.assertTrue(error['code'].startswith('baremetal_orch.'), error)
        for needle in needles:
            self.assertIn(needle, error['detail'])
        return error


def strategy_document(name, groups):
    """A deployment strategy document (the seed's schema)."""
    return {
        'schema': 'shipyard/DeploymentStrategy/v1',
        'metadata': {'schema': 'metadata/Document/v1', 'name': name},
        'data': {'groups': [dict({'depends_on': [], 'critical': True},
                                 **group) for group in groups]},
    }


def wait_until(predicate, timeout, interval, message):
    """Poll ``predicate`` until it returns something true; return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise lib_exc.TimeoutException(
                '%s within %ss' % (message, timeout))
        time.sleep(interval)


def _ignore_missing(call, *args):
    try:
        call(*args)
    except lib_exc.NotFound:
        pass
