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
"""When a group of a running site action may start (:class:`GroupSlots`;
doc/source/admin/strategies.rst)."""

import threading

from baremetal_orch.common import statuses


class GroupSlots:
    """The one place a group's start is decided: at most
    ``[conductor]max_concurrent_groups`` groups at once, handed out in the
    plan's order once their dependencies succeeded
    (:meth:`SiteDeployment.startable_groups`).

    :meth:`start` takes a slot and starts the group in the site's rules in
    one step, so the start order is the order slots were granted. A group
    that ends while it waits (a dependency failed, the action was
    aborted) gets no slot. start/release are idempotent per group: the
    deploy phase asks again (a resumed group whose prepare was recorded
    takes its slot there) without taking a second slot.

    ``size`` is a number or a callable read at each decision, so that a
    SIGHUP reload of ``max_concurrent_groups`` applies to the running
    action: a larger size lets waiting groups start (within
    :attr:`recheck_interval`), a smaller one holds new groups back until
    enough running groups ended.
    """

    #: Seconds between two looks at the rules while waiting (a safety net:
    #: every release wakes the waiters).
    recheck_interval = 1.0

    def __init__(self, size, site):
        self._cond = threading.Condition()
        self._size = size if callable(size) else (lambda: size)
        self._site = site
        self._holders = set()
        self._startable = None
        self._closed = False

    def _may_start(self, group):
        free = self._size() - len(self._holders)
        if free < 1:
            return False
        if self._site.group_status(group)['status'] != statuses.PENDING:
            # Started before (a resumed flow): a free slot is enough.
            return True
        if self._startable is None:
            # Computed once per change, shared by every waiter.
            self._startable = set(self._site.startable_groups(free))
        return group in self._startable

    def start(self, group):
        """Wait for ``group``'s turn and a free slot, then start it.

        :returns: True once it holds a slot; False when the group ended
            before its turn came (it then never starts).
        """
        with self._cond:
            if group in self._holders:
                return True
            while True:
                if (self._closed or
                        self._site.group_status(group)['status'] in
                        statuses.TASK_FINAL_STATUSES):
                    return False
                if self._may_start(group):
                    break
                if not self._cond.wait(self.recheck_interval):
                    self._startable = None
            self._site.start(group)
            self._holders.add(group)
            self._startable = None
            self._cond.notify_all()
            return True

    def wake(self):
        """Groups ended without a slot (skipped, aborted): their waiters
        look again."""
        with self._cond:
            self._startable = None
            self._cond.notify_all()

    def close(self):
        """The flow failed: no group starts any more."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def release(self, group):
        with self._cond:
            self._holders.discard(group)
            # A group's end may make others ready: every waiter looks again.
            self._startable = None
            self._cond.notify_all()
