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
"""Fuzzing the DeploymentStrategy parser (R3).

Whatever the document — near-valid with one thing wrong, garbage, YAML of
any kind — :func:`strategy.parse` returns a Strategy or raises a
BaremetalOrchException with status 400, never anything else; a Strategy
round-trips through ``to_document``/``parse`` (also through JSON), and its
topological order respects every dependency.
"""

import copy
import json

import hypothesis
from hypothesis import strategies as st
import yaml

from baremetal_orch.common import exception
from baremetal_orch.deployment import strategy
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.fuzz import base as fuzz
from baremetal_orch.tests.unit.fuzz import documents


class TestStrategyFuzz(fuzz.FuzzMixin, base.TestCase):

    def check(self, document):
        """The property: a Strategy or a 400 from our hierarchy."""
        self.case()
        try:
            result = strategy.parse(document)
        except exception.BaremetalOrchException as e:
            self.assertEqual(400, e.status, e)
            self.assertIsInstance(e, exception.Invalid)
            self.assertTrue(e.code.startswith('baremetal_orch.'), e.code)
            self.assertTrue(str(e))
            return e
        self.assertIsInstance(result, strategy.Strategy)
        self.assertRoundTrips(result)
        return result

    def assertRoundTrips(self, result):
        document = result.to_document()
        again = strategy.parse(document)
        self.assertEqual(result, again)
        self.assertEqual(document, again.to_document())
        order = result.topological_order()
        self.assertEqual(sorted(result.names()), sorted(order))
        for name in order:
            for dep in result.group(name).depends_on:
                self.assertLess(order.index(dep), order.index(name))

    @fuzz.settings()
    @hypothesis.given(document=fuzz.JSON)
    def test_garbage(self, document):
        self.check(document)

    @fuzz.settings()
    @hypothesis.given(document=documents.NEAR_VALID)
    def test_near_valid(self, document):
        self.check(document)

    @fuzz.settings()
    @hypothesis.given(document=documents.valid_documents(), data=st.data())
    def test_one_mutation(self, document, data):
        count = data.draw(st.integers(1, 3), label='mutations')
        for i in range(count):
            document = documents.mutate(data, document,
                                        last=i == count - 1)
        self.check(document)

    @fuzz.settings()
    @hypothesis.given(document=documents.valid_documents())
    def test_valid_documents_parse_and_round_trip(self, document):
        result = self.check(document)
        self.assertIsInstance(result, strategy.Strategy)
        self.assertEqual(document['metadata']['name'], result.name)
        self.assertEqual([g['name'] for g in document['data']['groups']],
                         list(result.names()))
        # Through JSON as the API stores it.
        self.assertEqual(result, strategy.parse(json.loads(json.dumps(
            result.to_document()))))

    @fuzz.settings()
    @hypothesis.given(document=documents.valid_documents(), data=st.data())
    def test_cycles_are_named(self, document, data):
        groups = document['data']['groups']
        hypothesis.assume(groups)
        first = data.draw(st.integers(0, len(groups) - 1))
        second = data.draw(st.integers(0, len(groups) - 1))
        a, b = groups[first], groups[second]
        a['depends_on'] = a['depends_on'] + [b['name']]
        b['depends_on'] = b['depends_on'] + [a['name']]
        error = self.check(document)
        if first == second:
            self.assertIsInstance(error, exception.SelfDependency)
        else:
            # A self-dependency elsewhere is impossible: the document was
            # a DAG, and now has exactly this cycle (and maybe longer ones
            # through it).
            self.assertIsInstance(error, exception.DependencyCycle)
            self.assertTrue(any(a['name'] in c and b['name'] in c
                                for c in error.kwargs['cycles']))

    @fuzz.settings()
    @hypothesis.given(text=st.one_of(
        st.text(max_size=200),
        st.builds(lambda doc: yaml.safe_dump(doc), documents.NEAR_VALID)))
    def test_yaml_text(self, text):
        try:
            document = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError):
            document = text
        self.check(document)

    @fuzz.settings()
    @hypothesis.given(document=documents.valid_documents(), data=st.data())
    def test_yaml_only_values(self, document, data):
        # Dates, bytes and sets are legal YAML but not JSON.
        document = copy.deepcopy(document)
        paths = [p for p in documents.paths(document) if p]
        hypothesis.assume(paths)
        path = data.draw(st.sampled_from(paths))
        parent = document
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] = data.draw(documents.YAML_VALUES)
        loaded = yaml.safe_load(yaml.dump(document))
        self.check(loaded)
