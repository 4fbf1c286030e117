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
"""The report of an action, for people and for programs.

The API's ``report`` of a site action is::

    {"order": [...groups in the order they started...],
     "groups": {name: {"status", "critical", "reason", "nodes",
                       "succeeded_nodes", "failed_nodes",
                       "misses": [{"criterion", "needed", "actual"}]}},
     "nodes": {name: status}}

and that of ``update_labels`` ``{"requested", "relabeled",
"not_relabeled", "errors": {node: error}}``.

Every value here is a cliff column with two faces: a short text in a table
(``-f table``, ``value``, ``csv``) and the API's own value in ``-f json`` and
``-f yaml`` (lists stay lists, objects stay objects, null stays null).

* :class:`ReportColumn`: the ``report`` field of ``action show``, a
  summary of a few lines in a table, the nested report in JSON;
* :func:`report_rows`: ``action show --report`` (and ``action create
  --wait``), a row per group followed by a row per node of the group.
"""

import json

from cliff import columns

#: At most this many groups or nodes are named in a summary.
MAX_NAMED = 10

SITE_COLUMNS = ('Group', 'Node', 'Critical', 'Status', 'Reason',
                'Succeeded', 'Failed', 'Misses')
LABEL_COLUMNS = ('Node', 'Status', 'Error')


class OptionalColumn(columns.FormattableColumn):
    """A value that may be null: empty in a table, null in JSON."""

    def human_readable(self):
        return '' if self._value is None else str(self._value)

    def machine_readable(self):
        return self._value


class NodesColumn(columns.FormattableColumn):
    """Node names: their count in a table, the list in JSON."""

    def human_readable(self):
        return '' if self._value is None else str(len(self._value))

    def machine_readable(self):
        return None if self._value is None else list(self._value)


def format_miss(miss):
    """``minimum_successful_nodes: needed 1, actual 0``."""
    return '%s: needed %s, actual %s' % (miss.get('criterion'),
                                         miss.get('needed'),
                                         miss.get('actual'))


class MissesColumn(columns.FormattableColumn):
    """The criteria a group missed: one per line in a table, the API's
    ``[{"criterion", "needed", "actual"}]`` in JSON."""

    def human_readable(self):
        return '\n'.join(format_miss(m) for m in self._value or ())

    def machine_readable(self):
        return None if self._value is None else list(self._value)


def group_order(report):
    """The groups in the order they started, then the others by name."""
    groups = report.get('groups') or {}
    order = [g for g in report.get('order') or () if g in groups]
    return order + sorted(g for g in groups if g not in order)


def node_reasons(tree):
    """``{node name: reason}`` of the failed node tasks of a task tree.

    A node failed in the prepare phase is never deployed, so a node has
    one failed task at most; the last one found wins otherwise.
    """
    reasons = {}

    def walk(task):
        if task.get('kind') == 'node' and task.get('status') == 'failed':
            reasons[task.get('name')] = task.get('reason')
        for sub in task.get('subtasks') or ():
            if isinstance(sub, dict):
                walk(sub)

    if isinstance(tree, dict):
        walk(tree)
    return reasons


def report_rows(report, reasons=None):
    """(columns, rows) of an action's report.

    A site action: for each group, in the order the groups started (those
    that never started after), a row of the group (status, reason, counts,
    criteria missed) and a row for each of its nodes (the node's status in
    the action, and why it failed when ``reasons`` tells).
    ``update_labels``: a row per node.

    :param reasons: ``{node: reason}`` (:func:`node_reasons`), or None.
    """
    report = report or {}
    reasons = reasons or {}
    if 'groups' not in report and ('requested' in report
                                   or 'relabeled' in report):
        return label_rows(report)
    groups = report.get('groups') or {}
    statuses = report.get('nodes') or {}
    rows = []
    for name in group_order(report):
        entry = groups[name] or {}
        rows.append((name, OptionalColumn(None),
                     OptionalColumn(entry.get('critical')),
                     entry.get('status'),
                     OptionalColumn(entry.get('reason')),
                     NodesColumn(entry.get('succeeded_nodes') or []),
                     NodesColumn(entry.get('failed_nodes') or []),
                     MissesColumn(entry.get('misses') or [])))
        for node in entry.get('nodes') or ():
            rows.append((name, OptionalColumn(node), OptionalColumn(None),
                         statuses.get(node),
                         OptionalColumn(reasons.get(node)),
                         NodesColumn(None), NodesColumn(None),
                         MissesColumn(None)))
    return SITE_COLUMNS, rows


