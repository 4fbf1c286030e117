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
"""The route table, the API reference and the controllers agree, and every
405 names in ``Allow`` exactly the methods of its path."""

import glob
import os
import re

from baremetal_orch.api import routes
from baremetal_orch.tests import base

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))))
METHODS = ('GET', 'POST', 'PUT', 'PATCH', 'DELETE')
#: A value for each path parameter (none of them exists: a served method
#: answers 404 or 400, an unserved one 405).
VALUE = '8a1f9d3c-3b1e-4f7a-9a55-0c2d7e6b4f10'


def table():
    return {(method, template) for template, served in routes.ROUTES
            for method in served.split()}


class TestRouteTable(base.TestCase):

    def test_the_api_reference_lists_the_same_routes(self):
        documented = set()
        pattern = re.compile(r'^\.\. rest_method:: (\S+) (\S+)$')
        for path in glob.glob(os.path.join(ROOT, 'api-ref', 'source',
                                           '*.inc')):
            with open(path) as f:
                for line in f:
                    match = pattern.match(line.strip())
                    if match:
                        documented.add(match.groups())
        self.assertEqual(set(), documented ^ table())

    def test_allowed(self):
        for path, expected in (
                ('/v1/nodes', ['GET', 'HEAD', 'POST']),
                ('/v1/nodes/', ['GET', 'HEAD', 'POST']),
                ('/v1/nodes/n1', ['DELETE', 'GET', 'HEAD', 'PATCH']),
                ('/v1/nodes/filter', ['POST']),
                ('/v1/nodes/n1/states/provision', ['PUT']),
                ('/v1/deployment_strategies/validate', ['POST']),
                ('/v1/nowhere', None),
                ('/v1/nodes/n1/states/provision/more', None)):
            self.assertEqual(expected, routes.allowed(path), path)


class TestAllow(base.ApiTestCase):

    def test_every_405_lists_the_methods_of_its_path(self):
        refused = 0
        for template, served in routes.ROUTES:
            path = re.sub(r'\{[^}]+\}', VALUE, template)
            served = served.split()
            for method in METHODS:
                resp = self.app.request(
                    path, method=method, expect_errors=True,
                    headers=self.headers('system_admin'),
                    content_type='application/json', body=b'{}')
                if method in served:
                    self.assertNotEqual(405, resp.status_int,
                                        '%s %s' % (method, path))
                    continue
                # A member that does not exist may answer 404 first.
                self.assertIn(resp.status_int, (404, 405),
                              '%s %s' % (method, path))
                if resp.status_int == 404:
                    continue
                expected = sorted(set(served) | (
                    {'HEAD'} if 'GET' in served else set()))
                self.assertEqual(
                    ', '.join(expected), resp.headers.get('Allow'),
                    '%s %s' % (method, path))
                refused += 1
        self.assertGreater(refused, 40)
