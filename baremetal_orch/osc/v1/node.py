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
"""``openstack baremetal orch node ...``: the node inventory."""

import difflib
import functools
import json

from osc_lib.command import command
from osc_lib import exceptions

from baremetal_orch.osc import common

LIST_COLUMNS = (('uuid', 'UUID'), ('name', 'Name'),
                ('provision_state', 'Provision State'),
                ('maintenance', 'Maintenance'))
LONG_FIELDS = ('uuid', 'name', 'driver', 'provision_state',
               'target_provision_state', 'maintenance', 'rack_name', 'tags',
               'labels', 'shard', 'conductor_group', 'conductor',
               'chassis_uuid', 'ironic_uuid', 'last_error')
FIELDS = ('uuid', 'name', 'driver', 'ironic_uuid', 'chassis_uuid',
          'rack_name', 'tags', 'labels', 'shard', 'conductor_group',
          'provision_state', 'target_provision_state', 'power_state',
          'maintenance', 'maintenance_reason', 'console_enabled',
          'driver_info', 'instance_info', 'extra', 'applied_labels',
          'deployed_groups', 'conductor', 'owner', 'last_error',
          'created_at', 'updated_at')

#: Scalar fields set by ``node create/set`` and cleared by ``node unset``:
#: (option, field).
SCALARS = (('--name', 'name'), ('--rack-name', 'rack_name'),
           ('--chassis-uuid', 'chassis_uuid'),
           ('--ironic-uuid', 'ironic_uuid'), ('--shard', 'shard'),
           ('--conductor-group', 'conductor_group'), ('--owner', 'owner'))
#: Dict fields: (option, field, help).
DICTS = (('--label', 'labels', 'Kubernetes label of the node'),
         ('--driver-info', 'driver_info',
          'Driver information (e.g. fake_fail_phase=prepare)'),
         ('--instance-info', 'instance_info', 'Instance information'),
         ('--extra', 'extra', 'Extra data'))


def _add_dict_options(parser):
    for option, field, text in DICTS:
        json_values = field != 'labels'
        if json_values:
            text += ('; the value is JSON when it parses (numbers, '
                     'true/false), else a string')
        parser.add_argument(
            option, metavar='<key=value>', dest=field,
            action=functools.partial(common.KeyValue,
                                     json_values=json_values),
            help='%s. Repeat the option for more.' % text)


def _scalar_help(field):
    return field.replace('_', ' ')


def _metavar(field):
    return '<%s>' % field.replace('_', '-')


class CreateNode(common.ShowOne):
    """Enroll a node."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        # Required, as ironicclient's: the service refuses a driver that
        # [DEFAULT]enabled_drivers leaves out, and says which it enables.
        parser.add_argument('--driver', metavar='<driver>', required=True,
                            help='Provisioning driver of the node: ironic, '
                                 'or fake where the service enables it.')
        parser.add_argument('--uuid', metavar='<uuid>',
                            help='UUID of the node (default: generated).')
        for option, field in SCALARS:
            parser.add_argument(option, metavar=_metavar(field), dest=field,
                                help='The %s of the node.'
                                % _scalar_help(field))
        parser.add_argument('--tag', metavar='<tag>', dest='tags',
                            action='append',
                            help='Tag of the node; repeat for more.')
        _add_dict_options(parser)
        return parser

    def take_action(self, parsed_args):
        body = {'driver': parsed_args.driver}
        if parsed_args.uuid:
            body['uuid'] = parsed_args.uuid
        for _option, field in SCALARS:
            if getattr(parsed_args, field) is not None:
                body[field] = getattr(parsed_args, field)
        if parsed_args.tags:
            body['tags'] = parsed_args.tags
        for _option, field, _help in DICTS:
            if getattr(parsed_args, field):
                body[field] = getattr(parsed_args, field)
        node = common.client(self).post('nodes', body)
        return common.show(node, FIELDS)


class ListNode(common.Lister):
    """List nodes."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        output = parser.add_mutually_exclusive_group()
        output.add_argument('--long', action='store_true',
                            help='Show more fields.')
        output.add_argument('--fields', metavar='<field>', nargs='+',
                            choices=FIELDS,
                            help='Show these fields only.')
        parser.add_argument('--provision-state', metavar='<state>',
                            help='Only nodes in this provision state.')
        maint = parser.add_mutually_exclusive_group()
        maint.add_argument('--maintenance', dest='maintenance',
                           action='store_true', default=None,
                           help='Only nodes in maintenance.')
        maint.add_argument('--no-maintenance', dest='maintenance',
                           action='store_false',
                           help='Only nodes not in maintenance.')
        parser.add_argument('--driver', metavar='<driver>',
                            help='Only nodes of this driver.')
        parser.add_argument('--shard', metavar='<shard>', action='append',
                            help='Only nodes of this shard; repeat for '
                                 'more.')
        sharded = parser.add_mutually_exclusive_group()
        sharded.add_argument('--sharded', dest='sharded',
                             action='store_true', default=None,
                             help='Only nodes with a shard.')
        sharded.add_argument('--unsharded', dest='sharded',
                             action='store_false',
                             help='Only nodes without a shard.')
        parser.add_argument('--conductor-group', metavar='<group>',
                            help='Only nodes of this conductor group.')
        parser.add_argument('--rack-name', metavar='<rack>',
                            help='Only nodes of this rack.')
        parser.add_argument('--tag', metavar='<tag>', action='append',
                            help='Only nodes with this tag (any of the '
                                 'tags when repeated).')
        parser.add_argument('--conductor', metavar='<host>',
                            help='Only nodes this conductor owns.')
        parser.add_argument('--owner', metavar='<project>',
                            help='Only nodes of this owner.')
        common.add_limit(parser, 'nodes')
        common.add_sort(parser)
        return parser

    def take_action(self, parsed_args):
        params = common.list_params(
            parsed_args, provision_state=parsed_args.provision_state,
            driver=parsed_args.driver,
            conductor_group=parsed_args.conductor_group,
            rack_name=parsed_args.rack_name,
            conductor=parsed_args.conductor, owner=parsed_args.owner)
        if parsed_args.maintenance is not None:
            params['maintenance'] = str(parsed_args.maintenance).lower()
        if parsed_args.sharded is not None:
            params['sharded'] = str(parsed_args.sharded).lower()
        if parsed_args.shard:
            params['shard'] = ','.join(parsed_args.shard)
        if parsed_args.tag:
            params['tag'] = ','.join(parsed_args.tag)
        if parsed_args.fields:
            fields = tuple(parsed_args.fields)
            params['fields'] = ','.join(fields)
            columns = tuple((f, f) for f in fields)
        elif parsed_args.long:
            params['detail'] = 'true'
            columns = tuple((f, common.label_of(f)) for f in LONG_FIELDS)
        else:
            columns = LIST_COLUMNS
        nodes = common.client(self).list('nodes', params,
                                         limit=parsed_args.limit,
                                         sort=parsed_args.sort)
        return common.rows(nodes, columns)


