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
"""POST and PUT /v1/signals/{deployment_uuid}: every answer, and a whole
site deployment whose nodes signal."""

import io
import json
import logging
import os
import urllib.parse

import fixtures
from oslo_utils import uuidutils
import webob
import webtest

from baremetal_orch.api import app
from baremetal_orch.common import policy
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import signals
from baremetal_orch.notifications import notify
from baremetal_orch.objects import deployment as deployments
from baremetal_orch.tests import base

MIB = 1024 * 1024


def signal_path(record):
    return urllib.parse.urlparse(record.signal_url).path


def presigned_path(info):
    """Path and query of the pre-signed URL a node received."""
    url = urllib.parse.urlparse(info['deploy_signal_id'])
    return '%s?%s' % (url.path, url.query)


class SignalTestMixin:

    def make_record(self, name='n1', action_uuid=None):
        node = self.create_node(name=name)
        record, token = deployments.create(node, action_uuid,
                                           'test-conductor')
        return node, record, token

    def signal(self, path, body=None, token=None, raw=None,
               content_type='application/json', headers=None, app=None,
               method='post'):
        """A node's POST (or PUT): no Keystone token, no persona
        headers; ``token`` in X-Signal-Token."""
        all_headers = dict(headers or {})
        if token is not None:
            all_headers['X-Signal-Token'] = token
        data = raw if raw is not None else json.dumps(body).encode()
        return getattr(app or self.app, method)(
            path, params=data, headers=all_headers,
            content_type=content_type, expect_errors=True)


