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
"""JSON schemas of node requests."""

from baremetal_orch.api.schemas import common

_FIELDS = {
    'uuid': common.UUID,
    'name': common.NULLABLE_NAME,
    'driver': {'type': 'string', 'enum': ['fake', 'ironic']},
    'ironic_uuid': common.NULLABLE_UUID,
    'chassis_uuid': common.NULLABLE_UUID,
    'rack_name': common.NULLABLE_STRING,
    'tags': common.STRING_LIST,
    'labels': common.STRING_MAP,
    'shard': common.NULLABLE_STRING,
    'conductor_group': common.NULLABLE_STRING,
    'driver_info': common.OBJECT,
    'instance_info': common.OBJECT,
    'extra': common.OBJECT,
    'owner': common.NULLABLE_STRING,
}

CREATE = {
    'type': 'object',
    'properties': _FIELDS,
    'required': ['driver'],
    'additionalProperties': False,
}

#: What a node document must look like after a JSON patch.
UPDATE = {
    'type': 'object',
    'properties': {k: v for k, v in _FIELDS.items()
                   if k not in ('uuid', 'driver')},
    'additionalProperties': True,
}

PATCHABLE = frozenset(UPDATE['properties'])

PROVISION = {
    'type': 'object',
    'properties': {'target': {'type': 'string',
                              'enum': ['manage', 'provide', 'active',
                                       'deleted']}},
    'required': ['target'],
    'additionalProperties': False,
}

MAINTENANCE = {
    'type': 'object',
    'properties': {'reason': {'anyOf': [common.TEXT, {'type': 'null'}]}},
    'additionalProperties': False,
}

CONSOLE = {
    'type': 'object',
    'properties': {'enabled': {'type': 'boolean'}},
    'required': ['enabled'],
    'additionalProperties': False,
}

FILTER = {
    'type': 'object',
    'properties': {'selectors': {'type': 'array', 'items': {
        'type': 'object'}}},
    'required': ['selectors'],
    'additionalProperties': False,
}
