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
"""The WSGI application of the API and its middleware."""

import collections
import inspect
import re
import time
import urllib.parse

from keystonemiddleware import auth_token
from oslo_config import cfg
from oslo_log import log
from oslo_middleware import cors
from oslo_middleware import healthcheck
from oslo_middleware import http_proxy_to_wsgi
from oslo_middleware import request_id
from oslo_middleware import sizelimit
from oslo_utils import strutils
import pecan
from pecan import util as pecan_util
import webob
import webob.multidict
import webob.request

from baremetal_orch.api import errors
from baremetal_orch.api import hooks
from baremetal_orch.common import exception
from baremetal_orch.common import profiler

CONF = cfg.CONF
ACCESS_LOG = log.getLogger('baremetal_orch.api.access')

#: Paths served without a Keystone token: version discovery, and signals
#: (authenticated by their own X-Signal-Token).
PUBLIC_ROUTES = (re.compile(r'^/?$'), re.compile(r'^/v1/?$'),
                 re.compile(r'^/v1/signals/[^/]+/?$'))


class AuthTokenMiddleware:
    """keystonemiddleware's auth_token, except on the public routes."""

    def __init__(self, app):
        self.app = app
        self.auth = auth_token.AuthProtocol(
            app, {'oslo_config_config': CONF})

    def __call__(self, environ, start_response):
        path = environ.get('PATH_INFO', '/')
        if any(r.match(path) for r in PUBLIC_ROUTES):
            return self.app(environ, start_response)
        return self.auth(environ, start_response)


class HealthcheckRoute:
    """/healthcheck answered by oslo.middleware, before authentication."""

    def __init__(self, app):
        self.app = app
        self.healthcheck = healthcheck.Healthcheck(None, {'detailed': False})

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '').rstrip('/') == '/healthcheck':
            return self.healthcheck(environ, start_response)
        return self.app(environ, start_response)


class Request(pecan.Request):
    """pecan's request, made to route on the method and path alone.

    * Method override is off: pecan's RestController takes a ``_method``
      query or form field as the method (``POST /v1/nodes/n1?_method=delete``
      deleted the node). :attr:`params` is the query alone, without
      ``_method``, and pecan never reads a form body.
    * pecan parses a JSON body to look for arguments: the controllers parse
      their bodies themselves (with limits), so :attr:`json_body` refuses
      (pecan takes the ValueError as "no arguments in the body").
    * Text that does not decode (a path of ``%ff``, a query or body in a
      charset it is not in, a charset nobody knows) is the client's
      mistake: a 400 that names it, without the traceback pecan logs.
    """

    def __getattribute__(self, name):
        try:
            return webob.Request.__getattribute__(self, name)
        except UnicodeDecodeError as e:
            raise exception.InvalidParameterValue(
                reason='The request (%s) is not valid in its character '
                       'set: %s' % (_PARTS.get(name, name), e.reason))
        except webob.request.DisconnectionError as e:
            # The client ended its body before its Content-Length.
            raise exception.InvalidParameterValue(
                reason='The request body ended early: %s' % e)
        except LookupError as e:
            if type(e) is not LookupError:  # KeyError, IndexError
                raise
            raise exception.InvalidParameterValue(
                reason='The request names an unknown character set: %s'
                       % e)

    @property
    def json_body(self):
        raise ValueError('request bodies are parsed by the controllers')

    json = json_body

    @property
    def params(self):
        query = self.GET
        if '_method' not in query:
            return query
        return webob.multidict.MultiDict(
            [(k, v) for k, v in query.items() if k != '_method'])

    @property
    def POST(self):
        try:
            return super().POST
        except ValueError as e:
            # e.g. a multipart body without a boundary.
            raise exception.InvalidParameterValue(
                reason='Malformed form body: %s' % e)


_PARTS = {'path_info': 'path', 'path': 'path', 'GET': 'query',
          'params': 'query', 'text': 'body', 'POST': 'body'}


class Pecan(pecan.Pecan):
    """pecan, with route arguments taken from the path alone.

    pecan fills a controller's named arguments from the query (and the
    body) too: ``DELETE /v1/chassis?uuid=X`` deleted chassis X, and
    ``?node_ident=`` beside a path that names a node was a TypeError. Only
    a controller's ``**params`` gets the query, minus its named arguments.

    ``get_args`` is undocumented in pecan (its ``ExplicitPecan`` overrides
    it too), so it is pinned to the constrained pecan release by
    ``tests/unit/test_private_overrides.py``. Retired by a pecan option to
    fill a controller's named arguments from the path alone.
    """

    def get_args(self, state, all_params, remainder, argspec, im_self):
        params = {}
        if argspec[2]:
            params = {k: v for k, v in state.request.params.mixed().items()
                      if k not in argspec[0]}
        return super().get_args(state, params, remainder, argspec, im_self)


#: The argspec pecan reads of a controller, one type for every call.
ArgSpec = collections.namedtuple('ArgSpec', 'args varargs keywords defaults')


