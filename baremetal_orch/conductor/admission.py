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
"""Admitting an action: the one place a requested action is checked.

``POST /v1/actions`` reaches a conductor's :func:`admit` (a synchronous
RPC call). It parses the strategy once, resolves its selectors once (to
node UUIDs, with the names they have now for the reports: inside an
action a node is its UUID), checks the nodes are not held by another
running action, creates the action and returns it with what the flow
starts from; a refused action leaves no row.

What an action runs on is its snapshot, stored once, in the row admission
creates (``parameters.snapshot``): the nodes it holds (``{uuid: name}``),
and for a site action the strategy document and its groups' node sets
(:meth:`~baremetal_orch.deployment.site.SiteDeployment.snapshot`). A
conductor that starts or resumes the action rebuilds its site from the
snapshot and the state its checkpoints store; the selectors are never
resolved again.

The busy check and the creation are one transaction that first locks
the rows of the nodes the action would hold
(:func:`~baremetal_orch.db.api.admitting`): two admissions that share a
node run one after the other whichever conductors admit them, so the
second sees the first's action and is refused. (Comparing the actions'
ids instead is not enough on a server database, where a transaction may
commit a lower id after another committed a higher one.)

A ``retry`` re-runs an ended site action
(:mod:`baremetal_orch.deployment.retry`). An action is retried once: its
retries are the ``retry`` actions whose ``parameters.action`` names it,
checked in the same transaction, which also locks the retried action's
row, so of two retries of one action admitted at the same instant the
second is refused.
"""

import collections

from oslo_log import log
from oslo_utils import timeutils

from baremetal_orch.common import exception
from baremetal_orch.common import states
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import retry as retry_mod
from baremetal_orch.deployment import site as site_mod
from baremetal_orch.deployment import strategy as strategy_mod
from baremetal_orch.deployment import windows as windows_mod
from baremetal_orch.objects import action as action_obj
from baremetal_orch.objects import node as node_obj

LOG = log.getLogger(__name__)

#: What admission hands on: the action, and the rules of a site action
#: (None for a targeted one) so its flow starts without parsing again.
Admitted = collections.namedtuple('Admitted', ['action', 'site'])


def resolve(strategy):
    """The :class:`SiteDeployment` of ``strategy`` over the nodes its
    selectors pick now (by UUID, named as they are now)."""
    group_nodes, names = node_obj.Node.resolve_groups(strategy)
    return site_mod.SiteDeployment(strategy, group_nodes,
                                   node_names=names)


def _site(parameters):
    """The stored parameters and the rules of a site action; its
    maintenance windows are checked first (InvalidParameterValue)."""
    windows_mod.parse(parameters.get('windows'))
    name = parameters.get('deployment_strategy',
                          strategy_mod.DEFAULT_NAME)
    site = resolve(strategy_mod.parse(dbapi.get_strategy(name).document))
    stored = {'deployment_strategy': name, 'snapshot': site.snapshot()}
    if parameters.get('windows'):
        stored['windows'] = list(parameters['windows'])
    return stored, site


#: What a retry re-runs (a retry of a retry runs the same snapshot).
RETRYABLE = (action_obj.DEPLOY_SITE, action_obj.UPDATE_SITE,
             action_obj.RETRY)


def _retries_of(uuid):
    """The retry actions (rows) of action ``uuid``, oldest first."""
    return sorted((a for a in dbapi.list_actions({'name': action_obj.RETRY})
                   if (a.parameters or {}).get('action') == uuid),
                  key=lambda a: a.id)


def _refuse_if_retried(uuid):
    """ActionAlreadyRetried (409) naming the newest retry of ``uuid``."""
    retries = _retries_of(uuid)
    if retries:
        raise exception.ActionAlreadyRetried(action=uuid,
                                             newer=retries[-1].uuid)


