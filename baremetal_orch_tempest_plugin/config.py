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
"""Options of the baremetal_orch tempest plugin.

``[service_available] baremetal_orch`` says whether the service is there at
all; ``[enforce_scope] baremetal_orch`` whether it enforces secure RBAC
(system and project scopes, the personas of the RBAC tests); the
``[baremetal_orch]`` group says where the API is and what is behind it.
DevStack's plugin writes them in its ``test-config`` phase.
"""

from oslo_config import cfg

service_option = cfg.BoolOpt(
    'baremetal_orch', default=False,
    help='Whether or not baremetal_orch is expected to be available.')

scope_option = cfg.BoolOpt(
    'baremetal_orch', default=True,
    help='Whether or not baremetal_orch enforces the secure RBAC scopes '
         '(system tokens for system resources, project tokens for owned '
         'nodes). The RBAC tests are skipped when it does not.')

group = cfg.OptGroup(name='baremetal_orch',
                     title='Bare metal orchestration service options')

opts = [
    cfg.StrOpt('catalog_type', default='baremetal-orchestration',
               help='Catalog type of the baremetal_orch service.'),
    cfg.StrOpt('endpoint_type', default='public',
               choices=['public', 'admin', 'internal', 'publicURL',
                        'adminURL', 'internalURL'],
               help='The endpoint type to use for the service.'),
    cfg.StrOpt('region', default='',
               help='The region of the service; empty: the identity '
                    'region.'),
    cfg.StrOpt('min_microversion', default=None,
               help='The lowest microversion the tests may ask for '
                    '(default: the minimum the service announces).'),
    cfg.StrOpt('max_microversion', default='latest',
               help='The highest microversion the tests may ask for.'),
    cfg.IntOpt('build_interval', default=1,
               help='Seconds between two polls of a resource.'),
    cfg.IntOpt('build_timeout', default=300,
               help='Seconds an action or a node may take to reach the '
                    'state a test waits for.'),
    cfg.StrOpt('fake_configdrive_dir',
               help='The [fake_driver]configdrive_dir of the service\'s '
                    'conductor, when the tests run on its host: the signal '
                    'tests read a node\'s deployment token there, as the '
                    'node\'s agent would from its config drive. Unset: '
                    'those tests are skipped.'),
    cfg.BoolOpt('ironic_backend', default=False,
                help='Whether a real Ironic is behind the service (its '
                     'conductor has an [ironic] section and syncs Ironic '
                     'nodes). The scenario tests need it.'),
    cfg.StrOpt('ironic_catalog_type', default='baremetal',
               help='Catalog type of the Ironic behind the service.'),
    cfg.IntOpt('ironic_sync_timeout', default=240,
               help='Seconds within which a node created in Ironic must be '
                    'imported by the conductor (its [conductor] '
                    'sync_interval, plus margin).'),
]