def label_rows(report):
    """(columns, rows) of an ``update_labels`` report: a row per node."""
    errors = report.get('errors') or {}
    rows = [(n, 'relabeled', OptionalColumn(None))
            for n in report.get('relabeled') or ()]
    rows += [(n, 'failed', OptionalColumn(errors.get(n)))
             for n in report.get('not_relabeled') or ()]
    done = {r[0] for r in rows}
    rows += [(n, 'pending', OptionalColumn(None))
             for n in report.get('requested') or () if n not in done]
    return LABEL_COLUMNS, rows


# --- the summary of ``action show`` -----------------------------------------

def _counts(values):
    counts = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return ', '.join('%d %s' % (counts[v], v) for v in sorted(counts))


def _named(names, describe=str):
    names = list(names)
    text = ', '.join(describe(n) for n in names[:MAX_NAMED])
    if len(names) > MAX_NAMED:
        text += ', ... (%d more)' % (len(names) - MAX_NAMED)
    return text


def site_summary(report):
    """Lines summing up a site action's report."""
    groups = report.get('groups') or {}
    statuses = report.get('nodes') or {}
    lines = ['groups: %d (%s)' % (len(groups), _counts(
        (e or {}).get('status') for e in groups.values()) or 'none')]
    for name in group_order(report):
        entry = groups[name] or {}
        if entry.get('status') == 'success':
            continue
        if len(lines) > MAX_NAMED:
            lines.append('  ...')
            break
        text = '  %s: %s' % (name, entry.get('status'))
        if entry.get('reason'):
            text += ' (%s)' % entry['reason']
        text += ', %d/%d nodes succeeded' % (
            len(entry.get('succeeded_nodes') or ()),
            len(entry.get('nodes') or ()))
        misses = entry.get('misses') or ()
        if misses:
            text += '; missed %s' % '; '.join(format_miss(m)
                                              for m in misses)
        lines.append(text)
    lines.append('nodes: %d (%s)' % (len(statuses),
                                     _counts(statuses.values()) or 'none'))
    failed = [n for n, s in sorted(statuses.items()) if s == 'failure']
    if failed:
        lines.append('failed nodes: %s' % _named(failed))
    if report.get('order'):
        lines.append('started: %s' % _named(report['order']))
    return lines


def label_summary(report):
    """Lines summing up an ``update_labels`` report."""
    errors = report.get('errors') or {}
    failed = list(report.get('not_relabeled') or ())
    lines = ['nodes: %d requested, %d relabeled, %d not relabeled' % (
        len(report.get('requested') or ()),
        len(report.get('relabeled') or ()), len(failed))]
    if failed:
        lines.append('not relabeled: %s' % _named(
            failed, lambda n: '%s (%s)' % (n, errors[n]) if errors.get(n)
            else n))
    return lines


def summary(report):
    """The text of a report in ``action show``: a few lines, or ''."""
    if not report:
        return ''
    if 'groups' in report:
        lines = site_summary(report)
    elif 'requested' in report or 'relabeled' in report:
        lines = label_summary(report)
    else:
        # A report of a shape this client does not know: all of it.
        return json.dumps(report, sort_keys=True)
    lines.append('(details: action show --report)')
    return '\n'.join(lines)


class ReportColumn(columns.FormattableColumn):
    """The ``report`` of ``action show``: :func:`summary` in a table, the
    API's nested report in JSON."""

    def human_readable(self):
        return summary(self._value)

    def machine_readable(self):
        return self._value
