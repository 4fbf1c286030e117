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
"""JSON schemas of chassis requests."""

from baremetal_orch.api.schemas import common

_FIELDS = {
    'uuid': common.UUID,
    'description': {'anyOf': [common.STRING, {'type': 'null'}]},
    'extra': common.OBJECT,
}

CREATE = {'type': 'object', 'properties': _FIELDS,
          'additionalProperties': False}

UPDATE = {'type': 'object',
          'properties': {k: v for k, v in _FIELDS.items() if k != 'uuid'},
          'additionalProperties': True}

PATCHABLE = frozenset(('description', 'extra'))
