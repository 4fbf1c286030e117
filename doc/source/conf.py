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
"""Sphinx configuration of the baremetal_orch documentation (doc/)."""

import shutil

from docutils import nodes
from docutils.parsers.rst import Directive

# -- General ----------------------------------------------------------------

extensions = [
    'cliff.sphinxext',
    'openstackdocstheme',
    'oslo_config.sphinxext',
    'oslo_policy.sphinxext',
    'sphinx.ext.graphviz',
]

project = 'baremetal_orch'
copyright = '2026, OpenStack Foundation'
master_doc = 'index'
source_suffix = {'.rst': 'restructuredtext'}
exclude_patterns = ['_build']
pygments_style = 'native'

# The OpenStackClient plugin's commands (cli/openstack-baremetal-orch.rst).
autoprogram_cliff_application = 'openstack'

# -- openstackdocstheme -----------------------------------------------------

openstackdocs_repo_name = 'openstack/baremetal-orch'
openstackdocs_bug_project = 'baremetal-orch'
openstackdocs_bug_tag = 'doc'
openstackdocs_auto_name = False
openstackdocs_use_storyboard = False

html_theme = 'openstackdocs'
html_static_path = []
htmlhelp_basename = 'baremetal-orchdoc'

# -- Graphviz ---------------------------------------------------------------

graphviz_output_format = 'svg'


class LiteralGraphviz(Directive):
    """The DOT source of a graph, shown when Graphviz is missing.

    Without Graphviz's ``dot`` the build would fail (``-W``) for want of a
    picture; the graph's source is the next best thing.
    """

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = {'caption': str, 'alt': str, 'align': str, 'class': str,
                   'name': str, 'layout': str}

    def run(self):
        text = '\n'.join(self.content)
        return [nodes.literal_block(text, text)]


def setup(app):
    if shutil.which('dot') is None:
        app.add_directive('graphviz', LiteralGraphviz, override=True)
