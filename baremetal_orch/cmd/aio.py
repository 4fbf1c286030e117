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
"""baremetal-orch: the all-in-one service.

API and conductor in one process with ``[DEFAULT]rpc_transport = none``;
by default sqlite, ``noauth`` and the fake driver (``[DEFAULT]enabled_drivers
= fake``), on 127.0.0.1. With
``--site-dir`` it loads an example site and strategy through its own REST
API, runs ``deploy_site`` and prints the report (see README.rst).
"""

import sys
import threading

from oslo_config import cfg
from oslo_log import log

from baremetal_orch.api import wsgi_service
from baremetal_orch.common import exception
from baremetal_orch.common import extras
from baremetal_orch.common import launcher
from baremetal_orch.common import profiler
from baremetal_orch.conductor import manager as manager_mod
from baremetal_orch.conductor import rpc_service
from baremetal_orch.conductor import rpcapi
from baremetal_orch.db import api as dbapi
from baremetal_orch.db import migration
from baremetal_orch import demo
from baremetal_orch.notifications import notifier
from baremetal_orch import service

CONF = cfg.CONF
LOG = log.getLogger(__name__)

cli_opts = [
    cfg.StrOpt('site-dir',
               help='Load the site (site.yaml) and the deployment strategy '
                    '(deployment-strategy.yaml) of this directory through '
                    'the API, then run deploy_site and print the report.'),
    cfg.MultiStrOpt('failure', default=[],
                    help='Overlay of the site directory\'s failures/ to '
                         'apply (e.g. ntp-prepare-fails); repeatable.'),
    cfg.BoolOpt('exit-when-done', default=False,
                help='With --site-dir: stop once the action ended; the exit '
                     'status is 0 when it succeeded, 1 otherwise.'),
]


def _embedded_defaults():
    """The embedded default: no broker, no Keystone, loopback, and the
    sqlite database every command finds without configuration."""
    CONF.set_default('rpc_transport', 'none')
    CONF.set_default('auth_strategy', 'noauth', group='api')
    CONF.set_default('heartbeat_interval', 2, group='conductor')
    # The demonstration site simulates its nodes.
    CONF.set_default('enabled_drivers', ['fake'])


def _switch_interval():
    """[DEFAULT]thread_switch_interval, for the API and the conductor
    sharing this process's interpreter lock."""
    sys.setswitchinterval(CONF.thread_switch_interval)


class AllInOneService(launcher.ProcessService):
    """The conductor (direct calls, no broker) and the API in one
    process. Stop (SIGTERM): the listener closes, the node work running
    finishes (bounded), the notifications are flushed."""

    def __init__(self, api):
        super().__init__()
        self.api = api
        self.manager = None

    def _start(self):
        _switch_interval()
        profiler.setup('baremetal-orch', CONF.host)
        # The notification sender (when notifications are on) is up first.
        notifier.start(conductor=True)
        self.manager = manager_mod.ConductorManager(CONF.host)
        self.manager.init_host()
        rpcapi.set_local_manager(self.manager)
        self.api.start()
        rpc_service.log_mutable_options(CONF.host)

    def reset(self):
        _switch_interval()
        rpc_service.log_mutable_options(CONF.host)

    def _stop(self):
        self.api.stop()
        if self.manager is not None:
            self.manager.del_host(wait=True,
                                  timeout=rpc_service.stop_timeout())
        notifier.flush_at_stop('Conductor %s' % CONF.host)
        notifier.cleanup()


def _run_demo(svc, endpoint):
    """--site-dir: load the site through the API, deploy it, report."""
    svc.started.wait()
    if svc.ended.is_set():
        return
    try:
        status = demo.run(endpoint, CONF.site_dir, CONF.failure,
                          database=dbapi.masked_url())
    except demo.FreshDatabaseNeeded as e:
        print(e, file=sys.stderr, flush=True)
        svc.finish(2)
        return
    except Exception:
        LOG.exception('The site deployment could not run')
        status = 1
    if CONF.exit_when_done:
        svc.finish(status)
    else:
        print('Still serving %s; Ctrl-C to stop.' % endpoint, flush=True)


def main(argv=None):
    CONF.register_cli_opts(cli_opts)
    _embedded_defaults()
    service.prepare_service(argv, binary='baremetal-orch')
    try:
        extras.check(CONF)
    except exception.MissingExtra as e:
        sys.exit('baremetal-orch: %s' % e)
    try:
        migration.upgrade()
    except exception.DatabaseUnavailable as e:
        sys.exit('baremetal-orch: %s' % e)
    profiler.setup_reports('baremetal-orch')
    api = wsgi_service.WSGIService()
    endpoint = api.endpoint
    LOG.info('baremetal-orch all-in-one serving %s (rpc_transport=%s, '
             'auth=%s)', endpoint, CONF.rpc_transport,
             CONF.api.auth_strategy)
    print('baremetal-orch all-in-one: API on %s' % endpoint, flush=True)
    svc = AllInOneService(api)
    sig_launcher = launcher.SignalLauncher(CONF)
    sig_launcher.install_signal_handlers()
    sig_launcher.launch(svc)
    if CONF.site_dir:
        threading.Thread(target=_run_demo, args=(svc, endpoint),
                         name='site-demo', daemon=True).start()
    launcher.exit_now(sig_launcher.run())


if __name__ == '__main__':
    sys.exit(main())
