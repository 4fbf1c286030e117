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
"""pecan hooks: request context, microversion, conductor API, errors."""

from oslo_config import cfg
from oslo_log import log
from pecan import hooks
import webob.exc

from baremetal_orch.api import errors
from baremetal_orch.api import microversion
from baremetal_orch.api import routes
from baremetal_orch.api import validation
from baremetal_orch.common import context as orch_context
from baremetal_orch.conductor import rpcapi
from baremetal_orch.notifications import notifier

CONF = cfg.CONF
LOG = log.getLogger(__name__)


class TextHook(hooks.PecanHook):
    """400 for a path or query parameter no database column takes (NUL,
    which PostgreSQL refuses: a 500 when it reached a query)."""

    def before(self, state):
        request = state.request
        validation.check_text(request.path_info, 'The path')
        for key, value in request.GET.items():
            validation.check_text(key + value, 'The query')


class ContextHook(hooks.PecanHook):
    """Build the request context from keystonemiddleware's headers."""

    def __init__(self, noauth):
        self.noauth = noauth

    def before(self, state):
        request = state.request
        if self.noauth:
            ctx = orch_context.RequestContext(
                is_admin=True, roles=['admin', 'member', 'reader'],
                system_scope='all',
                request_id=request.environ.get('openstack.request_id'))
        else:
            ctx = orch_context.RequestContext.from_environ(request.environ)
        request.context = ctx


class RPCHook(hooks.PecanHook):
    def __init__(self):
        self._api = None

    def before(self, state):
        if self._api is None:
            self._api = rpcapi.ConductorAPI()
        state.request.rpcapi = self._api


class MicroversionHook(hooks.PecanHook):
    def before(self, state):
        state.request.version = microversion.parse(state.request.headers)

    def after(self, state):
        # 202 and 204 answers carry no body (not a JSON "null").
        if state.response is not None and \
                state.response.status_int in (202, 204) and \
                state.response.body in (b'null', b''):
            state.response.body = b''
            if state.response.status_int == 204:
                del state.response.content_type
        version = getattr(state.request, 'version', None)
        if version is not None and state.response is not None:
            state.response.headers[microversion.HEADER] = '%s %s' % (
                microversion.SERVICE_TYPE, microversion.fmt(version))
            state.response.headers['Vary'] = microversion.HEADER


class NotificationHook(hooks.PecanHook):
    """Answer once the request's notifications reached the message bus
    (at most ``[api]notification_wait`` seconds): what the client does
    next cannot be notified before them."""

    def after(self, state):
        wait = CONF.api.notification_wait
        if wait and not notifier.flush(wait):
            LOG.warning('The notifications of %s %s wait for the message '
                        'bus; answering without them.',
                        state.request.method, state.request.path)


class ErrorHook(hooks.PecanHook):
    """Turn every error into an API-SIG error document."""

    def on_error(self, state, e):
        response = errors.response_for(e, state.request)
        if isinstance(e, webob.exc.HTTPMethodNotAllowed):
            response.allow = allowed_methods(state, e)
        return response


def allowed_methods(state, e):
    """The methods an ``Allow`` header lists with a 405: those the path
    serves (:mod:`baremetal_orch.api.routes`), never the one refused; for
    a path of no route, what pecan named."""
    methods = routes.allowed(state.request.path_info)
    if methods is None:
        methods = sorted(getattr(e, 'allow', None) or ())
    refused = state.request.method
    return [m for m in methods if m != refused
            and not (refused == 'HEAD' and m == 'GET')]
