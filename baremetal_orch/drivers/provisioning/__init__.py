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
"""Provisioning drivers, loaded with stevedore by name."""

import threading

from oslo_config import cfg
from stevedore import driver as stevedore_driver

from baremetal_orch.common import exception

CONF = cfg.CONF

NAMESPACE = 'baremetal_orch.provisioning.drivers'
_DRIVERS = {}
_LOCK = threading.Lock()


def check_enabled(name):
    """:raises: DriverNotEnabled (400) unless ``name`` is in
        ``[DEFAULT]enabled_drivers``."""
    if name not in CONF.enabled_drivers:
        raise exception.DriverNotEnabled(
            driver=name, enabled=','.join(CONF.enabled_drivers) or '(none)')


def get_driver(name):
    """The (shared) provisioning driver ``name``, if it is enabled.

    :raises: DriverNotEnabled when ``[DEFAULT]enabled_drivers`` leaves it
        out; InvalidParameterValue when no such driver exists.
    """
    check_enabled(name)
    with _LOCK:
        if name not in _DRIVERS:
            try:
                mgr = stevedore_driver.DriverManager(NAMESPACE, name,
                                                     invoke_on_load=True)
            except Exception as e:
                raise exception.InvalidParameterValue(
                    reason='Unknown provisioning driver %s: %s' % (name, e))
            _DRIVERS[name] = mgr.driver
        return _DRIVERS[name]


def reset():
    with _LOCK:
        _DRIVERS.clear()
