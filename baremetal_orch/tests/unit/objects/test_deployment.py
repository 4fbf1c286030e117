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
"""The signal state machine and the deployment records."""

import collections
import json
from unittest import mock
import urllib.parse

from oslo_utils import uuidutils

from baremetal_orch.common import exception
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import signals
from baremetal_orch.objects import deployment as deployments
from baremetal_orch.tests import base

Record = collections.namedtuple('Record', 'uuid final')
OPEN = Record('3a4b0b4c-7c58-4a52-9b3e-7bdf1c1f5d10', False)

# body -> (status, final, deploy_status_code, event type)
DECISIONS = [
    # Stock Heat agents: one signal, final, decided by the status code.
    ({}, ('COMPLETE', True, None, 'deployment.signal.complete')),
    ({'deploy_status_code': 0},
     ('COMPLETE', True, 0, 'deployment.signal.complete')),
    ({'deploy_status_code': '0'},
     ('COMPLETE', True, 0, 'deployment.signal.complete')),
    ({'deploy_status_code': None},
     ('COMPLETE', True, None, 'deployment.signal.complete')),
    ({'deploy_status_code': 1},
     ('FAILED', True, 1, 'deployment.signal.failed')),
    ({'deploy_status_code': ' 2 '},
     ('FAILED', True, 2, 'deployment.signal.failed')),
    ({'deploy_status_code': -1},
     ('FAILED', True, -1, 'deployment.signal.failed')),
    ({'deploy_status': None, 'deploy_status_code': 1},
     ('FAILED', True, 1, 'deployment.signal.failed')),
    # Agents that know deploy_status (deploy_status_aware).
    ({'deploy_status': 'IN_PROGRESS'},
     ('IN_PROGRESS', False, None, 'deployment.signal.in_progress')),
    ({'deploy_status': 'IN_PROGRESS', 'deploy_status_code': 1},
     ('IN_PROGRESS', False, None, 'deployment.signal.in_progress')),
    ({'deploy_status': 'COMPLETE'},
     ('COMPLETE', True, None, 'deployment.signal.complete')),
    ({'deploy_status': 'FAILED'},
     ('FAILED', True, None, 'deployment.signal.failed')),
    # An explicit status wins over the status code.
    ({'deploy_status': 'COMPLETE', 'deploy_status_code': 3},
     ('COMPLETE', True, 3, 'deployment.signal.complete')),
    ({'deploy_status': 'FAILED', 'deploy_status_code': 0},
     ('FAILED', True, 0, 'deployment.signal.failed')),
]


