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
"""Optional features refuse to start without their extra, and name it."""

import os
import subprocess
import sys
import tempfile
from unittest import mock

from oslo_config import cfg

from baremetal_orch.common import exception
from baremetal_orch.common import extras
from baremetal_orch.conf import default as default_conf
from baremetal_orch.conf import taskflow as taskflow_conf
from baremetal_orch.drivers import labels
from baremetal_orch.drivers import provisioning
from baremetal_orch.tests import base

CONF = cfg.CONF


def without(*modules):
    """The modules cannot be imported (as when their extra is missing)."""
    return mock.patch.dict(sys.modules, {m: None for m in modules})


class TestExtras(base.TestCase):

    def test_default_configuration_needs_no_extra(self):
        self.assertEqual([], extras.required(CONF))
        with without('kubernetes', 'redis', 'kazoo'):
            extras.check(CONF)

    def test_each_feature_names_its_extra(self):
        for options, module, extra in [
                ({'group': 'labels', 'driver': 'kubernetes'}, 'kubernetes',
                 'kubernetes'),
                ({'group': 'taskflow', 'jobboard_enabled': True,
                  'jobboard_backend_driver': taskflow_conf.REDIS},
                 'redis', 'redis'),
                ({'group': 'taskflow', 'jobboard_enabled': True,
                  'jobboard_backend_driver': taskflow_conf.ZOOKEEPER},
                 'kazoo', 'zookeeper')]:
            self.cfg_fixture.config(**options)
            extras.check(CONF)  # installed here: nothing to say
            with without(module):
                e = self.assertRaises(exception.MissingExtra, extras.check,
                                      CONF)
            self.assertIn("baremetal-orch[%s]" % extra, str(e))
            self.assertIn(module, str(e))
            self.cfg_fixture.config(group='labels', driver='noop')
            self.cfg_fixture.config(group='taskflow', jobboard_enabled=False)

    def test_label_driver_loading_names_the_extra(self):
        with without('kubernetes', 'kubernetes.client'):
            e = self.assertRaises(exception.MissingExtra, labels.get_driver,
                                  'kubernetes')
        self.assertIn('baremetal-orch[kubernetes]', str(e))

    def test_conductor_refuses_to_start(self):
        # The console script's main() as an operator runs it, in a
        # process where the kubernetes client cannot be imported.
        with tempfile.TemporaryDirectory() as tmp:
            conf = os.path.join(tmp, 'c.conf')
            with open(conf, 'w') as f:
                f.write('[DEFAULT]\ntransport_url = rabbit://u:p@127.0.0.1:1/'
                        '\n[labels]\ndriver = kubernetes\n'
                        '[database]\nconnection = sqlite://\n')
            code = ("import sys; sys.modules['kubernetes'] = None; "
                    "from baremetal_orch.cmd import conductor; "
                    "conductor.main(['--config-file', %r])" % conf)
            proc = subprocess.run([sys.executable, '-c', code],
                                  capture_output=True, text=True,
                                  timeout=120, check=False)
        self.assertNotEqual(0, proc.returncode)
        self.assertIn("pip install 'baremetal-orch[kubernetes]'",
                      proc.stderr)
        self.assertIn('[labels]driver = kubernetes', proc.stderr)


class TestEnabledDrivers(base.TestCase):

    def test_default_is_ironic_only(self):
        [opt] = [o for o in default_conf.opts if o.name == 'enabled_drivers']
        self.assertEqual(['ironic'], opt.default)

    def test_a_driver_not_enabled_is_refused(self):
        self.config(enabled_drivers=['ironic'])
        e = self.assertRaises(exception.DriverNotEnabled,
                              provisioning.get_driver, 'fake')
        self.assertEqual(400, e.status)
        self.assertIn('fake', str(e))
        self.assertIn('enabled_drivers = ironic', str(e))
