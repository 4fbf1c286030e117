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
"""``openstack baremetal orch node manage|provide|deploy|undeploy``,
``node maintenance set|unset`` and ``node console enable|disable``: the
states of nodes."""

import functools

from osc_lib.command import command
from osc_lib import exceptions

from baremetal_orch.osc import common


class _ProvisionCommand(command.Command):
    """Move nodes with PUT /v1/nodes/{node}/states/provision."""

    #: The ``target`` of the request.
    TARGET = None
    #: The provision state that ends a ``--wait``.
    STABLE = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('nodes', metavar='<node>', nargs='+',
                            help='Names or UUIDs of the nodes.')
        common.add_wait(parser, 'every node is %s (or failed)'
                        % self.STABLE)
        return parser

    def take_action(self, parsed_args):
        api = common.client(self)
        for node in parsed_args.nodes:
            api.put('nodes/%s/states/provision' % node,
                    {'target': self.TARGET})
        if parsed_args.wait is None:
            return
        failed = []
        for node in parsed_args.nodes:
            doc = common.poll(
                functools.partial(api.get, 'nodes/%s' % node, params={
                    'fields': 'provision_state,target_provision_state,'
                              'last_error'}),
                self._settled, timeout=parsed_args.wait, interval=0.5)
            if doc['provision_state'] != self.STABLE:
                failed.append('%s: %s (%s)' % (node, doc['provision_state'],
                                               doc.get('last_error')))
        if failed:
            raise exceptions.CommandError(
                'Not %s:\n%s' % (self.STABLE, '\n'.join(failed)))

    def _settled(self, doc):
        if doc.get('target_provision_state'):
            return False
        return (doc['provision_state'] == self.STABLE
                or 'fail' in (doc['provision_state'] or '')
                or doc['provision_state'] == 'error')


class ManageNode(_ProvisionCommand):
    """Move nodes to manageable (verify them)."""

    TARGET = 'manage'
    STABLE = 'manageable'


class ProvideNode(_ProvisionCommand):
    """Move nodes to available (clean them)."""

    TARGET = 'provide'
    STABLE = 'available'


class DeployNode(_ProvisionCommand):
    """Deploy nodes (to active)."""

    TARGET = 'active'
    STABLE = 'active'


class UndeployNode(_ProvisionCommand):
    """Undeploy nodes (tear down, back to available)."""

    TARGET = 'deleted'
    STABLE = 'available'


class SetMaintenance(command.Command):
    """Put a node in maintenance."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        parser.add_argument('--reason', metavar='<reason>',
                            help='Why the node is in maintenance.')
        return parser

    def take_action(self, parsed_args):
        body = {}
        if parsed_args.reason is not None:
            body['reason'] = parsed_args.reason
        common.client(self).put('nodes/%s/maintenance' % parsed_args.node,
                                body)


class UnsetMaintenance(command.Command):
    """Take a node out of maintenance."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        return parser

    def take_action(self, parsed_args):
        common.client(self).delete('nodes/%s/maintenance' % parsed_args.node)


class _ConsoleCommand(command.Command):
    ENABLED = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        return parser

    def take_action(self, parsed_args):
        common.client(self).put(
            'nodes/%s/states/console' % parsed_args.node,
            {'enabled': self.ENABLED})


class EnableConsole(_ConsoleCommand):
    """Enable the serial console of a node."""

    ENABLED = True


class DisableConsole(_ConsoleCommand):
    """Disable the serial console of a node."""

    ENABLED = False