class ShowNode(common.ShowOne):
    """Show a node."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        parser.add_argument('--fields', metavar='<field>', nargs='+',
                            choices=FIELDS, help='Show these fields only.')
        return parser

    def take_action(self, parsed_args):
        params = {}
        if parsed_args.fields:
            params['fields'] = ','.join(parsed_args.fields)
        node = common.client(self).get('nodes/%s' % parsed_args.node,
                                       params=params)
        return common.show(node, parsed_args.fields or FIELDS)


class SetNode(command.Command):
    """Set properties of a node (a JSON patch)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        for option, field in SCALARS:
            parser.add_argument(option, metavar=_metavar(field), dest=field,
                                help='Set the %s.' % _scalar_help(field))
        parser.add_argument('--tag', metavar='<tag>', dest='tags',
                            action='append',
                            help='Add this tag; repeat for more.')
        _add_dict_options(parser)
        return parser

    def take_action(self, parsed_args):
        api = common.client(self)
        values = {field: getattr(parsed_args, field)
                  for _option, field in SCALARS
                  if getattr(parsed_args, field) is not None}
        if parsed_args.tags:
            current = api.get('nodes/%s' % parsed_args.node,
                              params={'fields': 'tags'}).get('tags') or []
            values['tags'] = current + [t for t in parsed_args.tags
                                        if t not in current]
        ops = common.set_ops(values, **{
            field: getattr(parsed_args, field) for _o, field, _h in DICTS})
        api.patch('nodes/%s' % parsed_args.node,
                  common.require_changes(ops))


class UnsetNode(command.Command):
    """Unset properties of a node (a JSON patch)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        for option, field in SCALARS:
            parser.add_argument(option, dest=field, action='store_true',
                                help='Unset the %s.' % _scalar_help(field))
        parser.add_argument('--tag', metavar='<tag>', dest='tags',
                            action='append',
                            help='Remove this tag; repeat for more.')
        for option, field, _text in DICTS:
            parser.add_argument(option, metavar='<key>', dest=field,
                                action='append',
                                help='Remove this key of the %s; repeat '
                                     'for more.' % field.replace('_', ' '))
        return parser

    def take_action(self, parsed_args):
        api = common.client(self)
        ops = common.remove_ops(
            [field for _option, field in SCALARS
             if getattr(parsed_args, field)],
            **{field: getattr(parsed_args, field)
               for _o, field, _h in DICTS})
        if parsed_args.tags:
            current = api.get('nodes/%s' % parsed_args.node,
                              params={'fields': 'tags'}).get('tags') or []
            ops.append({'op': 'replace', 'path': '/tags',
                        'value': [t for t in current
                                  if t not in parsed_args.tags]})
        api.patch('nodes/%s' % parsed_args.node,
                  common.require_changes(ops))


class DeleteNode(command.Command):
    """Delete nodes from the inventory."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('nodes', metavar='<node>', nargs='+',
                            help='Names or UUIDs of the nodes.')
        return parser

    def take_action(self, parsed_args):
        common.delete_all(self, 'nodes', 'node', parsed_args.nodes)


