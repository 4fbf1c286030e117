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
"""Fakes of the OSC plugin's tests: a recording REST client and an app."""

import io
from unittest import mock

from baremetal_orch.osc import client as client_mod


class FakeClient(client_mod.Client):
    """The real client with :meth:`request` answered from a table.

    ``responses`` maps ``(method, path)`` to an answer, a list of answers
    (one per call, the last repeated) or a callable ``(body, params)``;
    anything else answers ``{}``. Every call is recorded in ``calls`` as
    ``(method, path, body, params, data, content_type)``.
    """

    def __init__(self, responses=None):
        self.responses = dict(responses or {})
        self.calls = []
        self.api_version = '1.0'

    def request(self, method, path, body=None, params=None, data=None,
                content_type=None):
        self.calls.append((method, path, body, dict(params or {}), data,
                           content_type))
        answer = self.responses.get((method, path), {})
        if isinstance(answer, list):
            answer = answer.pop(0) if len(answer) > 1 else answer[0]
        if callable(answer):
            answer = answer(body, params)
        if isinstance(answer, Exception):
            raise answer
        return answer


def make_app(api):
    """A stand-in for the OSC shell: a client manager, stdout, stderr."""
    app = mock.Mock()
    app.client_manager.baremetal_orch = api
    app.stdout = io.StringIO()
    app.stderr = io.StringIO()
    app.options.debug = False
    return app


def run(cmd_class, argv, api=None, prog='openstack baremetal orch'):
    """Parse ``argv`` and run the command; return (status, app, api)."""
    api = api if api is not None else FakeClient()
    app = make_app(api)
    cmd = cmd_class(app, None)
    parsed = cmd.get_parser(prog).parse_args(argv)
    status = cmd.run(parsed)
    return status, app, api
