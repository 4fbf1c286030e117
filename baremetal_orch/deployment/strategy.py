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

"""The DeploymentStrategy document: model and validation.

:func:`parse` turns a document (already loaded from JSON or YAML) into an
immutable :class:`Strategy`, or raises the first problem found, in this
order, with a message naming the offender:

1. the document itself: nested no deeper than :data:`MAX_DEPTH`, within
   the limits of :mod:`baremetal_orch.common.limits` (groups, selectors,
   values, name lengths: LimitExceeded), then checked against
   :data:`SCHEMA` in document order
   (StrategySchemaError; a percent out of 0-100 or a negative count is
   InvalidCriteria; a malformed label is InvalidSelector);
2. duplicate group names (DuplicateGroupName);
3. ``depends_on`` names that are no group (UnknownDependency);
4. a group depending on itself (SelfDependency);
5. dependency cycles (DependencyCycle, naming exactly the groups on the
   cycles, not those hanging off them);
6. a strategy name that breaks the rule of resource names (InvalidName):
   it is a path segment of ``/v1/deployment_strategies/{name}`` and the
   ``deployment_strategy`` parameter of actions.

Every step takes time linear in the size of the document.
"""

import contextlib
import copy
import dataclasses
import heapq
import itertools

import jsonschema

from baremetal_orch.common import exception
from baremetal_orch.common import limits
from baremetal_orch.deployment import criteria as criteria_mod
from baremetal_orch.deployment import graph
from baremetal_orch.deployment import selectors as selectors_mod

DEFAULT_NAME = 'deployment-strategy'
SCHEMA_NAME = 'shipyard/DeploymentStrategy/v1'

_STRINGS = {'type': 'array', 'items': {'type': 'string', 'minLength': 1}}

SCHEMA = {
    '$schema': 'http://json-schema.org/draft-07/schema#',
    'title': 'DeploymentStrategy',
    'type': 'object',
    'required': ['schema', 'metadata', 'data'],
    'properties': {
        'schema': {'const': SCHEMA_NAME},
        'metadata': {
            'type': 'object',
            'required': ['name'],
            'properties': {
                'name': {'type': 'string', 'minLength': 1},
                'schema': {'type': 'string'},
                'layeringDefinition': {'type': 'object'},
                'storagePolicy': {'type': 'string'},
                'labels': {'type': 'object'},
            },
        },
        'data': {
            'type': 'object',
            'required': ['groups'],
            'additionalProperties': False,
            'properties': {
                'groups': {'type': 'array',
                           'items': {'$ref': '#/definitions/group'}},
            },
        },
    },
    'definitions': {
        'group': {
            'type': 'object',
            'required': ['name', 'critical', 'depends_on', 'selectors'],
            'additionalProperties': False,
            'properties': {
                'name': {'type': 'string', 'minLength': 1,
                         'maxLength': limits.GROUP_NAME_MAX_LENGTH},
                'critical': {'type': 'boolean'},
                'depends_on': _STRINGS,
                'selectors': {'type': 'array',
                              'items': {'$ref': '#/definitions/selector'}},
                'success_criteria': {'$ref': '#/definitions/criteria'},
                'wait_for_signal': {'type': 'boolean'},
                'fail_fast': {'type': 'boolean'},
            },
        },
        'selector': {
            'type': 'object',
            'additionalProperties': False,
            'properties': {
                'node_names': _STRINGS,
                'node_tags': _STRINGS,
                'rack_names': _STRINGS,
                'node_labels': {
                    'type': 'array',
                    'items': {'anyOf': [
                        {'type': 'string', 'pattern': '^[^:]+:.+$'},
                        {'type': 'object', 'minProperties': 1,
                         'additionalProperties': {'type': 'string'}},
                    ]},
                },
            },
        },
        'criteria': {
            'type': 'object',
            'minProperties': 1,
            'additionalProperties': False,
            'properties': {
                criteria_mod.PERCENT: {'type': 'number', 'minimum': 0,
                                       'maximum': 100},
                criteria_mod.MINIMUM: {'type': 'integer', 'minimum': 0},
                criteria_mod.MAXIMUM_FAILED: {'type': 'integer',
                                              'minimum': 0},
            },
        },
    },
}

