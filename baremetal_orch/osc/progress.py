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
"""The live progress of an action (``action create ... --wait``).

:func:`summarize` is pure: an action document (``GET /v1/actions/{uuid}``)
and optionally its task tree (``GET /v1/tasks/{uuid}?tree=true``) to a
:class:`Progress` — groups done/total, nodes done/total and the groups
running now with their phase, why the action is where it is
(``state_reason``: a pause's reason, ``outside_window``) and its ETA.
:func:`format_line` renders it with the elapsed time; :class:`Display`
writes the lines to stderr (rewriting one line on a terminal, one line per
change otherwise); :func:`watch` polls
until the action ends: a ``pausing`` or ``paused`` action has not ended,
the wait goes on and the line says it is paused and why. The final table
is :func:`baremetal_orch.osc.report.report_rows`.
:class:`ProgressColumn` is the ``progress`` field of ``action show``.
"""

import dataclasses
import time

from cliff import columns

#: Action states in which the action has not ended: a paused action is
#: resumed (by an operator, or when its next maintenance window opens).
ACTIVE_STATES = ('pending', 'running', 'pausing', 'paused')
#: The phases of a site action in the order they run; others follow by
#: name.
PHASE_ORDER = ('prepare', 'deploy')
#: The counts of a phase in the action's ``progress``, and their words.
PHASE_COUNTS = (('done', 'done'), ('failed', 'failed'),
                ('in_flight', 'in flight'), ('pending', 'pending'))
#: Group statuses of a finished group (report).
GROUP_DONE = ('success', 'failed')
#: Node statuses of a node that is done (report).
NODE_DONE = ('success', 'failure')
#: Task statuses of a finished task (task tree).
TASK_DONE = ('success', 'failed')


@dataclasses.dataclass(frozen=True)
class Progress:
    state: str
    result: str = None
    groups_done: int = 0
    groups_total: int = 0
    nodes_done: int = 0
    nodes_total: int = 0
    #: ``(group, phase, nodes done in the phase, nodes in the phase)`` of
    #: each running group; phase and counts are None without a tree.
    current: tuple = ()
    #: Nodes whose every group ended without them (a skipped group's, or
    #: a group that failed before reaching them): never deployed, so not
    #: counted as done.
    nodes_not_started: int = 0
    #: Why the action is where it is (``state_reason``), or None.
    reason: str = None
    #: Whether the action document carries ``progress`` (and so an ETA).
    with_eta: bool = False
    #: Seconds until the action ends (``progress.eta``); None unknown.
    eta: float = None


def _walk(task):
    yield task
    for sub in task.get('subtasks') or ():
        if isinstance(sub, dict):
            yield from _walk(sub)


def _running_phase(group_task):
    phases = [t for t in group_task.get('subtasks') or ()
              if isinstance(t, dict) and t.get('kind') == 'phase']
    if not phases:
        return None, None, None
    running = [p for p in phases if p.get('status') not in TASK_DONE]
    phase = running[-1] if running else phases[-1]
    nodes = [t for t in phase.get('subtasks') or ()
             if isinstance(t, dict) and t.get('kind') == 'node']
    done = sum(1 for t in nodes if t.get('status') in TASK_DONE)
    return phase.get('name'), done, len(nodes)


def summarize(action, tree=None):
    """The :class:`Progress` of an action document (and task tree)."""
    summary = _counts(action, tree)
    doc_progress = action.get('progress')
    return dataclasses.replace(
        summary, reason=action.get('state_reason'),
        with_eta=isinstance(doc_progress, dict),
        eta=(doc_progress or {}).get('eta')
        if isinstance(doc_progress, dict) else None)


def _counts(action, tree):
    report = action.get('report') or {}
    groups = report.get('groups') or {}
    if groups:
        done_groups = {g for g, e in groups.items()
                       if e.get('status') in GROUP_DONE}
        node_groups = {}
        for name, entry in groups.items():
            for node in entry.get('nodes') or ():
                node_groups.setdefault(node, set()).add(name)
        nodes = report.get('nodes') or {}
        names = set(nodes) | set(node_groups)
        # A node is done when its status is final. One whose every group
        # ended without it (a skipped group's nodes) is not started: it
        # is counted apart, not as done.
        nodes_done = sum(1 for n in names if nodes.get(n) in NODE_DONE)
        not_started = sum(1 for n in names
                          if nodes.get(n) not in NODE_DONE
                          and node_groups.get(n)
                          and node_groups[n] <= done_groups)
        running = [g for g in (report.get('order') or sorted(groups))
                   if groups.get(g, {}).get('status') == 'running']
        tasks = {}
        if tree:
            tasks = {t.get('name'): t for t in _walk(tree)
                     if t.get('kind') == 'group'}
        current = tuple(
            (g,) + (_running_phase(tasks[g]) if g in tasks
                    else (None, None, None)) for g in running)
        return Progress(action.get('state'), action.get('result'),
                        len(done_groups), len(groups), nodes_done,
                        len(names), current, not_started)
    # update_labels (and a site action before its first report): count
    # the node tasks of the tree.
    node_tasks = [t for t in _walk(tree or {}) if t.get('kind') == 'node']
    if not node_tasks and report.get('requested'):
        total = len(report['requested'])
        done = len(report.get('relabeled') or ()) + len(
            report.get('not_relabeled') or ())
        return Progress(action.get('state'), action.get('result'),
                        nodes_done=done, nodes_total=total)
    return Progress(action.get('state'), action.get('result'),
                    nodes_done=sum(1 for t in node_tasks
                                   if t.get('status') in TASK_DONE),
                    nodes_total=len(node_tasks))


