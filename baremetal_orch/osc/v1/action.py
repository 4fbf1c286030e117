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
"""``openstack baremetal orch action ...``: site and label actions, and
steering them (pause, resume, abort, retry)."""

import logging
import sys

from osc_lib import exceptions

from baremetal_orch.osc import client as client_mod
from baremetal_orch.osc import common
from baremetal_orch.osc import progress
from baremetal_orch.osc import report as report_mod

LOG = logging.getLogger(__name__)

NAMES = ('deploy_site', 'update_site', 'update_labels')
SITE_ACTIONS = ('deploy_site', 'update_site')
#: The name of an action that re-runs a finished site action.
RETRY = 'retry'
#: Actions whose report has groups (and so a task tree of groups).
GROUP_ACTIONS = SITE_ACTIONS + (RETRY,)
#: Every action state, for ``action list --state``.
STATES = ('pending', 'running', 'pausing', 'paused', 'complete', 'failed',
          'cancelled')
#: The longest control reason the API takes.
MAX_REASON = 255
FIELDS = ('uuid', 'name', 'parameters', 'dry_run', 'state', 'state_reason',
          'result', 'task_uuid', 'conductor', 'created_at', 'started_at',
          'finished_at', 'updated_at', 'progress', 'report')
LIST_COLUMNS = (('uuid', 'UUID'), ('name', 'Name'), ('state', 'State'),
                ('result', 'Result'), ('created_at', 'Created At'))
LONG_COLUMNS = LIST_COLUMNS + (
    ('parameters', 'Parameters'), ('conductor', 'Conductor'),
    ('started_at', 'Started At'), ('finished_at', 'Finished At'))
PLAN_COLUMNS = ('Group', 'Critical', 'Depends On', 'Nodes', 'Also In')


def show_action(action):
    """(columns, values) of an action: its report summed up in a table,
    nested in JSON."""
    fields, values = common.show(action, FIELDS)
    columns = {'report': report_mod.ReportColumn,
               'progress': progress.ProgressColumn}
    values = tuple(columns[field](action.get(field))
                   if field in columns else value
                   for field, value in zip(fields, values))
    return fields, values


def report_output(api, action):
    """(columns, rows) of an action's report, with the reasons of the
    nodes that failed (from its task tree, when it can be read)."""
    report = action.get('report')
    reasons = None
    if action.get('name') in GROUP_ACTIONS and action.get('task_uuid') and (
            report or {}).get('groups'):
        try:
            reasons = report_mod.node_reasons(api.get(
                'tasks/%s' % action['task_uuid'], params={'tree': 'true'}))
        except client_mod.ApiError as e:
            LOG.warning('The task tree of action %s cannot be read, the '
                        'report goes without the reasons of failed nodes: '
                        '%s', action.get('uuid'), e)
    return report_mod.report_rows(report, reasons)


def plan_rows(plan):
    """Rows of a dry-run plan, in the order the groups would start."""
    groups = plan.get('groups') or {}
    order = list(plan.get('order') or [])
    order += sorted(g for g in groups if g not in order)
    overlaps = plan.get('overlaps') or {}
    rows = []
    for name in order:
        entry = groups.get(name) or {}
        nodes = entry.get('nodes') or []
        also = sorted({g for n in nodes for g in overlaps.get(n, ())
                       if g != name})
        rows.append((name, entry.get('critical'),
                     common.format_value(entry.get('depends_on') or []),
                     common.format_value(nodes),
                     common.format_value(also)))
    return PLAN_COLUMNS, rows


