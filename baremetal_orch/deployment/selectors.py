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

"""Node selectors of a deployment group.

A selector has four criteria: ``node_names``, ``node_tags``, ``node_labels``
and ``rack_names``. The semantics, which the SQL resolver must reproduce
exactly (:func:`matches` is the reference):

* inside one criterion any listed value matches (OR):
  ``node_tags: [a, b]`` selects nodes tagged ``a`` or ``b``;
* one selector is the AND of its non-empty criteria (an omitted or empty
  criterion is ignored);
* a list of selectors is the UNION of its selectors;
* an empty list, or a selector whose criteria are all empty, selects ALL
  nodes, also when that empty selector stands beside other selectors.

Labels are written either as maps (``{key: value}``, one or more keys) or as
``"key:value"`` strings. A map with several keys is the same as several
single-key entries: each pair is one more alternative of the OR. A node
matches a label pair when it has that key with exactly that value.

Label syntax follows Kubernetes: the key is ``[prefix/]name`` where the
optional prefix is a lower-case DNS subdomain (at most 253 characters) and
the name is at most 63 characters of ``[A-Za-z0-9._-]`` beginning and ending
with an alphanumeric; the value has the syntax of a name. An EMPTY value is
valid in the map form only (``{key: ""}``), as Kubernetes allows empty
values; in the string form ``"key:"`` is rejected because it is far more
likely a truncated entry than a wish to match an empty value. Whitespace
around the key and value of the string form is ignored (``"k: v"``).
"""

import collections.abc
import dataclasses
import re

from baremetal_orch.common import exception
from baremetal_orch.common import limits

CRITERIA = ('node_names', 'node_tags', 'node_labels', 'rack_names')

_NAME_RE = re.compile(r'^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')
_PREFIX_RE = re.compile(r'^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')
_NAME_MAX = 63
_PREFIX_MAX = 253


def is_valid_label_key(key):
    """Whether ``key`` is a valid ``[prefix/]name`` label key."""
    if not isinstance(key, str) or not key:
        return False
    prefix, sep, name = key.rpartition('/')
    if sep and (not prefix or len(prefix) > _PREFIX_MAX
                or not _PREFIX_RE.match(prefix)):
        return False
    return len(name) <= _NAME_MAX and bool(_NAME_RE.match(name))


def is_valid_label_value(value, allow_empty=True):
    """Whether ``value`` is a valid label value."""
    if not isinstance(value, str):
        return False
    if value == '':
        return allow_empty
    return len(value) <= _NAME_MAX and bool(_NAME_RE.match(value))


def _bad_label(item, why, where):
    prefix = '%s: ' % where if where else ''
    return exception.InvalidSelector(
        reason='%slabel %r %s' % (prefix, item, why), label=item,
        path=where)


def parse_label(item, where=None):
    """Parse one ``node_labels`` entry into a tuple of ``(key, value)``.

    :param item: a ``"key:value"`` string or a ``{key: value}`` map with one
        or more keys.
    :param where: optional location (e.g. a JSON path) named in errors.
    :returns: a tuple of ``(key, value)`` pairs, one per key (a string gives
        exactly one pair), in the order given.
    :raises: InvalidSelector naming the bad item.
    """
    if isinstance(item, str):
        key, sep, value = item.partition(':')
        key, value = key.strip(), value.strip()
        if not sep:
            raise _bad_label(item, "is not of the form 'key:value'", where)
        if not key:
            raise _bad_label(item, 'has an empty key', where)
        if not value:
            raise _bad_label(
                item, "has an empty value (use the map form {key: ''} to "
                "match an empty value)", where)
        pairs = ((key, value),)
    elif isinstance(item, collections.abc.Mapping):
        if not item:
            raise _bad_label(item, 'is an empty map', where)
        pairs = tuple(item.items())
        for key, value in pairs:
            if not isinstance(key, str):
                raise _bad_label(item, 'has a non-string key %r' % (key,),
                                 where)
            if not isinstance(value, str):
                raise _bad_label(
                    item, 'has a non-string value %r for key %r'
                    % (value, key), where)
    else:
        raise _bad_label(item, 'is neither a "key:value" string nor a map',
                         where)
    for key, value in pairs:
        if not is_valid_label_key(key):
            raise _bad_label(item, 'has an invalid key %r' % key, where)
        if not is_valid_label_value(value):
            raise _bad_label(item, 'has an invalid value %r' % value, where)
    return pairs