def format_elapsed(seconds):
    seconds = int(max(0, seconds))
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return '%d:%02d:%02d' % (hours, minutes, seconds)
    return '%d:%02d' % (minutes, seconds)


def format_eta(seconds):
    """An ETA for people: ``45s``, ``4m 10s``, ``2h 5m``; ``unknown``
    for None (no node has finished yet)."""
    if seconds is None:
        return 'unknown'
    seconds = int(round(max(0, seconds)))
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return '%dh %dm' % (hours, minutes)
    if minutes:
        return '%dm %ds' % (minutes, seconds)
    return '%ds' % seconds


def format_state(state, result=None, reason=None):
    """``running``, ``failed (failed)``, ``paused: change freeze``."""
    text = state or '?'
    if result:
        text = '%s (%s)' % (text, result)
    if reason:
        text = '%s: %s' % (text, reason)
    return text


def phase_order(phases):
    """The phase names of ``progress.phases`` in the order they run."""
    known = [p for p in PHASE_ORDER if p in phases]
    return known + sorted(p for p in phases if p not in PHASE_ORDER)


def format_progress(doc_progress):
    """The lines of an action's ``progress``: one per phase, then the
    ETA (``deploy: 3 done, 1 failed, 2 in flight, 10 pending``,
    ``eta: 4m 10s``)."""
    if not isinstance(doc_progress, dict):
        return []
    phases = doc_progress.get('phases') or {}
    lines = []
    for name in phase_order(phases):
        counts = phases[name] or {}
        lines.append('%s: %s' % (name, ', '.join(
            '%d %s' % (counts.get(key) or 0, words)
            for key, words in PHASE_COUNTS)))
    lines.append('eta: %s' % format_eta(doc_progress.get('eta')))
    return lines


class ProgressColumn(columns.FormattableColumn):
    """An action's ``progress``: a line per phase and the ETA in a table,
    the API's object in JSON and YAML."""

    def human_readable(self):
        return '\n'.join(format_progress(self._value))

    def machine_readable(self):
        return self._value


def format_current(progress):
    parts = []
    for group, phase, done, total in progress.current:
        if phase is None:
            parts.append(group)
        elif total:
            parts.append('%s (%s %d/%d)' % (group, phase, done, total))
        else:
            parts.append('%s (%s)' % (group, phase))
    return ', '.join(parts) or '-'


def format_line(progress, elapsed=None):
    """One status line of the progress.

    ``running | groups 1/5 | nodes 4/16 | current: control-nodes (deploy
    2/4) | eta 4m 10s | elapsed 0:07``; on a failed action ``failed
    (failed) | groups 5/5 | nodes 4/16 (12 not started) | ...``; on a
    paused one ``paused: outside_window | ...``.
    """
    parts = [format_state(progress.state, progress.result,
                          progress.reason)]
    if progress.groups_total:
        parts.append('groups %d/%d' % (progress.groups_done,
                                       progress.groups_total))
    nodes = 'nodes %d/%d' % (progress.nodes_done, progress.nodes_total)
    if progress.nodes_not_started:
        nodes += ' (%d not started)' % progress.nodes_not_started
    parts.append(nodes)
    if progress.groups_total:
        parts.append('current: %s' % format_current(progress))
    if progress.with_eta and progress.state in ACTIVE_STATES:
        parts.append('eta %s' % format_eta(progress.eta))
    if elapsed is not None:
        parts.append('elapsed %s' % format_elapsed(elapsed))
    return ' | '.join(parts)


class Display:
    """Progress lines on a stream (stderr).

    On a terminal one line is rewritten in place; otherwise a line is
    written only when something other than the elapsed time changed.
    """

    def __init__(self, stream):
        self.stream = stream
        self.tty = bool(getattr(stream, 'isatty', lambda: False)())
        self._last_key = None

    def update(self, progress, elapsed):
        line = format_line(progress, elapsed)
        if self.tty:
            self.stream.write('\r%s\x1b[K' % line)
        else:
            key = format_line(progress)
            if key == self._last_key:
                return
            self._last_key = key
            self.stream.write(line + '\n')
        self.stream.flush()

    def finish(self):
        if self.tty:
            self.stream.write('\n')
            self.stream.flush()


def watch(api, uuid, display, interval=1.0, timeout=None, sleep=None,
          clock=None):
    """Poll an action (and its task tree) until it ends; return it.

    :param api: the REST client (``get(path, params)``).
    :param display: a :class:`Display`.
    :raises: TimeoutError when ``timeout`` seconds pass first.
    """
    sleep = sleep or time.sleep
    clock = clock or time.monotonic
    start = clock()
    try:
        while True:
            action = api.get('actions/%s' % uuid)
            tree = None
            if action.get('task_uuid'):
                tree = api.get('tasks/%s' % action['task_uuid'],
                               params={'tree': 'true'})
            display.update(summarize(action, tree), clock() - start)
            if action.get('state') not in ACTIVE_STATES:
                return action
            if timeout and clock() - start >= timeout:
                raise TimeoutError(
                    'action %s still %s after %s seconds'
                    % (uuid, action.get('state'), timeout))
            sleep(interval)
    finally:
        display.finish()
