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
"""baremetal-orch-status upgrade check (oslo.upgradecheck).

``baremetal-orch-status [--config-file F] upgrade check [--json]`` runs:

========================================  ==================================
check                                     result
========================================  ==================================
Database schema                           failure unless the schema is at
                                          the newest revision
Ironic peer_list                          warning with more than one peer
                                          (the hash ring is deprecated)
Shard keys within conductor groups        warning when, in one conductor
                                          group, services with a shard key
                                          sit beside services without one
RPC transport                             failure when ``[DEFAULT]
                                          rpc_transport = none`` while more
                                          than one conductor service is
                                          alive
Enabled drivers                           failure when nodes use a
                                          provisioning driver that
                                          ``[DEFAULT]enabled_drivers``
                                          leaves out
========================================  ==================================

Services that are forced down are retired and left out of the shard key
check. Exit code: 0 success, 1 a warning, 2 a failure, 255 a crash of a
check (oslo.upgradecheck's codes).
"""

import importlib.metadata
import os
import sys

from alembic import script as alembic_script
from oslo_config import cfg
from oslo_upgradecheck import upgradecheck

from baremetal_orch import conf  # noqa: F401  (registers the options)
from baremetal_orch.db import api as dbapi
from baremetal_orch.db import migration
from baremetal_orch.drivers import provisioning
from baremetal_orch import version

CONF = cfg.CONF
Code = upgradecheck.Code
Result = upgradecheck.Result

_ALEMBIC_DIR = os.path.join(os.path.dirname(migration.__file__),
                            'sqlalchemy', 'alembic')


def schema_head():
    """The newest revision of the schema this code ships."""
    return alembic_script.ScriptDirectory(_ALEMBIC_DIR).get_current_head()


def _db_failure(e):
    return Result(Code.FAILURE, 'Cannot read the database '
                  '([database]connection): %s' % e)


class Checks(upgradecheck.UpgradeCommands):
    """The upgrade checks of baremetal_orch."""

    display_title = 'baremetal-orch upgrade check results'

    def _check_schema(self):
        head = schema_head()
        try:
            current = migration.version()
        except Exception as e:
            return _db_failure(e)
        if current == head:
            return Result(Code.SUCCESS)
        if current is None:
            return Result(Code.FAILURE, 'The database has no schema; run '
                          '"baremetal-orch-manage db upgrade".')
        return Result(Code.FAILURE, 'The database schema is at revision %s, '
                      'not %s; run "baremetal-orch-manage db upgrade".'
                      % (current, head))

    def _check_peer_list(self):
        peers = list(CONF.ironic.peer_list or [])
        if len(peers) <= 1:
            return Result(Code.SUCCESS)
        return Result(Code.WARNING, '[ironic]peer_list lists %d services '
                      '(%s): spreading nodes on a hash ring is deprecated. '
                      'Give each conductor service its own [ironic]shard_key'
                      ' and re-home the nodes with "baremetal-orch-manage '
                      'node move" (see the shards guide).'
                      % (len(peers), ', '.join(peers)))

    def _check_shard_keys(self):
        try:
            services = [s for s in dbapi.list_services()
                        if not s.forced_down]
        except Exception as e:
            return _db_failure(e)
        groups = {}
        for svc in services:
            groups.setdefault(svc.conductor_group or '', []).append(svc)
        mixed = []
        for group, members in sorted(groups.items()):
            sharded = sorted('%s (shard %s)' % (s.host, s.shard_key)
                             for s in members if s.shard_key)
            unsharded = sorted(s.host for s in members if not s.shard_key)
            if sharded and unsharded:
                mixed.append('conductor group %s: %s set a shard key but %s '
                             'do not' % (group or '(default)',
                                         ', '.join(sharded),
                                         ', '.join(unsharded)))
        if not mixed:
            return Result(Code.SUCCESS)
        return Result(Code.WARNING, '; '.join(mixed) + '. A service without '
                      '[ironic]shard_key lists every node of its conductor '
                      'group, including the shards of the others: set a '
                      'shard key on every service of the group, or force '
                      'down the ones that are retired.')

    def _check_rpc_transport(self):
        if CONF.rpc_transport != 'none':
            return Result(Code.SUCCESS)
        try:
            alive = sorted(s.host for s in dbapi.list_services()
                           if dbapi.is_alive(
                               s, CONF.conductor.heartbeat_timeout))
        except Exception as e:
            return _db_failure(e)
        if len(alive) <= 1:
            return Result(Code.SUCCESS)
        return Result(Code.FAILURE, '[DEFAULT]rpc_transport = none makes '
                      'direct in-process calls, but %d conductor services '
                      'are alive (%s): the API cannot reach the nodes of the '
                      'others. Use rpc_transport = oslo with a '
                      'transport_url, or run a single all-in-one service.'
                      % (len(alive), ', '.join(alive)))

    def _check_enabled_drivers(self):
        enabled = set(CONF.enabled_drivers)
        known = sorted(ep.name for ep in importlib.metadata.entry_points(
            group=provisioning.NAMESPACE))
        try:
            used = [name for name in known if name not in enabled
                    and dbapi.list_nodes(filters={'driver': name}, limit=1)]
        except Exception as e:
            return _db_failure(e)
        if not used:
            return Result(Code.SUCCESS)
        return Result(Code.FAILURE, 'Nodes use the provisioning driver(s) '
                      '%s, which [DEFAULT]enabled_drivers (%s) leaves out: '
                      'they cannot be updated nor deployed. Add them to '
                      'enabled_drivers (its default is ironic), or delete '
                      'those nodes.' % (', '.join(used),
                                        ', '.join(sorted(enabled))))

    _upgrade_checks = (
        ('Database schema', _check_schema),
        ('Ironic peer_list', _check_peer_list),
        ('Shard keys within conductor groups', _check_shard_keys),
        ('RPC transport', _check_rpc_transport),
        ('Enabled drivers', _check_enabled_drivers),
    )


def _add_parsers(subparsers):
    upgrade = subparsers.add_parser('upgrade', help='upgrade readiness')
    upgrade.add_argument('check', choices=['check'],
                         help='run the upgrade checks')
    upgrade.add_argument('--json', action='store_true',
                         help='print the results as JSON')
    upgrade.set_defaults(action_fn=lambda: Checks().check())


# One option object for the life of the process (oslo.upgradecheck's own
# main registers a new one on every call, which a second call refuses).
COMMAND_OPT = cfg.SubCommandOpt('command', handler=_add_parsers)


def main(argv=None):
    """Run the checks; returns (and exits with) oslo.upgradecheck's code."""
    CONF.register_cli_opt(COMMAND_OPT)
    CONF(sys.argv[1:] if argv is None else argv, project='baremetal-orch',
         version=version.version_string())
    # Checks.check() reads --json through the module's CONF, as
    # upgradecheck.main() would have set it.
    upgradecheck.CONF = CONF
    return upgradecheck.run(CONF)


if __name__ == '__main__':
    sys.exit(main())
