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
"""/v1/services: the conductor services, forced down or disabled.

``GET /v1/services`` lists every service record (a handful: no paging);
``GET /v1/services/{host}`` shows one; ``PATCH /v1/services/{host}`` takes
an RFC 6902 JSON patch of ``forced_down``, ``disabled`` and
``disabled_reason`` (every other field is read-only). Enabling a service
clears its reason; a reason on an enabled service is a 400. ``alive`` is
computed: a heartbeat fresher than ``[conductor]heartbeat_timeout`` and not
forced down.
"""

from oslo_config import cfg
import pecan
from pecan import rest

from baremetal_orch.api.schemas import services as schema
from baremetal_orch.api import utils
from baremetal_orch.api import validation
from baremetal_orch.common import exception
from baremetal_orch.common import policy
from baremetal_orch.objects import service as service_obj

CONF = cfg.CONF

FIELDS = ('host', 'binary', 'shard_key', 'conductor_group', 'forced_down',
          'disabled', 'disabled_reason', 'alive', 'last_seen_at',
          'created_at', 'updated_at')
READONLY = tuple(f for f in FIELDS if f not in schema.PATCHABLE) + (
    'links',)
_DATES = ('last_seen_at', 'created_at', 'updated_at')


def to_dict(service, fields=None):
    """The public document of a service."""
    doc = {}
    for field in fields or FIELDS:
        if field == 'alive':
            value = service.is_alive(CONF.conductor.heartbeat_timeout)
        else:
            value = service[field]
        if field in _DATES and value is not None:
            value = utils.timestamp(value)
        doc[field] = value
    doc['links'] = utils.link('services/%s' % service.host)
    return doc


def _changes(doc, new):
    """The writable fields that the patch changed, checked together."""
    unknown = sorted(set(new) - set(doc))
    if unknown:
        raise exception.PatchError(reason='unknown field(s): %s'
                                   % ', '.join(unknown))
    values = {k: new.get(k) for k in schema.PATCHABLE}
    validation.validate(schema.UPDATE, {k: v for k, v in new.items()
                                        if k in schema.PATCHABLE},
                        'service')
    if not values['disabled']:
        reason = values['disabled_reason']
        if reason is not None and reason != doc['disabled_reason']:
            raise exception.InvalidParameterValue(
                reason='disabled_reason can only be set on a disabled '
                       'service')
        # Enabling a service forgets why it was disabled.
        values['disabled_reason'] = None
    return {k: v for k, v in values.items() if v != doc.get(k)}


class ServicesController(rest.RestController):
    """/v1/services"""

    @pecan.expose('json')
    def get_all(self, **params):
        policy.authorize('baremetal_orch:service:get', utils.context())
        utils.check_query(params, {'fields'})
        fields = utils.fields_param(params.get('fields'), FIELDS)
        services = service_obj.Service.list(utils.context())
        return {'services': [to_dict(s, fields) for s in services]}

    @pecan.expose('json')
    def get_one(self, host):
        ctx = utils.context()
        policy.authorize('baremetal_orch:service:get', ctx)
        fields = utils.fields_param(pecan.request.GET.get('fields'), FIELDS)
        return to_dict(service_obj.Service.get(ctx, host), fields)

    @pecan.expose('json')
    def patch(self, host=None):
        utils.require_ident(host)
        ctx = utils.context()
        policy.authorize('baremetal_orch:service:update', ctx)
        service = service_obj.Service.get(ctx, host)
        patch = utils.json_body()

        def change(service):
            doc = to_dict(service)
            new = utils.apply_patch(doc, patch, READONLY)
            for key, value in _changes(doc, new).items():
                service[key] = value

        return to_dict(utils.update_atomically(
            ctx, None, service, service_obj.Service.updating(ctx, host),
            change))