def _count(field, values):
    if field != 'node_labels':
        return len(values)
    return sum(len(v) if isinstance(v, collections.abc.Mapping) else 1
               for v in values)


def check_limits(selectors, where='selectors'):
    """LimitExceeded when a selector list is past the limits.

    Selectors become one SQL statement: at most ``MAX_SELECTORS`` of them,
    ``MAX_VALUES`` values per criterion, ``MAX_LABEL_PAIRS`` label pairs
    per selector, ``MAX_SELECTOR_VALUES`` values and
    ``MAX_SELECTOR_LABEL_PAIRS`` label pairs in all (see
    :mod:`baremetal_orch.common.limits`). Counts only: what is not a list
    or a map is left to the checks of types.

    :returns: ``(values, label pairs)`` of the list.
    """
    if not _is_list(selectors):
        return 0, 0
    if len(selectors) > limits.MAX_SELECTORS:
        raise limits.exceeded('selectors', limits.MAX_SELECTORS, where)
    total = pairs = 0
    for i, selector in enumerate(selectors):
        values, labels = _check_selector(selector, '%s[%d]' % (where, i))
        total += values
        pairs += labels
        if total > limits.MAX_SELECTOR_VALUES:
            raise limits.exceeded('values in all selectors together',
                                  limits.MAX_SELECTOR_VALUES, where)
        if pairs > limits.MAX_SELECTOR_LABEL_PAIRS:
            raise limits.exceeded('label pairs in all selectors together',
                                  limits.MAX_SELECTOR_LABEL_PAIRS, where)
    return total, pairs


def _is_list(value):
    return isinstance(value, collections.abc.Sequence) and not isinstance(
        value, (str, bytes))


def _check_selector(selector, where):
    """``(values, label pairs)`` of one selector, within the limits."""
    if isinstance(selector, Selector):
        return (sum(len(getattr(selector, f)) for f in CRITERIA),
                len(selector.node_labels))
    if not isinstance(selector, collections.abc.Mapping):
        return 0, 0
    total = pairs = 0
    for field in CRITERIA:
        values = selector.get(field)
        if not _is_list(values):
            continue
        count = _count(field, values)
        path = '%s.%s' % (where, field)
        if field == 'node_labels':
            if count > limits.MAX_LABEL_PAIRS:
                raise limits.exceeded('label pairs in one selector',
                                      limits.MAX_LABEL_PAIRS, path)
            pairs = count
        if count > limits.MAX_VALUES:
            raise limits.exceeded('values in one criterion',
                                  limits.MAX_VALUES, path)
        total += count
    return total, pairs


def _unique(values):
    return tuple(dict.fromkeys(values))


def _strings(d, field, where):
    values = d.get(field)
    if values is None:
        return ()
    if isinstance(values, (str, bytes)) or not isinstance(
            values, collections.abc.Sequence):
        raise exception.InvalidSelector(
            reason='%s.%s must be a list of strings, got %r'
            % (where, field, values), path='%s.%s' % (where, field))
    for i, value in enumerate(values):
        if not isinstance(value, str) or not value:
            raise exception.InvalidSelector(
                reason='%s.%s[%d] must be a non-empty string, got %r'
                % (where, field, i, value),
                path='%s.%s[%d]' % (where, field, i))
    return _unique(values)


