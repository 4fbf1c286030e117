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
"""The generated references of doc/ document what the generators cover.

``doc/source/configuration/config.rst`` lists the option namespaces for
``show-options``; they must be those of the sample configuration's
generator file, or the reference and the sample drift apart.
"""

import os
import re

from baremetal_orch.tests import base

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..',
                                    '..', '..'))
DOC = os.path.join(ROOT, 'doc', 'source')
ETC = os.path.join(ROOT, 'etc', 'baremetal-orch')


def _generator_namespaces(name):
    # "namespace" is repeated, which configparser refuses: read the lines.
    values = []
    with open(os.path.join(ETC, name)) as f:
        for line in f:
            match = re.match(r'^\s*namespace\s*=\s*(\S+)', line)
            if match:
                values.append(match.group(1))
    return values


def _directive_body(path, directive):
    with open(path) as f:
        text = f.read()
    match = re.search(r'^\.\. %s::\n((?:\n|   .*\n)*)' % re.escape(directive),
                      text, re.M)
    return match.group(1) if match else None


class TestConfigReference(base.TestCase):

    def test_show_options_namespaces_match_the_generator(self):
        body = _directive_body(os.path.join(DOC, 'configuration',
                                            'config.rst'), 'show-options')
        self.assertIsNotNone(body)
        listed = [line.strip() for line in body.splitlines()
                  if line.strip() and not line.strip().startswith(':')]
        self.assertEqual(
            _generator_namespaces('baremetal-orch-config-generator.conf'),
            listed)

    def test_show_policy_uses_the_policy_generator(self):
        body = _directive_body(os.path.join(DOC, 'configuration',
                                            'policy.rst'), 'show-policy')
        match = re.search(r':config-file:\s*(\S+)', body or '')
        self.assertIsNotNone(match)
        path = os.path.normpath(os.path.join(DOC, match.group(1)))
        self.assertEqual(
            os.path.join(ETC, 'baremetal-orch-policy-generator.conf'), path)
        self.assertEqual(['baremetal_orch'], _generator_namespaces(
            'baremetal-orch-policy-generator.conf'))
