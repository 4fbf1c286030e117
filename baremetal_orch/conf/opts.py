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

"""Options for oslo-config-generator (the oslo.config.opts entry point)."""

from baremetal_orch.conf import api
from baremetal_orch.conf import conductor
from baremetal_orch.conf import default
from baremetal_orch.conf import fake_driver
from baremetal_orch.conf import ironic
from baremetal_orch.conf import labels
from baremetal_orch.conf import taskflow


def list_opts():
    return [
        ('DEFAULT', default.opts),
        ('api', api.opts),
        ('conductor', conductor.opts),
        ('fake_driver', fake_driver.opts),
        ('ironic', ironic.list_opts()),
        ('labels', labels.opts),
        ('taskflow', taskflow.opts),
    ]
