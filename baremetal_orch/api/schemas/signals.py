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
"""JSON schema of a deployment signal (POST /v1/signals/{uuid}).

The body of a stock Heat software-deployment signal: the known keys below
plus any output values (other keys, accepted as they are).
"""

from baremetal_orch.deployment import signals

_NULLABLE_TEXT = {'type': ['string', 'null']}

SIGNAL = {
    'type': 'object',
    'properties': {
        signals.STATUS: {'enum': list(signals.STATUSES) + [None]},
        signals.REASON: _NULLABLE_TEXT,
        signals.STDOUT: _NULLABLE_TEXT,
        signals.STDERR: _NULLABLE_TEXT,
        signals.STATUS_CODE: {'anyOf': [
            {'type': 'integer', 'minimum': signals.MIN_STATUS_CODE,
             'maximum': signals.MAX_STATUS_CODE},
            {'type': 'string', 'pattern': r'^\s*[-+]?[0-9]{1,10}\s*$'},
            {'type': 'null'}]},
    },
    'additionalProperties': True,
}
