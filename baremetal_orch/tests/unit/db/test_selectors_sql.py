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
"""resolve_selectors in SQL equals the reference semantics of
deployment/selectors.py, in one query."""

import contextlib

import hypothesis
from hypothesis import strategies as st
from oslo_utils import uuidutils
import sqlalchemy as sa

from baremetal_orch.db import api as dbapi
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.db.sqlalchemy import models
from baremetal_orch.deployment import selectors
from baremetal_orch.tests import base

NAMES = ['n%d' % i for i in range(8)]
TAGS = ['control', 'compute', 'storage', 'ntp']
RACKS = ['rack01', 'rack02', 'rack03']
LABEL_KEYS = ['role', 'zone', 'example.com/tier']
LABEL_VALUES = ['a', 'b', 'c']

#: A fixed site for the table-driven cases.
SITE = [
    {'name': 'ctl01', 'rack_name': 'rack03', 'tags': ['control'],
     'labels': {'role': 'control', 'zone': 'a'}},
    {'name': 'ctl02', 'rack_name': 'rack03', 'tags': ['control', 'ntp'],
     'labels': {'role': 'control', 'zone': 'b'}},
    {'name': 'cmp01', 'rack_name': 'rack01', 'tags': ['compute'],
     'labels': {'role': 'compute', 'zone': 'a'}},
    {'name': 'cmp02', 'rack_name': 'rack02', 'tags': ['compute'],
     'labels': {'role': 'compute'}},
    {'name': 'mon01', 'rack_name': 'rack01', 'tags': ['monitoring'],
     'labels': {}},
    {'name': 'bare', 'rack_name': None, 'tags': [], 'labels': {}},
]

CASES = [
    ('empty_list', [], ['bare', 'cmp01', 'cmp02', 'ctl01', 'ctl02',
                        'mon01']),
    ('one_empty_selector', [{}], ['bare', 'cmp01', 'cmp02', 'ctl01',
                                  'ctl02', 'mon01']),
    ('empty_criteria_lists', [{'node_names': [], 'node_tags': [],
                               'node_labels': [], 'rack_names': []}],
     ['bare', 'cmp01', 'cmp02', 'ctl01', 'ctl02', 'mon01']),
    ('empty_selector_beside_others', [{'node_names': ['ctl01']}, {}],
     ['bare', 'cmp01', 'cmp02', 'ctl01', 'ctl02', 'mon01']),
    ('tags_or', [{'node_tags': ['ntp', 'monitoring']}], ['ctl02', 'mon01']),
    ('names', [{'node_names': ['ctl01', 'nope']}], ['ctl01']),
    ('racks_or', [{'rack_names': ['rack01', 'rack02']}],
     ['cmp01', 'cmp02', 'mon01']),
    ('labels_map', [{'node_labels': [{'zone': 'a'}]}], ['cmp01', 'ctl01']),
    ('labels_string', [{'node_labels': ['zone:b']}], ['ctl02']),
    ('labels_string_spaces', [{'node_labels': ['zone : b']}], ['ctl02']),
    ('labels_or_mixed', [{'node_labels': ['zone:b', {'role': 'compute'}]}],
     ['cmp01', 'cmp02', 'ctl02']),
    ('labels_multikey_map_is_or', [{'node_labels': [
        {'zone': 'b', 'role': 'compute'}]}], ['cmp01', 'cmp02', 'ctl02']),
    ('label_needs_exact_value', [{'node_labels': ['role:contr']}], []),
    ('and_across_criteria', [{'node_tags': ['control', 'compute'],
                              'rack_names': ['rack03']}],
     ['ctl01', 'ctl02']),
    ('and_tags_labels', [{'node_tags': ['control'],
                          'node_labels': ['zone:a']}], ['ctl01']),
    ('and_matches_nothing', [{'node_tags': ['compute'],
                              'rack_names': ['rack03']}], []),
    ('union', [{'node_names': ['mon01']},
               {'node_tags': ['compute'], 'rack_names': ['rack02']}],
     ['cmp02', 'mon01']),
    ('union_overlapping', [{'node_tags': ['control']},
                           {'rack_names': ['rack03']}],
     ['ctl01', 'ctl02']),
    ('unknown_values', [{'node_tags': ['nope']}], []),
]


