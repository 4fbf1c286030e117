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
"""/v1/actions: deploy_site, update_site, update_labels and retry."""

from oslo_utils import uuidutils
import pecan
from pecan import rest

from baremetal_orch.api.schemas import actions as schema
from baremetal_orch.api import utils
from baremetal_orch.api import validation
from baremetal_orch.common import exception
from baremetal_orch.common import policy
from baremetal_orch.objects import action as action_obj

FIELDS = ('uuid', 'name', 'parameters', 'dry_run', 'state', 'state_reason',
          'result', 'task_uuid', 'conductor', 'report', 'progress',
          'created_at', 'updated_at', 'started_at', 'finished_at')
SORT_KEYS = ('id', 'created_at', 'updated_at', 'name', 'state')


def to_dict(action, fields=None):
    doc = {}
    for field in fields or FIELDS:
        if field == 'dry_run':
            doc[field] = False
            continue
        if field == 'progress':
            doc[field] = action_obj.public_progress(action)
            continue
        if field == 'report':
            doc[field] = action_obj.public_report(action)
            continue
        value = action[field]
        if field == 'parameters':
            value = {k: v for k, v in (value or {}).items()
                     if k != 'snapshot'}
        elif field.endswith('_at') and value is not None:
            value = utils.timestamp(value)
        doc[field] = value
    doc['links'] = utils.link('actions/%s' % action.uuid)
    return doc


def _parameters(body):
    """The request's parameters, checked against the schema of its action
    (what they mean is checked once, by the conductor that admits it)."""
    params = body.get('parameters')
    if body['name'] == action_obj.UPDATE_LABELS:
        if params is None:
            raise exception.InvalidAction(
                reason='update_labels requires parameters.target_nodes')
        validation.validate(schema.LABEL_PARAMETERS, params, 'parameters')
    elif body['name'] == action_obj.RETRY:
        if params is None:
            raise exception.InvalidAction(
                reason='retry requires parameters.action, the uuid of the '
                       'action to retry')
        validation.validate(schema.RETRY_PARAMETERS, params, 'parameters')
    else:
        params = params or {}
        validation.validate(schema.SITE_PARAMETERS, params, 'parameters')
    return params


class ActionsController(rest.RestController):
    """/v1/actions"""

    _custom_actions = {'control': ['POST']}

    @pecan.expose('json')
    def control(self, uuid):
        """POST /v1/actions/{uuid}/control: pause, resume or abort."""
        ctx = utils.context()
        policy.authorize('baremetal_orch:action:control', ctx)
        utils.check_uuid(uuid, 'action uuid')
        body = utils.json_body(schema.CONTROL)
        action = utils.rpcapi().control_action(
            ctx, uuid, body['verb'], body.get('reason'))
        pecan.response.status = 202
        return to_dict(action)

    @pecan.expose('json')
    def get_all(self, **params):
        ctx = utils.context()
        policy.authorize('baremetal_orch:action:get', ctx)
        utils.check_query(params, utils.LIST_PARAMS + ('state', 'name'))
        limit, marker, sort_key, sort_dir = utils.list_params(
            params.get('limit'), params.get('marker'),
            params.get('sort_key'), params.get('sort_dir'), SORT_KEYS)
        fields = utils.fields_param(params.get('fields'), FIELDS)
        filters = {k: params[k] for k in ('state', 'name') if k in params}
        items = action_obj.Action.list(ctx, filters, limit, marker,
                                       sort_key, sort_dir)
        return utils.collection('actions', [to_dict(a, fields)
                                            for a in items], limit,
                                marker=items[-1].uuid if items else None)

    @pecan.expose('json')
    def get_one(self, uuid):
        fields = pecan.request.GET.get('fields')
        ctx = utils.context()
        policy.authorize('baremetal_orch:action:get', ctx)
        utils.check_uuid(uuid, 'action uuid')
        return to_dict(action_obj.Action.get(ctx, uuid),
                       utils.fields_param(fields, FIELDS))

    @pecan.expose('json')
    def post(self):
        ctx = utils.context()
        policy.authorize('baremetal_orch:action:create', ctx)
        body = utils.json_body(schema.CREATE)
        result = utils.rpcapi().admit_action(
            ctx, uuidutils.generate_uuid(), body['name'], _parameters(body),
            dry_run=bool(body.get('dry_run')))
        if body.get('dry_run'):
            return result
        pecan.response.status = 201
        return to_dict(result)
