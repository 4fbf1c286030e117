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
"""The signal state machine of node deployments (seed 002).

A node signals its deployment record with a JSON body in the format of
Heat's software deployments: ``deploy_status``, ``deploy_status_reason``,
``deploy_stdout``, ``deploy_stderr``, ``deploy_status_code`` and any
output values. :func:`decide` is the pure rule; :func:`process` applies it
to the database (atomically), records an event and sends the
notification.

=====================  ==============================  ===========  ======
``deploy_status``      ``deploy_status_code``          new status   final
=====================  ==============================  ===========  ======
``IN_PROGRESS``        (ignored)                       IN_PROGRESS  no
``COMPLETE``           (recorded)                      COMPLETE     yes
``FAILED``             (recorded)                      FAILED       yes
absent or ``null``     absent, ``null``, 0 or ``"0"``  COMPLETE     yes
absent or ``null``     anything else                   FAILED       yes
=====================  ==============================  ===========  ======

The second half of the table is how stock Heat treats every signal, so
agents that do not know ``deploy_status`` keep working. An explicit
``deploy_status`` wins over the status code. A record that is already final
takes no more signals
(:class:`~baremetal_orch.common.exception.SignalAfterFinal`, 409), and the
database update that makes a record final is conditional on it not being
final yet, so of two racing final signals exactly one wins.

The signal token never reaches the record, an event or a notification:
a node's output may well contain it (the heat-config ``script`` hook logs
every input, the pre-signed ``deploy_signal_id`` included, to the stderr
it reports when it fails), so :func:`scrub` masks it in the body first.
"""

import dataclasses
import json

from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.notifications import notify

IN_PROGRESS = 'IN_PROGRESS'
COMPLETE = 'COMPLETE'
FAILED = 'FAILED'
STATUSES = (IN_PROGRESS, COMPLETE, FAILED)

#: The largest signal body accepted, in bytes (413 above it).
MAX_BODY_SIZE = 1024 * 1024
#: deploy_stdout and deploy_stderr keep their last this many characters
#: (marker included), and never more than MAX_TEXT_BYTES of UTF-8: they
#: fit a MySQL TEXT column.
MAX_OUTPUT_CHARS = 16384
MAX_TEXT_BYTES = 65535
#: What starts a truncated deploy_stdout or deploy_stderr.
TRUNCATED_MARKER = '[...truncated...]\n'
#: deploy_status_reason keeps its first this many characters.
MAX_REASON_CHARS = 4096
#: Output values are kept in the signal's event up to this many bytes of
#: JSON; values past it are dropped and named in ``outputs_dropped``.
MAX_OUTPUTS_BYTES = 32768
#: deploy_status_code is a 32-bit signed integer.
MIN_STATUS_CODE = -2 ** 31
MAX_STATUS_CODE = 2 ** 31 - 1

#: The keys of a signal body with a meaning; any other key is an output.
STATUS = 'deploy_status'
REASON = 'deploy_status_reason'
STDOUT = 'deploy_stdout'
STDERR = 'deploy_stderr'
STATUS_CODE = 'deploy_status_code'
KNOWN_KEYS = (STATUS, REASON, STDOUT, STDERR, STATUS_CODE)

#: What replaces the signal token wherever a body carries it.
MASK = '***'

EVENT_IN_PROGRESS = 'deployment.signal.in_progress'
EVENT_COMPLETE = 'deployment.signal.complete'
EVENT_FAILED = 'deployment.signal.failed'
EVENT_TYPES = {IN_PROGRESS: EVENT_IN_PROGRESS, COMPLETE: EVENT_COMPLETE,
               FAILED: EVENT_FAILED}


@dataclasses.dataclass(frozen=True)
class Decision:
    """What one signal does to its deployment record."""

    #: IN_PROGRESS, COMPLETE or FAILED.
    status: str
    #: Whether the record takes no more signals after this one.
    final: bool
    #: The columns of the record to update.
    values: dict
    #: The event to record: type, message and details.
    event_type: str
    message: str
    details: dict


