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
"""Sphinx configuration of the release notes (releasenotes/, reno)."""

extensions = [
    'openstackdocstheme',
    'reno.sphinxext',
]

project = 'baremetal_orch Release Notes'
copyright = '2026, OpenStack Foundation'
master_doc = 'index'
source_suffix = {'.rst': 'restructuredtext'}
exclude_patterns = ['_build']
pygments_style = 'native'

# reno reads the notes from the git history, not from the work tree.
release = ''
version = ''

openstackdocs_repo_name = 'openstack/baremetal-orch'
openstackdocs_bug_project = 'baremetal-orch'
openstackdocs_bug_tag = 'releasenotes'
openstackdocs_auto_name = False
openstackdocs_use_storyboard = False

html_theme = 'openstackdocs'
htmlhelp_basename = 'baremetal-orch-releasenotes'

# Internationalization, as the other OpenStack release notes.
locale_dirs = ['locale/']