CRITERIA = ('node_names', 'node_tags', 'rack_names', 'node_labels')
#: How the text form reads, shown in every selector error, with an example.
SELECTOR_SYNTAX = (
    'Separate criteria with ";" (all must match) and the values of one '
    'criterion with "," (any may match): --selector "%s" (quoted: ";" ends '
    'a shell command)')
SELECTOR_EXAMPLE = 'node_tags=compute;rack_names=rack01'


def criterion_in(value):
    """The criterion a selector value seems to start, or None.

    ``rack_names=rack01`` (and a near miss such as ``rack_name=rack01``)
    given as a value of another criterion is almost surely a criterion
    written after a ``,`` instead of a ``;``.
    """
    key, sep, _rest = value.partition('=')
    if not sep:
        return None
    key = key.strip()
    if key in CRITERIA:
        return key
    close = difflib.get_close_matches(key, CRITERIA, n=1, cutoff=0.8)
    return close[0] if close else None


def parse_selector(text, allow_empty=False):
    """One ``--selector`` as a selector object.

    JSON (``{"node_tags": ["control"]}``) or
    ``criterion=v1,v2[;criterion=...]`` (``node_tags=control;
    rack_names=rack03``); criteria are AND-ed, values OR-ed. A value that
    looks like ``criterion=value`` is refused: ``node_tags=compute,
    rack_names=rack01`` would otherwise select every compute node, with
    ``rack_names=rack01`` taken for a tag. (The JSON form takes any value
    as it is.)

    An empty criterion (``node_tags=``, as an unset shell variable gives)
    places no constraint, so it would select every node: it is refused
    unless ``allow_empty`` (``--all``), as is a selector with no criterion.

    :raises: CommandError naming the part and showing the syntax.
    """
    text = text.strip()
    if text.startswith('{'):
        try:
            selector = json.loads(text)
        except ValueError as e:
            raise exceptions.CommandError('Invalid selector %r: %s'
                                          % (text, e))
        if not isinstance(selector, dict):
            raise exceptions.CommandError(
                'A selector must be a JSON object, not %r' % text)
        return selector
    selector = {}
    for part in filter(None, (p.strip() for p in text.split(';'))):
        key, sep, values = part.partition('=')
        key = key.strip()
        if not sep or key not in CRITERIA:
            raise exceptions.CommandError(
                'Invalid selector part %r: expected one of %s followed by '
                '=value[,value...]. %s.' % (part, ', '.join(CRITERIA),
                                            SELECTOR_SYNTAX
                                            % SELECTOR_EXAMPLE))
        selector[key] = []
        for raw in values.split(','):
            value = raw.strip()
            if not value:
                continue
            other = criterion_in(value)
            if other is not None:
                fixed = text.replace(',' + raw, ';%s=%s' % (
                    other, value.partition('=')[2].strip()), 1)
                raise exceptions.CommandError(
                    'Invalid selector %r: %r looks like the criterion %s, '
                    'not a value of %s. %s. A value that really holds "=" '
                    'can be given in the JSON form.'
                    % (text, value, other, key, SELECTOR_SYNTAX % fixed))
            selector[key].append(value)
        if not selector[key] and not allow_empty:
            raise exceptions.CommandError(
                'Invalid selector %r: %s has no value, which places no '
                'constraint and selects every node (an empty shell '
                'variable?). Give a value, or --all to select every node.'
                % (text, key))
    if not selector and not allow_empty:
        raise exceptions.CommandError(
            'Invalid selector %r: no criterion, which selects every node. '
            '%s, or --all to select every node.'
            % (text, SELECTOR_SYNTAX % SELECTOR_EXAMPLE))
    return selector


class FilterNode(common.Lister):
    """Names of the nodes a list of selectors picks.

    The union of the selectors; no selector picks every node.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--selector', metavar='<selector>', dest='selectors',
            action='append', default=[],
            help='A selector: "node_tags=control;rack_names=rack03" (the '
                 'criteria separated by ";" and AND-ed, the values of one '
                 'criterion separated by "," and OR-ed; node_labels values '
                 'are key:value; quote it for the shell) or a JSON object. '
                 'Repeat for the union of several selectors.')
        parser.add_argument(
            '--all', action='store_true', dest='allow_all',
            help='Accept a selector or criterion with no value (it places '
                 'no constraint: every node); refused without --all, as '
                 'an empty value typed on the command line is usually an '
                 'unset variable.')
        return parser

    def take_action(self, parsed_args):
        selectors = [parse_selector(s, parsed_args.allow_all)
                     for s in parsed_args.selectors]
        result = common.client(self).post('nodes/filter',
                                          {'selectors': selectors})
        return ('Name',), [(n,) for n in result.get('node_names', [])]
