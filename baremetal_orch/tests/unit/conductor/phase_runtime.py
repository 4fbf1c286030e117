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
"""The runtime a phase of the dispatcher is run with in tests: a running
action row and its real steering; the rest of a site's runtime (its
checkpoints, its progress) is not what these tests look at."""

from unittest import mock

from baremetal_orch.common import context as orch_context
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import tracker
from baremetal_orch.flows import steering


def phase_runtime(poll_interval, names=None):
    """:param names: ``{node uuid: name}``, as admission saw them."""
    action = dbapi.create_action({'name': 'deploy_site',
                                  'state': 'running'})
    context = orch_context.get_admin_context()
    return mock.Mock(context=context, action_uuid=action.uuid,
                     poll_interval=poll_interval,
                     steering=steering.ActionSteering(context, action),
                     site=mock.Mock(tracker=tracker.NodeTracker(
                         (), names=names)))
