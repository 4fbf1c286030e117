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
    cfg.IntOpt('max_concurrent_groups', mutable=True, default=1, min=1,
               help='How many ready groups of one action run side by side. '
                    '1 serializes groups, as the deployment grouping '
                    'specification prescribes. Read each time a group asks '
                    'for a slot: a reload (SIGHUP) applies to the groups '
                    'that start after it, running actions included.'),
    cfg.IntOpt('max_concurrent_nodes', mutable=True, default=16, min=1,
               help='How many nodes of one group are prepared or deployed '
                    'in parallel. Read when a group\'s phase starts: a '
                    'reload (SIGHUP) applies to the next group.'),
    cfg.IntOpt('prepare_timeout', mutable=True, default=1800, min=1,
               help='Seconds a node\'s prepare may take in its driver '
                    '(for Ironic, from when Ironic accepts the request: '
                    'time queued behind its concurrency limit does not '
                    'count). A group\'s prepare phase fails with timeout '
                    'once none of its nodes has ended for this long.'),
    cfg.IntOpt('deploy_timeout', mutable=True, default=3600, min=1,
               help='Seconds a node\'s deploy may take in its driver (for '
                    'Ironic, from when Ironic accepts the request). A '
                    'group\'s deploy phase fails with timeout once none of '
                    'its nodes has ended for this long.'),
    cfg.IntOpt('signal_timeout', mutable=True, default=1800, min=1,
               help='Seconds to wait for the final signal of a node whose '
                    'group has wait_for_signal set.'),
    cfg.IntOpt('heartbeat_interval', default=10, min=1,
               help='Seconds between two heartbeats of a conductor (a '
                    'futurist periodic task).'),
    cfg.IntOpt('heartbeat_timeout', default=60, min=2,
               help='Seconds after the last heartbeat before a conductor is '
                    'considered dead and its actions are taken over.'),
    cfg.IntOpt('sync_interval', default=60, min=-1,
               help='Seconds between two Ironic syncs; -1 disables it.'),
    cfg.IntOpt('take_over_interval', min=1,
               help='Seconds between two looks for dead conductors whose '
                    'nodes and actions this conductor takes over. Default: '
                    'heartbeat_interval.'),
    cfg.IntOpt('console_restore_interval', min=1,
               help='Seconds between two looks for enabled consoles of '
                    'dead conductors\' nodes to restore on this conductor. '
                    'Default: heartbeat_interval.'),
    cfg.IntOpt('pending_action_timeout', default=300, min=0,
               help='Seconds after which an action of this conductor that '
                    'is still pending, and not running here, is removed '
                    'with its tasks: an error or a crash between the rows '
                    'of its admission left it holding its nodes. Checked '
                    'every quarter of this time; 0 disables the sweep.'),
    cfg.IntOpt('periodic_max_workers', default=4, min=1,
               help='Threads running the periodic tasks (heartbeat, Ironic '
                    'sync, take-over, console restore); a task never runs '
                    'twice at once.'),
    cfg.IntOpt('workers', default=8, min=1,
               help='Threads of the conductor RPC server and task pool.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='conductor')
