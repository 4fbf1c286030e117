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
"""baremetal-orch-manage: the administrator's command.

::

    baremetal-orch-manage [--config-file F] db upgrade [--revision REV]
    baremetal-orch-manage db version
    baremetal-orch-manage service list
    baremetal-orch-manage service force-down HOST [--unset]
    baremetal-orch-manage service enable HOST
    baremetal-orch-manage service disable HOST [--reason TEXT]
    baremetal-orch-manage shard list
    baremetal-orch-manage strategy validate FILE
    baremetal-orch-manage node move NODE_UUID --service HOST

Results go to stdout, errors to stderr (and logs to stderr). Exit codes: 0
success, 1 an error (unknown service, invalid strategy, unreadable file,
database error), 2 a usage error, and 3 to 8 for the refusals of ``node
move`` (see :mod:`baremetal_orch.conductor.node_move`).
"""

import io
import sys

from oslo_config import cfg
from oslo_log import log
import prettytable
import yaml

from baremetal_orch.api import validation
from baremetal_orch.common import exception
from baremetal_orch.conductor import node_move
from baremetal_orch.db import api as dbapi
from baremetal_orch.db import migration
from baremetal_orch.deployment import strategy as strategy_mod
from baremetal_orch import service

CONF = cfg.CONF
LOG = log.getLogger(__name__)

BINARY = 'baremetal-orch-manage'
EXIT_OK = 0
EXIT_ERROR = 1

#: Shown for nodes without a shard in ``shard list``.
NO_SHARD = '(none)'


def _out(text=''):
    print(text, file=sys.stdout)


def _err(text):
    print(text, file=sys.stderr)


# db ------------------------------------------------------------------------

def db_upgrade():
    migration.upgrade(CONF.command.revision)
    _out('Database upgraded to %s.' % migration.version())
    return EXIT_OK


def db_version():
    _out(migration.version() or 'None (no schema; run "%s db upgrade")'
         % BINARY)
    return EXIT_OK


# service -------------------------------------------------------------------

def service_list():
    timeout = CONF.conductor.heartbeat_timeout
    table = prettytable.PrettyTable(
        ['Host', 'Binary', 'Shard key', 'Conductor group', 'Alive',
         'Forced down', 'Disabled', 'Disabled reason', 'Last seen'])
    table.align = 'l'
    for svc in dbapi.list_services():
        table.add_row([
            svc.host, svc.binary, svc.shard_key or '',
            svc.conductor_group or '',
            dbapi.is_alive(svc, timeout), svc.forced_down, svc.disabled,
            svc.disabled_reason or '',
            svc.last_seen_at.isoformat(timespec='seconds')
            if svc.last_seen_at else ''])
    _out(table.get_string())
    return EXIT_OK


def _update_service(values, done):
    host = CONF.command.service_host
    dbapi.update_service(host, values)
    _out('Service %s %s.' % (host, done))
    return EXIT_OK


def service_force_down():
    if CONF.command.unset:
        return _update_service({'forced_down': False},
                               'is no longer forced down')
    return _update_service({'forced_down': True}, 'is forced down')


def service_enable():
    return _update_service({'disabled': False, 'disabled_reason': None},
                           'is enabled')


def service_disable():
    return _update_service({'disabled': True,
                            'disabled_reason': CONF.command.reason},
                           'is disabled')


# shard ---------------------------------------------------------------------

def shard_list():
    hosts = {}
    for svc in dbapi.list_services():
        # A forced-down service is stopped: it serves no shard.
        if not svc.forced_down:
            hosts.setdefault(svc.shard_key, []).append(svc.host)
    table = prettytable.PrettyTable(['Shard', 'Nodes', 'Services'])
    table.align = 'l'
    counts = dict(dbapi.count_nodes_by_shard())
    names = sorted(set(counts) | set(hosts), key=lambda s: (s is None, s))
    for name in names:
        table.add_row([NO_SHARD if name is None else name,
                       counts.get(name, 0),
                       ', '.join(sorted(hosts.get(name, [])))])
    _out(table.get_string())
    return EXIT_OK


# strategy ------------------------------------------------------------------

def _yaml_syntax_error(path, body):
    """``<path>, line L, column C: not valid YAML: <problem>`` of a YAML
    syntax error in ``body``, or None when its syntax is fine.

    Only YAML's parser runs (events, nothing constructed): it names the
    place of the error, which the API's message, about a request body,
    cannot.
    """
    stream = io.StringIO(body.decode('utf-8', 'replace'))
    stream.name = path
    try:
        for _event in yaml.parse(stream, Loader=yaml.SafeLoader):
            pass
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        problem = '; '.join(p for p in (e.context, e.problem) if p)
        return '%s, line %d, column %d: not valid YAML: %s' % (
            path, mark.line + 1, mark.column + 1, problem)
    except yaml.YAMLError as e:
        return '%s: not valid YAML: %s' % (path, e)
    return None