def truncate_output(text, limit=MAX_OUTPUT_CHARS,
                    max_bytes=MAX_TEXT_BYTES):
    """The end of ``text``, cut to fit.

    At most ``limit`` characters and ``max_bytes`` bytes of UTF-8,
    starting with TRUNCATED_MARKER when it was cut.
    """
    if text is None:
        return None
    if len(text) <= limit and len(text.encode('utf-8')) <= max_bytes:
        return text
    keep = limit - len(TRUNCATED_MARKER)
    tail = text[-keep:]
    budget = max_bytes - len(TRUNCATED_MARKER.encode('utf-8'))
    while len(tail.encode('utf-8')) > budget:
        # Only text of multi-byte characters gets here; drop what is over
        # (at least one character per round).
        excess = len(tail.encode('utf-8')) - budget
        tail = tail[max(1, excess // 4):]
    return TRUNCATED_MARKER + tail


def truncate_reason(reason):
    if reason is None:
        return None
    return reason[:MAX_REASON_CHARS]


def status_code(value):
    """deploy_status_code as an int (or None).

    Heat agents send an int, some hooks a string of one. It must fit a
    32-bit signed column.
    """
    if value is None:
        return None
    try:
        if isinstance(value, bool) or isinstance(value, float):
            raise ValueError()
        code = int(str(value).strip())
        if not MIN_STATUS_CODE <= code <= MAX_STATUS_CODE:
            raise ValueError()
    except ValueError:
        raise exception.InvalidParameterValue(
            reason='deploy_status_code must be an integer from %d to %d, '
                   'not %r' % (MIN_STATUS_CODE, MAX_STATUS_CODE, value))
    return code


def split_outputs(body, max_bytes=MAX_OUTPUTS_BYTES):
    """The output values of a body: (kept, dropped).

    Outputs are the keys that are not in KNOWN_KEYS; they are kept in key
    order within ``max_bytes`` of JSON, the others are dropped.
    """
    kept = {}
    dropped = []
    size = 2
    for key in sorted(k for k in body if k not in KNOWN_KEYS):
        item = len(json.dumps({key: body[key]})) - 1
        if size + item > max_bytes:
            dropped.append(key)
            continue
        kept[key] = body[key]
        size += item
    return kept, dropped


def scrub(value, secret, mask=MASK):
    """A copy of ``value`` with ``secret`` masked in every string of it
    (keys included), at any depth."""
    if not secret:
        return value
    if isinstance(value, str):
        return value.replace(secret, mask)
    if isinstance(value, dict):
        return {scrub(k, secret, mask): scrub(v, secret, mask)
                for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, secret, mask) for v in value]
    return value


def decide(record, body):
    """The effect of ``body`` on ``record`` (see the module's table).

    :param record: the deployment record (``uuid``, ``final``).
    :param body: the signal, a dict already checked against the API's
        schema.
    :raises: SignalAfterFinal when the record is already final;
        InvalidParameterValue for an unknown ``deploy_status``.
    """
    if record.final:
        raise exception.SignalAfterFinal(uuid=record.uuid)
    status = body.get(STATUS)
    if status is not None and status not in STATUSES:
        raise exception.InvalidParameterValue(
            reason='deploy_status must be one of %s, not %r'
                   % (', '.join(STATUSES), status))
    code = status_code(body.get(STATUS_CODE))
    reason = truncate_reason(body.get(REASON))
    values = {}
    for key in (STDOUT, STDERR):
        if body.get(key) is not None:
            values[key] = truncate_output(body[key])
    details = {'deployment_uuid': record.uuid}
    if status == IN_PROGRESS:
        message = reason or 'Deployment %s in progress' % record.uuid
        values['status_reason'] = message
        details.update(status=IN_PROGRESS, reason=reason)
        return Decision(IN_PROGRESS, False, values, EVENT_IN_PROGRESS,
                        message, details)
    if status is None:
        status = COMPLETE if not code else FAILED
    if reason is None:
        if status == COMPLETE:
            reason = 'Deployment %s succeeded' % record.uuid
        elif code:
            reason = ('Deployment %s exited with non-zero status code: %s'
                      % (record.uuid, code))
        else:
            reason = 'Deployment %s failed' % record.uuid
    values.update(status=status, final=True, status_reason=reason,
                  deploy_status_code=code)
    outputs, dropped = split_outputs(body)
    details.update(status=status, reason=reason, deploy_status_code=code,
                   outputs=outputs)
    if dropped:
        details['outputs_dropped'] = dropped
    return Decision(status, True, values, EVENT_TYPES[status], reason,
                    details)


def process(context, record, body, token=None):
    """Apply a signal: update the record, record the event, notify.

    :param token: the signal token the node sent, masked wherever the
        body repeats it.

    :returns: the updated record.
    :raises: SignalAfterFinal (also when another final signal won a race,
        or the record was superseded by a newer deployment of its node);
        InvalidParameterValue.
    """
    if record.deleted and not record.final:
        raise exception.SignalAfterFinal(
            message='Deployment %s was superseded by a newer deployment of '
                    'node %s and takes no more signals.'
                    % (record.uuid, record.node_uuid))
    decision = decide(record, scrub(body, token))
    updated = dbapi.update_deployment(record.uuid, decision.values,
                                      only_if_not_final=True)
    dbapi.create_event(decision.event_type, resource_uuid=record.node_uuid,
                       action_uuid=record.action_uuid,
                       message=decision.message, details=decision.details)
    notify.signal(context, updated, decision.status)
    return updated
