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
"""Which failed Ironic requests are sent again, and when.

The rules (see :mod:`baremetal_orch.ironic.client`): a 409 saying the node
is locked, ``[ironic]api_max_retries`` times every ``api_retry_interval``
seconds; an outage (no answer, a proxy's 502/504, a 5xx other than
Ironic's concurrency limit), with :func:`~.outage.backoff` delays for up
to ``[ironic]outage_tolerance`` seconds, unless the request must not be
sent blind twice; nothing else.
"""

from oslo_log import log
import tenacity

from baremetal_orch.common import exception
from baremetal_orch.ironic import outage as outage_mod

LOG = log.getLogger(__name__)

#: Part of the message of Ironic's 503 past ``max_concurrent_deploy`` or
#: ``max_concurrent_clean``.
CONCURRENCY_LIMIT = 'concurrent action limit'
#: Statuses a proxy answers for an Ironic it could not reach.
GATEWAY_STATUSES = (502, 504)


class IronicRequestFailed(exception.DriverError):
    """Ironic refused a request or could not be reached.

    ``status_code`` is the HTTP status (None when Ironic did not answer),
    ``details`` Ironic's own message.
    """
    code = 'baremetal_orch.ironic.request_failed'
    _msg_fmt = 'Ironic request %(request)s failed: %(reason)s'

    def __init__(self, request, reason, status_code=None, details=None):
        super().__init__(request=request, reason=reason)
        self.status_code = status_code
        self.details = details or reason

    @property
    def busy(self):
        """Ironic refused the request for its concurrency limit."""
        return (self.status_code == 503 and
                CONCURRENCY_LIMIT in str(self.details).lower())

    @property
    def answered(self):
        """Whether Ironic itself answered (not a lost connection, a
        timeout, or a proxy's 502/504)."""
        return (self.status_code is not None and
                self.status_code not in GATEWAY_STATUSES)

    @property
    def outage(self):
        """Not Ironic's word on the request: worth sending again."""
        if self.status_code is None:
            return True
        return self.status_code >= 500 and not self.busy


class IronicUnreachable(IronicRequestFailed):
    """Ironic did not answer within ``[ironic]outage_tolerance``."""
    code = 'baremetal_orch.ironic.unreachable'


def _is_locked(exc):
    # Ironic's NodeLocked is the one conflict that goes away by itself.
    return (isinstance(exc, IronicRequestFailed) and
            exc.status_code == 409 and
            'is locked by host' in str(exc.details))


def unreachable(exc, seconds):
    """The error of a request Ironic did not answer for ``seconds``."""
    return IronicUnreachable(
        request=exc.kwargs.get('request'), status_code=exc.status_code,
        reason='Ironic did not answer for %d s ([ironic]outage_tolerance): '
               '%s' % (seconds, exc.kwargs.get('reason')))


class _Policy:
    """The decisions of one request's retries (tenacity's callbacks)."""

    def __init__(self, opts, outage, clock, sleep, retry, resend, settled):
        self.opts = opts
        self.outage = outage
        self.clock = clock
        self.sleep = sleep
        self.retry = retry
        self.resend = resend
        self.settled = settled
        self.locked = self.outages = 0
        self.first = self.spent = None
        self.delay = 0.0
        #: ``(value,)`` once ``settled`` answered for the request.
        self.result = None

    def _settle(self):
        """Ask ``settled`` whether the request took effect after its
        answer was lost; True when it answered (the result is kept)."""
        value = self.settled()
        if value is None:
            return False
        self.result = (value,)
        return True

    def again(self, exc):
        """Whether to send the request again after ``exc``."""
        if not isinstance(exc, IronicRequestFailed):
            return False
        if exc.answered:
            self.outage.answered()
        if not self.retry or exc.busy:
            return False
        if _is_locked(exc):
            if self.locked >= self.opts.api_max_retries:
                return False
            self.locked += 1
            self.delay = self.opts.api_retry_interval
            LOG.info('Retrying in %s s (attempt %d): %s', self.delay,
                     self.locked, exc)
            return True
        if not exc.outage:
            # Ironic's word; after a lost answer it may be about the
            # request it already took (a state that moved on).
            if self.first is not None and self.settled is not None:
                self._settle()
            return False
        if not exc.answered:
            self.outage.failed(exc)
        if not self.resend and self.settled is None:
            return False
        now = self.clock()
        self.first = now if self.first is None else self.first
        if now - self.first >= self.opts.outage_tolerance:
            self.spent = now - self.first
            return False
        self.outages += 1
        self.delay = outage_mod.backoff(self.outages)
        if self.settled is not None:
            # Never sent blind twice: wait, then ask what became of it.
            self.sleep(self.delay)
            self.delay = 0.0
            if self._settle():
                return False
        return True

    def wait(self, _retry_state):
        return self.delay


def call(send, opts, outage, sleep, clock, retry=True, resend=True,
         settled=None):
    """``send()`` with the retries its failures deserve.

    :param opts: the ``[ironic]`` options.
    :param outage: the endpoint's :class:`~.outage.Outage`.
    :param retry: whether to retry at all.
    :param resend: whether the request may be sent again blind after its
        answer was lost.
    :param settled: for a request that must not be sent blind twice (a
        provision state change): ``settled()`` is asked, after a lost
        answer and its back-off, what became of the request -- None when
        it did not take effect (it is sent again), else the value
        :func:`call` returns. It is asked too when, after a lost answer,
        Ironic refuses the request (it may have taken the first).
    :returns: the response, or what ``settled`` answered.
    :raises: IronicRequestFailed; IronicUnreachable once
        ``[ironic]outage_tolerance`` is spent.
    """
    policy = _Policy(opts, outage, clock, sleep, retry, resend, settled)
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(policy.again), wait=policy.wait,
        sleep=sleep, reraise=True)
    try:
        response = retrying(send)
    except IronicRequestFailed as exc:
        if policy.result is not None:
            return policy.result[0]
        if policy.spent is not None:
            raise unreachable(exc, policy.spent) from exc
        raise
    outage.answered()
    return response
