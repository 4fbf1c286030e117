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
"""JSON schemas of port requests."""

from baremetal_orch.api.schemas import common

MAC = {'type': 'string',
       'pattern': '^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$'}

_FIELDS = {
    'uuid': common.UUID,
    'node_uuid': common.UUID,
    'address': MAC,
    'pxe_enabled': {'type': 'boolean'},
    'local_link_connection': {
        'type': 'object',
        'properties': {'switch_id': {'type': 'string'},
                       'port_id': {'type': 'string'},
                       'switch_info': {'type': 'string'}},
        'additionalProperties': False},
    'extra': common.OBJECT,
}

CREATE = {'type': 'object', 'properties': _FIELDS,
          'required': ['node_uuid', 'address'],
          'additionalProperties': False}

UPDATE = {'type': 'object',
          'properties': {k: v for k, v in _FIELDS.items() if k != 'uuid'},
          'additionalProperties': True}

PATCHABLE = frozenset(k for k in _FIELDS if k != 'uuid')
