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

"""The plan (dry run) and the report of a site deployment.

Both are plain JSON-serializable dicts; the shapes are those the API
reference gives for ``POST /v1/actions`` (api-ref/source/actions.inc)::

    plan   = {"order": [...],
              "groups": {name: {"nodes", "depends_on", "critical"}},
              "overlaps": {node: [groups]}, "empty_groups": [...]}
    report = {"order": [...started groups...],
              "groups": {name: {"status", "critical", "reason", "nodes",
                                "succeeded_nodes", "failed_nodes",
                                "misses"}},
              "nodes": {name: status},
              "retry_of": uuid}      # only in the report of a retry

Nodes are named in both: the rules work by node identifier (in an action,
its UUID) and ``name_of`` gives the name shown (as admission saw it).

:func:`summarize` turns a report into log lines (the specification's
"report logged before the end of the baremetal nodes step").
"""


def _same(node):
    return node


def build_plan(strategy, group_nodes, name_of=_same):
    """The dry-run plan of ``strategy`` over resolved group node sets.

    :param strategy: a :class:`~baremetal_orch.deployment.strategy.Strategy`.
    :param group_nodes: ``{group: [nodes]}`` for every group.
    :param name_of: ``callable(node)``, the name shown.
    """
    order = list(strategy.topological_order())
    groups = {}
    members = {}
    for name in order:
        group = strategy.group(name)
        nodes = sorted({name_of(n) for n in group_nodes.get(name, ())})
        groups[name] = {'nodes': nodes,
                        'depends_on': list(group.depends_on),
                        'critical': group.critical}
        for node in nodes:
            members.setdefault(node, []).append(name)
    return {'order': order,
            'groups': groups,
            'overlaps': {node: names for node, names in sorted(members.items())
                         if len(names) > 1},
            'empty_groups': [name for name in order
                             if not groups[name]['nodes']]}


#: The lists of nodes of a group's report entry.
_NODE_LISTS = ('nodes', 'succeeded_nodes', 'failed_nodes')


def group_entry(status, critical, reason, nodes, succeeded, failed, misses):
    """One entry of ``report['groups']``."""
    return {'status': status, 'critical': critical, 'reason': reason,
            'nodes': list(nodes), 'succeeded_nodes': list(succeeded),
            'failed_nodes': list(failed),
            'misses': [m.to_dict() if hasattr(m, 'to_dict') else dict(m)
                       for m in misses]}


def named_entry(entry, name_of=_same):
    """A :func:`group_entry` whose nodes are shown by ``name_of``."""
    return dict(entry, **{key: [name_of(n) for n in entry[key]]
                          for key in _NODE_LISTS})


def build_report(order, groups, nodes, retry_of=None, name_of=_same):
    """Assemble a report from its parts (see the module docstring);
    ``retry_of`` (the action a retry re-runs) only when given.

    :param groups: ``{group: entry}`` (:func:`group_entry`).
    :param nodes: ``{node: status}``.
    :param name_of: ``callable(node)``, the name shown; the nodes of
        ``groups`` and ``nodes`` are shown by it.
    """
    report = {'order': list(order),
              'groups': {g: named_entry(e, name_of)
                         for g, e in groups.items()},
              'nodes': dict(sorted((name_of(n), status)
                                   for n, status in nodes.items()))}
    if retry_of:
        report['retry_of'] = retry_of
    return report


def summarize(report):
    """Human-readable lines summarizing a report, for the logs."""
    lines = []
    for name, group in report['groups'].items():
        line = '%s group %s: %s' % (
            'critical' if group['critical'] else 'non-critical', name,
            group['status'])
        if group['reason']:
            line += ' (%s)' % group['reason']
        line += '; %d nodes, succeeded: %s; failed: %s' % (
            len(group['nodes']), ', '.join(group['succeeded_nodes']) or '-',
            ', '.join(group['failed_nodes']) or '-')
        for miss in group['misses']:
            line += '; missed %s: needed %s, got %s' % (
                miss['criterion'], miss['needed'], miss['actual'])
        lines.append(line)
    counts = {}
    for status in report['nodes'].values():
        counts[status] = counts.get(status, 0) + 1
    lines.append('nodes: %s' % (', '.join(
        '%s %d' % (s, counts[s]) for s in sorted(counts)) or 'none'))
    if report['order']:
        lines.append('groups started in order: %s'
                     % ', '.join(report['order']))
    return lines
