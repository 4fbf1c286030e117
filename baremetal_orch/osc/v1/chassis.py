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
"""``openstack baremetal orch chassis ...``."""

import functools

from osc_lib.command import command

from baremetal_orch.osc import common

FIELDS = ('uuid', 'description', 'extra', 'created_at', 'updated_at')
LIST_COLUMNS = (('uuid', 'UUID'), ('description', 'Description'))


def _add_extra(parser):
    parser.add_argument(
        '--extra', metavar='<key=value>', dest='extra',
        action=functools.partial(common.KeyValue, json_values=True),
        help='Extra data; repeat for more.')


class CreateChassis(common.ShowOne):
    """Create a chassis."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--description', metavar='<description>',
                            help='Description of the chassis.')
        parser.add_argument('--uuid', metavar='<uuid>',
                            help='UUID of the chassis (default: generated).')
        _add_extra(parser)
        return parser

    def take_action(self, parsed_args):
        body = {k: getattr(parsed_args, k)
                for k in ('description', 'uuid', 'extra')
                if getattr(parsed_args, k) is not None}
        return common.show(common.client(self).post('chassis', body), FIELDS)


class ListChassis(common.Lister):
    """List chassis."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--long', action='store_true',
                            help='Show more fields.')
        common.add_limit(parser, 'chassis')
        common.add_sort(parser)
        return parser

    def take_action(self, parsed_args):
        items = common.client(self).list(
            'chassis', common.list_params(parsed_args),
            limit=parsed_args.limit,
            sort=parsed_args.sort)
        columns = LIST_COLUMNS
        if parsed_args.long:
            columns = tuple((f, common.label_of(f)) for f in FIELDS)
        return common.rows(items, columns)


class ShowChassis(common.ShowOne):
    """Show a chassis."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('chassis', metavar='<chassis>',
                            help='UUID of the chassis.')
        return parser

    def take_action(self, parsed_args):
        return common.show(common.client(self).get(
            'chassis/%s' % parsed_args.chassis), FIELDS)


class SetChassis(command.Command):
    """Set properties of a chassis."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('chassis', metavar='<chassis>',
                            help='UUID of the chassis.')
        parser.add_argument('--description', metavar='<description>',
                            help='Set the description.')
        _add_extra(parser)
        return parser

    def take_action(self, parsed_args):
        values = {}
        if parsed_args.description is not None:
            values['description'] = parsed_args.description
        ops = common.set_ops(values, extra=parsed_args.extra)
        common.client(self).patch('chassis/%s' % parsed_args.chassis,
                                  common.require_changes(ops))


class DeleteChassis(command.Command):
    """Delete chassis."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('chassis', metavar='<chassis>', nargs='+',
                            help='UUIDs of the chassis.')
        return parser

    def take_action(self, parsed_args):
        common.delete_all(self, 'chassis', 'chassis', parsed_args.chassis)