@dataclasses.dataclass(frozen=True)
class Selector:
    """One selector: the AND of its non-empty criteria."""

    node_names: tuple = ()
    node_tags: tuple = ()
    # A tuple of (key, value) pairs.
    node_labels: tuple = ()
    rack_names: tuple = ()

    @classmethod
    def from_dict(cls, d, where='selector'):
        """Build a selector from its document form.

        Omitted or ``null`` criteria are empty. Unknown keys, non-string
        values and malformed labels raise InvalidSelector naming the
        offender (``where`` is the location used in messages).
        """
        if isinstance(d, Selector):
            return d
        _check_selector(d, where)
        if not isinstance(d, collections.abc.Mapping):
            raise exception.InvalidSelector(
                reason='%s must be a map, got %r' % (where, d), path=where)
        unknown = sorted(str(k) for k in d if k not in CRITERIA)
        if unknown:
            raise exception.InvalidSelector(
                reason='%s has unknown key(s) %s (allowed: %s)'
                % (where, ', '.join(unknown), ', '.join(CRITERIA)),
                path=where)
        labels = d.get('node_labels') or ()
        if isinstance(labels, (str, bytes)) or not isinstance(
                labels, collections.abc.Sequence):
            raise exception.InvalidSelector(
                reason='%s.node_labels must be a list, got %r'
                % (where, labels), path='%s.node_labels' % where)
        pairs = []
        for i, item in enumerate(labels):
            pairs.extend(parse_label(
                item, where='%s.node_labels[%d]' % (where, i)))
        return cls(node_names=_strings(d, 'node_names', where),
                   node_tags=_strings(d, 'node_tags', where),
                   node_labels=_unique(pairs),
                   rack_names=_strings(d, 'rack_names', where))

    def to_dict(self):
        """The document form; labels as single-key maps."""
        return {'node_names': list(self.node_names),
                'node_tags': list(self.node_tags),
                'node_labels': [{k: v} for k, v in self.node_labels],
                'rack_names': list(self.rack_names)}

    def is_empty(self):
        """True when every criterion is empty (the selector means all)."""
        return not (self.node_names or self.node_tags or self.node_labels
                    or self.rack_names)

    def matches(self, node):
        """Whether ``node`` satisfies every non-empty criterion."""
        name, tags, labels, rack = node_fields(node)
        if self.node_names and name not in self.node_names:
            return False
        if self.rack_names and rack not in self.rack_names:
            return False
        if self.node_tags and not any(t in self.node_tags for t in tags):
            return False
        if self.node_labels and not any(
                k in labels and labels[k] == v for k, v in self.node_labels):
            return False
        return True


def node_fields(node):
    """``(name, tags, labels, rack_name)`` of a node object or dict."""
    if isinstance(node, collections.abc.Mapping):
        get = node.get
    else:
        def get(attr):
            return getattr(node, attr, None)
    return (get('name'), get('tags') or (), get('labels') or {},
            get('rack_name'))


def coerce(selectors, where='selectors'):
    """A tuple of :class:`Selector` from Selector objects and/or dicts,
    within the limits (:func:`check_limits`)."""
    check_limits(selectors, where)
    return tuple(Selector.from_dict(s, where='%s[%d]' % (where, i))
                 for i, s in enumerate(selectors or ()))


def selects_all(selectors):
    """True for an empty list or when ANY selector is empty."""
    selectors = coerce(selectors)
    return not selectors or any(s.is_empty() for s in selectors)


def matches(selectors, node):
    """Reference semantics: whether the selector list selects ``node``.

    :param selectors: a list of :class:`Selector` or selector dicts.
    :param node: an object or dict with ``name``, ``tags`` (iterable),
        ``labels`` (dict) and ``rack_name``.
    """
    selectors = coerce(selectors)
    if selects_all(selectors):
        return True
    return any(s.matches(node) for s in selectors)


def select(selectors, nodes):
    """Names of the ``nodes`` the selectors select, in input order."""
    selectors = coerce(selectors)
    if selects_all(selectors):
        return [node_fields(n)[0] for n in nodes]
    return [node_fields(n)[0] for n in nodes
            if any(s.matches(n) for s in selectors)]
