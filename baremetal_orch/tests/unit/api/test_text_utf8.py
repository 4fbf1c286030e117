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
"""Request bodies are UTF-8 text: a lone surrogate, raw (``ED A0 80``) or
escaped (``\\ud800``), or a body in another encoding is a 400 naming the
field, and nothing is stored.

Before: raw bytes gave 500 (DBInvalidUnicodeParameter) in tags,
rack_name, the node filter, a chassis description and a maintenance
reason, and were stored as-is in ``extra`` and a strategy's group name.
"""

import json

from baremetal_orch.db import api as dbapi
from baremetal_orch.tests import base

#: A lone surrogate (U+D800) as UTF-8 would encode it, were it allowed.
RAW = b'\xed\xa0\x80'
ESCAPED = b'\\ud800'


def strategy_json(group_name):
    return (b'{"schema": "shipyard/DeploymentStrategy/v1", '
            b'"metadata": {"name": "s1"}, "data": {"groups": [{"name": "'
            + group_name + b'", "critical": true, "depends_on": [], '
            b'"selectors": []}]}}')


def strategy_yaml(group_name):
    return (b'schema: shipyard/DeploymentStrategy/v1\n'
            b'metadata: {name: s1}\n'
            b'data:\n  groups:\n  - name: ' + group_name + b'\n'
            b'    critical: true\n    depends_on: []\n    selectors: []\n')


class Utf8BodyTestCase(base.ApiTestCase):

    def setUp(self):
        super().setUp()
        self.create_node(name='n1')

    def refused(self, method, path, body, field, content_type=None):
        resp = getattr(self, method)(path, body, content_type=content_type)
        error = self.assertError(resp, 400, 'baremetal_orch.invalid_parameter')
        self.assertIn(field, error['detail'])
        self.assertIn('not valid Unicode', error['detail'])
        return error

    def cases(self, bad):
        """(method, path, body, field named, content type)."""
        return [
            ('post', '/v1/nodes', b'{"driver": "fake", "name": "n2", '
             b'"tags": ["a", "x' + bad + b'"]}', 'tags[1]', None),
            ('post', '/v1/nodes', b'{"driver": "fake", "name": "n2", '
             b'"rack_name": "r' + bad + b'"}', 'rack_name', None),
            ('post', '/v1/nodes', b'{"driver": "fake", "name": "n2", '
             b'"extra": {"k": "' + bad + b'"}}', 'extra.k', None),
            ('post', '/v1/nodes', b'{"driver": "fake", "name": "n2", '
             b'"extra": {"' + bad + b'": 1}}', 'a key of extra', None),
            ('patch', '/v1/nodes/n1', b'[{"op": "add", "path": "/extra/k", '
             b'"value": "' + bad + b'"}]', '[0].value', None),
            ('patch', '/v1/nodes/n1', b'[{"op": "add", "path": "/tags/-", '
             b'"value": "' + bad + b'"}]', '[0].value', None),
            ('post', '/v1/nodes/filter', b'{"selectors": [{"node_tags": ["'
             + bad + b'"]}]}', 'selectors[0].node_tags[0]', None),
            ('post', '/v1/chassis', b'{"description": "d' + bad + b'"}',
             'description', None),
            ('put', '/v1/nodes/n1/maintenance', b'{"reason": "' + bad
             + b'"}', 'reason', None),
            ('post', '/v1/deployment_strategies', strategy_json(bad),
             'data.groups[0].name', None),
            ('post', '/v1/deployment_strategies/validate',
             strategy_json(bad), 'data.groups[0].name', None),
        ]

    def assert_nothing_stored(self):
        node = dbapi.get_node('n1')
        self.assertEqual([], [t.tag for t in node.tags])
        self.assertEqual({}, node.extra or {})
        self.assertFalse(node.maintenance)
        self.assertEqual(['n1'], [n['name'] for n in self.get(
            '/v1/nodes', status=200).json['nodes']])
        self.assertEqual([], self.get('/v1/chassis',
                                      status=200).json['chassis'])
        self.assertEqual([], self.get(
            '/v1/deployment_strategies',
            status=200).json['deployment_strategies'])

    def test_raw_surrogate_bytes(self):
        for method, path, body, field, ctype in self.cases(RAW):
            with self.subTest(path=path, field=field):
                self.refused(method, path, body, field, ctype)
        self.assert_nothing_stored()

    def test_escaped_surrogate(self):
        for method, path, body, field, ctype in self.cases(ESCAPED):
            with self.subTest(path=path, field=field):
                self.refused(method, path, body, field, ctype)
        self.assert_nothing_stored()

    def test_yaml_strategy(self):
        escaped = strategy_yaml(b'"g' + ESCAPED + b'"')
        for body in (strategy_yaml(RAW), escaped):
            for path in ('/v1/deployment_strategies',
                         '/v1/deployment_strategies/validate'):
                with self.subTest(body=body, path=path):
                    resp = self.post(path, body,
                                     content_type='application/yaml')
                    error = self.assertError(resp, 400)
                    self.assertIn('Unicode', error['detail'])
                    if RAW in body:
                        self.assertIn('data.groups[0].name', error['detail'])
        self.assert_nothing_stored()

    def test_not_utf8(self):
        # UTF-16 (JSON's detection took it before) and Latin-1.
        bodies = [json.dumps({'driver': 'fake', 'name': 'n2',
                              'rack_name': 'r'}).encode('utf-16'),
                  '{"driver": "fake", "name": "n2", "rack_name": "\ud800"}'
                  .encode('utf-16-le', 'surrogatepass'),
                  b'{"driver": "fake", "name": "n2", "rack_name": "\xe9"}']
        for body in bodies:
            with self.subTest(body=body):
                resp = self.post('/v1/nodes', body)
                error = self.assertError(resp, 400)
                self.assertNotIn('Internal', error['title'])
        self.assert_nothing_stored()

    def test_valid_text_still_stored(self):
        # UTF-8 text, astral characters and surrogate pairs are fine.
        body = ('{"driver": "fake", "name": "n2", "rack_name": "r\u00e9", '
                '"tags": ["\U0001f600", "b\\ud83d\\ude00"]}').encode()
        resp = self.post('/v1/nodes', body, status=201)
        self.assertEqual('r\u00e9', resp.json['rack_name'])
        self.assertEqual(sorted(["\U0001f600", "b\U0001f600"]),
                         sorted(resp.json["tags"]))
        resp = self.post('/v1/deployment_strategies',
                         strategy_yaml('gr\u00fcn'.encode()),
                         content_type='application/yaml', status=201)
