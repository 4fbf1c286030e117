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
"""Multi-key --sort, Deleted messages and plain -f value cells."""

from osc_lib import exceptions

from baremetal_orch.osc.v1 import node
from baremetal_orch.tests import base
from baremetal_orch.tests.unit.osc import fakes

NODES = [{'uuid': 'u3', 'name': None, 'rack_name': 'r1'},
         {'uuid': 'u1', 'name': 'b', 'rack_name': 'r1'},
         {'uuid': 'u2', 'name': 'a', 'rack_name': 'r2'}]


class TestSort(base.TestCase):

    def run_list(self, *argv):
        api = fakes.FakeClient({('GET', 'nodes'): {'nodes': list(NODES)}})
        _status, app, api = fakes.run(
            node.ListNode, list(argv) + ['-f', 'value', '-c', 'UUID'], api)
        return app.stdout.getvalue().split(), api.calls

    def test_first_key_to_the_api_all_keys_here(self):
        order, calls = self.run_list('--sort', 'rack_name:desc,uuid')
        self.assertEqual({'sort_key': 'rack_name', 'sort_dir': 'desc'},
                         calls[0][3])
        self.assertEqual(['u2', 'u1', 'u3'], order)

    def test_a_null_value_sorts_as_text(self):
        order, _calls = self.run_list('--sort', 'name:asc,uuid:desc')
        self.assertEqual(['u3', 'u2', 'u1'], order)

    def test_one_key_is_the_apis_order(self):
        order, calls = self.run_list('--sort', 'name:desc')
        self.assertEqual({'sort_key': 'name', 'sort_dir': 'desc'},
                         calls[0][3])
        self.assertEqual(['u3', 'u1', 'u2'], order)

    def test_invalid_sort_is_refused_before_any_request(self):
        for value, message in [('name:up', "'up' is not a sort direction"),
                               ('name,', 'an empty sort key'),
                               (':desc', 'an empty sort key')]:
            api = fakes.FakeClient()
            e = self.assertRaises(exceptions.CommandError, fakes.run,
                                  node.ListNode, ['--sort', value], api)
            self.assertIn(message, str(e))
            self.assertEqual([], api.calls)


class TestOutput(base.TestCase):

    def test_delete_prints_each_deletion(self):
        _status, app, _api = fakes.run(node.DeleteNode, ['n1', 'n2'])
        self.assertEqual('Deleted node n1\nDeleted node n2\n',
                         app.stdout.getvalue())

    def test_value_cells_are_plain_text(self):
        doc = {'uuid': 'u1', 'name': 'n1', 'tags': ['a', 'b'],
               'labels': {'role': 'ctl'}, 'extra': {'x': [1, 2]}}
        api = fakes.FakeClient({('GET', 'nodes/n1'): doc})
        _status, app, _api = fakes.run(
            node.ShowNode, ['n1', '-f', 'value', '-c', 'tags', '-c',
                            'labels', '-c', 'extra'], api)
        self.assertEqual(['a, b', "role='ctl'", '{"x": [1, 2]}'],
                         app.stdout.getvalue().splitlines())

    def test_csv_cells_are_plain_text(self):
        api = fakes.FakeClient({('GET', 'nodes'): {'nodes': [
            {'uuid': 'u1', 'name': 'n1', 'tags': ['a', 'b']}]}})
        _status, app, _api = fakes.run(
            node.ListNode, ['--fields', 'name', 'tags', '-f', 'csv'], api)
        self.assertEqual(['"name","tags"', '"n1","a, b"'],
                         app.stdout.getvalue().splitlines())
