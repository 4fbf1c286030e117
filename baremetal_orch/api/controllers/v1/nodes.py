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
"""/v1/nodes: the inventory of bare-metal nodes."""

from oslo_utils import uuidutils
import pecan
from pecan import rest

from baremetal_orch.api.schemas import nodes as schema
from baremetal_orch.api import utils
from baremetal_orch.api import validation
from baremetal_orch.common import exception
from baremetal_orch.common import policy
from baremetal_orch.common import states
from baremetal_orch.conductor import rpcapi as rpcapi_mod
from baremetal_orch.deployment import labels as labels_mod
from baremetal_orch.deployment import selectors as selectors_mod
from baremetal_orch.drivers import provisioning
from baremetal_orch.notifications import notify
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import base as objects_base
from baremetal_orch.objects import chassis as chassis_obj
from baremetal_orch.objects import node as node_obj

FIELDS = ('uuid', 'name', 'driver', 'ironic_uuid', 'chassis_uuid',
          'rack_name', 'tags', 'labels', 'shard', 'conductor_group',
          'provision_state', 'target_provision_state', 'power_state',
          'maintenance', 'maintenance_reason', 'console_enabled',
          'driver_info', 'instance_info', 'extra', 'applied_labels',
          'deployed_groups', 'conductor', 'owner', 'last_error',
          'created_at', 'updated_at')
SHORT_FIELDS = ('uuid', 'name', 'provision_state', 'maintenance')
SORT_KEYS = ('id', 'uuid', 'name', 'provision_state', 'rack_name', 'shard',
             'conductor_group', 'created_at', 'updated_at', 'driver')
READONLY = tuple(f for f in FIELDS if f not in schema.PATCHABLE) + (
    'links',)
#: What a node is bound to: only a system admin changes them (policy
#: baremetal_orch:node:update_binding). A project member re-pointing
#: ironic_uuid would drive another project's Ironic node.
BINDING_FIELDS = frozenset(['ironic_uuid', 'shard', 'conductor_group',
                            'chassis_uuid'])


def to_dict(node, fields=None):
    """The public document of a node, secrets masked."""
    doc = {}
    for field in fields or FIELDS:
        value = node[field]
        if field in ('tags', 'labels', 'deployed_groups') and value:
            # Plain copies, not the object's coercing containers (a JSON
            # patch would coerce 5 to "5" and None to a 500).
            value = (dict(value) if isinstance(value, dict)
                     else list(value))
        if field in ('driver_info', 'instance_info'):
            value = objects_base.mask_secrets(value or {})
        elif field in ('created_at', 'updated_at') and value is not None:
            value = utils.timestamp(value)
        doc[field] = value
    doc['links'] = utils.link('nodes/%s' % node['uuid'])
    return doc


def get_node(ident, rule='baremetal_orch:node:get'):
    """A node the caller may act on with ``rule``; 404 if it may not even
    see it, 403 if it sees it but may not do this."""
    ctx = utils.context()
    node = node_obj.Node.get(ctx, ident)
    if not policy.check('baremetal_orch:node:get', ctx,
                        {'owner': node.owner}):
        raise exception.NodeNotFound(node=ident)
    policy.authorize(rule, ctx, {'owner': node.owner})
    return node


def _check_values(values):
    if values.get('labels'):
        labels_mod.validate_labels(values['labels'])
    if 'chassis_uuid' not in values:
        return values
    chassis_uuid = values.pop('chassis_uuid')
    if chassis_uuid:
        values['chassis_id'] = chassis_obj.Chassis.get(
            utils.context(), chassis_uuid).id
    else:
        values['chassis_id'] = None
    return values


def _refuse_secret_reads(patch):
    """Refuse patch operations that read driver_info or instance_info.

    A patch applies to the unmasked documents: it may write there, but not
    copy, move or test what is there (that would read a secret out).
    """
    for op in patch if isinstance(patch, list) else ():
        if not isinstance(op, dict):
            continue
        if op.get('op') not in ('copy', 'move', 'test'):
            continue
        source = op.get('from') if op['op'] != 'test' else op.get('path')
        top = str(source or '').lstrip('/').split('/')[0]
        if top in ('driver_info', 'instance_info'):
            raise exception.PatchError(
                reason='%s from %s is not allowed (its secrets are '
                       'masked)' % (op['op'], source))


