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
"""JSON schemas of action requests."""

from baremetal_orch.api.schemas import common

CREATE = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string',
                 'enum': ['deploy_site', 'update_site', 'update_labels',
                          'retry']},
        'parameters': {'type': 'object'},
        'dry_run': {'type': 'boolean'},
    },
    'required': ['name'],
    'additionalProperties': False,
}

SITE_PARAMETERS = {
    'type': 'object',
    'properties': {'deployment_strategy': common.NAME},
    'additionalProperties': False,
}

LABEL_PARAMETERS = {
    'type': 'object',
    'properties': {'target_nodes': {
        'type': 'array', 'minItems': 1, 'uniqueItems': True,
        'items': {'type': 'string', 'minLength': 1, 'maxLength': 255}}},
    'required': ['target_nodes'],
    'additionalProperties': False,
}

#: ``retry``: the ended site action to run again.
RETRY_PARAMETERS = {
    'type': 'object',
    'properties': {'action': common.UUID},
    'required': ['action'],
    'additionalProperties': False,
}
