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
"""``openstack baremetal orch port ...``: network ports of nodes."""

import functools

from osc_lib.command import command

from baremetal_orch.osc import common

FIELDS = ('uuid', 'node_uuid', 'address', 'pxe_enabled',
          'local_link_connection', 'extra', 'created_at', 'updated_at')
LIST_COLUMNS = (('uuid', 'UUID'), ('address', 'Address'))
LONG_COLUMNS = (('uuid', 'UUID'), ('address', 'Address'),
                ('node_uuid', 'Node UUID'), ('pxe_enabled', 'PXE Enabled'),
                ('local_link_connection', 'Local Link Connection'),
                ('extra', 'Extra'))


def _add_options(parser, creating):
    parser.add_argument('--node', metavar='<node>', required=creating,
                        help='Name or UUID of the node of the port.')
    pxe = parser.add_mutually_exclusive_group()
    pxe.add_argument('--pxe-enabled', dest='pxe_enabled',
                     action='store_true', default=None,
                     help='The node boots from this port.')
    pxe.add_argument('--pxe-disabled', dest='pxe_enabled',
                     action='store_false',
                     help='The node does not boot from this port.')
    parser.add_argument(
        '--local-link-connection', metavar='<key=value>',
        dest='local_link_connection', action=common.KeyValue,
        help='switch_id, port_id or switch_info of the switch port; '
             'repeat for more.')
    parser.add_argument(
        '--extra', metavar='<key=value>', dest='extra',
        action=functools.partial(common.KeyValue, json_values=True),
        help='Extra data; repeat for more.')


class CreatePort(common.ShowOne):
    """Create a port."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('address', metavar='<address>',
                            help='MAC address of the port.')
        parser.add_argument('--uuid', metavar='<uuid>',
                            help='UUID of the port (default: generated).')
        _add_options(parser, creating=True)
        return parser

    def take_action(self, parsed_args):
        api = common.client(self)
        body = {'address': parsed_args.address,
                'node_uuid': common.node_uuid(api, parsed_args.node)}
        for field in ('uuid', 'pxe_enabled', 'local_link_connection',
                      'extra'):
            if getattr(parsed_args, field) is not None:
                body[field] = getattr(parsed_args, field)
        return common.show(api.post('ports', body), FIELDS)


class ListPort(common.Lister):
    """List ports."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--node', metavar='<node>',
                            help='Only the ports of this node.')
        parser.add_argument('--address', metavar='<address>',
                            help='Only the port with this MAC address.')
        parser.add_argument('--long', action='store_true',
                            help='Show more fields.')
        common.add_limit(parser, 'ports')
        common.add_sort(parser)
        return parser

    def take_action(self, parsed_args):
        params = common.list_params(parsed_args, node=parsed_args.node,
                                    address=parsed_args.address)
        ports = common.client(self).list('ports', params,
                                         limit=parsed_args.limit,
                                         sort=parsed_args.sort)
        return common.rows(ports, LONG_COLUMNS if parsed_args.long
                           else LIST_COLUMNS)


class ShowPort(common.ShowOne):
    """Show a port."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('port', metavar='<port>', help='UUID of the port.')
        return parser

    def take_action(self, parsed_args):
        port = common.client(self).get('ports/%s' % parsed_args.port)
        return common.show(port, FIELDS)


class SetPort(command.Command):
    """Set properties of a port."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('port', metavar='<port>', help='UUID of the port.')
        parser.add_argument('--address', metavar='<address>',
                            help='Set the MAC address.')
        _add_options(parser, creating=False)
        return parser

    def take_action(self, parsed_args):
        api = common.client(self)
        values = {}
        if parsed_args.address:
            values['address'] = parsed_args.address
        if parsed_args.node:
            values['node_uuid'] = common.node_uuid(api, parsed_args.node)
        if parsed_args.pxe_enabled is not None:
            values['pxe_enabled'] = parsed_args.pxe_enabled
        if parsed_args.local_link_connection:
            values['local_link_connection'] = (
                parsed_args.local_link_connection)
        ops = common.set_ops(values, extra=parsed_args.extra)
        api.patch('ports/%s' % parsed_args.port,
                  common.require_changes(ops))


class DeletePort(command.Command):
    """Delete ports."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('ports', metavar='<port>', nargs='+',
                            help='UUIDs of the ports.')
        return parser

    def take_action(self, parsed_args):
        common.delete_all(self, 'ports', 'port', parsed_args.ports)