def _apply(ctx, node, patch):
    """Apply a JSON patch to ``node`` (unsaved)."""
    doc = to_dict(node)
    doc['driver_info'] = node.driver_info or {}
    doc['instance_info'] = node.instance_info or {}
    new = utils.apply_patch(doc, patch, READONLY)
    validation.validate(schema.UPDATE, {
        k: v for k, v in new.items() if k in schema.PATCHABLE}, 'node')
    changes = {k: new.get(k) for k in schema.PATCHABLE
               if new.get(k) != doc.get(k)}
    for key in ('tags', 'labels', 'driver_info', 'instance_info', 'extra'):
        if key in changes and changes[key] is None:
            changes[key] = [] if key == 'tags' else {}
    if 'owner' in changes:
        policy.authorize('baremetal_orch:node:update_owner', ctx,
                         {'owner': node.owner})
    if BINDING_FIELDS.intersection(changes):
        policy.authorize('baremetal_orch:node:update_binding', ctx,
                         {'owner': node.owner})
    if 'name' in changes:
        _refuse_if_held(node, 'renamed')
    changes = _check_values(changes)
    for key, value in changes.items():
        node[key] = value
    provisioning.get_driver(node.driver).validate(node)


def _refuse_if_held(node, what):
    """409 when an active action holds the node: the action's plan and
    report name it, and a node deleted or renamed under it would be
    another's."""
    holder = action_obj.holder_of(node.uuid)
    if holder is not None:
        raise exception.NodeHeldByAction(node=node.ident, what=what,
                                         action=holder.uuid)


class NodeStatesController(rest.RestController):
    """/v1/nodes/{ident}/states/{provision,console}"""

    _custom_actions = {'provision': ['PUT'], 'console': ['PUT']}

    @pecan.expose('json')
    def provision(self, node_ident):
        body = utils.json_body(schema.PROVISION)
        node = get_node(node_ident,
                        'baremetal_orch:node:set_provision_state')
        utils.rpcapi().do_provisioning_action(utils.context(), node,
                                              body['target'])
        pecan.response.status = 202
        pecan.response.location = '%s/v1/nodes/%s/states' % (
            pecan.request.host_url, node.uuid)

    @pecan.expose('json')
    def console(self, node_ident):
        body = utils.json_body(schema.CONSOLE)
        node = get_node(node_ident, 'baremetal_orch:node:set_console')
        utils.rpcapi().set_console(utils.context(), node, body['enabled'])
        pecan.response.status = 202

    @pecan.expose('json')
    def get_all(self, node_ident):
        node = get_node(node_ident)
        return {k: node[k] for k in (
            'provision_state', 'target_provision_state', 'power_state',
            'maintenance', 'console_enabled', 'last_error')}


class NodeMaintenanceController(rest.RestController):
    """/v1/nodes/{ident}/maintenance"""

    def _set(self, node_ident, enabled, reason=None):
        ctx = utils.context()
        node = get_node(node_ident, 'baremetal_orch:node:set_maintenance')
        notify.maintenance(ctx, node, 'start')
        try:
            node = utils.rpcapi().set_maintenance(ctx, node, enabled, reason)
        except Exception as e:
            notify.maintenance(ctx, node, 'error', exc=e)
            raise
        notify.maintenance(ctx, node, 'end')
        pecan.response.status = 202

    @pecan.expose('json')
    def put(self, node_ident):
        body = {}
        if pecan.request.body:
            body = utils.json_body(schema.MAINTENANCE)
        self._set(node_ident, True, body.get('reason'))

    @pecan.expose('json')
    def delete(self, node_ident):
        self._set(node_ident, False)


