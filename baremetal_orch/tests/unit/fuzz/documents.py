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
"""hypothesis strategies of DeploymentStrategy documents.

Near-valid documents (few names, so duplicates, dangling and circular
dependencies are frequent; criteria around their ranges; labels of every
shape), valid ones (unique names, dependencies on earlier groups only) and
one random change at a random place of a document.
"""

import copy

from hypothesis import strategies as st

from baremetal_orch.common import limits
from baremetal_orch.deployment import criteria
from baremetal_orch.deployment import strategy
from baremetal_orch.tests.unit.fuzz import base as fuzz

# Pieces of a document --------------------------------------------------

#: Few names, so that duplicates and dangling dependencies are frequent.
GROUP_NAMES = st.one_of(
    st.sampled_from(['ntp', 'control', 'compute', 'storage', 'a', 'b',
                     'é', 'x' * 300, ' ', 'a b', '0']),
    st.text(min_size=1, max_size=6))

LABEL_KEYS = st.one_of(
    st.sampled_from(['role', 'kubernetes.io/hostname', 'example.com/zone',
                     # Valid, and longer than 255 characters.
                     '.'.join(['a' * 60] * 4) + '/' + 'b' * 63,
                     'a', 'a' * 63, 'a' * 64, 'UPPER.example/x', '-bad',
                     'bad-', 'a/b/c', '/x', 'p' * 254 + '/x', 'ä', '']),
    st.from_regex(r'\A[a-z0-9]([a-z0-9.-]{0,4}/)?[A-Za-z0-9_.-]{0,6}\Z'),
    fuzz.TEXT)
LABEL_VALUES = st.one_of(
    st.sampled_from(['', 'true', 'v1', 'a' * 63, 'a' * 64, '-x', 'é',
                     'a b']),
    st.from_regex(r'\A[A-Za-z0-9]([A-Za-z0-9_.-]{0,6}[A-Za-z0-9])?\Z'),
    fuzz.TEXT)
LABELS = st.one_of(
    st.builds(lambda k, v, sp: '%s:%s%s' % (k, sp, v), LABEL_KEYS,
              LABEL_VALUES, st.sampled_from(['', ' ', ':'])),
    st.dictionaries(LABEL_KEYS, LABEL_VALUES, max_size=3),
    fuzz.SCALARS)
STRING_LISTS = st.one_of(st.lists(fuzz.TEXT, max_size=4),
                         st.lists(GROUP_NAMES, max_size=3), fuzz.SCALARS)


def _optional(**fields):
    """A map with any subset of these fields."""
    return st.fixed_dictionaries({}, optional=fields)


SELECTORS = _optional(node_names=STRING_LISTS, node_tags=STRING_LISTS,
                      rack_names=STRING_LISTS,
                      node_labels=st.one_of(st.lists(LABELS, max_size=3),
                                            fuzz.SCALARS))
PERCENTS = st.one_of(st.integers(-5, 105), st.floats(-1, 101),
                     fuzz.NUMBERS, fuzz.SCALARS)
COUNTS = st.one_of(st.integers(-3, 10), st.floats(-1, 10),
                   fuzz.NUMBERS, fuzz.SCALARS)
CRITERIA = st.one_of(
    _optional(**{criteria.PERCENT: PERCENTS, criteria.MINIMUM: COUNTS,
                 criteria.MAXIMUM_FAILED: COUNTS}),
    fuzz.SCALARS)


def _group(names):
    return st.fixed_dictionaries(
        {'name': names, 'critical': st.one_of(st.booleans(), fuzz.SCALARS),
         'depends_on': st.one_of(st.lists(names, max_size=3),
                                 fuzz.SCALARS),
         'selectors': st.one_of(st.lists(SELECTORS, max_size=3),
                                fuzz.SCALARS)},
        optional={'success_criteria': CRITERIA,
                  'wait_for_signal': st.one_of(st.booleans(),
                                               fuzz.SCALARS)})


METADATA = st.fixed_dictionaries(
    {'name': st.one_of(GROUP_NAMES, fuzz.SCALARS)},
    optional={'schema': fuzz.TEXT, 'layeringDefinition': fuzz.JSON,
              'storagePolicy': fuzz.TEXT, 'labels': fuzz.JSON})

NEAR_VALID = st.fixed_dictionaries({
    'schema': st.one_of(st.just(strategy.SCHEMA_NAME), fuzz.TEXT),
    'metadata': METADATA,
    'data': st.fixed_dictionaries(
        {'groups': st.lists(_group(GROUP_NAMES), max_size=6)}),
})


def paths(doc, prefix=()):
    """Every path into ``doc`` (the document itself included)."""
    yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from paths(value, prefix + (key,))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from paths(value, prefix + (i,))


