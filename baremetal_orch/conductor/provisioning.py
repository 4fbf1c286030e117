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
"""Driving a node through the provision state machine with its driver.

The PUT states/provision API and the prepare/deploy phases of actions use
the same functions, so a node moves the same way whoever asks.
"""

import copy
import functools

from oslo_log import log

from baremetal_orch.common import exception
from baremetal_orch.common import states
from baremetal_orch.drivers import provisioning as drivers
from baremetal_orch.notifications import notify
from baremetal_orch.objects import node as node_obj

LOG = log.getLogger(__name__)

#: The driver method run for each FSM event that leaves a stable state.
_DRIVER_CALLS = {
    'manage': 'manage',
    'provide': 'provide',
    'deploy': 'deploy',
    'delete': 'undeploy',
}


#: States in which a node needs no prepare phase: ready to deploy, or
#: deployed already (update_site over a deployed site).
PREPARED_STATES = frozenset([states.AVAILABLE, states.ACTIVE,
                             states.DEPLOYFAIL])


def check_transition(node, event):
    """The next state, or InvalidStateRequested (409)."""
    nxt = states.next_state(node.provision_state, event)
    if nxt is None:
        raise exception.InvalidStateRequested(
            action=event, node=node.ident, state=node.provision_state)
    return nxt


def _move(context, node, event):
    """Apply an FSM event to the node, save it, and notify."""
    prev_state = node.provision_state
    prev_target = node.target_provision_state
    nxt = check_transition(node, event)
    node.provision_state = nxt
    node.target_provision_state = states.target_of(nxt)
    if event != 'fail':
        node.last_error = None
    node.save()
    notify.provision(context, node, _status(prev_state, nxt, event),
                     prev_state, prev_target, event)
    return nxt


def _status(prev_state, nxt, event):
    """The provision_set notification status of a transition."""
    if nxt in states.WORKING_STATES:
        return 'start'
    if prev_state in states.WORKING_STATES and event == 'done':
        return 'end'
    if event == 'fail':
        return 'error'
    return 'success'


def move_many(context, nodes, event, host):
    """:func:`_move` of many nodes ``host`` holds: one UPDATE per next
    state, then each node's notification, in the order of ``nodes``."""
    notify_moves(context, _moved(nodes, event, host))


def _moved(nodes, event, host, keep=False):
    """The UPDATEs of :func:`move_many`; returns its notifications, for
    :func:`notify_moves` (once the UPDATEs are committed).

    :param keep: each notification holds a copy of its node as this move
        left it, for a caller that moves the same nodes again before the
        notifications go.
    """
    by_next = {}
    for node in nodes:
        by_next.setdefault(check_transition(node, event), []).append(node)
    moves, sent = [], {}
    for nxt, group in by_next.items():
        values = {'provision_state': nxt,
                  'target_provision_state': states.target_of(nxt)}
        if event != 'fail':
            values['last_error'] = None
        previous = [(n.provision_state, n.target_provision_state)
                    for n in group]
        node_obj.Node.save_many(group, host, values)
        for node, (prev_state, prev_target) in zip(group, previous):
            status = _status(prev_state, nxt, event)
            if status not in sent:
                sent[status] = notify.provision_sent(status)
            if sent[status]:
                moves.append((copy.copy(node) if keep else node, status,
                              prev_state, prev_target, event))
    return moves


def notify_moves(context, moves):
    """Send the notifications of committed state changes (what
    :func:`end_many` returns: those the notification level lets
    through)."""
    for node, status, prev_state, prev_target, event in moves:
        notify.provision(context, node, status, prev_state, prev_target,
                         event)


def begin(context, node, event):
    """Apply ``event`` now: enter its working state before background
    work, or ``fail`` out of one (recovery)."""
    return _move(context, node, event)


def run(context, task, event, timeout, instance_info=None):
    """Run the driver call of ``event`` on a node already moved into its
    working state by begin(), then finish the transition.

    :raises: DriverError subclasses after recording the failure.
    """
    node = task.node
    # A stable transition (available -> manageable) has no working state:
    # the node moves once the driver succeeded.
    stable = node.provision_state not in states.WORKING_STATES
    failed = _driver_calls([node], event, timeout,
                           infos={node.uuid: instance_info or {}})
    if failed:
        error = failed[node.uuid]
        _failed(context, node, event, error, stable)
        raise error
    if stable:
        _move(context, node, event)
        return
    # Leave the working states (deleting goes through cleaning).
    while node.provision_state in states.WORKING_STATES:
        _move(context, node, 'done')


def _driver_calls(nodes, event, timeout, pool=None, infos=None):
    """The one call of the provisioning drivers: ``event``'s driver method
    on each of ``nodes``, one batch per driver
    (:meth:`~baremetal_orch.drivers.provisioning.base.ProvisioningDriver.call_many`),
    the batches side by side in ``pool`` when there are several.

    :returns: ``{node uuid: exception}`` of the nodes whose call failed.
    """
    by_driver = {}
    for node in nodes:
        by_driver.setdefault(node.driver, []).append(node)
    batches = [(name, same, event, timeout, pool, infos)
               for name, same in by_driver.items()]
    # Every driver's batch but the last in the pool; the last here.
    waits = [] if pool is None else [
        pool.submit(_batch, *batch) for batch in batches[:-1]]
    failed = {}
    for batch in (batches if pool is None else batches[-1:]):
        failed.update(_batch(*batch))
    for wait in waits:
        failed.update(wait.result())
    return failed


