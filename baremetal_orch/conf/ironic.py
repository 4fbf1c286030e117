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

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = 'ironic'
#: Seconds before an Ironic request without an answer is given up (the
#: default of ``[ironic]timeout``).
REQUEST_TIMEOUT = 60

opts = [
    cfg.StrOpt('shard_key',
               help='The Ironic shard this conductor service owns. When set, '
                    'only nodes of this shard are ever listed.'),
    cfg.StrOpt('conductor_group',
               deprecated_name='partition_key',
               help='The Ironic conductor group this service owns. '
                    'Formerly partition_key.'),
    cfg.ListOpt('peer_list', default=[],
                deprecated_for_removal=True,
                deprecated_reason='Use shard_key: one conductor service per '
                                  'shard, moving nodes with '
                                  'baremetal-orch-manage node move.',
                help='Services sharing one conductor group. With more than '
                     'one, nodes are spread over them on a hash ring.'),
    cfg.IntOpt('api_max_retries', default=6, min=0,
               help='Retries of an Ironic call answered with a conflict '
                    'saying the node is locked.'),
    cfg.IntOpt('outage_tolerance', default=600, min=0, mutable=True,
               help='Seconds an Ironic request that gets no answer '
                    '(connection refused, reset or timed out) or a 5xx '
                    'other than Ironic\'s concurrency limit is sent again, '
                    'with a growing delay, before the node is failed. '
                    'Counted per request, so per node and per poll. A '
                    'provision request whose answer was lost is never sent '
                    'again blind: the node is read first, and its state '
                    'decides.'),
    cfg.IntOpt('max_concurrent_provisioning', min=1, mutable=True,
               help='The most provision requests this conductor keeps in '
                    'flight at one Ironic, per kind of work (deploying; '
                    'cleaning, which includes provide and undeploy). Unset, '
                    'the conductor finds the limit from Ironic\'s answers: '
                    'past [conductor]max_concurrent_deploy or '
                    'max_concurrent_clean Ironic answers 503, and the node '
                    'waits in a queue for a slot instead of failing; the '
                    'phase timeout of a node starts when Ironic accepts '
                    'its request.'),
    cfg.IntOpt('api_retry_interval', default=2, min=0,
               help='Seconds between two retries of an Ironic call.'),
    cfg.FloatOpt('poll_interval', default=1.0, min=0.05,
                 help='Seconds between two looks at a node\'s state while '
                      'a conductor waits for it. While many nodes are '
                      'waited on, one listing of the shard per poll shows '
                      'them all (listings start at least half this apart); '
                      'otherwise each node is fetched alone.'),
]


def register_opts(conf):
    conf.register_opts(opts, group=GROUP)
    ks_loading.register_session_conf_options(conf, GROUP)
    ks_loading.register_auth_conf_options(conf, GROUP)
    # Adapter options include endpoint_override, service_type and
    # valid_interfaces.
    ks_loading.register_adapter_conf_options(
        conf, GROUP, include_deprecated=False)
    conf.set_default('service_type', 'baremetal', group=GROUP)
    # A request whose answer never comes (a half-open connection behind a
    # proxy, an overloaded API) must end, so that it counts as an outage
    # and is retried or reconciled, instead of blocking every wait that
    # shares its poll.
    conf.set_default('timeout', REQUEST_TIMEOUT, group=GROUP)


def _session_opts():
    session = ks_loading.get_session_conf_options()
    for opt in session:
        if opt.dest == 'timeout':
            opt.default = REQUEST_TIMEOUT
    return session


def list_opts():
    return (opts
            + _session_opts()
            + ks_loading.get_auth_common_conf_options()
            + ks_loading.get_auth_plugin_conf_options('password')
            + ks_loading.get_adapter_conf_options(include_deprecated=False))
