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

"""What a ``retry`` action runs, free of I/O.

A retry re-runs an ended ``deploy_site``, ``update_site`` or ``retry``
action on that action's own strategy snapshot and resolved node sets (the
site is not looked at again: a node added since is not part of it):

* a node that ended ``success`` keeps ``success``: no group sends it any
  work, and it counts as a success in every criterion of every group it
  belongs to (:class:`~.site.SiteDeployment` evaluates a phase on the
  group's full node set, counting ``success`` in prepare and deploy);
* every other node starts ``not_started`` again: ``failure``, never
  started, and also ``prepared``. An ended action released its claims and
  a prepared node may have been handled since, so its prepare is run
  again; preparing a node that is still prepared (``available``,
  ``deploy failed``) changes nothing and succeeds;
* every group starts ``pending`` and the groups run in the plan's order;
  a group whose nodes all succeeded before ends ``success`` without
  sending any node work (its phases have no targets).
"""

from baremetal_orch.deployment import site as site_mod
from baremetal_orch.deployment import tracker as tracker_mod


def node_statuses(previous):
    """The statuses a retry starts from: ``{node: status}``.

    :param previous: ``{node: status}`` of the ended action.
    """
    return {name: (tracker_mod.SUCCESS if status == tracker_mod.SUCCESS
                   else tracker_mod.NOT_STARTED)
            for name, status in previous.items()}


def retry(previous, retry_of):
    """The :class:`~.site.SiteDeployment` of a retry of ``previous``.

    :param previous: the ended action's SiteDeployment (rebuilt with
        :meth:`~.site.SiteDeployment.from_dict`).
    :param retry_of: the uuid of the ended action; the new deployment's
        report names it.
    :returns: a new deployment with the same strategy, groups and node
        sets (and their names), every group pending.
    """
    strategy = previous.strategy
    return site_mod.SiteDeployment(
        strategy, {g: previous.nodes(g) for g in strategy.names()},
        node_statuses(previous.tracker.statuses()), retry_of=retry_of,
        node_names=previous.tracker.names())


def retried_nodes(site):
    """The nodes a retry will try again (all but the successes), sorted."""
    return sorted(n for n, s in site.tracker.statuses().items()
                  if s != tracker_mod.SUCCESS)


def plan(site):
    """The dry run of a retry: the plan of its strategy snapshot, the
    action it retries (``retry_of``) and the nodes it tries again
    (``retried_nodes``, by name)."""
    return dict(site.plan(), retry_of=site.retry_of,
                retried_nodes=sorted(map(site.tracker.name_of,
                                         retried_nodes(site))))