class TestSignalApi(SignalTestMixin, base.ApiTestCase):

    def setUp(self):
        super().setUp()
        self.action_uuid = uuidutils.generate_uuid()
        self.node, self.record, self.token = self.make_record(
            action_uuid=self.action_uuid)
        self.path = signal_path(self.record)
        self.notify = self.useFixture(fixtures.MockPatchObject(
            notify, 'signal')).mock

    def row(self):
        return dbapi.get_deployment(self.record.uuid)

    def events(self):
        return self.get('/v1/events?resource_uuid=%s' % self.node.uuid,
                        status=200).json['events']

    # 200 -------------------------------------------------------------------

    def test_in_progress(self):
        resp = self.signal(self.path, {'deploy_status': 'IN_PROGRESS',
                                       'deploy_status_reason': 'started'},
                           self.token)
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual(('IN_PROGRESS', 'started'),
                         (resp.json['status'], resp.json['status_reason']))
        self.assertFalse(self.row().final)
        events = self.events()
        self.assertEqual([('deployment.signal.in_progress', 'started',
                           self.action_uuid)],
                         [(e['event_type'], e['message'], e['action_uuid'])
                          for e in events])
        self.assertEqual(self.record.uuid,
                         events[0]['details']['deployment_uuid'])
        self.assertEqual('IN_PROGRESS', self.notify.call_args[0][2])

    def test_final_signal_of_a_stock_heat_agent(self):
        resp = self.signal(self.path, {
            'deploy_stdout': 'configured\n', 'deploy_stderr': '',
            'deploy_status_code': 0, 'result': 'ok'}, self.token)
        self.assertEqual(200, resp.status_int, resp.text)
        doc = resp.json
        self.assertEqual(('COMPLETE', 0, 'configured\n', ''),
                         (doc['status'], doc['deploy_status_code'],
                          doc['deploy_stdout'], doc['deploy_stderr']))
        self.assertTrue(self.row().final)
        event = self.events()[-1]
        self.assertEqual('deployment.signal.complete', event['event_type'])
        self.assertEqual({'result': 'ok'}, event['details']['outputs'])
        self.assertEqual('COMPLETE', self.notify.call_args[0][2])

    def test_non_zero_status_code_fails(self):
        resp = self.signal(self.path, {'deploy_status_code': 4,
                                       'deploy_stderr': 'boom'}, self.token)
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual(('FAILED', 4), (resp.json['status'],
                                         resp.json['deploy_status_code']))
        self.assertEqual('deployment.signal.failed',
                         self.events()[-1]['event_type'])

    def test_lenient_content_types(self):
        # A charset, curl -d's form type, or none at all: read as JSON.
        for content_type in ('application/json; charset=UTF-8',
                             'application/x-www-form-urlencoded'):
            resp = self.signal(self.path, {'deploy_status': 'IN_PROGRESS',
                                           'deploy_status_reason': 'a=b&c'},
                               self.token, content_type=content_type)
            self.assertEqual(200, resp.status_int, resp.text)
            self.assertEqual('a=b&c', self.row().status_reason)
        req = webob.Request.blank(self.path, method='POST',
                                  headers={'X-Signal-Token': self.token},
                                  body=b'{"deploy_status_code": 0}')
        self.assertNotIn('CONTENT_TYPE', req.environ)
        resp = req.get_response(self.app.app)
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual('COMPLETE', self.row().status)

    def test_outputs_named_like_arguments_are_outputs(self):
        # pecan offers the keys of a JSON body as controller arguments:
        # the deployment is named by the path only (no deployment named:
        # 405, as for any body).
        resp = self.signal('/v1/signals', {'uuid': self.record.uuid,
                                           'deploy_status_code': 0},
                           self.token)
        self.assertError(resp, 405, 'baremetal_orch.http_405')
        self.assertFalse(self.row().final)
        _, other, other_token = self.make_record('n2')
        resp = self.signal(signal_path(other), {
            'uuid': self.record.uuid, 'deploy_status_code': 0}, other_token)
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual(other.uuid, resp.json['uuid'])
        self.assertFalse(self.row().final)

    def test_stdout_is_truncated(self):
        resp = self.signal(self.path, {
            'deploy_stdout': 'x' * 50000 + 'THE END',
            'deploy_status_code': 0}, self.token)
        self.assertEqual(200, resp.status_int, resp.text)
        stored = self.row().deploy_stdout
        self.assertEqual(signals.MAX_OUTPUT_CHARS, len(stored))
        self.assertTrue(stored.startswith(signals.TRUNCATED_MARKER))
        self.assertTrue(stored.endswith('THE END'))

    def test_documents_never_show_the_token(self):
        resp = self.signal(self.path, {'deploy_status_code': 0}, self.token)
        docs = [resp.text,
                self.get('/v1/deployments/%s' % self.record.uuid,
                         status=200).text,
                self.get('/v1/deployments', status=200).text,
                self.get('/v1/events', status=200).text]
        for text in docs:
            self.assertNotIn(self.token, text)
            self.assertNotIn(self.record.token_hash, text)
            self.assertNotIn('token', text)

    def test_exactly_one_mib_is_accepted(self):
        body = json.dumps({'deploy_status_code': 0, 'pad': ''}).encode()
        pad = MIB - len(body)
        body = json.dumps({'deploy_status_code': 0,
                           'pad': 'p' * pad}).encode()
        self.assertEqual(MIB, len(body))
        resp = self.signal(self.path, raw=body, token=self.token)
        self.assertEqual(200, resp.status_int, resp.text)

    def test_chunked_body_is_read(self):
        resp = self._chunked(b'{"deploy_status": "IN_PROGRESS"}')
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual('IN_PROGRESS', resp.json['status'])

    # The pre-signed URL, as stock heat-config agents use it ---------------

    def test_presigned_url_with_post_and_put(self):
        info = deployments.instance_info(self.node, self.record, self.token)
        path = presigned_path(info)
        # heat-config-notify sends nothing but a content-type header.
        resp = self.signal(path, {'deploy_status': 'IN_PROGRESS'},
                           method=info['deploy_signal_verb'].lower())
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual('IN_PROGRESS', resp.json['status'])
        resp = self.signal(path, {'deploy_status_code': 3,
                                  'deploy_stderr': 'boom'}, method='put')
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual(('FAILED', 3), (resp.json['status'],
                                         resp.json['deploy_status_code']))
        # A replay of the final signal.
        resp = self.signal(path, {'deploy_status_code': 3}, method='put')
        self.assertError(resp, 409, 'baremetal_orch.signal.already_final')
        self.assertEqual(['deployment.signal.in_progress',
                          'deployment.signal.failed'],
                         [e['event_type'] for e in self.events()])

    def test_put_is_a_signal(self):
        # What heat-config-notify sends for deploy_signal_verb PUT.
        resp = self.signal(self.path, {'deploy_status_code': 0}, self.token,
                           method='put')
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual('COMPLETE', self.row().status)

    def test_query_and_header_tokens(self):
        ok = '%s?token=%s' % (self.path, self.token)
        forged = '%s?token=forged' % self.path
        cases = [
            # (path, header token, expected status)
            (forged, None, 401),
            (self.path + '?token=', None, 401),
            (forged, self.token, 401),         # they differ
            (ok, 'forged', 401),
            (ok + '&token=' + self.token, None, 401),  # given twice
            (ok, self.token, 200),             # both, the same
        ]
        for path, header, status in cases:
            resp = self.signal(path, {'deploy_status': 'IN_PROGRESS'},
                               header)
            self.assertEqual(status, resp.status_int, (path, resp.text))
            if status == 401:
                self.assertEqual('baremetal_orch.signal.invalid_token',
                                 resp.json['errors'][0]['code'])
        # Another query parameter is no credential, and is ignored.
        resp = self.signal(ok + '&deploy_status=FAILED',
                           {'deploy_status': 'IN_PROGRESS'})
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual('IN_PROGRESS', self.row().status)

    def test_refused_signals_are_logged_without_the_token(self):
        logger = self.useFixture(fixtures.FakeLogger(
            name='baremetal_orch.api.controllers.v1.signals',
            level=logging.WARNING))
        forged = self.token[:-4] + 'AAAA'
        self.signal(self.path, {'deploy_status_code': 0})
        self.signal('%s?token=%s' % (self.path, forged),
                    {'deploy_status_code': 0})
        self.signal(self.path, {'deploy_status': 'DONE'}, self.token)
        self.signal(self.path, {'deploy_status_code': 0}, self.token)
        self.signal(self.path, {'deploy_status_code': 0}, self.token)
        lines = logger.output.splitlines()
        self.assertEqual(4, len(lines), logger.output)
        for line in lines:
            self.assertIn('Refused a signal for deployment %s: '
                          % self.record.uuid, line)
            self.assertNotIn(self.token, line)
            self.assertNotIn(forged, line)
        self.assertIn('no token', lines[0])
        self.assertIn('the token does not match', lines[1])
        self.assertIn("'DONE' is not one of", lines[2])
        self.assertIn('already received its final signal', lines[3])
        # What is not a UUID is logged quoted, on its one line.
        self.signal('/v1/signals/x%0Aforged-line', {})
        self.assertIn("Refused a signal for deployment 'x\\nforged-line'",
                      logger.output.splitlines()[4])

    def test_the_access_log_masks_the_token(self):
        logger = self.useFixture(fixtures.FakeLogger(
            name='baremetal_orch.api.access', level=logging.INFO))
        info = deployments.instance_info(self.node, self.record, self.token)
        resp = self.signal(presigned_path(info), {'deploy_status_code': 0})
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertNotIn(self.token, logger.output)
        self.assertIn('"POST %s?token=***"' % self.path, logger.output)
        self.assertIn('status: 200', logger.output)

    # 401 -------------------------------------------------------------------

    def test_missing_or_wrong_token(self):
        _, other, other_token = self.make_record('n2')
        for token in (None, '', 'forged', self.token + 'x', other_token,
                      self.record.token_hash):
            resp = self.signal(self.path, {'deploy_status_code': 0}, token)
            error = self.assertError(resp, 401,
                                     'baremetal_orch.signal.invalid_token')
            self.assertIn(self.record.uuid, error['detail'])
        row = self.row()
        self.assertEqual(('IN_PROGRESS', False), (row.status, row.final))
        self.assertEqual([], self.events())
        self.notify.assert_not_called()

    def test_token_is_checked_before_the_body(self):
        resp = self.signal(self.path, raw=b'{not json', token='forged')
        self.assertError(resp, 401, 'baremetal_orch.signal.invalid_token')

    # 404 -------------------------------------------------------------------

    def test_unknown_deployment(self):
        for ident in (uuidutils.generate_uuid(), 'not-a-uuid'):
            resp = self.signal('/v1/signals/%s' % ident,
                               {'deploy_status_code': 0}, self.token)
            self.assertError(resp, 404,
                             'baremetal_orch.deployment.not_found')

    # 409 -------------------------------------------------------------------

    def test_signals_after_the_final_one(self):
        self.assertEqual(200, self.signal(
            self.path, {'deploy_status_code': 0}, self.token).status_int)
        for body in ({'deploy_status_code': 0},
                     {'deploy_status_code': 1},
                     {'deploy_status': 'IN_PROGRESS'},
                     {'deploy_status': 'FAILED'}):
            resp = self.signal(self.path, body, self.token)
            self.assertError(resp, 409, 'baremetal_orch.signal.already_final')
        row = self.row()
        self.assertEqual(('COMPLETE', 0), (row.status,
                                           row.deploy_status_code))
        self.assertEqual(1, len(self.events()))

    def test_superseded_deployment(self):
        node = dbapi.get_node(self.node.uuid)
        deployments.create(node, None, 'test-conductor')
        resp = self.signal(self.path, {'deploy_status_code': 0}, self.token)
        self.assertError(resp, 409, 'baremetal_orch.signal.already_final',
                         detail_contains='superseded')

    # 413 -------------------------------------------------------------------

    def test_body_over_one_mib(self):
        body = json.dumps({'deploy_status_code': 0,
                           'pad': 'p' * MIB}).encode()
        resp = self.signal(self.path, raw=body, token=self.token)
        self.assertError(resp, 413, 'baremetal_orch.request_too_large')
        self.assertFalse(self.row().final)

    def test_content_length_is_checked_before_anything(self):
        # Even before the token: the body is never read.
        resp = self.signal(self.path, raw=b'x' * (MIB + 1), token='forged')
        self.assertError(resp, 413, 'baremetal_orch.request_too_large')

    def test_chunked_body_over_one_mib(self):
        source = _CountingReader(b'{"pad": "' + b'p' * (4 * MIB) + b'"}')
        resp = self._chunked(source)
        self.assertEqual(413, resp.status_int, resp.text)
        self.assertEqual('baremetal_orch.request_too_large',
                         resp.json['errors'][0]['code'])
        # It stopped reading just past the limit.
        self.assertLessEqual(source.read_bytes, MIB + 1)
        self.assertFalse(self.row().final)

    def _chunked(self, data):
        req = webob.Request.blank(self.path, method='POST', headers={
            'X-Signal-Token': self.token,
            'Content-Type': 'application/json',
            'Transfer-Encoding': 'chunked'})
        req.body_file = (data if isinstance(data, io.RawIOBase)
                         else io.BytesIO(data))
        self.assertIsNone(req.content_length)
        resp = req.get_response(self.app.app)
        resp.json = json.loads(resp.body) if resp.body else None
        return resp

    # 400 and 415 ----------------------------------------------------------

    def test_bad_bodies(self):
        cases = [
            (b'{"deploy_status": ', 'baremetal_orch.invalid_parameter'),
            (b'', 'baremetal_orch.invalid_parameter'),
            (b'[1, 2]', 'baremetal_orch.schema_validation'),
            (b'"COMPLETE"', 'baremetal_orch.schema_validation'),
            (b'{"deploy_status": "DONE"}',
             'baremetal_orch.schema_validation'),
            (b'{"deploy_status": "complete"}',
             'baremetal_orch.schema_validation'),
            (b'{"deploy_status_code": "abc"}',
             'baremetal_orch.schema_validation'),
            (b'{"deploy_status_code": 1.5}',
             'baremetal_orch.schema_validation'),
            (b'{"deploy_status_code": 4294967296}',
             'baremetal_orch.schema_validation'),
            (b'{"deploy_status_code": "9999999999"}',
             'baremetal_orch.invalid_parameter'),
            (b'{"deploy_stdout": 42}', 'baremetal_orch.schema_validation'),
            (b'{"deploy_status_reason": {"a": 1}}',
             'baremetal_orch.schema_validation'),
        ]
        for raw, code in cases:
            resp = self.signal(self.path, raw=raw, token=self.token)
            self.assertError(resp, 400, code)
        row = self.row()
        self.assertEqual(('IN_PROGRESS', False), (row.status, row.final))
        self.assertEqual([], self.events())

    def test_unknown_status_names_the_field(self):
        resp = self.signal(self.path, {'deploy_status': 'DONE'}, self.token)
        self.assertError(resp, 400, detail_contains='deploy_status')

    def test_not_json(self):
        resp = self.signal(self.path, raw=b'deploy_status=COMPLETE',
                           token=self.token, content_type='text/plain')
        self.assertError(resp, 415, 'baremetal_orch.unsupported_media_type')


