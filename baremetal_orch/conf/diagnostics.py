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
"""Library option groups of the processes: ``[oslo_reports]`` (guru
meditation reports), ``[profiler]`` (osprofiler) and oslo.service's
``graceful_shutdown_timeout``. The sample configuration lists them through
their libraries' generator namespaces."""

from oslo_reports import opts as reports_opts
from oslo_service import opts as service_opts
from osprofiler import opts as profiler_opts


def register_opts(conf):
    reports_opts.set_defaults(conf)
    profiler_opts.set_defaults(conf)
    service_opts.register_service_opts(conf)
