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
"""Options of the ``[labels]`` group: Kubernetes node label drivers."""

from oslo_config import cfg

opts = [
    cfg.StrOpt('driver', default='noop',
               help='Label driver (baremetal_orch.labels.drivers '
                    'entry point): noop or kubernetes.'),
    cfg.StrOpt('kubeconfig',
               help='Path of the kubeconfig the kubernetes driver uses. '
                    'When unset, the kubernetes client default applies '
                    '(the KUBECONFIG environment variable, else '
                    '~/.kube/config).'),
    cfg.StrOpt('context',
               help='Context of the kubeconfig to use; its current context '
                    'when unset.'),
    cfg.IntOpt('request_timeout', default=10, min=1,
               help='Seconds one Kubernetes API request may take. Requests '
                    'are not retried: a timeout, a refused connection or a '
                    'server error fails the label update of that node.'),
    cfg.ListOpt('noop_fail_nodes', default=[],
                help='For testing and demonstrations only: names of the '
                     'nodes whose label update the noop driver fails with '
                     'LabelUpdateFailed.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='labels')
