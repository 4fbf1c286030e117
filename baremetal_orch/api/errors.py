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
"""API-SIG error documents.

``{"errors": [{"status", "code", "title", "detail", "request_id"}],
"message": detail}``

Domain errors carry their HTTP status and stable code; webob's HTTP errors
(404 for an unknown path, 405 for a wrong method) are wrapped the same way
by :class:`ErrorDocumentMiddleware`; anything else is a 500 with no detail
leaked (and a bug to fix).
"""

import http.client
import json
import re

from oslo_config import cfg
from oslo_log import log
import webob
import webob.exc

from baremetal_orch.common import exception

CONF = cfg.CONF
LOG = log.getLogger(__name__)


#: Codes of HTTP errors raised below our controllers (webob, middleware).
_HTTP_CODES = {413: exception.RequestTooLarge.code}


def http_code(status):
    return _HTTP_CODES.get(status, 'baremetal_orch.http_%d' % status)


def document(status, code, detail, request_id=None):
    """The API-SIG document, plus a top-level ``message``.

    ``message`` repeats the detail for the clients that read no API-SIG
    ``errors`` list: openstacksdk's generic error handling (and the
    services most of its users know, compute and network) reads
    ``message`` and would otherwise show only the HTTP reason.
    """
    return {'errors': [{
        'status': status,
        'code': code,
        'title': http.client.responses.get(status, 'Error'),
        'detail': detail,
        'request_id': request_id,
    }], 'message': detail}


def response_for(e, request=None):
    request_id = None
    if request is not None:
        request_id = request.environ.get('openstack.request_id')
    if isinstance(e, exception.BaremetalOrchException):
        status, code, detail = e.status, e.code, e.message
        if status >= 500:
            LOG.warning('Request failed with %s: %s', status, detail)
    elif isinstance(e, webob.exc.HTTPException):
        status = e.code
        code = http_code(status)
        detail = e.detail or e.explanation
    else:
        LOG.exception('Unexpected error while serving a request')
        status = 500
        code = 'baremetal_orch.internal'
        detail = 'An unexpected error occurred; see the service log.'
    body = json.dumps(document(status, code, detail, request_id))
    resp = webob.Response(body=body.encode(), status=status,
                          content_type='application/json', charset=None)
    return resp


class ErrorDocumentMiddleware:
    """Rewrite any error response that is not an API-SIG document (pecan's
    404/405, keystonemiddleware's 401, other middleware) into one."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        state = {}

        def replacement_start_response(status, headers, exc_info=None):
            code = int(status.split(' ', 1)[0])
            if code >= 400:
                state['code'] = code
                state['headers'] = headers
                state['status'] = status
                return lambda data: None
            return start_response(status, headers, exc_info)

        app_iter = self.app(environ, replacement_start_response)
        if 'code' not in state:
            return app_iter
        try:
            raw = b''.join(app_iter)
        finally:
            if hasattr(app_iter, 'close'):
                app_iter.close()
        code = state['code']
        detail = _detail(raw)
        if code == 413:
            # oslo.middleware's sizelimit: its text holds a literal "%s".
            detail = exception.RequestTooLarge(
                limit=CONF.api.max_request_body_size).message
        if detail is None:
            # Already an API-SIG document: as it is.
            start_response(state['status'], state['headers'])
            return [raw]
        body = json.dumps(document(
            code, http_code(code),
            detail or http.client.responses.get(code, ''),
            environ.get('openstack.request_id'))).encode()
        headers = [(k, v) for k, v in state['headers']
                   if k.lower() not in ('content-type', 'content-length')]
        headers += [('Content-Type', 'application/json'),
                    ('Content-Length', str(len(body)))]
        start_response(state['status'], headers)
        return [body]


def _detail(raw):
    """None for an API-SIG document, else the message of another body."""
    text = raw.decode('utf-8', 'replace')
    try:
        doc = json.loads(text)
    except ValueError:
        return _strip_html(text)
    if isinstance(doc, dict) and isinstance(doc.get('errors'), list):
        return None
    if isinstance(doc, dict) and isinstance(doc.get('error'), dict):
        # keystonemiddleware: {"error": {"code", "title", "message"}}
        doc = doc['error']
    if isinstance(doc, dict):
        # webob's JSON error pages {"code", "title", "message"}, pecan's
        # {"code", "title", "description"}: their text, not their JSON.
        for key in ('message', 'description', 'explanation', 'title'):
            if isinstance(doc.get(key), str) and doc[key].strip():
                return _strip_html(doc[key])
        return ''
    return _strip_html(text)


def _strip_html(text):

    text = re.sub(r'<[^>]+>', ' ', text)
    return ' '.join(text.split())[:1000]
