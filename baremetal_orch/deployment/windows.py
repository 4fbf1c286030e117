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

"""Maintenance windows of a site action (``parameters.windows``), free of
I/O: the caller passes the time.

A window is ``{"start": ISO 8601, "end": ISO 8601}``, both with a UTC
offset (``Z`` or ``+02:00``). A window holds from its start (included) to
its end (excluded). Windows that overlap or touch are merged. Outside every
window a running action starts no new node work; without windows it may
work at any time.

:func:`parse` checks the request's list and returns the merged windows,
sorted, in UTC: a tuple of ``(start, end)`` aware datetimes. The other
functions take that tuple (or the request's list, parsed on the way) and
the current time, which must be aware too.
"""

import collections
import datetime

from baremetal_orch.common import exception
from baremetal_orch.common import limits

WHERE = 'parameters.windows'
KEYS = ('start', 'end')

#: Statuses of a window in :func:`describe`.
PAST = 'past'
OPEN = 'open'
FUTURE = 'future'

WindowState = collections.namedtuple(
    'WindowState', ['inside', 'closes_at', 'next_opens_at'])
WindowState.__doc__ = """Where a moment is relative to the windows.

``inside``: whether node work may start; ``closes_at``: when the window
holding the moment ends (None outside, or without windows);
``next_opens_at``: the start of the first window that starts after the
moment (None when none does).
"""


def _invalid(where, why):
    return exception.InvalidParameterValue(reason='%s: %s' % (where, why))


def _moment(value, where):
    if not isinstance(value, str):
        raise _invalid(where, 'an ISO 8601 date and time is required, '
                       'not %s' % type(value).__name__)
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise _invalid(where, '%r is not an ISO 8601 date and time (e.g. '
                       '2024-05-01T22:00:00Z)' % value[:64])
    if moment.utcoffset() is None:
        raise _invalid(where, 'UTC offset required (e.g. %sZ or %s+02:00)'
                       % (value[:64], value[:64]))
    return moment.astimezone(datetime.timezone.utc)


def _window(item, where):
    if not isinstance(item, dict):
        raise _invalid(where, 'a window is an object {"start": ..., '
                       '"end": ...}, not %s' % type(item).__name__)
    missing = [k for k in KEYS if k not in item]
    if missing:
        raise _invalid(where, 'missing %s' % ', '.join(missing))
    extra = sorted(str(k) for k in item if k not in KEYS)
    if extra:
        raise _invalid(where, 'unknown field(s) %s (a window has only '
                       'start and end)' % ', '.join(extra))
    start = _moment(item['start'], where + '.start')
    end = _moment(item['end'], where + '.end')
    if end <= start:
        raise _invalid(where, 'end %s is not after start %s'
                       % (item['end'], item['start']))
    return start, end


def _merge(windows):
    merged = []
    for start, end in sorted(windows):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return tuple(merged)


def parse(windows, where=WHERE):
    """Check ``parameters.windows`` and return the windows.

    :param windows: the request's list of ``{"start", "end"}``; None (no
        windows: work at any time) gives ``()``.
    :param where: how errors name the list.
    :returns: a sorted tuple of ``(start, end)`` aware UTC datetimes,
        overlapping and touching windows merged.
    :raises: InvalidParameterValue (400) naming the offending item, e.g.
        ``parameters.windows[1].start: UTC offset required``; LimitExceeded
        for more than ``limits.MAX_WINDOWS`` windows.
    """
    if windows is None:
        return ()
    if not isinstance(windows, (list, tuple)):
        raise _invalid(where, 'a list of {"start", "end"} windows is '
                       'required, not %s' % type(windows).__name__)
    if not windows:
        raise _invalid(where, 'at least one window is required (leave '
                       'windows out to work at any time)')
    if len(windows) > limits.MAX_WINDOWS:
        raise limits.exceeded('windows', limits.MAX_WINDOWS, where)
    return _merge(_window(item, '%s[%d]' % (where, i))
                  for i, item in enumerate(windows))


def _parsed(windows):
    """Parsed windows from parsed windows, a request's list or None."""
    if not windows:
        return ()
    if all(isinstance(w, tuple) and len(w) == 2
           and isinstance(w[0], datetime.datetime) for w in windows):
        return _merge(windows)
    return parse(windows)


def _aware(now):
    if not isinstance(now, datetime.datetime) or now.utcoffset() is None:
        raise ValueError('now must be an aware datetime, not %r' % (now,))
    return now


def state_at(windows, now):
    """The :class:`WindowState` of ``now``.

    Without windows (None or empty) it is always inside. A window holds
    its start and not its end.
    """
    _aware(now)
    windows = _parsed(windows)
    if not windows:
        return WindowState(True, None, None)
    closes_at = None
    for start, end in windows:
        if start <= now < end:
            closes_at = end
        elif start > now:
            return WindowState(closes_at is not None, closes_at, start)
    return WindowState(closes_at is not None, closes_at, None)


def seconds_until_change(windows, now):
    """Seconds from ``now`` until ``inside`` changes: until the current
    window closes, or the next one opens; None when it never changes (no
    windows, or after the last window). How long a runtime may sleep
    before it looks at the windows again."""
    state = state_at(windows, now)
    change = state.closes_at if state.inside else state.next_opens_at
    if change is None:
        return None
    return (change - now).total_seconds()


def describe(windows, now):
    """What a dry run shows: the merged windows in UTC, each
    ``{"start", "end", "status"}`` with status ``past``, ``open`` or
    ``future`` at ``now`` (JSON-serializable)."""
    _aware(now)
    out = []
    for start, end in _parsed(windows):
        if end <= now:
            status = PAST
        elif start <= now:
            status = OPEN
        else:
            status = FUTURE
        out.append({'start': start.isoformat(), 'end': end.isoformat(),
                    'status': status})
    return out
