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
"""API policy: rules in code with secure-RBAC defaults and scope types.

Personas: a system admin writes everything; a system reader reads
everything; project-scoped users see the nodes (and their ports) their
project owns: a project reader reads them, a project member may change
them and run provision verbs on them.
"""

import threading

from oslo_config import cfg
from oslo_policy import opts as policy_opts
from oslo_policy import policy

from baremetal_orch.common import exception

CONF = cfg.CONF
_ENFORCER = None
_ENFORCER_LOCK = threading.Lock()

SYSTEM_ADMIN = 'role:admin and system_scope:all'
SYSTEM_READER = 'role:reader and system_scope:all'
PROJECT_READER = 'role:reader and project_id:%(owner)s'
PROJECT_MEMBER = 'role:member and project_id:%(owner)s'

SYSTEM_OR_PROJECT_READER = '(%s) or (%s)' % (SYSTEM_READER, PROJECT_READER)
SYSTEM_ADMIN_OR_PROJECT_MEMBER = '(%s) or (%s)' % (
    SYSTEM_ADMIN, PROJECT_MEMBER)

_RULES = [
    policy.RuleDefault('system_admin', SYSTEM_ADMIN,
                       description='A system-scoped administrator.'),
    policy.RuleDefault('system_reader', SYSTEM_READER,
                       description='A system-scoped reader.'),
]


def _doc(name, check, description, operations, scopes=('system',)):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, description=description,
        operations=[{'path': p, 'method': m} for m, p in operations],
        scope_types=list(scopes))


_API_RULES = [
    # Nodes
    _doc('baremetal_orch:node:create', SYSTEM_ADMIN, 'Create a node.',
         [('POST', '/v1/nodes')]),
    _doc('baremetal_orch:node:get', SYSTEM_OR_PROJECT_READER,
         'Show or list nodes (project users see their own).',
         [('GET', '/v1/nodes'), ('GET', '/v1/nodes/{ident}')],
         ('system', 'project')),
    _doc('baremetal_orch:node:update', SYSTEM_ADMIN_OR_PROJECT_MEMBER,
         'Update a node.', [('PATCH', '/v1/nodes/{ident}')],
         ('system', 'project')),
    _doc('baremetal_orch:node:update_owner', SYSTEM_ADMIN,
         'Change the owner (project) of a node.',
         [('PATCH', '/v1/nodes/{ident}')]),
    _doc('baremetal_orch:node:update_binding', SYSTEM_ADMIN,
         'Change what a node is bound to: its Ironic node (ironic_uuid), '
         'the shard and conductor group that serve it, its chassis.',
         [('PATCH', '/v1/nodes/{ident}')]),
    _doc('baremetal_orch:node:delete', SYSTEM_ADMIN, 'Delete a node.',
         [('DELETE', '/v1/nodes/{ident}')]),
    _doc('baremetal_orch:node:set_provision_state',
         SYSTEM_ADMIN_OR_PROJECT_MEMBER, 'Change the provision state.',
         [('PUT', '/v1/nodes/{ident}/states/provision')],
         ('system', 'project')),
    _doc('baremetal_orch:node:set_maintenance',
         SYSTEM_ADMIN_OR_PROJECT_MEMBER, 'Set or clear maintenance.',
         [('PUT', '/v1/nodes/{ident}/maintenance'),
          ('DELETE', '/v1/nodes/{ident}/maintenance')],
         ('system', 'project')),
    _doc('baremetal_orch:node:set_console',
         SYSTEM_ADMIN_OR_PROJECT_MEMBER, 'Enable or disable the console.',
         [('PUT', '/v1/nodes/{ident}/states/console')],
         ('system', 'project')),
    _doc('baremetal_orch:node:filter', SYSTEM_READER,
         'Resolve deployment selectors to node names.',
         [('POST', '/v1/nodes/filter')]),
    # Ports
    _doc('baremetal_orch:port:create', SYSTEM_ADMIN, 'Create a port.',
         [('POST', '/v1/ports')]),
    _doc('baremetal_orch:port:get', SYSTEM_OR_PROJECT_READER,
         'Show or list ports (project users see their nodes\' ports).',
         [('GET', '/v1/ports'), ('GET', '/v1/ports/{uuid}')],
         ('system', 'project')),
    _doc('baremetal_orch:port:update', SYSTEM_ADMIN, 'Update a port.',
         [('PATCH', '/v1/ports/{uuid}')]),
    _doc('baremetal_orch:port:delete', SYSTEM_ADMIN, 'Delete a port.',
         [('DELETE', '/v1/ports/{uuid}')]),
    # Chassis
    _doc('baremetal_orch:chassis:create', SYSTEM_ADMIN, 'Create a chassis.',
         [('POST', '/v1/chassis')]),
    _doc('baremetal_orch:chassis:get', SYSTEM_READER,
         'Show or list chassis.',
         [('GET', '/v1/chassis'), ('GET', '/v1/chassis/{uuid}')]),
    _doc('baremetal_orch:chassis:update', SYSTEM_ADMIN, 'Update a chassis.',
         [('PATCH', '/v1/chassis/{uuid}')]),
    _doc('baremetal_orch:chassis:delete', SYSTEM_ADMIN, 'Delete a chassis.',
         [('DELETE', '/v1/chassis/{uuid}')]),
    # Deployment strategies, actions, tasks, events, deployments
    _doc('baremetal_orch:strategy:create', SYSTEM_ADMIN,
         'Store a deployment strategy.',
         [('POST', '/v1/deployment_strategies')]),
    _doc('baremetal_orch:strategy:validate', SYSTEM_READER,
         'Validate a deployment strategy without storing it.',
         [('POST', '/v1/deployment_strategies/validate')]),
    _doc('baremetal_orch:strategy:get', SYSTEM_READER,
         'Show or list deployment strategies.',
         [('GET', '/v1/deployment_strategies'),
          ('GET', '/v1/deployment_strategies/{name}')]),
    _doc('baremetal_orch:strategy:delete', SYSTEM_ADMIN,
         'Delete a deployment strategy.',
         [('DELETE', '/v1/deployment_strategies/{name}')]),
    _doc('baremetal_orch:action:create', SYSTEM_ADMIN,
         'Start an action (deploy_site, update_site, update_labels).',
         [('POST', '/v1/actions')]),
    _doc('baremetal_orch:action:control', SYSTEM_ADMIN,
         'Pause, resume or abort a running action.',
         [('POST', '/v1/actions/{uuid}/control')]),
    _doc('baremetal_orch:action:get', SYSTEM_READER,
         'Show or list actions, their tasks, events and deployments.',
         [('GET', '/v1/actions'), ('GET', '/v1/actions/{uuid}'),
          ('GET', '/v1/tasks/{uuid}'), ('GET', '/v1/events'),
          ('GET', '/v1/deployments'), ('GET', '/v1/deployments/{uuid}')]),
    # Services and shards
    _doc('baremetal_orch:service:get', SYSTEM_READER,
         'List conductor services and shards.',
         [('GET', '/v1/services'), ('GET', '/v1/shards')]),
    _doc('baremetal_orch:service:update', SYSTEM_ADMIN,
         'Force down, disable or enable a conductor service.',
         [('PATCH', '/v1/services/{host}')]),
]


