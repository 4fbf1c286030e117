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
"""``openstack baremetal orch service ...``: conductor services."""

from osc_lib.command import command

from baremetal_orch.osc import common

SERVICE_COLUMNS = (('host', 'Host'), ('shard_key', 'Shard Key'),
                   ('conductor_group', 'Conductor Group'),
                   ('alive', 'Alive'), ('forced_down', 'Forced Down'),
                   ('disabled', 'Disabled'))


class ListService(common.Lister):
    """List conductor services.

    Shard, conductor group, alive, forced down, disabled.
    """

    def take_action(self, parsed_args):
        body = common.client(self).get('services') or {}
        return common.rows(body.get('services') or [], SERVICE_COLUMNS)


class SetService(command.Command):
    """Force a conductor service down (or up), disable or enable it."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('host', metavar='<host>',
                            help='Host name of the service.')
        down = parser.add_mutually_exclusive_group()
        down.add_argument('--forced-down', dest='forced_down',
                          action='store_true', default=None,
                          help='Mark the service down (its nodes can be '
                               'moved with baremetal-orch-manage node '
                               'move).')
        down.add_argument('--no-forced-down', dest='forced_down',
                          action='store_false',
                          help='Clear the forced-down mark.')
        enabled = parser.add_mutually_exclusive_group()
        enabled.add_argument('--disable', dest='disabled',
                             action='store_true', default=None,
                             help='Disable the service.')
        enabled.add_argument('--enable', dest='disabled',
                             action='store_false',
                             help='Enable the service.')
        return parser

    def take_action(self, parsed_args):
        ops = [{'op': 'replace', 'path': common.pointer(field),
                'value': getattr(parsed_args, field)}
               for field in ('forced_down', 'disabled')
               if getattr(parsed_args, field) is not None]
        common.client(self).patch('services/%s' % parsed_args.host,
                                  common.require_changes(ops))
