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
"""``openstack baremetal orch deployment ...``: node deployment records."""


from baremetal_orch.osc import common

FIELDS = ('uuid', 'node_uuid', 'action_uuid', 'conductor', 'status',
          'status_reason', 'deploy_status_code', 'deploy_stdout',
          'deploy_stderr', 'signal_url', 'created_at', 'updated_at')
LIST_COLUMNS = (('uuid', 'UUID'), ('node_uuid', 'Node UUID'),
                ('action_uuid', 'Action UUID'), ('status', 'Status'),
                ('status_reason', 'Status Reason'))
LONG_COLUMNS = LIST_COLUMNS + (
    ('conductor', 'Conductor'), ('deploy_status_code', 'Deploy Status Code'),
    ('created_at', 'Created At'), ('updated_at', 'Updated At'))


class ListDeployment(common.Lister):
    """List node deployment records."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--node', metavar='<node>',
                            help='Only the records of this node (name or '
                                 'UUID).')
        parser.add_argument('--action', metavar='<uuid>',
                            help='Only the records of this action.')
        parser.add_argument('--status', metavar='<status>',
                            choices=('IN_PROGRESS', 'COMPLETE', 'FAILED'),
                            help='Only records with this status.')
        parser.add_argument('--long', action='store_true',
                            help='Show more fields.')
        common.add_limit(parser, 'deployments')
        common.add_sort(parser)
        return parser

    def take_action(self, parsed_args):
        api = common.client(self)
        node = None
        if parsed_args.node:
            node = common.node_uuid(api, parsed_args.node)
        params = common.list_params(parsed_args, node_uuid=node,
                                    action_uuid=parsed_args.action,
                                    status=parsed_args.status)
        items = api.list('deployments', params, limit=parsed_args.limit,
                         sort=parsed_args.sort)
        return common.rows(items, LONG_COLUMNS if parsed_args.long
                           else LIST_COLUMNS)


class ShowDeployment(common.ShowOne):
    """Show a node deployment record (never its token)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('deployment', metavar='<uuid>',
                            help='UUID of the deployment record.')
        return parser

    def take_action(self, parsed_args):
        doc = common.client(self).get('deployments/%s'
                                      % parsed_args.deployment)
        return common.show(doc, FIELDS)
