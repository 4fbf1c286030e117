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
"""Label drivers: they apply node labels to Kubernetes."""

from oslo_config import cfg
from stevedore import driver as stevedore_driver
from stevedore import exception as stevedore_exception

from baremetal_orch.common import exception
from baremetal_orch.common import extras

CONF = cfg.CONF

NAMESPACE = 'baremetal_orch.labels.drivers'


def get_driver(name=None):
    """Load and instantiate a label driver.

    Create it once per service and keep it: the kubernetes driver keeps its
    connection pool, the noop driver shares its state across instances.

    :param name: entry point name; ``[labels]driver`` when None.
    :returns: a :class:`baremetal_orch.drivers.labels.base.LabelDriver`.
    :raises: InvalidParameterValue when no such driver exists.
    """
    name = name or CONF.labels.driver
    if name in extras.LABEL_DRIVERS:
        extras.check_extra(extras.LABEL_DRIVERS[name],
                           'The %s label driver' % name)
    try:
        manager = stevedore_driver.DriverManager(
            NAMESPACE, name, invoke_on_load=True)
    except stevedore_exception.NoMatches:
        raise exception.InvalidParameterValue(
            reason='Unknown label driver %s (entry points of %s)'
                   % (name, NAMESPACE))
    return manager.driver
