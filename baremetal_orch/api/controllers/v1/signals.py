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
"""/v1/signals/{deployment_uuid}: nodes report their deployment.

Authenticated by the deployment's own secret, never by Keystone: the auth
middleware lets this route through
(:data:`baremetal_orch.api.app.PUBLIC_ROUTES`) and no policy applies. The
secret travels in the ``token`` query parameter of the pre-signed URL the
node received (``deploy_signal_id``, all a stock heat-config agent can
send), or in the ``X-Signal-Token`` header. ``POST`` and ``PUT`` are the
same (Heat's agents use ``PUT`` for temp-URL signals). The body and what it
does are described in :mod:`baremetal_orch.deployment.signals` and
doc/source/admin/signals.rst.

Every refused signal is logged with the deployment's UUID and the reason;
the token itself is in no log line and no answer.
"""

from oslo_log import log
from oslo_utils import uuidutils
import pecan
from pecan import rest

from baremetal_orch.api.controllers.v1 import deployments as deployments_api
from baremetal_orch.api.schemas import signals as schema
from baremetal_orch.api import utils
from baremetal_orch.api import validation
from baremetal_orch.common import exception
from baremetal_orch.deployment import signals
from baremetal_orch.notifications import notify
from baremetal_orch.objects import deployment as deployments

LOG = log.getLogger(__name__)

TOKEN_HEADER = 'X-Signal-Token'  # noqa: S105 (a header name)
TOKEN_PARAM = deployments.TOKEN_PARAM
#: The body is read as JSON with any of these (curl -d sends the form type).
CONTENT_TYPES = ('', 'application/json', 'application/x-www-form-urlencoded')


class _CappedInput:
    """A wsgi.input that ends after ``limit`` bytes.

    Whoever reads the body (pecan reads a JSON body before routing to the
    controller) never reads more than that.
    """

    def __init__(self, stream, limit):
        self._stream = stream
        self._left = limit

    def read(self, size=-1):
        if size is None or size < 0 or size > self._left:
            size = self._left
        data = self._stream.read(size) if size else b''
        self._left -= len(data)
        return data

    def readline(self, size=-1):
        if size is None or size < 0 or size > self._left:
            size = self._left
        data = self._stream.readline(size) if size else b''
        self._left -= len(data)
        return data


def guard_body(request):
    """Refuse or cap a body before anything reads it.

    413 for a declared Content-Length over MAX_BODY_SIZE; otherwise what
    can be read of the body is capped at MAX_BODY_SIZE + 1 bytes.
    """
    length = request.content_length
    if length is not None and length > signals.MAX_BODY_SIZE:
        raise exception.RequestTooLarge(limit=signals.MAX_BODY_SIZE)
    if length is None and not request.is_body_seekable:
        request.environ['wsgi.input'] = _CappedInput(
            request.environ['wsgi.input'], signals.MAX_BODY_SIZE + 1)


def read_body(request):
    """The body, at most MAX_BODY_SIZE bytes.

    Whatever Content-Length says (a chunked body has none): 413 above.
    """
    content_type = (request.content_type or '').split(';')[0].strip()
    if content_type not in CONTENT_TYPES:
        raise exception.UnsupportedMediaType(content_type=content_type)
    if request.is_body_seekable:
        request.body_file_raw.seek(0)
    data = request.body_file.read(signals.MAX_BODY_SIZE + 1)
    if len(data) > signals.MAX_BODY_SIZE:
        raise exception.RequestTooLarge(limit=signals.MAX_BODY_SIZE)
    return data


def _get_record(uuid):
    if not uuidutils.is_uuid_like(uuid):
        raise exception.DeploymentNotFound(deployment=uuid)
    return deployments.Deployment.get(utils.context(), uuid)


def request_token(request):
    """The signal token of a request: (token, None) or (None, reason).

    From the query's ``token`` or the ``X-Signal-Token`` header; given in
    both, they must be the same.
    """
    in_query = request.GET.getall(TOKEN_PARAM)
    in_header = request.headers.get(TOKEN_HEADER)
    if len(in_query) > 1:
        return None, 'the %r query parameter is given %d times' % (
            TOKEN_PARAM, len(in_query))
    tokens = set(in_query)
    if in_header is not None:
        tokens.add(in_header)
    if len(tokens) > 1:
        return None, ('the %r query parameter and the %s header differ'
                      % (TOKEN_PARAM, TOKEN_HEADER))
    token = tokens.pop() if tokens else None
    if not token:
        return None, 'no token (neither a %r query parameter nor an %s ' \
                     'header)' % (TOKEN_PARAM, TOKEN_HEADER)
    return token, None


def _deployment_of(request):
    """The deployment UUID of the request's path, for the log."""
    return request.path_info.rstrip('/').rsplit('/', 1)[-1]


def refused(uuid, reason):
    if not uuidutils.is_uuid_like(uuid):
        uuid = repr(uuid[:64])  # whatever the path held: one quoted line
    LOG.warning('Refused a signal for deployment %(uuid)s: %(reason)s',
                {'uuid': uuid, 'reason': reason})


class SignalsController(rest.RestController):
    """/v1/signals"""

    @pecan.expose()
    def _route(self, args, request=None):
        # Before pecan reads a JSON body to look for arguments in it.
        request = request or pecan.request
        if request.method not in ('GET', 'HEAD', 'OPTIONS'):
            try:
                guard_body(request)
            except exception.BaremetalOrchException as e:
                refused(_deployment_of(request), e.message)
                raise
        return super()._route(args, request)

    @pecan.expose('json')
    def post(self, uuid=None, **_query):
        """POST /v1/signals/{uuid}: a signal."""
        # POST /v1/signals: a 405, not the missing-argument TypeError.
        utils.require_ident(uuid)
        try:
            return self._signal(uuid, pecan.request)
        except exception.InvalidSignalToken:
            raise  # logged with its precise reason
        except exception.BaremetalOrchException as e:
            refused(uuid, e.message)
            raise

    @pecan.expose('json')
    def put(self, uuid=None, **_query):
        """PUT /v1/signals/{uuid}: the same as POST."""
        return self.post(uuid)

    @staticmethod
    def _signal(uuid, request):
        # Only the path names the deployment: pecan would also take the
        # argument from a key of a JSON body sent to /v1/signals.
        if _deployment_of(request) != uuid:
            raise exception.DeploymentNotFound(deployment='(none)')
        record = _get_record(uuid)
        token, reason = request_token(request)
        if token is not None and not deployments.token_matches(
                record, token):
            reason = 'the token does not match'
        if reason is not None:
            refused(uuid, reason)
            raise exception.InvalidSignalToken(uuid=uuid)
        body = validation.parse_json(read_body(request))
        validation.validate(schema.SIGNAL, body, 'signal')
        ctx = utils.context()
        record = deployments.process(ctx, record, body, token=token)
        notify.signal(ctx, record, record.status)
        LOG.info('Deployment %(uuid)s of node %(node)s signalled %(status)s',
                 {'uuid': record.uuid, 'node': record.node_uuid,
                  'status': record.status})
        return deployments_api.to_dict(record)
