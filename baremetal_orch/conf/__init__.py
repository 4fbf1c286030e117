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

"""Configuration of baremetal_orch: one module per option group."""

from oslo_config import cfg

from baremetal_orch.conf import api
from baremetal_orch.conf import conductor
from baremetal_orch.conf import database
from baremetal_orch.conf import default
from baremetal_orch.conf import diagnostics
from baremetal_orch.conf import fake_driver
from baremetal_orch.conf import ironic
from baremetal_orch.conf import labels
from baremetal_orch.conf import taskflow

CONF = cfg.CONF

default.register_opts(CONF)
api.register_opts(CONF)
conductor.register_opts(CONF)
database.register_opts(CONF)
diagnostics.register_opts(CONF)
fake_driver.register_opts(CONF)
ironic.register_opts(CONF)
labels.register_opts(CONF)
taskflow.register_opts(CONF)