def _batch(name, nodes, event, timeout, pool, infos):
    """What the ``name`` driver answers for its batch of ``nodes``; a
    driver that cannot be had, or that broke instead of answering, failed
    all its nodes."""
    try:
        return drivers.get_driver(name).call_many(
            _DRIVER_CALLS[event], nodes, timeout, infos, pool)
    except Exception as e:
        LOG.exception('%s of %d nodes: the %s driver failed', event,
                      len(nodes), name)
        return dict.fromkeys((n.uuid for n in nodes), e)


def abort_nodes(context, node_uuids, pool=None):
    """Ask each node's driver to abort the wait its backend holds the node
    in (doc/source/admin/steering.rst, "Abort"): Ironic's ``abort`` for a
    node in ``wait call-back``, ``clean wait``, ``inspect wait`` or
    ``rescue wait``; nothing for a node in any other state, whose step
    finishes.

    Neither the node's lock nor its record is touched: the node work
    waiting on the driver sees the node fail (Ironic's ``last_error``)
    and records it.

    :param node_uuids: the nodes (uuids or names).
    :param pool: an executor to send the aborts side by side; None sends
        them one after another.
    :returns: ``{node uuid: bool}``: True when an abort was sent; False
        when the node was in no wait state, or on any error (logged).
    """
    uuids = list(node_uuids)
    if pool is None:
        answers = [_abort(context, uuid) for uuid in uuids]
    else:
        answers = list(pool.map(functools.partial(_abort, context), uuids))
    return dict(zip(uuids, answers))


def _abort(context, node_uuid):
    """:func:`abort_nodes` of one node; errors are logged, and False."""
    try:
        node = node_obj.Node.get(context, node_uuid)
        sent = bool(drivers.get_driver(node.driver).abort(node))
    except Exception as e:
        LOG.warning('Abort of node %s failed: %s', node_uuid, e)
        return False
    LOG.info('Node %s: %s', node.ident, 'abort sent' if sent else
             'in no wait state, not aborted')
    return sent


def _failed(context, node, event, exc, stable):
    """Record a failed driver call of ``event`` on a node."""
    node.last_error = str(exc)
    if stable:
        node.save()
        notify.provision(context, node, 'error', node.provision_state,
                         node.target_provision_state, event)
    else:
        _move(context, node, 'fail')
    LOG.warning('%s of node %s failed: %s', event, node.ident, exc)


def run_many(context, nodes, event, timeout, host, pool, infos=None):
    """begin(), run() and the end of the transition for many nodes
    ``host`` holds: :func:`start_many`, then :func:`end_many` of the
    nodes that did not fail, and its notifications.

    :returns: ``{node uuid: exception}`` of the nodes that failed.
    """
    failed, done = start_many(context, nodes, event, timeout, host, pool,
                              infos)
    notify_moves(context, end_many(done, event, host))
    return failed


def start_many(context, nodes, event, timeout, host, pool, infos=None):
    """begin() and run() for many nodes ``host`` holds: each state change
    of the nodes together is one UPDATE; the driver calls run side by
    side (:func:`_driver_calls`; ``pool``, an executor, for the calls
    that wait in a thread each). A node whose call failed is moved out
    of its working state (``fail``) at once.

    :param infos: ``{node uuid: instance info}`` for ``deploy``.
    :returns: ``(failed, done)``: ``{node uuid: exception}`` of the nodes
        that failed, and the nodes whose driver call succeeded, whose
        transition :func:`end_many` ends.
    """
    failed, ok = {}, []
    for node in nodes:
        try:
            check_transition(node, event)
            ok.append(node)
        except exception.InvalidStateRequested as e:
            failed[node.uuid] = e
    move_many(context, [n for n in ok if states.next_state(
        n.provision_state, event) in states.WORKING_STATES], event, host)

    errors = _driver_calls(ok, event, timeout, pool, infos)
    done = []
    for node in ok:
        error = errors.get(node.uuid)
        if error is None:
            done.append(node)
        else:
            failed[node.uuid] = error
            _failed(context, node, event, error,
                    node.provision_state not in states.WORKING_STATES)
    return failed, done


def end_many(done, event, host):
    """The end of the transition of the nodes whose driver call for
    ``event`` succeeded (:func:`start_many`): a stable transition moves
    them now, a working state is left (``done``); one UPDATE per next
    state. A caller may make it in the transaction that releases the
    nodes.

    :returns: the notifications to send once committed
        (:func:`notify_moves`).
    """
    moves = _moved([n for n in done
                    if n.provision_state not in states.WORKING_STATES],
                   event, host, keep=True)
    left = [n for n in done if n.provision_state in states.WORKING_STATES]
    while left:
        moves += _moved(left, 'done', host, keep=True)
        left = [n for n in left
                if n.provision_state in states.WORKING_STATES]
    return moves
