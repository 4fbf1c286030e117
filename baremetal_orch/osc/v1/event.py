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
"""``openstack baremetal orch event list``: what happened, oldest first."""


from baremetal_orch.osc import common

LIST_COLUMNS = (('created_at', 'Created At'), ('event_type', 'Event Type'),
                ('resource_uuid', 'Resource UUID'),
                ('action_uuid', 'Action UUID'), ('message', 'Message'))
LONG_COLUMNS = (('uuid', 'UUID'),) + LIST_COLUMNS + (
    ('details', 'Details'),)


class ListEvent(common.Lister):
    """List events of nodes and actions."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--resource', metavar='<uuid>',
                            help='Only the events of this resource (a '
                                 'node UUID, say).')
        parser.add_argument('--node', metavar='<node>',
                            help='Only the events of this node (name or '
                                 'UUID).')
        parser.add_argument('--action', metavar='<uuid>',
                            help='Only the events of this action.')
        parser.add_argument('--event-type', metavar='<type>',
                            help='Only events of this type (e.g. '
                                 'deployment.signal.complete).')
        parser.add_argument('--long', action='store_true',
                            help='Show more fields.')
        common.add_limit(parser, 'events')
        common.add_sort(parser)
        return parser

    def take_action(self, parsed_args):
        api = common.client(self)
        resource = parsed_args.resource
        if parsed_args.node:
            resource = common.node_uuid(api, parsed_args.node)
        params = common.list_params(parsed_args, resource_uuid=resource,
                                    action_uuid=parsed_args.action,
                                    event_type=parsed_args.event_type)
        items = api.list('events', params, limit=parsed_args.limit,
                         sort=parsed_args.sort)
        return common.rows(items, LONG_COLUMNS if parsed_args.long
                           else LIST_COLUMNS)