def _retry(context, parameters):
    """The parameters and rules of a retry of ``parameters['action']``:
    its strategy snapshot, its node sets, its successes kept."""
    uuid = parameters['action']
    ended = action_obj.Action.get(context, uuid)
    if ended.name not in RETRYABLE:
        raise exception.InvalidAction(
            reason='action %s is %s: only %s actions can be retried'
            % (uuid, ended.name, ', '.join(RETRYABLE)))
    if ended.state not in action_obj.FINAL_STATES:
        raise exception.ActionNotFinished(action=uuid, state=ended.state)
    _refuse_if_retried(uuid)
    snapshot = ended.parameters['snapshot']
    # Without a state it never started: nothing ran.
    previous = site_mod.SiteDeployment.from_dict(
        snapshot, (ended.progress or {}).get('site'))
    site = retry_mod.retry(previous, uuid)
    return {'action': uuid,
            'deployment_strategy': ended.parameters.get(
                'deployment_strategy'),
            'snapshot': snapshot}, site


def _targets(context, parameters):
    held = {}
    for ident in parameters['target_nodes']:
        try:
            node = node_obj.Node.get(context, ident)
        except exception.NodeNotFound:
            raise exception.InvalidAction(
                reason='target node %s does not exist' % ident)
        if node.provision_state != states.ACTIVE:
            raise exception.InvalidAction(
                reason='target node %s has never been deployed '
                       '(provision state %s)' % (ident, node.provision_state))
        held[node.uuid] = node.name or node.uuid
    return {'target_nodes': list(parameters['target_nodes']),
            'snapshot': {'nodes': held}}, held


def plan(context, name, parameters):
    """The dry run of a site action: its plan, with its maintenance
    windows (each ``past``, ``open`` or ``future`` now) when it has some;
    nothing is created. That of a retry also names the action it retries
    and the nodes it tries again
    (:func:`baremetal_orch.deployment.retry.plan`)."""
    if name == action_obj.RETRY:
        return retry_mod.plan(_retry(context, parameters)[1])
    stored, site = _site(parameters)
    result = site.plan()
    if stored.get('windows'):
        result['windows'] = windows_mod.describe(
            stored['windows'], timeutils.utcnow(with_timezone=True))
    return result


def admit(context, uuid, name, parameters, host):
    """Check and create the action ``name``; it runs on ``host``.

    :param parameters: the request's parameters, checked against the
        API's schema.
    :returns: :class:`Admitted`.
    :raises: StrategyNotFound, InvalidStrategy, InvalidAction, NodesBusy;
        for a retry also ActionNotFound, ActionNotFinished,
        ActionAlreadyRetried.
    """
    site = None
    progress = {}
    if name == action_obj.UPDATE_LABELS:
        parameters, held = _targets(context, parameters)
    else:
        if name == action_obj.RETRY:
            parameters, site = _retry(context, parameters)
            # What it starts from is not what its selectors resolve to
            # now: stored at once, for a conductor that starts it later.
            progress['site'] = site.to_dict()
        else:
            parameters, site = _site(parameters)
        held = parameters['snapshot']['nodes']
    action = action_obj.Action(
        context, uuid=uuid, name=name, parameters=parameters,
        state=action_obj.PENDING, conductor=host, progress=progress)
    retried = parameters['action'] if name == action_obj.RETRY else None
    with dbapi.admitting(held, retried=retried):
        if retried is not None:
            _refuse_if_retried(retried)
        _refuse_if_busy(uuid, held)
        action.create()
    return Admitted(action, site)


def discard(action_uuid, only_pending=False):
    """Remove an action whose start failed (or that was left pending):
    the action, its tasks and events, and so the nodes it held, and its
    flow's persisted log book. True when it was removed."""
    removed = dbapi.discard_action(action_uuid, only_pending=only_pending)
    if removed:
        try:
            dbapi.destroy_logbook(action_uuid)
        except Exception:
            LOG.exception('Could not remove the flow of discarded action '
                          '%s', action_uuid)
    return removed


def _refuse_if_busy(uuid, held):
    """NodesBusy (409) when an active action holds some of the nodes of
    action ``uuid`` (``held``: {uuid: name}), compared by UUID."""
    wanted = set(held)
    for other in dbapi.list_active_actions():
        overlap = wanted & set(action_obj.held_nodes(other))
        if overlap:
            error = exception.NodesBusy(
                nodes=', '.join(sorted(held[u] for u in overlap)),
                action=other.uuid)
            LOG.info('Action %s refused: %s', uuid, error)
            raise error