class CreateAction(common.ListOrShow):
    """Start an action: deploy_site, update_site or update_labels.

    Shows the action; with --dry-run the plan (nothing is created); with
    --wait a live progress line on stderr, then the report. The exit
    status is 1 when the action failed.
    """

    failed = False

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>', choices=NAMES,
                            help='The action: %s.' % ', '.join(NAMES))
        parser.add_argument(
            '--strategy', metavar='<name>',
            help='Deployment strategy of a site action (default: '
                 'deployment-strategy).')
        parser.add_argument(
            '--target-node', metavar='<node>', dest='target_nodes',
            action='append',
            help='Node whose labels update_labels updates; repeat for '
                 'more (required by update_labels).')
        parser.add_argument(
            '--dry-run', action='store_true',
            help='Show the plan of a site action: groups, their nodes, '
                 'overlaps; start nothing.')
        common.add_wait(parser, 'the action ends, following it (progress '
                                'on stderr), then show its report; after '
                                'the time-out the action goes on')
        add_poll_interval(parser)
        return parser

    def body(self, parsed_args):
        """The request body; checks the options fit the action."""
        name = parsed_args.name
        body = {'name': name}
        if name in SITE_ACTIONS:
            if parsed_args.target_nodes:
                raise exceptions.CommandError(
                    '--target-node is only for update_labels')
            if parsed_args.strategy:
                body['parameters'] = {
                    'deployment_strategy': parsed_args.strategy}
        else:
            if parsed_args.strategy:
                raise exceptions.CommandError(
                    '--strategy is only for deploy_site and update_site')
            if parsed_args.dry_run:
                raise exceptions.CommandError(
                    '--dry-run is only for deploy_site and update_site')
            if not parsed_args.target_nodes:
                raise exceptions.CommandError(
                    'update_labels needs at least one --target-node')
            body['parameters'] = {'target_nodes': parsed_args.target_nodes}
        if parsed_args.dry_run:
            if parsed_args.wait is not None:
                raise exceptions.CommandError(
                    '--dry-run and --wait do not go together')
            body['dry_run'] = True
        return body

    def take_action(self, parsed_args):
        api = common.client(self)
        result = api.post('actions', self.body(parsed_args))
        if parsed_args.dry_run:
            return plan_rows(result.get('plan') or {})
        return follow(self, api, result, parsed_args)

    def run(self, parsed_args):
        status = super().run(parsed_args)
        return 1 if self.failed else status


def follow(cmd, api, started, parsed_args):
    """The output of a command that started an action: the action, or
    with --wait its progress on stderr until it ends, then its report.

    Sets ``cmd.failed`` when the action ended other than ``complete``.
    """
    if parsed_args.wait is None:
        cmd.show_one = True
        return show_action(started)
    stderr = getattr(cmd.app, 'stderr', sys.stderr)
    stderr.write('%s %s started\n' % (started['name'], started['uuid']))
    try:
        action = progress.watch(api, started['uuid'],
                                progress.Display(stderr),
                                interval=parsed_args.poll_interval,
                                timeout=parsed_args.wait or None)
    except TimeoutError as e:
        raise exceptions.CommandError(
            '%s; follow it with: openstack baremetal orch action show '
            '%s' % (e, started['uuid']))
    cmd.failed = action.get('state') != 'complete'
    stderr.write('Action %s: %s\n' % (action['uuid'], progress.format_state(
        action.get('state'), action.get('result'),
        action.get('state_reason'))))
    return report_output(api, action)


def add_poll_interval(parser):
    parser.add_argument(
        '--poll-interval', metavar='<seconds>', type=float, default=1.0,
        help='With --wait: seconds between polls (default 1).')


