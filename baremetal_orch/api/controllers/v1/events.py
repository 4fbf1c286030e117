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

Signals of node deployments record ``deployment.signal.in_progress``,
``deployment.signal.complete`` and ``deployment.signal.failed`` on the
node (``resource_uuid``); a conductor that stops waiting for a final signal
records ``deployment.signal.timeout``.
"""

import pecan
from pecan import rest

from baremetal_orch.api import utils
from baremetal_orch.common import policy
from baremetal_orch.db import api as dbapi

FIELDS = ('uuid', 'event_type', 'resource_uuid', 'action_uuid', 'message',
          'details', 'created_at')
SORT_KEYS = ('id', 'created_at')
FILTERS = ('resource_uuid', 'action_uuid', 'event_type')
UUID_FILTERS = ('resource_uuid', 'action_uuid')


def to_dict(row, fields=None):
    doc = {}
    for field in fields or FIELDS:
        value = getattr(row, field)
        if field.endswith('_at') and value is not None:
            value = utils.timestamp(value)
        doc[field] = value
    return doc


class EventsController(rest.RestController):
    """/v1/events"""

    @pecan.expose('json')
    def get_all(self, **params):
        policy.authorize('baremetal_orch:action:get', utils.context())
        utils.check_query(params, utils.LIST_PARAMS + tuple(FILTERS))
        limit, marker, sort_key, sort_dir = utils.list_params(
            params.get('limit'), params.get('marker'),
            params.get('sort_key'), params.get('sort_dir'), SORT_KEYS)
        fields = utils.fields_param(params.get('fields'), FIELDS)
        filters = {k: params[k] for k in FILTERS if k in params}
        for key in UUID_FILTERS:
            if key in filters:
                utils.check_uuid(filters[key], key)
        rows = dbapi.list_events(filters, limit, marker, sort_key, sort_dir)
        return utils.collection('events', [to_dict(r, fields) for r in rows],
                                limit, marker=rows[-1].uuid if rows else None)