def mutate(data, doc, last=True):
    """One random change at a random place of ``doc`` (a copy).

    Deep nesting only as the ``last`` change: copying and walking a deep
    document would hit the recursion limit in this test, not the parser.
    """
    doc = copy.deepcopy(doc)
    path = data.draw(st.sampled_from(list(paths(doc))), label='path')
    how = data.draw(st.sampled_from(
        ['replace', 'delete', 'extra_key', 'wrap', 'duplicate', 'self_dep']
        + (['deep'] if last else [])), label='how')
    if not path:
        return data.draw(fuzz.JSON) if how == 'replace' else [doc]
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    value = parent[last]
    if how == 'replace':
        parent[last] = data.draw(fuzz.JSON, label='value')
    elif how == 'delete':
        del parent[last]
    elif how == 'extra_key' and isinstance(value, dict):
        value[data.draw(fuzz.TEXT, label='key')] = data.draw(fuzz.JSON)
    elif how == 'wrap':
        parent[last] = [value]
    elif how == 'duplicate' and isinstance(parent, list):
        parent.insert(last, copy.deepcopy(value))
    elif how == 'deep':
        parent[last] = fuzz.deep(value, data.draw(fuzz.DEPTHS), data.draw(
            st.sampled_from(['list', 'map'])))
    elif (how == 'self_dep' and isinstance(value, dict)
            and isinstance(value.get('depends_on'), list)):
        value['depends_on'].append(value.get('name'))
    return doc


# Valid documents ---------------------------------------------------------

_VALID_KEYS = st.from_regex(
    r'\A([a-z0-9]([a-z0-9-]{0,3}[a-z0-9])?(\.[a-z0-9]{1,3})?/)?'
    r'[A-Za-z0-9]([A-Za-z0-9_.-]{0,5}[A-Za-z0-9])?\Z')
_VALID_VALUES = st.from_regex(
    r'\A[A-Za-z0-9]([A-Za-z0-9_.-]{0,5}[A-Za-z0-9])?\Z')
VALID_SELECTOR = _optional(
    node_names=st.lists(st.text(min_size=1, max_size=5), max_size=3),
    node_tags=st.lists(st.text(min_size=1, max_size=5), max_size=3),
    rack_names=st.lists(st.text(min_size=1, max_size=5), max_size=3),
    node_labels=st.lists(st.one_of(
        st.builds('{}:{}'.format, _VALID_KEYS, _VALID_VALUES),
        st.builds(lambda k, v: '%s : %s' % (k, v), _VALID_KEYS,
                  _VALID_VALUES),
        st.dictionaries(_VALID_KEYS, st.one_of(_VALID_VALUES, st.just('')),
                        min_size=1, max_size=3)), max_size=3))
_VALID_CRITERIA = _optional(**{
    criteria.PERCENT: st.one_of(st.integers(0, 100),
                                st.floats(0, 100)),
    criteria.MINIMUM: st.one_of(st.integers(0, 10 ** 30), st.just(2.0),
                                st.sampled_from([2 ** 64, 10 ** 309])),
    criteria.MAXIMUM_FAILED: st.one_of(st.integers(0, 1000),
                                       st.just(10 ** 400))}).filter(bool)


#: Strategy names by the rule of resource names (common/limits.py).
VALID_NAMES = st.from_regex(limits.NAME_PATTERN, fullmatch=True).filter(
    lambda n: len(n) <= limits.NAME_MAX_LENGTH)


@st.composite
def valid_documents(draw):
    """A valid document: unique names, dependencies on earlier groups."""
    names = draw(st.lists(st.text(min_size=1, max_size=8), unique=True,
                          max_size=8))
    groups = []
    for i, name in enumerate(names):
        group = {'name': name, 'critical': draw(st.booleans()),
                 'depends_on': draw(st.lists(st.sampled_from(names[:i]),
                                             max_size=3)) if i else [],
                 'selectors': draw(st.lists(VALID_SELECTOR, max_size=3))}
        if draw(st.booleans()):
            group['success_criteria'] = draw(_VALID_CRITERIA)
        if draw(st.booleans()):
            group['wait_for_signal'] = draw(st.booleans())
        groups.append(group)
    order = draw(st.permutations(range(len(groups))))
    metadata = draw(st.fixed_dictionaries(
        {'name': st.one_of(VALID_NAMES, st.sampled_from(['n' * 255]))},
        optional={'layeringDefinition': st.dictionaries(
            st.text(max_size=5), st.text(max_size=5), max_size=2),
            'storagePolicy': st.text(max_size=5)}))
    return {'schema': strategy.SCHEMA_NAME, 'metadata': metadata,
            'data': {'groups': [groups[i] for i in order]}}


# YAML-only values -----------------------------------------------------------

YAML_VALUES = st.one_of(
    st.dates(), st.datetimes(), st.binary(max_size=4),
    st.sets(st.integers(0, 3), max_size=2), fuzz.SCALARS)