class _CountingReader(io.RawIOBase):
    """A request body that counts what was read from it."""

    def __init__(self, data):
        self._data = io.BytesIO(data)
        self.read_bytes = 0

    def readable(self):
        return True

    def readinto(self, buf):
        chunk = self._data.read(len(buf))
        buf[:len(chunk)] = chunk
        self.read_bytes += len(chunk)
        return len(chunk)


class TestSignalsBehindKeystone(SignalTestMixin, base.ConductorTestCase):
    """The real keystonemiddleware auth_token in front.

    It rejects any other request without a token, and lets signals through.
    """

    def setUp(self):
        super().setUp()
        self.config(group='api', auth_strategy='keystone')
        # Unreachable on purpose: nothing here may need Keystone.
        self.config(group='keystone_authtoken',
                    www_authenticate_uri='http://127.0.0.1:9/identity')
        policy.reset()
        self.addCleanup(policy.reset)
        self.app = webtest.TestApp(app.setup_app())

    def test_signal_needs_no_keystone_token(self):
        resp = self.app.get('/v1/deployments', expect_errors=True)
        self.assertEqual(401, resp.status_int)
        _, record, token = self.make_record()
        resp = self.signal(signal_path(record),
                           {'deploy_status': 'IN_PROGRESS'}, token)
        self.assertEqual(200, resp.status_int, resp.text)
        resp = self.signal(signal_path(record), {'deploy_status_code': 0},
                           token)
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual('COMPLETE', dbapi.get_deployment(record.uuid).status)

    def test_the_signal_token_is_still_required(self):
        _, record, _ = self.make_record()
        resp = self.signal(signal_path(record), {'deploy_status_code': 0},
                           'forged')
        self.assertEqual(401, resp.status_int)
        self.assertEqual('baremetal_orch.signal.invalid_token',
                         resp.json['errors'][0]['code'])


