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
"""Sphinx configuration of the API reference (api-ref/, os-api-ref)."""

extensions = [
    'os_api_ref',
    'openstackdocstheme',
]

project = 'Bare Metal Orchestration API Reference'
copyright = '2026, OpenStack Foundation'
master_doc = 'index'
source_suffix = {'.rst': 'restructuredtext'}
exclude_patterns = ['_build']
pygments_style = 'native'

# The microversions of the API (baremetal_orch/api/microversion.py).
os_api_ref_min_microversion = '1.0'
os_api_ref_max_microversion = '1.0'

openstackdocs_repo_name = 'openstack/baremetal-orch'
openstackdocs_bug_project = 'baremetal-orch'
openstackdocs_bug_tag = 'api-ref'
openstackdocs_auto_name = False
openstackdocs_use_storyboard = False

html_theme = 'openstackdocs'
html_theme_options = {'sidebar_mode': 'toc'}
htmlhelp_basename = 'baremetal-orch-api-ref'