_VALIDATOR = jsonschema.Draft7Validator(SCHEMA)
#: How deep a document may nest (a real one is about 8 levels deep). The
#: schema check, messages and copies all recurse: a deeper document is
#: refused before any of them runs into Python's recursion limit.
MAX_DEPTH = limits.MAX_DEPTH
_RANGE_CHECKS = ('minimum', 'maximum', 'exclusiveMinimum',
                 'exclusiveMaximum')


def _unknown(name):
    return exception.InvalidParameterValue(reason='unknown group %s' % name)


@dataclasses.dataclass(frozen=True)
class Group:
    """One deployment group."""

    name: str
    critical: bool
    depends_on: tuple = ()
    selectors: tuple = ()
    success_criteria: criteria_mod.Criteria = None
    wait_for_signal: bool = False
    fail_fast: bool = False

    @classmethod
    def from_dict(cls, d, where='group'):
        """Build a group from its (schema-valid) document form."""
        name = d['name']
        crit = d.get('success_criteria')
        if crit is not None:
            crit = criteria_mod.Criteria.from_dict(
                crit, group=name, where='%s.success_criteria' % where)
        sels = tuple(
            selectors_mod.Selector.from_dict(
                s, where='%s.selectors[%d]' % (where, i))
            for i, s in enumerate(d.get('selectors') or ()))
        return cls(name=name, critical=bool(d['critical']),
                   depends_on=tuple(dict.fromkeys(d.get('depends_on') or ())),
                   selectors=sels, success_criteria=crit,
                   wait_for_signal=bool(d.get('wait_for_signal', False)),
                   fail_fast=bool(d.get('fail_fast', False)))

    def to_dict(self):
        """The document form of the group."""
        d = {'name': self.name, 'critical': self.critical,
             'depends_on': list(self.depends_on),
             'selectors': [s.to_dict() for s in self.selectors]}
        if self.success_criteria is not None:
            d['success_criteria'] = self.success_criteria.to_dict()
        if self.wait_for_signal:
            d['wait_for_signal'] = True
        if self.fail_fast:
            d['fail_fast'] = True
        return d


