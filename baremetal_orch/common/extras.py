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
"""Optional features and the setup.cfg extras that install their libraries.

``pip install baremetal-orch`` installs what the API, the conductor, the
fake and ironic drivers need. The Kubernetes label driver and the taskflow
jobboard backends need libraries of their own, installed by an extra
(``baremetal-orch[kubernetes]``, ``[redis]``, ``[zookeeper]``), as Ironic
keeps its optional driver libraries apart and taskflow its jobboard
backends. A service configured for such a feature checks at start-up that
its library is there, and names the extra when it is not.
"""

import importlib.util

from baremetal_orch.common import exception
from baremetal_orch.conf import taskflow as taskflow_conf

#: extra -> the distribution it installs and the module that distribution
#: provides.
EXTRAS = {
    'kubernetes': ('kubernetes', 'kubernetes'),
    'redis': ('redis', 'redis'),
    'zookeeper': ('kazoo', 'kazoo'),
}

#: [labels]driver -> extra.
LABEL_DRIVERS = {'kubernetes': 'kubernetes'}
#: [taskflow]jobboard_backend_driver -> extra.
JOBBOARD_BACKENDS = {taskflow_conf.REDIS: 'redis',
                     taskflow_conf.ZOOKEEPER: 'zookeeper'}


def installed(extra):
    """Whether the library of ``extra`` can be imported."""
    module = EXTRAS[extra][1]
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def required(conf):
    """``[(extra, feature)]``: the extras the configuration needs."""
    needed = []
    label_extra = LABEL_DRIVERS.get(conf.labels.driver)
    if label_extra:
        needed.append((label_extra,
                       '[labels]driver = %s' % conf.labels.driver))
    if conf.taskflow.jobboard_enabled:
        backend = conf.taskflow.jobboard_backend_driver
        needed.append((JOBBOARD_BACKENDS[backend],
                       '[taskflow]jobboard_backend_driver = %s' % backend))
    return needed


def check_extra(extra, feature):
    """:raises: MissingExtra naming ``extra`` when its library is absent."""
    if not installed(extra):
        raise exception.MissingExtra(feature=feature, extra=extra,
                                     package=EXTRAS[extra][0])


def check(conf):
    """Check the configuration's optional features at start-up.

    :raises: MissingExtra for the first feature whose extra is missing.
    """
    for extra, feature in required(conf):
        check_extra(extra, feature)
