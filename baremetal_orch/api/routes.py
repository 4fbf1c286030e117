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
"""The routes of the REST API: the methods each path serves.

pecan's controllers route a request; this table says what they serve, as
the API reference lists it, so that every 405 names in ``Allow`` exactly
the methods of its path (``HEAD`` wherever ``GET`` is). pecan's own list
cannot: a RestController names every method it has, for its collection and
its members alike. ``tests/unit/api/test_routes.py`` holds the table, the
API reference and the controllers to the same routes.
"""

#: ``(path template, methods)``; ``{...}`` is one path segment.
ROUTES = (
    ('/', 'GET'),
    ('/v1', 'GET'),
    ('/v1/actions', 'GET POST'),
    ('/v1/actions/{action_uuid}', 'GET'),
    ('/v1/actions/{action_uuid}/control', 'POST'),
    ('/v1/chassis', 'GET POST'),
    ('/v1/chassis/{chassis_uuid}', 'GET PATCH DELETE'),
    ('/v1/deployment_strategies', 'GET POST'),
    ('/v1/deployment_strategies/validate', 'POST'),
    ('/v1/deployment_strategies/{strategy_name}', 'GET DELETE'),
    ('/v1/deployments', 'GET'),
    ('/v1/deployments/{deployment_uuid}', 'GET'),
    ('/v1/events', 'GET'),
    ('/v1/nodes', 'GET POST'),
    ('/v1/nodes/filter', 'POST'),
    ('/v1/nodes/{node_ident}', 'GET PATCH DELETE'),
    ('/v1/nodes/{node_ident}/maintenance', 'PUT DELETE'),
    ('/v1/nodes/{node_ident}/states', 'GET'),
    ('/v1/nodes/{node_ident}/states/console', 'PUT'),
    ('/v1/nodes/{node_ident}/states/provision', 'PUT'),
    ('/v1/ports', 'GET POST'),
    ('/v1/ports/{port_uuid}', 'GET PATCH DELETE'),
    ('/v1/services', 'GET'),
    ('/v1/services/{host}', 'GET PATCH'),
    ('/v1/shards', 'GET'),
    ('/v1/signals/{deployment_uuid}', 'POST PUT'),
    ('/v1/tasks/{task_uuid}', 'GET'),
)


def _segments(path):
    return [s for s in path.split('/') if s]


def _match(template, segments):
    """The number of literal segments of ``template`` that match, or
    None when it does not match ``segments``."""
    parts = _segments(template)
    if len(parts) != len(segments):
        return None
    literal = 0
    for part, segment in zip(parts, segments):
        if part.startswith('{'):
            continue
        if part != segment:
            return None
        literal += 1
    return literal


def allowed(path):
    """The methods ``path`` serves, sorted (with ``HEAD`` where ``GET``
    is), or None when no route has that shape. A literal segment wins
    over a parameter (``/v1/nodes/filter`` is not a node)."""
    segments = _segments(path)
    best, methods = None, None
    for template, served in ROUTES:
        literal = _match(template, segments)
        if literal is not None and (best is None or literal > best):
            best, methods = literal, set(served.split())
    if methods is None:
        return None
    if 'GET' in methods:
        methods.add('HEAD')
    return sorted(methods)