def _argspec(func):
    """pecan's ``compat.getargspec``, without making a class per call.

    pecan builds a new namedtuple *class* each time it reads a
    controller's arguments, about 13 times a request: each costs some 45
    microseconds more than this and leaves a cycle of objects that only
    the collector's full passes free; those passes stall every thread of
    the process (beside a working conductor they took 128 to 171 ms: P10
    in doc/source/contributor/benchmarks.rst). The values are the same.
    ``pecan.util._getargspec`` is private, so it is pinned by
    ``tests/unit/test_private_overrides.py``; retired by a pecan release
    whose ``compat.getargspec`` makes its type once.
    """
    args, varargs, keywords, defaults = inspect.getfullargspec(func)[:4]
    return ArgSpec(args, varargs, keywords, defaults)


def masked_uri(environ):
    """The request's path and query for a log, secrets masked.

    oslo.utils masks the values of secret parameters (``token=***``), so
    a pre-signed signal URL never reaches a log whole.
    """
    path = urllib.parse.quote(
        environ.get('SCRIPT_NAME', '') + environ.get('PATH_INFO', ''),
        safe="/:@!$&'()*+,;=-._~")
    query = environ.get('QUERY_STRING')
    return strutils.mask_password(path + ('?' + query if query else ''))


class AccessLog:
    """One INFO line per request (logger ``baremetal_orch.api.access``):
    client, method, path and query (masked), status, time, request id.

    Whatever server runs the application, the service's own log then
    shows its requests without the secrets a URL may carry.
    """

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        started = time.monotonic()
        state = {'status': '-', 'length': '-'}

        def logged_start_response(status, headers, exc_info=None):
            state['status'] = status.split(' ', 1)[0]
            for name, value in headers:
                if name.lower() == 'content-length':
                    state['length'] = value
            return start_response(status, headers, exc_info)

        try:
            return self.app(environ, logged_start_response)
        except Exception:
            state['status'] = '500'
            raise
        finally:
            ACCESS_LOG.info(
                '%(client)s "%(method)s %(uri)s" status: %(status)s len: '
                '%(length)s time: %(time).4f request_id: %(request_id)s',
                {'client': environ.get('REMOTE_ADDR', '-'),
                 'method': environ.get('REQUEST_METHOD', '-'),
                 'uri': masked_uri(environ), 'status': state['status'],
                 'length': state['length'],
                 'time': time.monotonic() - started,
                 'request_id': environ.get('openstack.request_id', '-')})


class HeadAsGet:
    """``HEAD`` answered wherever ``GET`` is: the GET's status and headers,
    no body (the GET runs, with its policy)."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get('REQUEST_METHOD') != 'HEAD':
            return self.app(environ, start_response)
        app_iter = self.app(dict(environ, REQUEST_METHOD='GET'),
                            start_response)
        try:
            # A generator calls start_response only when iterated.
            for _chunk in app_iter:
                pass
        finally:
            if hasattr(app_iter, 'close'):
                app_iter.close()
        return []


#: Content codings the service decodes: none (identity is no coding).
IDENTITY = ('', 'identity')


class ContentEncoding:
    """415 for a body in a ``Content-Encoding`` the service does not
    decode (gzip included): read as it is, it would be taken for JSON
    or be "malformed"."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        coding = environ.get('HTTP_CONTENT_ENCODING', '').strip().lower()
        has_body = environ.get('CONTENT_LENGTH', '') not in ('', '0')
        if coding in IDENTITY or not has_body:
            return self.app(environ, start_response)
        e = exception.UnsupportedMediaType(
            'Content-Encoding %r is not accepted: send the body without a '
            'content coding.' % coding)
        return errors.response_for(e)(environ, start_response)


def _pecan_app():
    noauth = CONF.api.auth_strategy == 'noauth'
    pecan_util._getargspec = _argspec
    # (pecan.make_app would add pecan's internal redirects, not used.)
    return Pecan(
        'baremetal_orch.api.controllers.root.RootController',
        hooks=[hooks.ErrorHook(), hooks.TextHook(), hooks.ContextHook(noauth),
               hooks.MicroversionHook(), hooks.RPCHook(),
               hooks.NotificationHook()],
        force_canonical=False, guess_content_type_from_ext=False,
        request_cls=Request)


def setup_app():
    """The whole API WSGI application, middleware included."""
    app = _pecan_app()
    if CONF.api.auth_strategy == 'keystone':
        app = AuthTokenMiddleware(app)
    app = HealthcheckRoute(app)
    # Bodies are read at most up to [api]max_request_body_size, whatever
    # the server in front (uwsgi, the embedded one): 413 past it.
    app = sizelimit.RequestBodySizeLimiter(app, CONF)
    CONF.set_default('max_request_body_size', CONF.api.max_request_body_size,
                     group='oslo_middleware')
    app = cors.CORS(app, CONF)
    app = errors.ErrorDocumentMiddleware(app)
    # A request signed with [profiler]hmac_keys is traced (osprofiler).
    app = profiler.wsgi_middleware(app)
    app = request_id.RequestId(app)
    app = http_proxy_to_wsgi.HTTPProxyToWSGI(app, CONF)
    app = ContentEncoding(app)
    return AccessLog(HeadAsGet(app))
