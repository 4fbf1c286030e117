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
"""/v1/deployments: the record of each node deployment.

A record shows the signals of its node; never its token nor the token's
hash.
"""

import pecan
from pecan import rest

from baremetal_orch.api import utils
from baremetal_orch.common import policy
from baremetal_orch.objects import deployment as deployment_obj

FIELDS = ('uuid', 'node_uuid', 'action_uuid', 'conductor', 'status',
          'status_reason', 'deploy_stdout', 'deploy_stderr',
          'deploy_status_code', 'signal_url', 'created_at', 'updated_at')
SORT_KEYS = ('id', 'created_at', 'updated_at', 'status')
FILTERS = ('node_uuid', 'action_uuid', 'status')
UUID_FILTERS = ('node_uuid', 'action_uuid')


def to_dict(record, fields=None):
    """The public document of a deployment record."""
    doc = utils.record_doc(record, fields or FIELDS)
    doc['links'] = utils.link('deployments/%s' % record.uuid)
    return doc


class DeploymentsController(rest.RestController):
    """/v1/deployments"""

    @pecan.expose('json')
    def get_all(self, **params):
        ctx = utils.context()
        policy.authorize('baremetal_orch:action:get', ctx)
        return utils.record_list(
            'deployments', params,
            lambda *args: deployment_obj.Deployment.list(ctx, *args),
            to_dict, FIELDS, SORT_KEYS, FILTERS, UUID_FILTERS)

    @pecan.expose('json')
    def get_one(self, uuid):
        fields = utils.fields_param(pecan.request.GET.get('fields'), FIELDS)
        ctx = utils.context()
        policy.authorize('baremetal_orch:action:get', ctx)
        utils.check_uuid(uuid, 'deployment uuid')
        return to_dict(deployment_obj.Deployment.get(ctx, uuid), fields)
