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
"""Schema pieces shared by the resources."""

from baremetal_orch.common import limits

UUID = {'type': 'string', 'format': 'uuid',
        'pattern': '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                   '[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'}
NULLABLE_UUID = {'anyOf': [UUID, {'type': 'null'}]}
#: Resource names (nodes, deployment strategies): the one rule of
#: baremetal_orch.common.limits.
NAME = {'type': 'string', 'minLength': 1, 'maxLength': limits.NAME_MAX_LENGTH,
        'pattern': limits.NAME_PATTERN}
NULLABLE_NAME = {'anyOf': [NAME, {'type': 'null'}]}
STRING = {'type': 'string', 'maxLength': 255}
NULLABLE_STRING = {'anyOf': [STRING, {'type': 'null'}]}
TEXT = {'type': 'string', 'maxLength': 65535}
OBJECT = {'type': 'object'}
STRING_LIST = {'type': 'array', 'items': {'type': 'string', 'minLength': 1,
                                          'maxLength': 255},
               'uniqueItems': True}
STRING_MAP = {'type': 'object',
              'additionalProperties': {'type': 'string', 'maxLength': 63}}
