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
"""/v1/ports: network ports of nodes."""

from oslo_utils import uuidutils
import pecan
from pecan import rest

from baremetal_orch.api.controllers.v1 import nodes
from baremetal_orch.api.schemas import ports as schema
from baremetal_orch.api import utils
from baremetal_orch.api import validation
from baremetal_orch.common import exception
from baremetal_orch.common import policy
from baremetal_orch.notifications import notify
from baremetal_orch.objects import port as port_obj

FIELDS = ('uuid', 'node_uuid', 'address', 'pxe_enabled',
          'local_link_connection', 'extra', 'created_at', 'updated_at')
SORT_KEYS = ('id', 'uuid', 'address', 'created_at', 'updated_at')


def to_dict(port, fields=None):
    doc = {}
    for field in fields or FIELDS:
        value = port[field]
        if field in ('created_at', 'updated_at') and value is not None:
            value = utils.timestamp(value)
        doc[field] = value
    doc['links'] = utils.link('ports/%s' % port.uuid)
    return doc


def _get_port(uuid, rule):
    ctx = utils.context()
    utils.check_uuid(uuid, 'port uuid')
    port = port_obj.Port.get(ctx, uuid)
    try:
        nodes.get_node(port.node_uuid, rule)
    except exception.NodeNotFound:
        raise exception.PortNotFound(port=uuid)
    return port


class PortsController(rest.RestController):
    """/v1/ports"""

    @pecan.expose('json')
    def get_all(self, **params):
        ctx = utils.context()
        policy.authorize('baremetal_orch:port:get', ctx)
        utils.check_query(params, utils.LIST_PARAMS + ('node', 'address',
                                                       'detail'))
        limit, marker, sort_key, sort_dir = utils.list_params(
            params.get('limit'), params.get('marker'),
            params.get('sort_key'), params.get('sort_dir'), SORT_KEYS)
        fields = utils.fields_param(params.get('fields'), FIELDS)
        filters = {}
        if params.get('node'):
            filters['node_id'] = nodes.get_node(params['node']).id
        if params.get('address'):
            filters['address'] = params['address'].lower()
        if not policy.check('system_reader', ctx):
            filters['owner'] = ctx.project_id
        ports = port_obj.Port.list(ctx, filters, limit, marker, sort_key,
                                   sort_dir)
        return utils.collection('ports', [to_dict(p, fields) for p in ports],
                                limit,
                                marker=ports[-1].uuid if ports else None)

    @pecan.expose('json')
    def get_one(self, uuid):
        fields = pecan.request.GET.get('fields')
        return to_dict(_get_port(uuid, 'baremetal_orch:port:get'),
                       utils.fields_param(fields, FIELDS))

    @pecan.expose('json')
    def post(self):
        ctx = utils.context()
        policy.authorize('baremetal_orch:port:create', ctx)
        values = utils.json_body(schema.CREATE)
        node = nodes.get_node(values.pop('node_uuid'))
        values['node_id'] = node.id
        values['address'] = values['address'].lower().replace('-', ':')
        port = port_obj.Port(ctx, **values)
        port.node_uuid = node.uuid
        if not port.obj_attr_is_set('uuid'):
            port.uuid = uuidutils.generate_uuid()
        with notify.crud_scope(ctx, 'port', 'create', port):
            port.create()
        pecan.response.status = 201
        return to_dict(port)

    @pecan.expose('json')
    def patch(self, uuid=None):
        utils.require_ident(uuid)
        ctx = utils.context()
        policy.authorize('baremetal_orch:port:update', ctx)
        port = _get_port(uuid, 'baremetal_orch:port:update')
        patch = utils.json_body()

        def change(port):
            doc = to_dict(port)
            new = utils.apply_patch(doc, patch,
                                    [f for f in FIELDS if f not in
                                     schema.PATCHABLE] + ['links'])
            validation.validate(schema.UPDATE, {
                k: v for k, v in new.items() if k in schema.PATCHABLE},
                'port')
            changes = {k: new.get(k) for k in schema.PATCHABLE
                       if new.get(k) != doc.get(k)}
            if 'node_uuid' in changes:
                changes['node_id'] = nodes.get_node(
                    changes.pop('node_uuid')).id
            if 'address' in changes:
                changes['address'] = changes['address'].lower().replace(
                    '-', ':')
            for key, value in changes.items():
                port[key] = value

        return to_dict(utils.update_atomically(
            ctx, 'port', port, port_obj.Port.updating(ctx, port.uuid),
            change))

    @pecan.expose('json')
    def delete(self, uuid=None):
        utils.require_ident(uuid)
        ctx = utils.context()
        policy.authorize('baremetal_orch:port:delete', ctx)
        port = _get_port(uuid, 'baremetal_orch:port:delete')
        with notify.crud_scope(ctx, 'port', 'delete', port):
            port.destroy()
        pecan.response.status = 204
