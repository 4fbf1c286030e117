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
"""[taskflow]: the optional jobboard on which conductors share actions.

Option names follow Octavia's ``[task_flow]`` group (amphora v2 flows).
"""

from oslo_config import cfg

REDIS = 'redis_taskflow_driver'
ZOOKEEPER = 'zookeeper_taskflow_driver'

opts = [
    cfg.BoolOpt('jobboard_enabled', default=False,
                help='Post every admitted action as a job on a taskflow '
                     'jobboard instead of running it on the conductor that '
                     'admitted it: every conductor takes jobs from the '
                     'board (at most [conductor]workers actions running on '
                     'it), claims the action in the database and runs it. '
                     'Who runs an action is decided in the database in '
                     'both modes: a live conductor takes over the actions '
                     'of one whose heartbeat is older than '
                     '[conductor]heartbeat_timeout, and an action that no '
                     'conductor took for that long (its job was lost with '
                     'the backend\'s data). Every conductor of a site must '
                     'use the same setting.'),
    cfg.StrOpt('jobboard_backend_driver', default=REDIS,
               choices=[(REDIS, 'Redis (the redis Python package)'),
                        (ZOOKEEPER, 'ZooKeeper (the kazoo Python package)')],
               help='The coordination backend that holds the jobboard.'),
    cfg.ListOpt('jobboard_backend_hosts', default=['127.0.0.1'],
                help='Hosts of the jobboard backend. Redis uses the first '
                     'one; ZooKeeper uses them all as its ensemble.'),
    cfg.PortOpt('jobboard_backend_port', default=6379,
                help='Port of the jobboard backend (6379 for Redis, 2181 '
                     'for ZooKeeper).'),
    cfg.StrOpt('jobboard_backend_password', default='', secret=True,
               help='Password of the jobboard backend (Redis AUTH); empty '
                    'for none.'),
    cfg.IntOpt('jobboard_redis_backend_db', default=0, min=0,
               help='Redis database number of the jobboard.'),
    cfg.StrOpt('jobboard_backend_namespace', default='baremetal_orch',
               help='Prefix of the jobboard\'s keys in Redis, or the root '
                    'path of its nodes in ZooKeeper.'),
    cfg.StrOpt('jobboard_name', default='baremetal_orch_jobboard',
               help='Name of the jobboard. Conductors that share actions '
                    'use the same name (and namespace).'),
    cfg.IntOpt('jobboard_expiration_time', default=30, min=2,
               help='Seconds a conductor\'s claim on a job lives (Redis): '
                    'a conductor holds a claim only from taking a job to '
                    'consuming it, so this bounds how long the job of a '
                    'conductor that died in between stays unclaimable. '
                    'With ZooKeeper a claim ends with the dead '
                    'conductor\'s session, whose timeout this is.'),
    cfg.FloatOpt('jobboard_wait_timeout', default=1.0, min=0.1,
                 help='Seconds a conductor waits between two looks at the '
                      'jobboard when it found no job to claim.'),
    cfg.BoolOpt('jobboard_save_logbook', default=False,
                help='Keep the logbook and flow detail of an action in '
                     'the database once the action ended (for debugging); '
                     'by default they are deleted, with or without a '
                     'jobboard.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='taskflow')