def strategy_validate():
    path = CONF.command.strategy_file
    try:
        with open(path, 'rb') as f:
            body = f.read()
    except OSError as e:
        _err('Cannot read %s: %s' % (path, e.strerror or e))
        return EXIT_ERROR
    try:
        # The API's loader: the same limits (no aliases, bounded nesting).
        document = validation.parse_yaml(body)
    except exception.Invalid as e:
        where = _yaml_syntax_error(path, body)
        if where:
            _err(where)
        else:
            _err('%s is neither YAML nor JSON the service accepts: %s'
                 % (path, e.message))
        return EXIT_ERROR
    try:
        strategy = strategy_mod.parse(document)
    except exception.Invalid as e:
        _err('%s: %s' % (path, e.message))
        return EXIT_ERROR
    _out('Deployment strategy %s is valid. Groups in dependency order:'
         % strategy.name)
    for i, name in enumerate(strategy.topological_order(), 1):
        deps = strategy.group(name).depends_on
        _out('%d. %s%s' % (i, name, ' (after %s)' % ', '.join(deps)
                           if deps else ''))
    return EXIT_OK


# node ----------------------------------------------------------------------

def node_move_cmd():
    try:
        result = node_move.move_node(CONF.command.node_ident,
                                     CONF.command.destination)
    except exception.NodeMoveRefused as e:
        _err(e.message)
        return getattr(e, 'exit_code', EXIT_ERROR)
    for warning in result.warnings:
        _err('Warning: %s' % warning)
    _out('Node %s moved from service %s to service %s%s.' % (
        result.node_uuid, result.source or '(none)', result.destination,
        ' with deployment record %s' % result.deployment_uuid
        if result.deployment_uuid else ''))
    return EXIT_OK


# Command line --------------------------------------------------------------

def _add(subparsers, name, func, help_text, args=()):
    parser = subparsers.add_parser(name, help=help_text)
    for flags, kwargs in args:
        parser.add_argument(*flags, **kwargs)
    parser.set_defaults(func=func)
    return parser


def _category(subparsers, name, help_text):
    parser = subparsers.add_parser(name, help=help_text)
    actions = parser.add_subparsers(dest='manage_action',
                                    metavar='ACTION')
    actions.required = True
    return actions


def add_command_parsers(subparsers):
    # Argument names must not collide with option names (``host``...):
    # oslo.config refuses CONF.command.<name> for a registered option.
    db = _category(subparsers, 'db', 'database schema')
    _add(db, 'upgrade', db_upgrade, 'upgrade the schema (to head)',
         [(('--revision',), {'default': 'head',
                             'help': 'target revision (default head)'})])
    _add(db, 'version', db_version, 'print the current schema revision')

    svc = _category(subparsers, 'service', 'conductor services')
    _add(svc, 'list', service_list, 'list the conductor services')
    host = (('service_host',), {'metavar': 'HOST',
                                'help': 'the service ([DEFAULT]host)'})
    _add(svc, 'force-down', service_force_down,
         'mark a stopped service as down (or --unset it)',
         [host, (('--unset',), {'action': 'store_true',
                                'help': 'clear forced down'})])
    _add(svc, 'enable', service_enable, 'enable a service', [host])
    _add(svc, 'disable', service_disable, 'disable a service',
         [host, (('--reason',), {'default': None,
                                 'help': 'why it is disabled'})])

    shard = _category(subparsers, 'shard', 'Ironic shards')
    _add(shard, 'list', shard_list,
         'node counts per shard and the services serving each')

    strategy = _category(subparsers, 'strategy', 'deployment strategies')
    _add(strategy, 'validate', strategy_validate,
         'validate a DeploymentStrategy document (YAML or JSON)',
         [(('strategy_file',), {'metavar': 'FILE'})])

    node = _category(subparsers, 'node', 'nodes')
    _add(node, 'move', node_move_cmd,
         'move an Ironic-backed node (and its deployment record) to '
         'another service; its service must be forced down or disabled',
         [(('node_ident',), {'metavar': 'NODE_UUID'}),
          (('--service',), {'dest': 'destination', 'metavar': 'HOST',
                            'required': True,
                            'help': 'the destination service'})])


COMMAND_OPT = cfg.SubCommandOpt('command', title='Commands',
                                handler=add_command_parsers,
                                help='the command to run')


def main(argv=None):
    """Run one command; returns (and exits with) its exit code."""
    CONF.register_cli_opt(COMMAND_OPT)
    log.register_options(CONF)
    # Logs go to stderr unless configured otherwise: stdout is the output.
    CONF.set_default('use_stderr', True)
    service.prepare_service(argv, binary=BINARY)
    try:
        return CONF.command.func()
    except exception.BaremetalOrchException as e:
        _err(e.message)
        return EXIT_ERROR
    except Exception as e:
        LOG.debug('%s failed', BINARY, exc_info=True)
        _err('%s failed: %s' % (BINARY, e))
        return EXIT_ERROR


if __name__ == '__main__':
    sys.exit(main())
