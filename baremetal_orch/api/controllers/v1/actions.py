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
"""/v1/actions: deploy_site, update_site and update_labels."""

import pecan
from pecan import rest

from baremetal_orch.api.schemas import actions as schema
from baremetal_orch.api import utils
from baremetal_orch.api import validation
from baremetal_orch.common import exception
from baremetal_orch.common import policy
from baremetal_orch.common import states
from baremetal_orch.conductor import rpcapi as rpcapi_mod
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import site as site_mod
from baremetal_orch.deployment import strategy as strategy_mod
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import node as node_obj

FIELDS = ('uuid', 'name', 'parameters', 'dry_run', 'state', 'result',
          'task_uuid', 'conductor', 'report', 'created_at', 'updated_at',
          'started_at', 'finished_at')
SORT_KEYS = ('id', 'created_at', 'updated_at', 'name', 'state')


def to_dict(action, fields=None):
    doc = {}
    for field in fields or FIELDS:
        if field == 'dry_run':
            doc[field] = False
            continue
        value = action[field]
        if field == 'parameters':
            value = {k: v for k, v in (value or {}).items()
                     if k != 'strategy'}
        elif field.endswith('_at') and value is not None:
            value = utils.timestamp(value)
        doc[field] = value
    doc['links'] = utils.link('actions/%s' % action.uuid)
    return doc


def _resolve(strategy):
    return {g.name: dbapi.resolve_selectors(g.selectors)
            for g in strategy.groups}


def _site_action(body):
    params = body.get('parameters') or {}
    validation.validate(schema.SITE_PARAMETERS, params, 'parameters')
    name = params.get('deployment_strategy', strategy_mod.DEFAULT_NAME)
    document = dbapi.get_strategy(name).document
    strategy = strategy_mod.parse(document)
    site = site_mod.SiteDeployment(strategy, _resolve(strategy))
    return {'deployment_strategy': name, 'strategy': document}, site


def _check_busy(node_names):
    """R5: refuse an action whose nodes a running action already holds."""
    wanted = set(node_names)
    for other in dbapi.list_active_actions():
        held = set()
        progress = other.progress or {}
        if 'site' in progress:
            for names in progress['site'].get('group_nodes', {}).values():
                held.update(names)
        elif other.name == action_obj.UPDATE_LABELS:
            held.update((other.parameters or {}).get('target_nodes', ()))
        elif other.state == action_obj.PENDING:
            strategy = (other.parameters or {}).get('strategy')
            if strategy:
                for names in _resolve(strategy_mod.parse(strategy)).values():
                    held.update(names)
        overlap = sorted(wanted & held)
        if overlap:
            raise exception.NodesBusy(nodes=', '.join(overlap),
                                      action=other.uuid)


def _label_action(body):
    params = body.get('parameters')
    if params is None:
        raise exception.InvalidAction(
            reason='update_labels requires parameters.target_nodes')
    validation.validate(schema.LABEL_PARAMETERS, params, 'parameters')
    ctx = utils.context()
    names = []
    for ident in params['target_nodes']:
        try:
            node = node_obj.Node.get(ctx, ident)
        except exception.NodeNotFound:
            raise exception.InvalidAction(
                reason='target node %s does not exist' % ident)
        if node.provision_state != states.ACTIVE:
            raise exception.InvalidAction(
                reason='target node %s has never been deployed '
                       '(provision state %s)' % (ident, node.provision_state))
        names.append(node.name or node.uuid)
    return {'target_nodes': list(params['target_nodes'])}, names


class ActionsController(rest.RestController):
    """/v1/actions"""

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
        name = body['name']
        if name == action_obj.UPDATE_LABELS:
            if body.get('dry_run'):
                raise exception.InvalidAction(
                    reason='dry_run is only supported by site actions')
            parameters, names = _label_action(body)
        else:
            parameters, site = _site_action(body)
            if body.get('dry_run'):
                return {'plan': site.plan()}
            names = sorted({n for g in site.strategy.names()
                            for n in site.nodes(g)})
        _check_busy(names)
        action = action_obj.Action(ctx, name=name, parameters=parameters,
                                   state=action_obj.PENDING)
        action.create()
        try:
            host = rpcapi_mod.pick_host(action.uuid)
            utils.rpcapi().start_action(ctx, action.uuid, host)
        except exception.ServiceUnavailable:
            dbapi.update_action(action.uuid, {
                'state': action_obj.FAILED, 'result': 'failed',
                'report': {'error': 'no conductor could start the action'}})
            raise
        pecan.response.status = 201
        return to_dict(action_obj.Action.get(ctx, action.uuid))
