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
"""Pieces shared by the commands: output, arguments, JSON patches."""

import argparse
import json
import sys
import time

from cliff import columns as cliff_columns
from osc_lib.cli import format_columns
from osc_lib.command import command
from osc_lib import exceptions
from oslo_utils import uuidutils


def client(cmd):
    """The REST client of a command (made once by the ClientManager)."""
    return cmd.app.client_manager.baremetal_orch


# --- output ----------------------------------------------------------------

class JSONColumn(cliff_columns.FormattableColumn):
    """Any JSON value.

    Compact JSON in a table, the value itself in json/yaml output.
    """

    def human_readable(self):
        if self._value is None:
            return ''
        if isinstance(self._value, str):
            return self._value
        return json.dumps(self._value, sort_keys=True)

    def machine_readable(self):
        return self._value


class ListColumn(cliff_columns.FormattableColumn):
    """A list of scalars, comma-separated in the order given.

    osc-lib's ListColumn sorts, which would scramble an execution order.
    """

    def human_readable(self):
        return ', '.join(str(v) for v in self._value or ())

    def machine_readable(self):
        return list(self._value or ())


def format_value(value):
    """A field value as a cliff column (dicts and lists formatted)."""
    if isinstance(value, dict):
        if all(not isinstance(v, (dict, list)) for v in value.values()):
            return format_columns.DictColumn(value)
        return JSONColumn(value)
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            return ListColumn(value)
        return JSONColumn(value)
    return value


def show(doc, fields=None):
    """(columns, values) of a ShowOne.

    The given fields, or the document's fields sorted, without ``links``.
    """
    fields = fields or sorted(k for k in doc if k != 'links')
    return tuple(fields), tuple(format_value(doc.get(f)) for f in fields)


def rows(items, columns):
    """(labels, rows) of a Lister.

    :param columns: a sequence of ``(field, label)``.
    """
    labels = tuple(label for _field, label in columns)
    data = [tuple(format_value(item.get(field)) for field, _label in columns)
            for item in items]
    return labels, data


def label_of(field):
    """The column label of an API field.

    ``provision_state`` → ``Provision State``, ``uuid`` → ``UUID``.
    """
    words = []
    for word in field.split('_'):
        words.append(word.upper() if word in ('uuid', 'id', 'url')
                     else word.capitalize())
    return ' '.join(words)


#: Output formats for scripts: each cell as plain text, never a Python
#: repr of a list or dict (cliff prints machine_readable() values as such).
PLAIN_FORMATS = ('value', 'csv')


def plain(value):
    """A cell as ``-f value`` and ``-f csv`` print it: text."""
    if isinstance(value, cliff_columns.FormattableColumn):
        value = value.human_readable()
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True)
    return value


class Lister(command.Lister):
    """osc-lib's Lister; ``-f value``/``csv`` cells are plain text."""

    def produce_output(self, parsed_args, column_names, data):
        if parsed_args.formatter in PLAIN_FORMATS:
            data = [tuple(plain(c) for c in row) for row in data]
        return super().produce_output(parsed_args, column_names, data)


class ShowOne(command.ShowOne):
    """osc-lib's ShowOne; ``-f value``/``csv`` cells are plain text."""

    def produce_output(self, parsed_args, column_names, data):
        if parsed_args.formatter in PLAIN_FORMATS:
            data = tuple(plain(c) for c in data)
        return super().produce_output(parsed_args, column_names, data)


class ListOrShow(command.Lister):
    """A Lister that can show one record instead.

    When :meth:`take_action` sets ``self.show_one`` the output is that of a
    ShowOne (``Field``/``Value``).

    Used by the commands whose output depends on an option: ``action
    create`` (the action, its dry-run plan, or its report with
    ``--wait``) and ``task show`` (the task, or its tree with ``--tree``).
    """

    show_one = False

    def produce_output(self, parsed_args, column_names, data):
        plain_text = parsed_args.formatter in PLAIN_FORMATS
        if not self.show_one:
            if plain_text:
                data = [tuple(plain(c) for c in row) for row in data]
            return super().produce_output(parsed_args, column_names, data)
        if plain_text:
            data = tuple(plain(c) for c in data)
        column_names, selector = self._generate_columns_and_selector(
            parsed_args, column_names)
        if selector:
            data = list(self._compress_iterable(data, selector))
        if hasattr(self.formatter, 'emit_one'):
            self.formatter.emit_one(column_names, data, self.app.stdout,
                                    parsed_args)
        else:
            self.formatter.emit_list(column_names, [data], self.app.stdout,
                                     parsed_args)
        return 0


def delete_all(cmd, path, what, idents):
    """Delete each resource; report every failure, then fail once.

    Each deletion prints ``Deleted <what> <ident>``, as ironicclient's
    delete commands do.
    """
    api = client(cmd)
    failures = []
    for ident in idents:
        try:
            api.delete('%s/%s' % (path, ident))
        except exceptions.CommandError as e:
            failures.append('%s: %s' % (ident, e))
        else:
            print('Deleted %s %s' % (what, ident), file=cmd.app.stdout)
    if failures:
        raise exceptions.CommandError(
            'Failed to delete %d of %d %s(s):\n%s' % (
                len(failures), len(idents), what, '\n'.join(failures)))


def node_uuid(api, ident):
    """The UUID of a node given by name or UUID."""
    if uuidutils.is_uuid_like(ident):
        return ident
    return api.get('nodes/%s' % ident, params={'fields': 'uuid'})['uuid']


