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
"""/v1/deployment_strategies: DeploymentStrategy documents."""

import pecan
from pecan import rest

from baremetal_orch.api import utils
from baremetal_orch.common import policy
from baremetal_orch.deployment import strategy as strategy_mod
from baremetal_orch.objects import strategy as strategy_obj

SORT_KEYS = ('name', 'created_at', 'updated_at')


def to_dict(row):
    return {'name': row.name, 'document': row.document,
            'created_at': utils.timestamp(row.created_at),
            'updated_at': utils.timestamp(row.updated_at),
            'links': utils.link('deployment_strategies/%s' % row.name)}


def parse_document():
    """The request's strategy document, parsed and validated."""
    document = utils.document_body()
    strategy = strategy_mod.parse(document)
    return document, strategy


class StrategiesController(rest.RestController):
    """/v1/deployment_strategies"""

    _custom_actions = {'validate': ['POST']}

    @pecan.expose('json')
    def get_all(self, **params):
        ctx = utils.context()
        policy.authorize('baremetal_orch:strategy:get', ctx)
        utils.check_query(params, utils.PAGING)
        limit, marker, sort_key, sort_dir = utils.list_params(
            params.get('limit'), params.get('marker'),
            params.get('sort_key'), params.get('sort_dir'), SORT_KEYS)
        rows = strategy_obj.Strategy.list(ctx, limit, marker, sort_key,
                                          sort_dir)
        return utils.collection('deployment_strategies',
                                [to_dict(r) for r in rows], limit,
                                marker_field='name')

    @pecan.expose('json')
    def get_one(self, name):
        ctx = utils.context()
        policy.authorize('baremetal_orch:strategy:get', ctx)
        return to_dict(strategy_obj.Strategy.get(ctx, name))

    @pecan.expose('json')
    def post(self):
        ctx = utils.context()
        policy.authorize('baremetal_orch:strategy:create', ctx)
        document, strategy = parse_document()
        stored = strategy_obj.Strategy(ctx, name=strategy.name,
                                       document=document)
        stored.create()
        pecan.response.status = 201
        return to_dict(stored)

    @pecan.expose('json')
    def validate(self):
        policy.authorize('baremetal_orch:strategy:validate',
                         utils.context())
        _document, strategy = parse_document()
        return {'valid': True, 'name': strategy.name,
                'order': strategy.topological_order()}

    @pecan.expose('json')
    def delete(self, name=None):
        utils.require_ident(name)
        ctx = utils.context()
        policy.authorize('baremetal_orch:strategy:delete', ctx)
        strategy_obj.Strategy.destroy_by_name(ctx, name)
        pecan.response.status = 204
