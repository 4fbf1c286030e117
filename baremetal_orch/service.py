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
"""Start-up shared by every process: configuration, logging, objects."""

import sys

from oslo_config import cfg
from oslo_log import log

from baremetal_orch import conf  # noqa: F401  (registers the options)
from baremetal_orch import notifications
from baremetal_orch.notifications import notify
from baremetal_orch import objects
from baremetal_orch import version

CONF = cfg.CONF
LOG = log.getLogger(__name__)


def prepare_service(argv=None, binary='baremetal-orch', default_config=None):
    """Parse the configuration and set up logging; call once per process."""
    log.register_options(CONF)
    log.set_defaults(default_log_levels=log.get_default_log_levels() + [
        'taskflow=WARNING', 'stevedore=WARNING', 'kubernetes=WARNING',
        'openstack=WARNING', 'keystoneauth=WARNING'])
    argv = sys.argv[1:] if argv is None else argv
    CONF(argv, project='baremetal-orch', version=version.version_string(),
         default_config_files=default_config)
    log.setup(CONF, 'baremetal-orch')
    objects.register_all()
    notifications.register_all()
    notify.set_publisher(binary, CONF.host)
    LOG.debug('Configuration of %s:', binary)