class NodesController(rest.RestController):
    """/v1/nodes"""

    states = NodeStatesController()
    maintenance = NodeMaintenanceController()

    _custom_actions = {'filter': ['POST']}

    @pecan.expose('json')
    def get_all(self, **params):
        return self._list(params, detail=utils.bool_param(
            'detail', params.pop('detail', None)))

    def _list(self, params, detail=False):
        ctx = utils.context()
        policy.authorize('baremetal_orch:node:get', ctx)
        known = {'limit', 'marker', 'sort_key', 'sort_dir', 'fields',
                 'detail', 'driver', 'provision_state', 'maintenance',
                 'shard', 'conductor_group', 'rack_name', 'conductor',
                 'tag', 'sharded', 'owner', 'ironic_uuid'}
        utils.check_query(params, known)
        limit, marker, sort_key, sort_dir = utils.list_params(
            params.get('limit'), params.get('marker'),
            params.get('sort_key'), params.get('sort_dir'), SORT_KEYS)
        fields = utils.fields_param(params.get('fields'), FIELDS)
        if fields is None and not detail:
            fields = SHORT_FIELDS
        filters = {k: params[k] for k in (
            'driver', 'provision_state', 'shard', 'conductor_group',
            'rack_name', 'conductor', 'owner', 'ironic_uuid') if k in params}
        if 'shard' in filters:
            filters['shard'] = filters['shard'].split(',')
        if 'maintenance' in params:
            filters['maintenance'] = utils.bool_param(
                'maintenance', params['maintenance'])
        if 'sharded' in params:
            filters['sharded'] = utils.bool_param('sharded',
                                                  params['sharded'])
        if 'tag' in params:
            filters['tags'] = params['tag'].split(',')
        if not policy.check('system_reader', ctx):
            if filters.get('owner', ctx.project_id) != ctx.project_id:
                # Another project's nodes: none of them is visible.
                return utils.collection('nodes', [], limit)
            filters['owner'] = ctx.project_id
        # Records as dicts: no versioned object per node on the hot path.
        nodes = node_obj.Node.list_records(ctx, filters, limit, marker,
                                           sort_key, sort_dir)
        return utils.collection('nodes', [to_dict(n, fields) for n in nodes],
                                limit,
                                marker=nodes[-1]['uuid'] if nodes else None)

    @pecan.expose('json')
    def get_one(self, node_ident):
        fields = pecan.request.GET.get('fields')
        fields = utils.fields_param(fields, FIELDS)
        return to_dict(get_node(node_ident), fields)

    @pecan.expose('json')
    def post(self):
        ctx = utils.context()
        policy.authorize('baremetal_orch:node:create', ctx)
        values = _check_values(utils.json_body(schema.CREATE))
        # (The ironic driver's validate() reads ironic_uuid: unset, the
        # object raised NotImplementedError, a 500.)
        for key, empty in (('tags', []), ('labels', {}), ('driver_info', {}),
                           ('instance_info', {}), ('extra', {}),
                           ('ironic_uuid', None)):
            values.setdefault(key, empty)
        node = node_obj.Node(ctx, **values)
        node.provision_state = 'enroll'
        node.maintenance = False
        node.console_enabled = False
        provisioning.get_driver(node.driver).validate(node)
        if 'uuid' not in values:
            node.uuid = uuidutils.generate_uuid()
        try:
            node.conductor = rpcapi_mod.pick_host(node.uuid,
                                                  shard=values.get('shard'))
        except exception.NoConductorAvailable:
            node.conductor = None
        with notify.crud_scope(ctx, 'node', 'create', node):
            node.create()
        pecan.response.status = 201
        pecan.response.location = utils.link('nodes/%s' % node.uuid)[0][
            'href']
        return to_dict(node)

    @pecan.expose('json')
    def patch(self, node_ident=None):
        utils.require_ident(node_ident)
        ctx = utils.context()
        node = get_node(node_ident, 'baremetal_orch:node:update')
        patch = utils.json_body()
        _refuse_secret_reads(patch)

        def change(node):
            # The node as it is now, under its row lock.
            policy.authorize('baremetal_orch:node:update', ctx,
                             {'owner': node.owner})
            _apply(ctx, node, patch)

        node = utils.update_atomically(
            ctx, 'node', node, node_obj.Node.updating(ctx, node.uuid),
            change)
        return to_dict(node)

    @pecan.expose('json')
    def delete(self, node_ident=None):
        utils.require_ident(node_ident)
        ctx = utils.context()
        uuid = get_node(node_ident, 'baremetal_orch:node:delete').uuid
        # Under the node's row lock: the checks hold until it is gone.
        with node_obj.Node.updating(ctx, uuid) as node:
            if node.provision_state not in states.DELETE_ALLOWED_STATES:
                raise exception.NodeInWrongState(
                    node=node_ident, reason='cannot be deleted while %s'
                    % node.provision_state)
            _refuse_if_held(node, 'deleted')
            with notify.crud_scope(ctx, 'node', 'delete', node):
                node.destroy()
        pecan.response.status = 204

    @pecan.expose('json')
    def filter(self):
        policy.authorize('baremetal_orch:node:filter', utils.context())
        body = utils.json_body(schema.FILTER)
        # Within the limits of one SQL statement, or a 400 naming them.
        selectors = selectors_mod.coerce(body['selectors'])
        return {'node_names': node_obj.Node.names_matching(selectors)}
