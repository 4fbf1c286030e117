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
"""``openstack baremetal orch task show``: the task tree of an action."""

from baremetal_orch.osc import common

FIELDS = ('uuid', 'kind', 'name', 'status', 'reason', 'node_uuid',
          'parent_uuid', 'action_uuid', 'created_at', 'started_at',
          'finished_at', 'updated_at', 'subtasks')
TREE_COLUMNS = ('Task', 'Kind', 'Status', 'Reason', 'Started At',
                'Finished At')
LONG_TREE_COLUMNS = TREE_COLUMNS + ('UUID',)


def tree_rows(tree):
    """``(label, task)`` pairs of a task tree, depth first.

    The label is the task's name indented with tree lines::

        deploy_site
        ├── ntp-node
        │   ├── prepare
        │   │   └── ntp01
        │   └── deploy
        └── ...
    """
    rows = [(tree.get('name') or tree.get('uuid'), tree)]

    def walk(task, prefix):
        subtasks = [t for t in task.get('subtasks') or ()
                    if isinstance(t, dict)]
        for i, sub in enumerate(subtasks):
            last = i == len(subtasks) - 1
            rows.append(('%s%s %s' % (prefix, '└──' if last else '├──',
                                      sub.get('name') or sub.get('uuid')),
                         sub))
            walk(sub, prefix + ('    ' if last else '│   '))

    walk(tree, '')
    return rows


#: Output formats that get the tree nested, as the API gives it.
NESTED_FORMATS = ('json', 'yaml')


class ShowTask(common.ListOrShow):
    """Show a task, or with --tree the task and all its subtasks.

    With --tree the table draws the tree (-f value and -f csv give each
    task's plain name); -f json and -f yaml give the API's nested tree
    (each task with its ``subtasks``).
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('task', metavar='<uuid>',
                            help='UUID of the task (an action\'s '
                                 'task_uuid is the root of its tree).')
        parser.add_argument('--tree', action='store_true',
                            help='Show the whole tree, indented: action, '
                                 'groups, phases, nodes (nested with -f '
                                 'json or -f yaml).')
        parser.add_argument('--long', action='store_true',
                            help='With --tree: add the task UUIDs.')
        return parser

    def take_action(self, parsed_args):
        api = common.client(self)
        if not parsed_args.tree:
            self.show_one = True
            return common.show(api.get('tasks/%s' % parsed_args.task),
                               FIELDS)
        tree = api.get('tasks/%s' % parsed_args.task,
                       params={'tree': 'true'})
        if parsed_args.formatter in NESTED_FORMATS:
            self.show_one = True
            return common.show(tree, [f for f in tree if f != 'links'])
        rows = []
        plain_text = parsed_args.formatter in common.PLAIN_FORMATS
        for label, task in tree_rows(tree):
            if plain_text:
                # Scripts get the task's name, not the tree's drawing.
                label = task.get('name') or task.get('uuid')
            row = (label, task.get('kind'), task.get('status'),
                   task.get('reason') or '', task.get('started_at') or '',
                   task.get('finished_at') or '')
            if parsed_args.long:
                row += (task.get('uuid'),)
            rows.append(row)
        return (LONG_TREE_COLUMNS if parsed_args.long
                else TREE_COLUMNS), rows
