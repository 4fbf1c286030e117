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
"""The tempest plugin of baremetal_orch (entry point tempest.test_plugins).

Run its tests with::

    tempest run --regex '^baremetal_orch_tempest_plugin\\.'
"""

import os

from tempest import config
from tempest.test_discover import plugins

from baremetal_orch_tempest_plugin import config as plugin_config

_OPTS = (
    (config.service_available_group, [plugin_config.service_option]),
    (config.enforce_scope_group, [plugin_config.scope_option]),
    (plugin_config.group, plugin_config.opts),
)


class BaremetalOrchTempestPlugin(plugins.TempestPlugin):

    def load_tests(self):
        base_path = os.path.split(os.path.dirname(
            os.path.abspath(__file__)))[0]
        test_dir = os.path.join('baremetal_orch_tempest_plugin', 'tests')
        return os.path.join(base_path, test_dir), base_path

    def register_opts(self, conf):
        for group, opts in _OPTS:
            config.register_opt_group(conf, group, opts)

    def get_opt_lists(self):
        return [(group.name, opts) for group, opts in _OPTS]

    def get_service_clients(self):
        params = config.service_client_config(plugin_config.group.name)
        orch = dict(params, **{
            'name': 'baremetal_orch',
            'service_version': 'baremetal_orch.v1',
            'module_path': 'baremetal_orch_tempest_plugin.services.client',
            'client_names': ['BaremetalOrchClient'],
        })
        # The Ironic behind the service (the scenario creates its nodes
        # there): same settings, Ironic's catalog type.
        ironic = dict(params, **{
            'name': 'baremetal_orch_ironic',
            'service_version': 'baremetal_orch.ironic',
            'module_path': 'baremetal_orch_tempest_plugin.services.client',
            'client_names': ['IronicClient'],
            'service': config.CONF.baremetal_orch.ironic_catalog_type,
        })
        return [orch, ironic]