@dataclasses.dataclass(frozen=True)
class Strategy:
    """A validated deployment strategy: groups in document order."""

    name: str
    groups: tuple
    metadata: dict = dataclasses.field(default=None, compare=False,
                                       hash=False, repr=False)

    def __post_init__(self):
        # A name index that is not part of the dataclass fields.
        object.__setattr__(self, '_by_name',
                           {g.name: g for g in self.groups})

    def group(self, name):
        """The :class:`Group` called ``name``."""
        try:
            return self._by_name[name]
        except KeyError:
            raise _unknown(name)

    def names(self):
        """Group names in document order."""
        return tuple(g.name for g in self.groups)

    def topological_order(self):
        """Group names, each after its dependencies.

        Kahn's algorithm; among groups that are ready at the same time the
        one that comes first in the document goes first.
        """
        index = {g.name: i for i, g in enumerate(self.groups)}
        waiting = {g.name: len(g.depends_on) for g in self.groups}
        children = {g.name: [] for g in self.groups}
        for g in self.groups:
            for dep in g.depends_on:
                children[dep].append(g.name)
        ready = [index[n] for n, count in waiting.items() if count == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            name = self.groups[heapq.heappop(ready)].name
            order.append(name)
            for child in children[name]:
                waiting[child] -= 1
                if waiting[child] == 0:
                    heapq.heappush(ready, index[child])
        return tuple(order)

    def dependents(self, name):
        """Every group that depends on ``name``, directly or not.

        :returns: a tuple in document order.
        """
        self.group(name)
        children = {g.name: [] for g in self.groups}
        for g in self.groups:
            for dep in g.depends_on:
                children[dep].append(g.name)
        found = set()
        stack = [name]
        while stack:
            for child in children[stack.pop()]:
                if child not in found:
                    found.add(child)
                    stack.append(child)
        return tuple(n for n in self.names() if n in found and n != name)

    def check_group_nodes(self, group_nodes):
        """InvalidParameterValue unless ``group_nodes`` (``{group:
        nodes}``) lists exactly the groups of the strategy."""
        unknown = sorted(set(group_nodes) - set(self.names()))
        missing = [n for n in self.names() if n not in group_nodes]
        if unknown or missing:
            raise exception.InvalidParameterValue(
                reason='group_nodes must list exactly the groups of strategy '
                '%s (unknown: %s; missing: %s)' % (
                    self.name, ', '.join(unknown) or '-',
                    ', '.join(missing) or '-'))

    def to_document(self):
        """An equivalent DeploymentStrategy document."""
        metadata = copy.deepcopy(self.metadata) if self.metadata else {}
        metadata['name'] = self.name
        return {'schema': SCHEMA_NAME, 'metadata': metadata,
                'data': {'groups': [g.to_dict() for g in self.groups]}}

    def critical_path_bound(self, durations):
        """The longest path through the DAG, weighting groups by duration.

        :param durations: ``{group: seconds}``; missing groups weigh 0.
        """
        finish = {}
        for name in self.topological_order():
            deps = self.group(name).depends_on
            finish[name] = float(durations.get(name, 0.0)) + max(
                (finish[d] for d in deps), default=0.0)
        return max(finish.values(), default=0.0)

    def serial_bound(self, durations):
        """The duration of running every group one after the other."""
        return float(sum(durations.get(n, 0.0) for n in self.names()))


# Validation -----------------------------------------------------------------

def format_path(parts):
    """``data.groups[2].critical`` from ``['data', 'groups', 2, ...]``."""
    out = ''
    for part in parts:
        if isinstance(part, int):
            out += '[%d]' % part
        else:
            out += ('.' if out else '') + str(part)
    return out or '(document)'


def _sort_key(error):
    return (tuple((0, p, '') if isinstance(p, int) else (1, 0, str(p))
                  for p in error.path),
            str(error.validator), error.message)


def _group_name(document, path):
    """The name of the group a JSON path points into, if known."""
    if len(path) >= 3 and path[0] == 'data' and path[1] == 'groups':
        try:
            name = document['data']['groups'][path[2]].get('name')
        except (AttributeError, IndexError, KeyError, TypeError):
            return None
        if isinstance(name, str) and name:
            return name
    return None


def _schema_error(document, error):
    """Turn the first jsonschema error into our exception."""
    path = list(error.path)
    group = _group_name(document, path)
    if 'node_labels' in path:
        i = path.index('node_labels')
        if len(path) > i + 1 and isinstance(path[i - 1], int):
            item_path = path[:i + 2]
            item = document
            for part in item_path:
                item = item[part]
            where = format_path(item_path)
            # parse_label names what is wrong with the item.
            with _in_group(group):
                selectors_mod.parse_label(item, where=where)
            return exception.InvalidSelector(
                reason='%s: label %r is malformed' % (where, item),
                path=where, label=item)
    if 'success_criteria' in path and error.validator in _RANGE_CHECKS:
        where = format_path(path)
        return exception.InvalidCriteria(
            group=group or '(unnamed)',
            reason='%s must be %s %s, got %r' % (
                where, {'minimum': '>=', 'maximum': '<='}.get(
                    error.validator, error.validator),
                error.validator_value, error.instance), path=where)
    if error.validator == 'required':
        missing = [f for f in error.validator_value
                   if f not in error.instance]
        where = format_path(path + missing[:1])
        reason = '%s: required field %r is missing' % (where, missing[0])
    elif error.validator == 'additionalProperties':
        known = error.schema.get('properties', {})
        extra = sorted(str(k) for k in error.instance if k not in known)
        where = format_path(path + extra[:1])
        reason = '%s: unknown key %r (allowed: %s)' % (
            where, extra[0], ', '.join(known))
    elif error.validator == 'minProperties':
        where = format_path(path)
        reason = '%s: must not be empty (give at least one of %s)' % (
            where, ', '.join(error.schema.get('properties', {})))
    elif error.validator == 'minLength':
        where = format_path(path)
        reason = '%s: must not be empty' % where
    elif error.validator == 'const':
        where = format_path(path)
        reason = '%s: must be %r, got %r' % (
            where, error.validator_value, error.instance)
    else:
        where = format_path(path)
        reason = '%s: %s' % (where, error.message)
    if group:
        reason += ' (group %s)' % group
    return exception.StrategySchemaError(reason=reason, path=where)


@contextlib.contextmanager
def _in_group(name):
    """Add the group name to the InvalidSelector raised inside."""
    try:
        yield
    except exception.InvalidSelector as e:
        if not name:
            raise
        kwargs = dict(e.kwargs)
        kwargs['reason'] = '%s (group %s)' % (kwargs.get('reason'), name)
        raise exception.InvalidSelector(**kwargs) from None


def _check_depth(document, limit=MAX_DEPTH):
    """StrategySchemaError naming where ``document`` nests too deep.

    Iterative, so that it works at any depth.
    """
    stack = [(document, 0, None)]
    while stack:
        value, depth, trail = stack.pop()
        if depth > limit:
            path = []
            while trail is not None:
                trail, part = trail
                path.append(part)
            where = format_path(reversed(path[-limit:]))
            raise exception.StrategySchemaError(
                reason='%s: nested deeper than %d levels' % (where, limit),
                path=where)
        if isinstance(value, dict):
            items = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        stack.extend((child, depth + 1, (trail, key))
                     for key, child in items)


#: Dependency cycles, in linear time (see graph.find_cycles).
find_cycles = graph.find_cycles


def _check_limits(document):
    """LimitExceeded for a document past the limits, before its schema
    is checked (counts only; types are the schema's business)."""
    data = document.get('data')
    groups = data.get('groups') if isinstance(data, dict) else None
    if not isinstance(groups, list):
        return
    if len(groups) > limits.MAX_GROUPS:
        raise limits.exceeded('groups', limits.MAX_GROUPS, 'data.groups')
    values = pairs = 0
    for i, group in enumerate(groups):
        if isinstance(group, dict):
            more, more_pairs = selectors_mod.check_limits(
                group.get('selectors'), 'data.groups[%d].selectors' % i)
            values += more
            pairs += more_pairs
    if values > limits.MAX_STRATEGY_SELECTOR_VALUES:
        raise limits.exceeded('selector values in all groups together',
                              limits.MAX_STRATEGY_SELECTOR_VALUES,
                              'data.groups')
    if pairs > limits.MAX_STRATEGY_LABEL_PAIRS:
        raise limits.exceeded('label pairs in all groups together',
                              limits.MAX_STRATEGY_LABEL_PAIRS, 'data.groups')


def parse(document):
    """Validate a DeploymentStrategy document and build its model.

    :param document: the document as loaded from JSON or YAML.
    :returns: a :class:`Strategy`.
    :raises: StrategySchemaError, LimitExceeded, InvalidCriteria,
        InvalidSelector, DuplicateGroupName, UnknownDependency,
        SelfDependency, DependencyCycle or InvalidName, each naming the
        offender.
    """
    if not isinstance(document, dict):
        raise exception.StrategySchemaError(
            reason='(document): must be a map, got %s'
            % type(document).__name__, path='(document)')
    _check_depth(document)
    _check_limits(document)
    # The first in document order among the first 1,000 (a document of
    # 100,000 wrong values would be seconds of work for one message).
    errors = sorted(itertools.islice(_VALIDATOR.iter_errors(document), 1000),
                    key=_sort_key)
    if errors:
        raise _schema_error(document, errors[0])
    groups = []
    for i, group in enumerate(document['data']['groups']):
        with _in_group(group['name']):
            groups.append(Group.from_dict(group,
                                          where='data.groups[%d]' % i))
    groups = tuple(groups)
    seen = set()
    for group in groups:
        if group.name in seen:
            raise exception.DuplicateGroupName(name=group.name)
        seen.add(group.name)
    for group in groups:
        for dep in group.depends_on:
            if dep not in seen:
                raise exception.UnknownDependency(group=group.name,
                                                  dependency=dep)
    for group in groups:
        if group.name in group.depends_on:
            raise exception.SelfDependency(group=group.name)
    cycles = find_cycles({g.name: g.depends_on for g in groups})
    if cycles:
        raise exception.DependencyCycle(
            groups='; '.join(', '.join(c) for c in cycles), cycles=cycles)
    limits.check_name(document['metadata']['name'],
                      'deployment strategy name')
    return Strategy(name=document['metadata']['name'], groups=groups,
                    metadata=copy.deepcopy(document['metadata']))