class ListAction(common.Lister):
    """List actions."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--state', metavar='<state>',
                            help='Only actions in this state (%s).'
                                 % ', '.join(STATES))
        parser.add_argument('--name', metavar='<name>',
                            choices=NAMES + (RETRY,),
                            help='Only actions of this kind.')
        parser.add_argument('--long', action='store_true',
                            help='Show more fields.')
        common.add_limit(parser, 'actions')
        common.add_sort(parser)
        return parser

    def take_action(self, parsed_args):
        params = common.list_params(parsed_args, state=parsed_args.state,
                                    name=parsed_args.name)
        items = common.client(self).list('actions', params,
                                         limit=parsed_args.limit,
                                         sort=parsed_args.sort)
        return common.rows(items, LONG_COLUMNS if parsed_args.long
                           else LIST_COLUMNS)


class ShowAction(common.ListOrShow):
    """Show an action (its report summed up), or with --report the report.

    With -f json or -f yaml the values are those of the API: the report
    nested as the API gives it, null for what is not set.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('action', metavar='<uuid>',
                            help='UUID of the action.')
        parser.add_argument(
            '--report', action='store_true',
            help='Show the report: a row per group (status, reason, '
                 'nodes succeeded and failed, criteria missed) followed by '
                 'a row per node of the group (status, why it failed); a '
                 'row per node for update_labels.')
        return parser

    def take_action(self, parsed_args):
        api = common.client(self)
        action = api.get('actions/%s' % parsed_args.action)
        if parsed_args.report:
            return report_output(api, action)
        self.show_one = True
        return show_action(action)


class ControlAction(common.ShowOne):
    """Base of pause, resume and abort: ``POST /v1/actions/{uuid}/control``
    with the verb and the reason; shows the action as ``action show``.

    A verb that does not apply to the action's state is refused by the
    API (409, naming the state); the message is printed as it is.
    """

    #: ``pause``, ``resume`` or ``abort``.
    verb = None
    #: What the reason is for, in the help.
    reason_help = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('action', metavar='<uuid>',
                            help='UUID of the action.')
        parser.add_argument(
            '--reason', metavar='<reason>',
            help='%s (at most %d characters); recorded in the event and '
                 'shown as the state reason.' % (self.reason_help,
                                                 MAX_REASON))
        return parser

    def take_action(self, parsed_args):
        body = {'verb': self.verb}
        if parsed_args.reason is not None:
            body['reason'] = parsed_args.reason
        action = common.client(self).post(
            'actions/%s/control' % parsed_args.action, body)
        return show_action(action)


class PauseAction(ControlAction):
    """Pause a running action: no new group, phase or node starts.

    Nodes already handed to the driver finish their current step: the
    action is ``pausing`` until none is in flight, then ``paused``. Time
    spent paused does not count against the strategy's time-outs.
    """

    verb = 'pause'
    reason_help = 'Why the action is paused'


class ResumeAction(ControlAction):
    """Resume a pausing or paused action where it stopped.

    No node is sent twice; groups keep the plan's order. An action
    paused outside its maintenance windows resumes by itself when the
    next window opens.
    """

    verb = 'resume'
    reason_help = 'Why the action is resumed'


class AbortAction(ControlAction):
    """Abort an action: no new node work starts, it ends cancelled.

    Nodes that Ironic holds in a wait state get Ironic's abort where
    Ironic allows it, the others finish their step. Groups never started
    are reported failed with the reason ``aborted``.
    """

    verb = 'abort'
    reason_help = 'Why the action is aborted'


class RetryAction(common.ListOrShow):
    """Retry a finished site action: only what failed or never started.

    A new ``retry`` action re-runs the finished (complete, failed or
    cancelled) deploy_site or update_site on its own strategy snapshot:
    nodes that succeeded are not touched, failed and never-started nodes
    are tried again. Its report names the action it retries
    (``retry_of``). Shows the new action; with --wait its progress on
    stderr, then its report. The exit status is 1 when it failed.
    """

    failed = False

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('action', metavar='<uuid>',
                            help='UUID of the finished action to retry '
                                 '(the newest of its retries).')
        common.add_wait(parser, 'the retry ends, following it (progress '
                                'on stderr), then show its report; after '
                                'the time-out the retry goes on')
        add_poll_interval(parser)
        return parser

    def take_action(self, parsed_args):
        api = common.client(self)
        result = api.post('actions', {'name': RETRY, 'parameters': {
            'action': parsed_args.action}})
        return follow(self, api, result, parsed_args)

    def run(self, parsed_args):
        status = super().run(parsed_args)
        return 1 if self.failed else status