def list_rules():
    """The rules, for oslopolicy-sample-generator and the docs."""
    return _RULES + _API_RULES


def get_enforcer():
    """The enforcer, made once: published only once its rules are
    registered, so a request served while another makes it never sees a
    rule missing (a 500, PolicyNotRegistered)."""
    global _ENFORCER
    if _ENFORCER is None:
        with _ENFORCER_LOCK:
            if _ENFORCER is None:
                policy_opts.set_defaults(CONF, enforce_scope=True,
                                         enforce_new_defaults=True)
                enforcer = policy.Enforcer(CONF)
                enforcer.register_defaults(list_rules())
                _ENFORCER = enforcer
    return _ENFORCER


def get_oslo_policy_enforcer():
    """The enforcer, for oslopolicy-checker and friends."""
    CONF([], project='baremetal_orch')
    return get_enforcer()


def reset():
    global _ENFORCER
    if _ENFORCER is not None:
        _ENFORCER.clear()
    _ENFORCER = None


def authorize(rule, context, target=None):
    """Check a rule; raise Forbidden (403) when it does not pass."""
    target = target or {}
    target.setdefault('owner', context.project_id)
    try:
        allowed = get_enforcer().authorize(rule, target, context)
    except policy.InvalidScope:
        allowed = False
    if not allowed:
        raise exception.Forbidden(resource=rule)
    return True


def check(rule, context, target=None):
    """Like authorize, but answers True or False."""
    try:
        authorize(rule, context, target)
        return True
    except exception.Forbidden:
        return False
