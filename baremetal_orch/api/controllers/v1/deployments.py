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
"""/v1/deployments: the record of each node deployment (seed 002).

A record shows the signals of its node; never its token nor the token's
hash.
"""

import pecan
from pecan import rest

from baremetal_orch.api import utils
from baremetal_orch.common import policy
from baremetal_orch.db import api as dbapi

FIELDS = ('uuid', 'node_uuid', 'action_uuid', 'conductor', 'status',
          'status_reason', 'deploy_stdout', 'deploy_stderr',
          'deploy_status_code', 'signal_url', 'created_at', 'updated_at')
SORT_KEYS = ('id', 'created_at', 'updated_at', 'status')
FILTERS = ('node_uuid', 'action_uuid', 'status')
UUID_FILTERS = ('node_uuid', 'action_uuid')


def to_dict(record, fields=None):
    """The public document of a deployment record."""
    doc = {}
    for field in fields or FIELDS:
        value = getattr(record, field)
        if field.endswith('_at') and value is not None:
            value = utils.timestamp(value)
        doc[field] = value
    doc['links'] = utils.link('deployments/%s' % record.uuid)
    return doc


class DeploymentsController(rest.RestController):
    """/v1/deployments"""

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
        rows = dbapi.list_deployments(filters, limit, marker, sort_key,
                                      sort_dir)
        return utils.collection('deployments',
                                [to_dict(r, fields) for r in rows], limit,
                                marker=rows[-1].uuid if rows else None)

    @pecan.expose('json')
    def get_one(self, uuid):
        fields = utils.fields_param(pecan.request.GET.get('fields'), FIELDS)
        policy.authorize('baremetal_orch:action:get', utils.context())
        utils.check_uuid(uuid, 'deployment uuid')
        return to_dict(dbapi.get_deployment(uuid), fields)