STRATEGY = {
    'schema': 'shipyard/DeploymentStrategy/v1',
    'metadata': {'schema': 'metadata/Document/v1',
                 'name': 'deployment-strategy'},
    'data': {'groups': [{
        'name': 'signalled', 'critical': True, 'depends_on': [],
        'selectors': [{'node_tags': ['signalled']}],
        'success_criteria': {'minimum_successful_nodes': 2},
        'wait_for_signal': True}]},
}


class TestSignalsEndToEnd(SignalTestMixin, base.ApiTestCase):
    """deploy_site with wait_for_signal, through the API.

    The test plays each node's agent from the instance info the fake driver
    writes to its config drive.
    """

    def setUp(self):
        super().setUp()
        self.drive = self.useFixture(fixtures.TempDir()).path
        self.config(group='fake_driver', configdrive_dir=self.drive)
        # The silent node's wait; the other agents answer in milliseconds.
        self.config(group='conductor', signal_timeout=2)

    def config_drive(self, node_uuid):
        path = os.path.join(self.drive, '%s.json' % node_uuid)
        self.wait_for(lambda: os.path.exists(path))
        # It holds the token: readable by its owner only.
        self.assertEqual(0o600, os.stat(path).st_mode & 0o777)
        with open(path) as f:
            return json.load(f)['instance_info']

    @staticmethod
    def record_of(info):
        return dbapi.get_deployment(info['deployment_uuid'])

    def test_site_deploy_waits_for_signals(self):
        nodes = {}
        for name in ('new-agent', 'old-agent', 'failing-agent', 'silent'):
            nodes[name] = self.post('/v1/nodes', {
                'name': name, 'driver': 'fake', 'tags': ['signalled'],
                'driver_info': {}},
                status=201).json['uuid']
        self.post('/v1/deployment_strategies', STRATEGY, status=201)
        action = self.post('/v1/actions', {'name': 'deploy_site'},
                           status=201).json
        drives = {name: self.config_drive(uuid)
                  for name, uuid in nodes.items()}
        for info in drives.values():
            self.assertEqual('true', info['deploy_status_aware'])
            self.assertIn(info['deployment_uuid'], info['deploy_signal_id'])
        paths = {name: presigned_path(info) for name, info in drives.items()}

        # A forged token is refused, and changes nothing.
        resp = self.signal(signal_path(self.record_of(drives['new-agent'])),
                           {'deploy_status_code': 0}, 'forged')
        self.assertError(resp, 401, 'baremetal_orch.signal.invalid_token')

        # The new agent says it started: visible while the action runs
        # (it cannot end before this node's final signal or its timeout).
        resp = self.signal(paths['new-agent'], {
            'deploy_status': 'IN_PROGRESS',
            'deploy_status_reason': 'running os-refresh-config'})
        self.assertEqual(200, resp.status_int, resp.text)
        events = self.get('/v1/events?action_uuid=%s&resource_uuid=%s'
                          % (action['uuid'], nodes['new-agent']),
                          status=200).json['events']
        self.assertEqual([('deployment.signal.in_progress',
                           'running os-refresh-config')],
                         [(e['event_type'], e['message']) for e in events])
        self.assertEqual('running', self.get(
            '/v1/actions/%s' % action['uuid'], status=200).json['state'])
        self.assertEqual('IN_PROGRESS', self.get(
            '/v1/deployments/%s' % drives['new-agent']['deployment_uuid'],
            status=200).json['status'])

        for name, body in (
                ('new-agent', {'deploy_status': 'COMPLETE',
                               'deploy_status_code': 0}),
                ('old-agent', {'deploy_status_code': 0,
                               'deploy_stdout': 'done'}),
                ('failing-agent', {'deploy_status_code': 2,
                                   'deploy_stderr': 'hook failed'})):
            resp = self.signal(paths[name], body)
            self.assertEqual(200, resp.status_int, resp.text)

        action = self.wait_for(lambda: (lambda a: a if a['state'] not in (
            'pending', 'running') else None)(
            self.get('/v1/actions/%s' % action['uuid'], status=200).json))
        self.assertEqual(('complete', 'success_with_failures'),
                         (action['state'], action['result']))
        report = action['report']
        self.assertEqual({'new-agent': 'success', 'old-agent': 'success',
                          'failing-agent': 'failure', 'silent': 'failure'},
                         report['nodes'])
        self.assertEqual('success', report['groups']['signalled']['status'])

        records = self.get('/v1/deployments?action_uuid=%s'
                           % action['uuid'], status=200).json['deployments']
        by_node = {r['node_uuid']: r for r in records}
        self.assertEqual(
            {'new-agent': 'COMPLETE', 'old-agent': 'COMPLETE',
             'failing-agent': 'FAILED', 'silent': 'FAILED'},
            {name: by_node[uuid]['status'] for name, uuid in nodes.items()})
        self.assertIn('timeout', by_node[nodes['silent']]['status_reason'])
        events = self.get('/v1/events?action_uuid=%s' % action['uuid'],
                          status=200).json['events']
        self.assertEqual(
            {'new-agent': ['deployment.signal.in_progress',
                           'deployment.signal.complete'],
             'old-agent': ['deployment.signal.complete'],
             # The node's failure follows its signal (or its timeout).
             'failing-agent': ['deployment.signal.failed', 'node.failed'],
             'silent': ['deployment.signal.timeout', 'node.failed']},
            {name: [e['event_type'] for e in events
                    if e['resource_uuid'] == uuid]
             for name, uuid in nodes.items()})
        # The late agent of the silent node is told it is too late.
        resp = self.signal(paths['silent'], {'deploy_status_code': 0})
        self.assertError(resp, 409, 'baremetal_orch.signal.already_final')
        # The node task of each failure says why.
        tree = self.get('/v1/tasks/%s?tree=true' % action['task_uuid'],
                        status=200).json
        node_tasks = {t['name']: t for g in tree['subtasks']
                      for p in g['subtasks'] if p['name'] == 'deploy'
                      for t in p['subtasks']}
        self.assertIn('status code: 2',
                      node_tasks['failing-agent']['reason'])
        self.assertIn('final signal', node_tasks['silent']['reason'])