@contextlib.contextmanager
def count_selects(engine):
    """Count the SELECT statements sent on ``engine``."""
    seen = []

    def before(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith('SELECT'):
            seen.append(statement)

    sa.event.listen(engine, 'before_cursor_execute', before)
    try:
        yield seen
    finally:
        sa.event.remove(engine, 'before_cursor_execute', before)


class TestTable(base.DbTestCase):
    """The table above, on one database (one migration for all cases)."""

    def test_resolve(self):
        for node in SITE:
            self.create_node(**node)
        for name, sels, expected in CASES:
            sels = selectors.coerce(sels)
            self.assertEqual(expected, sorted(selectors.select(sels, SITE)),
                             '%s: the reference disagrees' % name)
            self.assertEqual(expected, dbapi.resolve_selectors(sels), name)


class TestOneQuery(base.DbTestCase):

    def test_one_select_whatever_the_size(self):
        for i in range(30):
            self.create_node(name='node%02d' % i, tags=[TAGS[i % 4]],
                             labels={'zone': LABEL_VALUES[i % 3]},
                             rack_name=RACKS[i % 3])
        sels = selectors.coerce([
            {'node_tags': ['control', 'compute'], 'rack_names': ['rack01']},
            {'node_labels': ['zone:a', {'zone': 'b'}]},
            {'node_names': ['node01', 'node02']}])
        engine = dbapi.get_engine()
        with count_selects(engine) as seen:
            names = dbapi.resolve_selectors(sels)
        self.assertEqual(1, len(seen), seen)
        self.assertEqual(sorted(selectors.select(sels, [
            {'name': n.name, 'tags': [t.tag for t in n.tags],
             'labels': {lb.key: lb.value for lb in n.labels},
             'rack_name': n.rack_name} for n in dbapi.list_nodes()])),
            names)
        with count_selects(engine) as seen:
            dbapi.resolve_selectors([])
        self.assertEqual(1, len(seen), seen)

    def test_restrict_names(self):
        for node in SITE:
            self.create_node(**node)
        sels = selectors.coerce([{'node_tags': ['control', 'compute']}])
        self.assertEqual(['cmp01', 'ctl02'], dbapi.resolve_selectors(
            sels, restrict_names=['ctl02', 'cmp01', 'mon01']))
        self.assertEqual([], dbapi.resolve_selectors(sels,
                                                     restrict_names=[]))

    def test_unnamed_nodes_are_never_selected(self):
        self.create_node(name=None, tags=['control'])
        self.create_node(name='named', tags=['control'])
        self.assertEqual(['named'], dbapi.resolve_selectors([]))


# Generated data -------------------------------------------------------------

_label = st.one_of(
    st.dictionaries(st.sampled_from(LABEL_KEYS),
                    st.sampled_from(LABEL_VALUES), min_size=1, max_size=2),
    st.builds('{}:{}'.format, st.sampled_from(LABEL_KEYS),
              st.sampled_from(LABEL_VALUES)))

_selector = st.fixed_dictionaries({}, optional={
    'node_names': st.lists(st.sampled_from(NAMES), max_size=3),
    'node_tags': st.lists(st.sampled_from(TAGS), max_size=3),
    'rack_names': st.lists(st.sampled_from(RACKS), max_size=2),
    'node_labels': st.lists(_label, max_size=3),
})

_node = st.fixed_dictionaries({
    'rack_name': st.one_of(st.none(), st.sampled_from(RACKS)),
    'tags': st.lists(st.sampled_from(TAGS), max_size=3, unique=True),
    'labels': st.dictionaries(st.sampled_from(LABEL_KEYS),
                              st.sampled_from(LABEL_VALUES), max_size=3),
})

_site = st.lists(_node, min_size=0, max_size=len(NAMES)).map(
    lambda nodes: [dict(n, name=NAMES[i]) for i, n in enumerate(nodes)])


class TestGenerated(base.DbTestCase):
    """Random sites and selector lists: SQL == reference, always."""

    def setUp(self):
        super().setUp()
        # Many small transactions: no fsync per commit on this throw-away
        # database (every connection from now on).
        engine = dbapi.get_engine()

        def no_sync(dbapi_connection, record):
            dbapi_connection.execute('PRAGMA synchronous=OFF')
        sa.event.listen(engine, 'connect', no_sync)
        engine.dispose()

    @hypothesis.settings(max_examples=50, deadline=None, database=None,
                         suppress_health_check=list(
                             hypothesis.HealthCheck))
    @hypothesis.given(site=_site,
                      sels=st.lists(_selector, min_size=0, max_size=3))
    def test_sql_equals_reference(self, site, sels):
        # One transaction per example: the site goes in and out in bulk.
        with sqla_api.writer() as session:
            for node in site:
                row = models.Node(uuid=uuidutils.generate_uuid(),
                                  name=node['name'], driver='fake',
                                  provision_state='enroll',
                                  rack_name=node['rack_name'],
                                  maintenance=False, console_enabled=False)
                row.tags = [models.NodeTag(tag=t) for t in node['tags']]
                row.labels = [models.NodeLabel(key=k, value=v)
                              for k, v in node['labels'].items()]
                session.add(row)
        try:
            coerced = selectors.coerce(sels)
            expected = sorted(selectors.select(coerced, site))
            with count_selects(dbapi.get_engine()) as seen:
                got = dbapi.resolve_selectors(coerced)
            self.assertEqual(expected, got,
                             'site %r selectors %r' % (site, sels))
            self.assertEqual(1, len(seen))
        finally:
            with sqla_api.writer() as session:
                session.execute(sa.delete(models.NodeTag))
                session.execute(sa.delete(models.NodeLabel))
                session.execute(sa.delete(models.Node))
