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
from baremetal_orch.common import limits

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

#: One maintenance window; what the times mean (ISO 8601 with a UTC
#: offset, end after start) is checked at admission
#: (baremetal_orch.deployment.windows.parse).
WINDOW = {
    'type': 'object',
    'properties': {'start': common.STRING, 'end': common.STRING},
    'required': ['start', 'end'],
    'additionalProperties': False,
}

SITE_PARAMETERS = {
    'type': 'object',
    'properties': {
        'deployment_strategy': common.NAME,
        'windows': {'type': 'array', 'minItems': 1,
                    'maxItems': limits.MAX_WINDOWS, 'items': WINDOW},
    },
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

CONTROL = {
    'type': 'object',
    'properties': {
        'verb': {'type': 'string', 'enum': ['pause', 'resume', 'abort']},
        'reason': {'type': ['string', 'null'], 'maxLength': 255},
    },
    'required': ['verb'],
    'additionalProperties': False,
}

#: ``retry``: the ended site action to run again.
RETRY_PARAMETERS = {
    'type': 'object',
    'properties': {'action': common.UUID},
    'required': ['action'],
    'additionalProperties': False,
}