class TestDecide(base.TestCase):

    def test_table(self):
        for body, expected in DECISIONS:
            d = signals.decide(OPEN, body)
            self.assertEqual(expected, (d.status, d.final,
                                        d.values.get('deploy_status_code'),
                                        d.event_type), body)
            if d.final:
                self.assertEqual({'status': d.status, 'final': True},
                                 {k: d.values[k]
                                  for k in ('status', 'final')}, body)
            else:
                # IN_PROGRESS leaves status, final and code alone.
                self.assertFalse({'status', 'final', 'deploy_status_code'}
                                 & set(d.values), body)
            self.assertEqual(OPEN.uuid, d.details['deployment_uuid'])

    def test_reasons(self):
        cases = [
            ({'deploy_status': 'IN_PROGRESS',
              'deploy_status_reason': 'running hooks'}, 'running hooks'),
            ({'deploy_status': 'IN_PROGRESS'},
             'Deployment %s in progress' % OPEN.uuid),
            ({'deploy_status_code': 1},
             'Deployment %s exited with non-zero status code: 1'
             % OPEN.uuid),
            ({}, 'Deployment %s succeeded' % OPEN.uuid),
            ({'deploy_status': 'FAILED'}, 'Deployment %s failed' % OPEN.uuid),
            ({'deploy_status_code': 1, 'deploy_status_reason': 'disk full'},
             'disk full'),
        ]
        for body, reason in cases:
            d = signals.decide(OPEN, body)
            self.assertEqual(reason, d.values['status_reason'], body)
            self.assertEqual(reason, d.message, body)

    def test_in_progress_event_keeps_the_reason(self):
        d = signals.decide(OPEN, {'deploy_status': 'IN_PROGRESS',
                                  'deploy_status_reason': 'started'})
        self.assertEqual({'deployment_uuid': OPEN.uuid,
                          'status': 'IN_PROGRESS', 'reason': 'started'},
                         d.details)

    def test_final_record_refuses_every_signal(self):
        for body in ({}, {'deploy_status': 'IN_PROGRESS'},
                     {'deploy_status': 'COMPLETE'}):
            self.assertRaises(exception.SignalAfterFinal, signals.decide,
                              Record(OPEN.uuid, True), body)

    def test_unknown_status(self):
        for status in ('DONE', 'complete', ''):
            self.assertRaises(exception.InvalidParameterValue,
                              signals.decide, OPEN,
                              {'deploy_status': status})

    def test_bad_status_codes(self):
        for code in ('abc', 1.5, True, 2 ** 31, -2 ** 31 - 1, '99999999999'):
            self.assertRaises(exception.InvalidParameterValue,
                              signals.decide, OPEN,
                              {'deploy_status_code': code})

    def test_outputs_go_to_the_final_event(self):
        d = signals.decide(OPEN, {'deploy_status_code': 0,
                                  'deploy_stdout': 'ok', 'result': 'x',
                                  'addresses': ['10.0.0.1']})
        self.assertEqual({'result': 'x', 'addresses': ['10.0.0.1']},
                         d.details['outputs'])
        self.assertNotIn('outputs_dropped', d.details)
        self.assertEqual('ok', d.values['deploy_stdout'])
        self.assertNotIn('result', d.values)

    def test_outputs_over_budget_are_dropped_and_named(self):
        body = {'a': 'x' * 20000, 'b': 'y' * 20000, 'c': 1}
        kept, dropped = signals.split_outputs(body)
        self.assertEqual(['b'], dropped)
        self.assertEqual({'a', 'c'}, set(kept))
        self.assertLessEqual(len(json.dumps(kept)),
                             signals.MAX_OUTPUTS_BYTES)
        d = signals.decide(OPEN, body)
        self.assertEqual(['b'], d.details['outputs_dropped'])


class TestTruncation(base.TestCase):

    def test_short_text_is_kept(self):
        for text in ('', 'hello\n', 'x' * signals.MAX_OUTPUT_CHARS):
            self.assertEqual(text, signals.truncate_output(text))
        self.assertIsNone(signals.truncate_output(None))

    def test_long_text_keeps_its_end(self):
        text = ''.join('line %05d\n' % i for i in range(3000))
        out = signals.truncate_output(text)
        self.assertEqual(signals.MAX_OUTPUT_CHARS, len(out))
        self.assertTrue(out.startswith(signals.TRUNCATED_MARKER))
        self.assertTrue(text.endswith(out[len(signals.TRUNCATED_MARKER):]))
        self.assertTrue(out.endswith('line 02999\n'))

    def test_multibyte_text_fits_a_mysql_text_column(self):
        # 16,384 four-byte characters would be 65,536 bytes: one too many.
        for text in ('\U0001f600' * signals.MAX_OUTPUT_CHARS,
                     '\U0001f600' * 100000, '\u00e9' * 70000):
            out = signals.truncate_output(text)
            self.assertLessEqual(len(out.encode('utf-8')),
                                 signals.MAX_TEXT_BYTES)
            self.assertLessEqual(len(out), signals.MAX_OUTPUT_CHARS)
            self.assertTrue(out.startswith(signals.TRUNCATED_MARKER))
            self.assertTrue(text.endswith(
                out[len(signals.TRUNCATED_MARKER):]))

    def test_decide_truncates_stdout_stderr_and_reason(self):
        d = signals.decide(OPEN, {
            'deploy_stdout': 'o' * 20000 + 'END',
            'deploy_stderr': 'e' * 20000,
            'deploy_status_reason': 'r' * 5000})
        self.assertEqual(signals.MAX_OUTPUT_CHARS,
                         len(d.values['deploy_stdout']))
        self.assertTrue(d.values['deploy_stdout'].endswith('END'))
        self.assertEqual(signals.MAX_OUTPUT_CHARS,
                         len(d.values['deploy_stderr']))
        self.assertEqual(signals.MAX_REASON_CHARS,
                         len(d.values['status_reason']))


