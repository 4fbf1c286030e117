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
"""/v1/shards: how many nodes each shard holds.

``GET /v1/shards`` → ``{"shards": [{"name": "a", "count": 3}, ...,
{"name": null, "count": 2}]}``: one entry per shard that holds a node,
sorted by name; the nodes without a shard come last under ``"name":
null`` (JSON null, so no shard can be mistaken for them; Ironic's own
``/v1/shards`` prints them as the string ``"None"``). The entry is absent
when every node has a shard. Read with ``baremetal_orch:service:get``.
"""

import pecan
from pecan import rest

from baremetal_orch.api import utils
from baremetal_orch.common import exception
from baremetal_orch.common import policy
from baremetal_orch.objects import node as node_obj


def shard_counts():
    """``[{"name", "count"}]``: named shards by name, then null."""
    rows = sorted(node_obj.Node.count_by_shard(),
                  key=lambda row: (row[0] is None, row[0] or ''))
    return [{'name': name, 'count': count} for name, count in rows]


class ShardsController(rest.RestController):
    """/v1/shards"""

    @pecan.expose('json')
    def get_all(self, **params):
        policy.authorize('baremetal_orch:service:get', utils.context())
        if params:
            raise exception.InvalidParameterValue(
                reason='Unknown query parameter(s): %s'
                       % ', '.join(sorted(params)))
        return {'shards': shard_counts()}
