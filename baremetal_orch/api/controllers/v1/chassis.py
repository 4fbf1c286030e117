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
"""/v1/chassis"""

from oslo_utils import uuidutils
import pecan
from pecan import rest

from baremetal_orch.api.schemas import chassis as schema
from baremetal_orch.api import utils
from baremetal_orch.api import validation
from baremetal_orch.common import policy
from baremetal_orch.notifications import notify
from baremetal_orch.objects import chassis as chassis_obj

FIELDS = ('uuid', 'description', 'extra', 'created_at', 'updated_at')
SORT_KEYS = ('id', 'uuid', 'created_at', 'updated_at')


def to_dict(chassis, fields=None):
    doc = {}
    for field in fields or FIELDS:
        value = chassis[field]
        if field in ('created_at', 'updated_at') and value is not None:
            value = utils.timestamp(value)
        doc[field] = value
    doc['links'] = utils.link('chassis/%s' % chassis.uuid)
    return doc


def _get(uuid):
    utils.check_uuid(uuid, 'chassis uuid')
    return chassis_obj.Chassis.get(utils.context(), uuid)


class ChassisController(rest.RestController):
    """/v1/chassis"""

    @pecan.expose('json')
    def get_all(self, **params):
        policy.authorize('baremetal_orch:chassis:get', utils.context())
        utils.check_query(params, utils.LIST_PARAMS + ('detail',))
        limit, marker, sort_key, sort_dir = utils.list_params(
            params.get('limit'), params.get('marker'),
            params.get('sort_key'), params.get('sort_dir'), SORT_KEYS)
        fields = utils.fields_param(params.get('fields'), FIELDS)
        items = chassis_obj.Chassis.list(utils.context(), limit, marker,
                                         sort_key, sort_dir)
        return utils.collection('chassis', [to_dict(c, fields)
                                            for c in items], limit,
                                marker=items[-1].uuid if items else None)

    @pecan.expose('json')
    def get_one(self, uuid):
        fields = pecan.request.GET.get('fields')
        policy.authorize('baremetal_orch:chassis:get', utils.context())
        return to_dict(_get(uuid), utils.fields_param(fields, FIELDS))

    @pecan.expose('json')
    def post(self):
        ctx = utils.context()
        policy.authorize('baremetal_orch:chassis:create', ctx)
        chassis = chassis_obj.Chassis(ctx, **utils.json_body(schema.CREATE))
        if not chassis.obj_attr_is_set('uuid'):
            chassis.uuid = uuidutils.generate_uuid()
        with notify.crud_scope(ctx, 'chassis', 'create', chassis):
            chassis.create()
        pecan.response.status = 201
        return to_dict(chassis)

    @pecan.expose('json')
    def patch(self, uuid=None):
        utils.require_ident(uuid)
        ctx = utils.context()
        policy.authorize('baremetal_orch:chassis:update', ctx)
        chassis = _get(uuid)
        patch = utils.json_body()

        def change(chassis):
            doc = to_dict(chassis)
            new = utils.apply_patch(doc, patch,
                                    ['uuid', 'created_at', 'updated_at',
                                     'links'])
            validation.validate(schema.UPDATE, {
                k: v for k, v in new.items() if k in schema.PATCHABLE},
                'chassis')
            for key in schema.PATCHABLE:
                if new.get(key) != doc.get(key):
                    chassis[key] = new.get(key)

        return to_dict(utils.update_atomically(
            ctx, 'chassis', chassis,
            chassis_obj.Chassis.updating(ctx, chassis.uuid), change))

    @pecan.expose('json')
    def delete(self, uuid=None):
        utils.require_ident(uuid)
        ctx = utils.context()
        policy.authorize('baremetal_orch:chassis:delete', ctx)
        chassis = _get(uuid)
        with notify.crud_scope(ctx, 'chassis', 'delete', chassis):
            chassis.destroy()
        pecan.response.status = 204