class TestProcess(base.DbTestCase):
    """process() against a real (sqlite) database."""

    def setUp(self):
        super().setUp()
        self.node = self.create_node(name='n1')
        self.record, self.token = deployments.create(
            self.node, '6f1c7c56-1111-4b5e-9d55-0d5d4b9b2a10', 'c1')

    def _events(self):
        return [(e.event_type, e.message) for e in dbapi.list_events(
            {'resource_uuid': self.node.uuid})]

    def test_old_agent_one_final_signal(self):
        for code, status in ((0, 'COMPLETE'), (1, 'FAILED')):
            record, _ = deployments.create(self.node, None, 'c1')
            updated = deployments.process(None, record, {
                'deploy_status_code': code, 'deploy_stdout': 'out',
                'deploy_stderr': 'err', 'answer': 42})
            row = dbapi.get_deployment(record.uuid)
            self.assertEqual((status, True, code, 'out', 'err'),
                             (row.status, row.final, row.deploy_status_code,
                              row.deploy_stdout, row.deploy_stderr))
            self.assertEqual(row.status, updated.status)
            event = dbapi.list_events({'resource_uuid': self.node.uuid})[-1]
            self.assertEqual('deployment.signal.%s' % status.lower(),
                             event.event_type)
            self.assertEqual({'answer': 42}, event.details['outputs'])
            # What the API then notifies: the updated record.
            self.assertEqual(status, updated.status)

    def test_new_agent_in_progress_then_complete(self):
        rec = deployments.process(None, self.record, {
            'deploy_status': 'IN_PROGRESS',
            'deploy_status_reason': 'hooks started'})
        row = dbapi.get_deployment(self.record.uuid)
        self.assertEqual(('IN_PROGRESS', False, 'hooks started'),
                         (row.status, row.final, row.status_reason))
        self.assertEqual('IN_PROGRESS', rec.status)
        self.assertEqual([('deployment.signal.in_progress', 'hooks started')],
                         self._events())
        done = deployments.process(None, row, {'deploy_status': 'COMPLETE',
                                               'deploy_status_code': 0})
        row = dbapi.get_deployment(self.record.uuid)
        self.assertEqual(('COMPLETE', True), (row.status, row.final))
        self.assertEqual(['deployment.signal.in_progress',
                          'deployment.signal.complete'],
                         [t for t, _ in self._events()])
        self.assertEqual(['IN_PROGRESS', 'COMPLETE'],
                         [rec.status, done.status])

    def test_in_progress_after_final_is_refused(self):
        deployments.process(None, self.record, {'deploy_status_code': 0})
        row = dbapi.get_deployment(self.record.uuid)
        self.assertRaises(exception.SignalAfterFinal, deployments.process,
                          None, row, {'deploy_status': 'IN_PROGRESS'})
        self.assertEqual(('COMPLETE', True), (row.status, row.final))
        self.assertEqual(1, len(self._events()))

    def test_racing_final_signals_one_wins(self):
        # Both requests read the record before either wrote: the in-memory
        # check passes twice, the conditional UPDATE refuses the second.
        stale = dbapi.get_deployment(self.record.uuid)
        deployments.process(None, stale, {'deploy_status_code': 0})
        self.assertFalse(stale.final)
        self.assertRaises(exception.SignalAfterFinal, deployments.process,
                          None, stale, {'deploy_status_code': 1})
        row = dbapi.get_deployment(self.record.uuid)
        self.assertEqual(('COMPLETE', 0), (row.status,
                                           row.deploy_status_code))
        self.assertEqual(1, len(self._events()))

    def test_the_token_is_masked_wherever_the_body_repeats_it(self):
        # What the stock script hook reports when it fails: its own log,
        # every input in it, the pre-signed URL included.
        record, token = deployments.create(self.node, None, 'c1')
        url = deployments.signed_url(record, token)
        line = 'deploy_signal_id=%s\n' % url
        notified = deployments.process(None, record, {
            'deploy_status_code': 1, 'deploy_stdout': line,
            'deploy_stderr': line * 3, 'deploy_status_reason': line,
            'url_output': url, 'nested': {token: [url]}}, token=token)
        row = dbapi.get_deployment(record.uuid)
        event = dbapi.list_events({'resource_uuid': self.node.uuid})[-1]
        stored = json.dumps([row.as_dict(), event.as_dict()], default=str)
        self.assertNotIn(token, stored)
        self.assertEqual('deploy_signal_id=%s?token=***\n' % record.signal_url,
                         row.deploy_stdout)
        self.assertEqual({'nested': {'***': [record.signal_url +
                                             '?token=***']},
                          'url_output': record.signal_url + '?token=***'},
                         event.details['outputs'])
        self.assertEqual(('FAILED', 1), (row.status, row.deploy_status_code))
        # What the API then notifies: the updated record.
        self.assertNotIn(token, json.dumps(notified.as_dict(), default=str))

    def test_superseded_record_takes_no_signal(self):
        deployments.create(self.node, None, 'c1')
        old = dbapi.get_deployment(self.record.uuid)
        self.assertTrue(old.deleted)
        e = self.assertRaises(exception.SignalAfterFinal, deployments.process,
                              None, old, {'deploy_status_code': 0})
        self.assertIn('superseded', str(e))
        self.assertEqual('IN_PROGRESS',
                         dbapi.get_deployment(self.record.uuid).status)


