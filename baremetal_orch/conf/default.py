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

import socket

from oslo_config import cfg

opts = [
    cfg.StrOpt('host', default=socket.gethostname(),
               sample_default='localhost',
               help='Name of this service. Must be unique among the '
                    'conductor services of a deployment.'),
    cfg.StrOpt('rpc_transport', default='oslo', choices=[
        ('oslo', 'oslo.messaging over [DEFAULT]transport_url'),
        ('none', 'direct in-process calls; API and conductor in one process '
                 '(the all-in-one baremetal-orch command)')],
        help='How the API reaches the conductor.'),
    cfg.FloatOpt('thread_switch_interval', default=0.001, min=0.0001,
                 max=0.1, mutable=True,
                 help='The all-in-one baremetal-orch only: seconds a '
                      'thread of its one process runs Python code before '
                      'the interpreter hands over to another '
                      '(sys.setswitchinterval; Python\'s own default is '
                      '0.005). The API\'s requests and the conductor\'s '
                      'node work share one interpreter lock there: a '
                      'shorter interval keeps requests answered quickly '
                      'while a deployment runs (the p99 of GET /v1/nodes, '
                      'doc/source/contributor/benchmarks.rst, P10), at '
                      'the cost of more hand-overs. The split processes '
                      'keep Python\'s default.'),
    cfg.ListOpt('enabled_drivers', default=['ironic'],
                help='Provisioning drivers nodes may use (entry points of '
                     'baremetal_orch.provisioning.drivers): ironic, fake. '
                     'Creating or updating a node with another driver is '
                     'refused (400), and a conductor does not work a node '
                     'whose driver is not enabled. The all-in-one '
                     'baremetal-orch enables fake by default, for its '
                     'demonstration site; fake only simulates nodes.'),
    cfg.StrOpt('rpc_version_cap', choices=[
        ('1.0', 'the first release: every call it makes')],
        help='Highest conductor RPC API version this service sends. Unset '
             '(the default): the newest it knows. During a rolling upgrade, '
             'set it to the version of the oldest conductor still running '
             'on the upgraded API and conductors, and unset it once every '
             'conductor runs the new release.'),
    cfg.StrOpt('notification_level',
               choices=[('debug', 'debug and above'),
                        ('info', 'info and above'),
                        ('warning', 'warning and above'),
                        ('error', 'error and above'),
                        ('critical', 'critical only')],
               help='Lowest priority of the versioned notifications sent. '
                    'Unset (the default) sends none.'),
    cfg.ListOpt('versioned_notifications_topics',
                default=['baremetal_orch_versioned_notifications'],
                help='Topics the versioned notifications are sent on.'),
    cfg.IntOpt('notification_queue_size', default=10000, min=0,
               help='Versioned notifications are handed to one sender '
                    'thread per process, which sends them in order, so '
                    'that the message bus never slows down an API request '
                    'or a deployment. This is the most that may wait for '
                    'the bus; when it is full (the bus is away) further '
                    'notifications are dropped and logged. 0 sends each '
                    'one in the thread that emits it.'),
    cfg.StrOpt('notification_sender', default='auto',
               choices=[('auto', 'process in conductor services (and the '
                                 'all-in-one), thread in API processes'),
                        ('process', 'one child process of the service '
                                    'sends them (the service\'s own '
                                    'interpreter does not pay for '
                                    'publishing)'),
                        ('thread', 'one thread of the service sends '
                                   'them')],
               help='What sends the queued versioned notifications, in '
                    'the order they were emitted. A conductor publishes '
                    'many (every node state change) while its node '
                    'workers share one interpreter lock: a child process '
                    'takes that work off them.'),
    cfg.FloatOpt('notification_flush_timeout', default=10.0, min=0,
                 help='Seconds a stopping service waits for its queued '
                      'notifications to be sent.'),
]


def register_opts(conf):
    conf.register_opts(opts)
