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
"""The peer of P7: a minimal script driving nodes straight through
Ironic's API with openstacksdk, in a strategy's dependency order.

A group starts when every group it depends on has all its nodes
``active``. Each node of a started group goes manage, provide, active as
fast as Ironic allows: its next verb is sent as soon as a poll shows it in
the state the previous one leads to. One poll lists every node (only
``uuid``, ``provision_state`` and ``last_error``, pages of 1,000); the
verbs of one round are sent by a pool of client threads, ``active`` with
the node's config drive when it is given one. This is the limit Ironic
itself sets, with no orchestration service in between.

:class:`DagDriver` is the decision logic (no I/O); :class:`SdkIronic`
the openstacksdk calls; :func:`deploy` runs the loop.
"""

import concurrent.futures
import time

#: The verb sent to a node in each state on its way to ``active``.
NEXT = {'enroll': 'manage', 'manageable': 'provide', 'available': 'active'}
DONE = 'active'
#: Provision states a node of a deploy should never be seen in.
FAILED = frozenset(['deploy failed', 'clean failed', 'inspect failed',
                    'error', 'rescue failed', 'service failed'])


class DeployFailed(Exception):
    """A node failed or stopped making progress."""


class DagDriver:
    """Which verbs to send, given a poll of the nodes' states.

    :param depends: ``{group: [groups it depends on]}`` (every group).
    :param members: ``{group: [node ids]}``.
    :param clock: a monotonic clock (seconds), for the groups' start and
        end times (those of the poll that showed them).
    """

    def __init__(self, depends, members, clock=time.monotonic):
        unknown = {d for deps in depends.values() for d in deps} - set(
            depends)
        if unknown:
            raise ValueError('unknown groups depended on: %s'
                             % sorted(unknown))
        self.depends = {g: list(d) for g, d in depends.items()}
        self.members = {g: list(members.get(g, ())) for g in depends}
        self.clock = clock
        self.started = {}   # group -> clock when started
        self.finished = {}  # group -> clock when all its nodes were active
        self.sent_from = {}  # node -> the state its last verb was sent in

    @property
    def done(self):
        return len(self.finished) == len(self.depends)

    def ready(self):
        """Groups not started whose dependencies are all finished."""
        return sorted(g for g, deps in self.depends.items()
                      if g not in self.started
                      and all(d in self.finished for d in deps))

    def decide(self, states, errors=None):
        """The ``(node, verb)`` pairs to send after this poll.

        :param states: ``{node: provision_state}`` polled after the
            previous round's verbs were answered.
        :param errors: ``{node: last_error}``, for failure messages.
        :raises DeployFailed: a node is in a failure state, or in the very
            state its last verb was sent in (Ironic sent it back).
        """
        errors = errors or {}
        now = self.clock()  # one time a poll
        sends = []
        seen = set()
        while True:
            for group in self.ready():
                self.started[group] = now
            progressed = False
            for group in sorted(set(self.started) - set(self.finished)
                                - seen):
                seen.add(group)
                waiting = False
                for node in self.members[group]:
                    state = states[node]
                    if state in FAILED or self.sent_from.get(node) == state:
                        raise DeployFailed('node %s of group %s: %s (%s)' % (
                            node, group, state, errors.get(node)))
                    if state == DONE:
                        continue
                    waiting = True
                    verb = NEXT.get(state)
                    if verb:
                        sends.append((node, verb))
                        self.sent_from[node] = state
                if not waiting:
                    self.finished[group] = now
                    progressed = True
            if not progressed:
                return sends


class SdkIronic:
    """The openstacksdk calls of the script (noauth, one endpoint).

    :param config_drives: ``{node uuid: config drive}`` sent with each
        node's ``active`` (None: no config drive).
    """

    def __init__(self, endpoint, threads=16, page=1000, shard=None,
                 config_drives=None):
        import openstack
        self.conn = openstack.connect(
            auth_type='none', baremetal_endpoint_override=endpoint,
            baremetal_api_version='1', load_yaml_config=False,
            load_envvars=False)
        self.pool = concurrent.futures.ThreadPoolExecutor(threads)
        self.page = page
        self.filters = {'shard': shard} if shard else {}
        self.config_drives = config_drives

    def poll(self):
        """``({uuid: provision_state}, {uuid: last_error})`` of every node."""
        states, errors = {}, {}
        for node in self.conn.baremetal.nodes(
                fields=['uuid', 'provision_state', 'last_error'],
                limit=self.page, **self.filters):
            states[node.id] = node.provision_state
            errors[node.id] = node.last_error
        return states, errors

    def send(self, sends):
        """Send every ``(node, verb)``; return once all were answered."""
        futures = [self.pool.submit(
            self.conn.baremetal.set_node_provision_state, node, verb,
            **self.payload(node, verb))
            for node, verb in sends]
        for future in futures:
            future.result()

    def payload(self, node, verb):
        """The arguments of ``verb`` besides the node's: its config drive
        with ``active``, when the script hands the nodes one."""
        if verb == 'active' and self.config_drives is not None:
            return {'config_drive': self.config_drives[node]}
        return {}

    def close(self):
        self.pool.shutdown()
        self.conn.close()


def deploy(driver, api, poll_interval=0.5, timeout=3600,
           clock=time.monotonic, sleep=time.sleep):
    """Run ``driver`` against ``api`` until every group is finished;
    return the seconds it took. Raises DeployFailed or TimeoutError."""
    started = clock()
    while True:
        states, errors = api.poll()
        sends = driver.decide(states, errors)
        if driver.done:
            return clock() - started
        if clock() - started > timeout:
            raise TimeoutError('groups %s not finished after %s s' % (
                sorted(set(driver.depends) - set(driver.finished)), timeout))
        if sends:
            api.send(sends)
        sleep(poll_interval)
