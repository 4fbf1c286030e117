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
"""The limits of what the API accepts (doc/source/admin/limits.rst).

One place for them: the API, the strategy parser and the docs
(``doc/source/admin/limits.rst``) use these. A request past one of them is
a 400 (413 for the body size, ``[api]max_request_body_size``) whose detail
names the limit; a test checks each.
"""

import re

from baremetal_orch.common import exception

#: How deep a request body (JSON or YAML) may nest: ``{"a": [1]}`` is 2
#: levels deep. Copies, schema checks and JSON patches recurse once per
#: level; a real document is less than 10 deep.
MAX_DEPTH = 64

#: Operations in one JSON patch.
MAX_PATCH_OPERATIONS = 1000

#: Values (maps, lists and scalars) a document may hold while a JSON patch
#: applies: ``copy`` operations cannot grow it without bound.
MAX_DOCUMENT_VALUES = 100000

#: Groups in one deployment strategy.
MAX_GROUPS = 1000

#: Selectors of one group, or of one ``POST /v1/nodes/filter``.
MAX_SELECTORS = 100

#: Values of one criterion of a selector (``node_names``, ``node_tags``,
#: ``rack_names``; ``node_labels`` counts one per key/value pair).
MAX_VALUES = 1000

#: Label pairs of one selector: SQLite nests one expression per pair and
#: refuses a statement nested deeper than 1,000.
MAX_LABEL_PAIRS = 100

#: Values of all the selectors of one group (or one filter) together: each
#: is one parameter of one SQL statement (SQLite takes 32,766).
MAX_SELECTOR_VALUES = 10000

#: Label pairs of all the selectors of one group (or one filter) together:
#: each pair is an expression of its own (10,000 took seconds to build and
#: plan, 1,000 a few tenths).
MAX_SELECTOR_LABEL_PAIRS = 1000

#: Values, and label pairs, of all the groups of one deployment strategy
#: together: each group is resolved with a statement of its own, at every
#: dry run and action.
MAX_STRATEGY_SELECTOR_VALUES = 100000
MAX_STRATEGY_LABEL_PAIRS = 10000

#: Maintenance windows of one site action (``parameters.windows``).
MAX_WINDOWS = 100

#: Resource names (nodes, deployment strategies): at most this long, of
#: letters, digits and ``._~-``, starting with a letter or digit, so that
#: a name is one path segment of a URL, as it is.
NAME_MAX_LENGTH = 255
#: (``\Z``, not ``$``: ``$`` also matches before a final newline.)
NAME_PATTERN = r'^[A-Za-z0-9][A-Za-z0-9._~-]*\Z'
_NAME_RE = re.compile(NAME_PATTERN)

#: Deployment group names: any text of 1 to this many characters.
GROUP_NAME_MAX_LENGTH = 255


def exceeded(what, limit, path=None):
    """The error for a request past ``limit`` (``what`` says of what)."""
    return exception.LimitExceeded(what=what, limit=limit,
                                   path=path or '(body)')


def is_valid_name(name):
    return (isinstance(name, str) and 0 < len(name) <= NAME_MAX_LENGTH
            and _NAME_RE.match(name) is not None)


def check_name(name, what='name'):
    """InvalidParameterValue naming the rule when ``name`` breaks it."""
    if not is_valid_name(name):
        raise exception.InvalidName(what=what, name=name,
                                    max=NAME_MAX_LENGTH)
    return name
