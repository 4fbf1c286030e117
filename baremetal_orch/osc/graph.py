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
"""The group DAG of a deployment strategy in Graphviz DOT.

:func:`to_dot` is a pure function: a strategy document (the specification's
``schema``/``metadata``/``data.groups``), and optionally the ``report`` of
an action that ran it, to DOT text. Each group is a box (critical groups
drawn bold with a double border), each ``depends_on`` an edge from the
dependency to the group that waits for it. With a report, the boxes are
filled by group status (:data:`STATUS_COLORS`) and a failed group shows
its reason; a group skipped (its dependency failed) or aborted (the action
was aborted before it started) is drawn apart from the failed ones, and
while the action is pausing or paused its pending and running groups say
so (:func:`appearance`). :func:`to_svg` renders the text with Graphviz's
``dot`` when it is installed.
"""

import shutil
import subprocess

from osc_lib import exceptions

#: Fill colour of a group by its status in an action report.
STATUS_COLORS = {
    'success': 'green',
    'failed': 'red',
    'running': 'yellow',
    'pending': 'grey',
}
#: Fill colour of a group whose status is unknown (no report).
NO_STATUS_COLOR = 'white'
#: A group that never ran because a group it depends on failed: drawn
#: apart from the failed groups (light grey, dashed border).
SKIPPED_REASON = 'dependency_failed'
SKIPPED_COLOR = 'lightgrey'
SKIPPED_STYLE = 'rounded,filled,dashed'
#: A group that never started because the action was aborted (status
#: failed, reason aborted): orange, dotted border.
ABORTED_REASON = 'aborted'
ABORTED_COLOR = 'orange'
ABORTED_STYLE = 'rounded,filled,dotted'
#: A pending or running group of a pausing or paused action: light blue,
#: bold border (a running one finishes the steps in flight).
PAUSED_STATES = ('pausing', 'paused')
PAUSED_GROUP_STATUSES = ('pending', 'running')
PAUSED_COLOR = 'lightblue'
PAUSED_STYLE = 'rounded,filled,bold'
#: ``(status word in the label, fill colour, style)`` of the groups drawn
#: apart, by name (see :func:`appearance`).
APPEARANCES = {
    'skipped': ('skipped', SKIPPED_COLOR, SKIPPED_STYLE),
    'aborted': ('aborted', ABORTED_COLOR, ABORTED_STYLE),
}
#: Output formats by file suffix: DOT text itself, or rendered by dot.
RENDERED_FORMATS = ('svg', 'png')


def quote(text):
    """A DOT double-quoted ID."""
    return '"%s"' % str(text).replace('\\', '\\\\').replace('"', '\\"')


def groups_of(document):
    """The groups of a strategy document (its ``data.groups``)."""
    return list(((document or {}).get('data') or {}).get('groups') or [])


def edges_of(document):
    """``(dependency, group)`` pairs in document order."""
    return [(dep, group['name']) for group in groups_of(document)
            for dep in group.get('depends_on') or ()]


def appearance(entry, action_state=None):
    """``(status word, fill colour, style or None)`` of a group's report
    ``entry`` in an action in ``action_state``."""
    status = entry.get('status')
    reason = entry.get('reason')
    if status == 'failed' and reason == SKIPPED_REASON:
        return APPEARANCES['skipped']
    if status == 'failed' and reason == ABORTED_REASON:
        return APPEARANCES['aborted']
    if (action_state in PAUSED_STATES
            and status in PAUSED_GROUP_STATUSES):
        return ('%s, %s' % (status, action_state), PAUSED_COLOR,
                PAUSED_STYLE)
    return status, STATUS_COLORS.get(status, NO_STATUS_COLOR), None


def to_dot(document, report=None, action_state=None):
    """DOT text of the strategy's group DAG.

    :param document: the strategy document.
    :param report: an action's ``report`` (``groups: {name: {status,
        reason, nodes, succeeded_nodes, failed_nodes}}``), or None.
    :param action_state: the state of that action (``paused``...).
    """
    name = ((document or {}).get('metadata') or {}).get('name') or 'strategy'
    statuses = (report or {}).get('groups') or {}
    lines = ['digraph %s {' % quote(name),
             '  rankdir=LR;',
             '  node [shape=box, style="rounded,filled", '
             'fontname="Helvetica"];']
    for group in groups_of(document):
        label = [group['name']]
        attrs = []
        if group.get('critical'):
            label.append('critical')
            attrs += ['penwidth=2', 'peripheries=2']
        entry = statuses.get(group['name'])
        style = None
        if entry is not None:
            word, color, style = appearance(entry, action_state)
            label.append('%s: %d/%d nodes' % (
                word, len(entry.get('succeeded_nodes') or []),
                len(entry.get('nodes') or [])))
            if entry.get('reason'):
                label.append(entry['reason'])
        else:
            color = NO_STATUS_COLOR
        attrs = ['label=%s' % quote('\n'.join(label)).replace('\n', '\\n'),
                 'fillcolor=%s' % quote(color)] + attrs
        if style:
            attrs.append('style=%s' % quote(style))
        lines.append('  %s [%s];' % (quote(group['name']), ', '.join(attrs)))
    for dep, group in edges_of(document):
        lines.append('  %s -> %s;' % (quote(dep), quote(group)))
    lines.append('}')
    return '\n'.join(lines) + '\n'


def to_svg(dot_text, dot_binary='dot'):
    """Render DOT text to SVG bytes with Graphviz (see :func:`render`)."""
    return render(dot_text, 'svg', dot_binary)


def render(dot_text, fmt, dot_binary='dot'):
    """Render DOT text to ``fmt`` (svg, png) bytes with Graphviz.

    :raises: CommandError when Graphviz is not installed or fails.
    """
    binary = shutil.which(dot_binary)
    if binary is None:
        raise exceptions.CommandError(
            'Graphviz "dot" is not installed, and a .%s file is drawn by '
            'it: install graphviz (Debian/Ubuntu: apt install graphviz), or '
            'write a .dot file' % fmt)
    proc = subprocess.run([binary, '-T%s' % fmt], input=dot_text.encode(),
                          capture_output=True, check=False)
    if proc.returncode != 0:
        raise exceptions.CommandError(
            'dot failed: %s' % proc.stderr.decode(errors='replace').strip())
    return proc.stdout
