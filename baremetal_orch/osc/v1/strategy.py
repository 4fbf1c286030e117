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
"""``openstack baremetal orch strategy ...``: deployment strategies."""

import os
import sys

from cliff import columns as cliff_columns
from osc_lib.command import command
from osc_lib import exceptions
import yaml

from baremetal_orch.osc import common
from baremetal_orch.osc import graph

YAML = 'application/yaml'


class DocumentColumn(cliff_columns.FormattableColumn):
    """A strategy document: YAML in a table, the object in json/yaml."""

    def human_readable(self):
        return yaml.safe_dump(self._value, default_flow_style=False,
                              sort_keys=False).rstrip()

    def machine_readable(self):
        return self._value


def _show(doc):
    document = doc.get('document') or {}
    groups = graph.groups_of(document)
    columns = ('name', 'groups', 'critical_groups', 'dependencies',
               'created_at', 'updated_at', 'document')
    values = (doc.get('name'),
              common.format_value([g['name'] for g in groups]),
              common.format_value([g['name'] for g in groups
                                   if g.get('critical')]),
              common.format_value(['%s -> %s' % e
                                   for e in graph.edges_of(document)]),
              doc.get('created_at'), doc.get('updated_at'),
              DocumentColumn(document))
    return columns, values


class CreateStrategy(common.ShowOne):
    """Create a deployment strategy from a YAML (or JSON) file."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('file', metavar='<file>',
                            help='The DeploymentStrategy document ("-" '
                                 'reads stdin).')
        return parser

    def take_action(self, parsed_args):
        data = common.load_document(parsed_args.file)
        doc = common.client(self).post('deployment_strategies', data=data,
                                       content_type=YAML)
        return _show(doc)


class ValidateStrategy(common.ShowOne):
    """Validate a deployment strategy file without storing it."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('file', metavar='<file>',
                            help='The DeploymentStrategy document ("-" '
                                 'reads stdin).')
        return parser

    def take_action(self, parsed_args):
        data = common.load_document(parsed_args.file)
        result = common.client(self).post('deployment_strategies/validate',
                                          data=data, content_type=YAML)
        return common.show(result, ('valid', 'name', 'order'))


class ListStrategy(common.Lister):
    """List deployment strategies."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        common.add_limit(parser, 'strategies')
        common.add_sort(parser)
        return parser

    def take_action(self, parsed_args):
        items = common.client(self).list('deployment_strategies',
                                         common.list_params(parsed_args),
                                         limit=parsed_args.limit,
                                         sort=parsed_args.sort)
        rows = [(s['name'], len(graph.groups_of(s.get('document'))),
                 s.get('created_at'), s.get('updated_at')) for s in items]
        return ('Name', 'Groups', 'Created At', 'Updated At'), rows


class ShowStrategy(common.ShowOne):
    """Show a deployment strategy."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help='Name of the strategy.')
        return parser

    def take_action(self, parsed_args):
        return _show(common.client(self).get(
            'deployment_strategies/%s' % parsed_args.name))


class DeleteStrategy(command.Command):
    """Delete deployment strategies."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('names', metavar='<name>', nargs='+',
                            help='Names of the strategies.')
        return parser

    def take_action(self, parsed_args):
        common.delete_all(self, 'deployment_strategies', 'strategy',
                          parsed_args.names)


#: ``--output`` suffixes that get DOT text.
DOT_SUFFIXES = ('dot', 'gv')


def output_format(path):
    """``dot``, ``svg`` or ``png``: what ``path``'s suffix names.

    :raises: CommandError for any other suffix (nothing is written).
    """
    suffix = os.path.splitext(path)[1].lower().lstrip('.')
    if suffix in DOT_SUFFIXES:
        return 'dot'
    if suffix in graph.RENDERED_FORMATS:
        return suffix
    raise exceptions.CommandError(
        'Cannot tell the format of --output %s from its suffix: use .dot '
        'or .gv (DOT text), .svg or .png (drawn by Graphviz)' % path)


class GraphStrategy(command.Command):
    """The group DAG of a strategy in Graphviz DOT (or SVG, PNG).

    Boxes are groups (critical ones bold), arrows go from a dependency to
    the group that depends on it. With --action the groups are coloured by
    their status in that action: success green, failed red, running
    yellow, pending grey; a group skipped because a dependency failed is
    light grey with a dashed border, one never started because the action
    was aborted orange with a dotted border, and while the action is
    pausing or paused its pending and running groups are light blue with
    a bold border.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help='Name of the strategy.')
        parser.add_argument('--action', metavar='<uuid>',
                            help='Colour the groups by their status in '
                                 'this action.')
        parser.add_argument(
            '--output', metavar='<file>',
            help='Write to this file instead of stdout, in the format its '
                 'suffix names: .dot or .gv (DOT text), .svg or .png '
                 '(drawn by Graphviz "dot", which must be installed).')
        return parser

    def take_action(self, parsed_args):
        output = parsed_args.output
        fmt = output_format(output) if output else None
        api = common.client(self)
        strategy = api.get('deployment_strategies/%s' % parsed_args.name)
        report = None
        state = None
        if parsed_args.action:
            action = api.get('actions/%s' % parsed_args.action)
            report = action.get('report') or {}
            state = action.get('state')
        text = graph.to_dot(strategy.get('document') or {}, report, state)
        if fmt in graph.RENDERED_FORMATS:
            data = graph.render(text, fmt)
        else:
            data = text.encode()
        if not output:
            stdout = getattr(self.app, 'stdout', sys.stdout)
            stdout.write(text)
            return
        try:
            with open(output, 'wb') as f:
                f.write(data)
        except OSError as e:
            raise exceptions.CommandError('Cannot write %s: %s'
                                          % (output, e))