class TestDeploymentRecords(base.DbTestCase):

    def setUp(self):
        super().setUp()
        self.node = self.create_node(name='n1',
                                     instance_info={'image_source': 'img'})

    def test_create_stores_only_a_hash(self):
        self.config(group='api', public_endpoint='https://orch.example/')
        record, token = deployments.create(self.node, None, 'c1')
        row = dbapi.get_deployment(record.uuid)
        self.assertEqual('https://orch.example/v1/signals/%s' % record.uuid,
                         row.signal_url)
        self.assertNotIn(token, json.dumps(row.as_dict(), default=str))
        self.assertTrue(deployments.token_matches(row, token))
        self.assertFalse(deployments.token_matches(row, token + 'x'))
        self.assertFalse(deployments.token_matches(row, None))
        self.assertEqual(('IN_PROGRESS', False), (row.status, row.final))

    def test_signal_url_defaults(self):
        cases = [({'host_ip': '192.0.2.10', 'port': 6388},
                  'http://192.0.2.10:6388'),
                 ({'host_ip': '2001:db8::5', 'port': 6388},
                  'http://[2001:db8::5]:6388'),
                 ({'host_ip': '0.0.0.0', 'port': 80,  # nosec B104
                   'public_endpoint': 'https://orch.example:8443/'},
                  'https://orch.example:8443')]
        for options, endpoint in cases:
            self.config(group='api', public_endpoint=None)
            self.config(group='api', **options)
            record, _ = deployments.create(self.node, None, 'c1')
            self.assertEqual('%s/v1/signals/%s' % (endpoint, record.uuid),
                             record.signal_url)

    def test_current_record(self):
        action = uuidutils.generate_uuid()
        self.assertIsNone(deployments.current(self.node.uuid))
        first, _ = deployments.create(self.node, action, 'c1')
        self.assertEqual(first.uuid,
                         deployments.current(self.node.uuid, action).uuid)
        second, _ = deployments.create(self.node, None, 'c1')
        self.assertEqual(second.uuid, deployments.current(self.node.uuid).uuid)
        # The action's record was superseded.
        self.assertIsNone(deployments.current(self.node.uuid, action))

    def test_instance_info(self):
        self.config(group='api', public_endpoint='https://orch.example/')
        record, token = deployments.create(self.node, None, 'c1')
        info = deployments.instance_info(self.node, record, token)
        self.assertEqual({'image_source': 'img',
                          'deploy_signal_id': '%s?token=%s' % (
                              record.signal_url, token),
                          'deploy_signal_verb': 'POST',
                          'deploy_signal_transport': 'CFN_SIGNAL',
                          'deploy_status_aware': 'true',
                          'deployment_uuid': record.uuid}, info)
        # Heat hands every input as a string: heat-config's script hook
        # puts them in the environment of the script, and fails on
        # anything else.
        for key, value in info.items():
            self.assertIsInstance(value, str, key)
        # The token is the record's.
        query = urllib.parse.parse_qs(urllib.parse.urlparse(
            info['deploy_signal_id']).query)
        self.assertEqual({'token': [token]}, query)
        self.assertTrue(deployments.token_matches(
            dbapi.get_deployment(record.uuid), query['token'][0]))

    def test_tokens_are_compared_in_constant_time(self):
        record, token = deployments.create(self.node, None, 'c1')
        with mock.patch.object(deployments.hmac, 'compare_digest',
                               wraps=deployments.hmac.compare_digest) as cmp:
            self.assertTrue(deployments.token_matches(record, token))
            self.assertFalse(deployments.token_matches(record, 'forged'))
        self.assertEqual(2, cmp.call_count)

    def test_wait_returns_the_final_record(self):
        record, _ = deployments.create(self.node, None, 'c1')
        deployments.process(None, record, {'deploy_status_code': 0})
        self.assertEqual('COMPLETE', deployments.wait_for_final(
            record.uuid, 1).status)

    def test_wait_times_out(self):
        record, _ = deployments.create(self.node,
                                       uuidutils.generate_uuid(), 'c1')
        self.assertRaises(exception.ProvisioningTimeout,
                          deployments.wait_for_final, record.uuid, 0)
        row = dbapi.get_deployment(record.uuid)
        self.assertEqual(('FAILED', True), (row.status, row.final))
        self.assertIn('timeout', row.status_reason)
        events = dbapi.list_events({'resource_uuid': self.node.uuid})
        self.assertEqual(['deployment.signal.timeout'],
                         [e.event_type for e in events])
        self.assertEqual(record.action_uuid, events[0].action_uuid)
        # A late signal is refused.
        self.assertRaises(exception.SignalAfterFinal, deployments.process,
                          None, row, {'deploy_status_code': 0})

    def test_final_signal_just_before_the_timeout_wins(self):
        record, _ = deployments.create(self.node, None, 'c1')
        stale = dbapi.get_deployment(record.uuid)
        deployments.process(None, record, {'deploy_status_code': 0})
        real_get = dbapi.get_deployment
        calls = []

        def get(uuid):
            calls.append(uuid)
            # The waiter's read happened before the signal's write.
            return stale if len(calls) == 1 else real_get(uuid)

        with mock.patch.object(deployments.dbapi, 'get_deployment', get):
            row = deployments.wait_for_final(record.uuid, 0)
        self.assertEqual(('COMPLETE', True), (row.status, row.final))
        self.assertEqual('COMPLETE', real_get(record.uuid).status)
        self.assertEqual([], [e for e in dbapi.list_events(
            {'event_type': 'deployment.signal.timeout'})])