# --- arguments -------------------------------------------------------------

def parse_value(text):
    """A ``KEY=VALUE`` value.

    JSON when it parses (numbers, booleans, objects), else the string.
    """
    try:
        return json.loads(text)
    except ValueError:
        return text


class KeyValue(argparse.Action):
    """``--opt KEY=VALUE`` (repeatable) into a dict.

    With ``json_values`` the value is parsed by :func:`parse_value`.
    """

    def __init__(self, *args, json_values=False, **kwargs):
        self.json_values = json_values
        super().__init__(*args, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        key, sep, value = values.partition('=')
        if not sep or not key:
            raise argparse.ArgumentError(
                self, 'expected KEY=VALUE, got %r' % values)
        current = dict(getattr(namespace, self.dest, None) or {})
        current[key] = parse_value(value) if self.json_values else value
        setattr(namespace, self.dest, current)


def add_limit(parser, what):
    parser.add_argument(
        '--limit', metavar='<count>', type=int,
        help='At most this many %s (default: all, following the pages).'
             % what)
    parser.add_argument('--marker', metavar='<marker>',
                        help='Start after this %s (paging).' % what[:-1])


def add_sort(parser):
    parser.add_argument(
        '--sort', metavar='<key>[:<direction>]',
        help='Sort by these fields, comma-separated, each asc (the '
             'default) or desc, e.g. name:desc,uuid:asc. The API sorts by '
             'the first; with --limit, the page it answers is then sorted '
             'by all of them.')


def parse_sort(value):
    """``[(key, direction or None)]`` of ``--sort``.

    :raises: CommandError for an empty key or a direction other than asc
        or desc, before any request.
    """
    keys = []
    for entry in (value or '').split(','):
        key, _sep, direction = entry.strip().partition(':')
        if not key:
            raise exceptions.CommandError(
                'Invalid --sort %r: an empty sort key' % value)
        if _sep and direction not in ('asc', 'desc'):
            raise exceptions.CommandError(
                'Invalid --sort %r: %r is not a sort direction of %s; use '
                'asc or desc' % (value, direction, key))
        keys.append((key, direction or None))
    return keys


def sort_params(value):
    """The API's ``sort_key``/``sort_dir``: the first key of ``--sort``."""
    if not value:
        return {}
    key, direction = parse_sort(value)[0]
    params = {'sort_key': key}
    if direction:
        params['sort_dir'] = direction
    return params


def list_params(parsed_args, **filters):
    """The query of a list call: the filters that are set, marker, sort."""
    params = {k: v for k, v in filters.items() if v is not None}
    if getattr(parsed_args, 'marker', None):
        params['marker'] = parsed_args.marker
    params.update(sort_params(getattr(parsed_args, 'sort', None)))
    return params


def load_document(path):
    """The bytes of a YAML or JSON file ('-' is stdin)."""
    try:
        if path == '-':
            return sys.stdin.buffer.read()
        with open(path, 'rb') as f:
            return f.read()
    except OSError as e:
        raise exceptions.CommandError('Cannot read %s: %s' % (path, e))


# --- JSON patches ----------------------------------------------------------

def pointer(*parts):
    """An RFC 6901 pointer.

    ``pointer('labels', 'a/b')`` → ``/labels/a~1b``.
    """
    return ''.join('/' + str(p).replace('~', '~0').replace('/', '~1')
                   for p in parts)


def set_ops(values=None, **dicts):
    """``add`` operations of a JSON patch.

    ``values`` maps a field to its new value, ``dicts`` maps a dict field
    to the keys to set inside it.
    """
    ops = []
    for field, value in sorted((values or {}).items()):
        ops.append({'op': 'add', 'path': pointer(field), 'value': value})
    for field, entries in sorted(dicts.items()):
        for key, value in sorted((entries or {}).items()):
            ops.append({'op': 'add', 'path': pointer(field, key),
                        'value': value})
    return ops


def remove_ops(fields=(), **dicts):
    """``remove`` operations of whole fields and of keys of dict fields."""
    ops = [{'op': 'remove', 'path': pointer(f)} for f in fields]
    for field, keys in sorted(dicts.items()):
        for key in keys or ():
            ops.append({'op': 'remove', 'path': pointer(field, key)})
    return ops


def require_changes(ops):
    if not ops:
        raise exceptions.CommandError('Nothing to change: give at least '
                                      'one option.')
    return ops


# --- waiting ---------------------------------------------------------------

def add_wait(parser, until):
    """``--wait [<time-out>]``, as ironicclient's: ``parsed_args.wait`` is
    None without it, else the time-out in seconds (0: none)."""
    parser.add_argument(
        '--wait', metavar='<time-out>', type=int, nargs='?', const=0,
        help='Wait until %s. Optionally takes a time-out value in seconds; '
             'the default, 0, waits indefinitely.' % until)


def poll(fetch, done, timeout=None, interval=1.0, sleep=None, clock=None):
    """Call ``fetch()`` until ``done(result)``; return the last result.

    :param timeout: seconds, or None to wait for ever.
    :raises: CommandError when the timeout passes first.
    """
    sleep = sleep or time.sleep
    clock = clock or time.monotonic
    deadline = None if not timeout else clock() + timeout
    while True:
        result = fetch()
        if done(result):
            return result
        if deadline is not None and clock() >= deadline:
            raise exceptions.CommandError(
                'Timed out after %s seconds' % timeout)
        sleep(interval)
