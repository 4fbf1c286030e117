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

from oslo_config import cfg

opts = [
    cfg.IntOpt('max_concurrent_groups', default=1, min=1,
               help='How many ready groups of one action run side by side. '
                    '1 serializes groups, as the deployment grouping '
                    'specification prescribes.'),
    cfg.IntOpt('max_concurrent_nodes', default=16, min=1,
               help='How many nodes of one group are prepared or deployed '
                    'in parallel.'),
    cfg.IntOpt('prepare_timeout', default=1800, min=1,
               help='Seconds a group\'s prepare phase may take.'),
    cfg.IntOpt('deploy_timeout', default=3600, min=1,
               help='Seconds a group\'s deploy phase may take.'),
    cfg.IntOpt('signal_timeout', default=1800, min=1,
               help='Seconds to wait for the final signal of a node whose '
                    'group has wait_for_signal set.'),
    cfg.IntOpt('heartbeat_interval', default=10, min=1,
               help='Seconds between two heartbeats of a conductor.'),
    cfg.IntOpt('heartbeat_timeout', default=60, min=2,
               help='Seconds after the last heartbeat before a conductor is '
                    'considered dead and its actions are taken over.'),
    cfg.IntOpt('sync_interval', default=60, min=-1,
               help='Seconds between two Ironic syncs; -1 disables it.'),
    cfg.IntOpt('workers', default=8, min=1,
               help='Threads of the conductor RPC server and task pool.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='conductor')
