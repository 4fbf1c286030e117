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
    cfg.StrOpt('configdrive_dir',
               help='When set, the fake driver writes the instance info a '
                    'node would read from its config drive to '
                    '<configdrive_dir>/<node uuid>.json at deploy time.'),
    cfg.FloatOpt('default_duration', default=0.0, min=0,
                 help='Seconds a fake prepare or deploy takes when the node '
                      'has no driver_info.fake_duration.'),
    cfg.StrOpt('call_log',
               help='When set, the fake driver appends one JSON line per '
                    'call (node, phase, time) to this file. Tests and drills '
                    'use it to prove no node is prepared or deployed twice.'),
    cfg.StrOpt('wait_dir',
               help='When set, a node the fake driver holds in its wait '
                    '(driver_info.fake_wait) is marked by a file '
                    '<wait_dir>/<node uuid>.wait, and an abort from any '
                    'process sharing the directory reaches it (through '
                    '<node uuid>.abort). Unset, only an abort from the '
                    'process that holds the node reaches it.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='fake_driver')
