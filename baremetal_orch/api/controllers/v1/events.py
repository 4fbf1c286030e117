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
"""/v1/events: what happened to nodes and actions, oldest first.

The catalogue of event types is :mod:`baremetal_orch.objects.event` (the
life of an action, its groups and failed nodes) and
:mod:`baremetal_orch.deployment.signals` (the signals of node
deployments).
"""

import pecan
from pecan import rest

from baremetal_orch.api import utils
from baremetal_orch.common import policy
from baremetal_orch.objects import event as event_obj

FIELDS = ('uuid', 'event_type', 'resource_uuid', 'action_uuid', 'message',
          'details', 'created_at')
SORT_KEYS = ('id', 'created_at')
FILTERS = ('resource_uuid', 'action_uuid', 'event_type')
UUID_FILTERS = ('resource_uuid', 'action_uuid')


def to_dict(event, fields=None):
    return utils.record_doc(event, fields or FIELDS)


class EventsController(rest.RestController):
    """/v1/events"""

    @pecan.expose('json')
    def get_all(self, **params):
        ctx = utils.context()
        policy.authorize('baremetal_orch:action:get', ctx)
        return utils.record_list(
            'events', params, lambda *args: event_obj.Event.list(ctx, *args),
            to_dict, FIELDS, SORT_KEYS, FILTERS, UUID_FILTERS)
