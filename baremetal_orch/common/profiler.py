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
"""Diagnostics of the server processes: guru meditation reports
(oslo.reports) and osprofiler, as in Ironic."""

from oslo_config import cfg
from oslo_log import log
from oslo_reports import guru_meditation_report as gmr
from osprofiler import initializer as osprofiler_initializer
from osprofiler import web as osprofiler_web

from baremetal_orch import version

CONF = cfg.CONF
LOG = log.getLogger(__name__)


class _Version:
    """What a guru meditation report says of the package."""

    @staticmethod
    def vendor_string():
        return 'OpenStack Foundation'

    @staticmethod
    def product_string():
        return 'baremetal-orch'

    @staticmethod
    def version_string_with_package():
        return version.version_string()


def setup_reports(binary, setup_signal=True):
    """Guru meditation reports: on SIGUSR2 (``setup_signal``), or when the
    file ``[oslo_reports]file_event_handler`` changes; written to stderr,
    or to ``[oslo_reports]log_dir``."""
    gmr.TextGuruMeditation.setup_autorun(
        _Version, service_name=binary, conf=CONF,
        setup_signal=setup_signal)


def setup(binary, host):
    """Send this process's traces to ``[profiler]connection_string`` when
    ``[profiler]enabled``; call once per process, at service start."""
    if not CONF.profiler.enabled:
        return False
    osprofiler_initializer.init_from_conf(
        conf=CONF, context={}, project='baremetal_orch', service=binary,
        host=host)
    LOG.info('osprofiler is enabled: traces of %s go to %s', binary,
             CONF.profiler.connection_string)
    return True


def wsgi_middleware(app):
    """The API traced by osprofiler when ``[profiler]enabled``: a request
    signed with one of ``[profiler]hmac_keys`` is traced."""
    if not CONF.profiler.enabled:
        return app
    return osprofiler_web.WsgiMiddleware(
        app, hmac_keys=CONF.profiler.hmac_keys, enabled=True)
