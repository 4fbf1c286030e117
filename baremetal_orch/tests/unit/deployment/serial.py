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
"""A reference executor of the site rules, for the tests of the rules.

The service drives :class:`~baremetal_orch.deployment.site.SiteDeployment`
from its flows; these tests drive it one group at a time, as the
deployment-grouping specification's processing loop reads.
"""


def run_serially(site, prepare, deploy):
    """Drive ``site`` to the end, one group at a time.

    :param prepare: ``callable(group, names) -> {name: bool}``.
    :param deploy: ``callable(group, names) -> {name: bool}``.
    :returns: ``site.outcome()``.
    """
    while True:
        site.skip_blocked()
        ready = site.ready_groups()
        if not ready:
            break
        group = ready[0]
        site.start(group)
        targets = site.prepare_targets(group)
        if site.finish_prepare(group, prepare(group, targets)).ok:
            targets = site.deploy_targets(group)
            site.finish_deploy(group, deploy(group, targets))
    return site.outcome()
