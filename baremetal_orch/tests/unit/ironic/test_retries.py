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
"""retries.call with ``settled``: a request that must not be sent blind
twice is reconciled after a lost answer, by asking, not by resending."""

import types

from baremetal_orch.ironic import outage as outage_mod
from baremetal_orch.ironic import retries
from baremetal_orch.tests import base

LOST = retries.IronicRequestFailed('PUT', 'connection reset')
REFUSED = retries.IronicRequestFailed('PUT', 'wrong state',
                                      status_code=400)
OPTS = types.SimpleNamespace(api_max_retries=2, api_retry_interval=0,
                             outage_tolerance=30)


class TestSettled(base.TestCase):

    def call(self, answers, settled_answers, resend=False):
        """``answers``: what each send does (an error or a value);
        ``settled_answers``: what each look answers."""
        now = [0.0]
        sent = []
        looked = []

        def send():
            answer = answers[len(sent)]
            sent.append(answer)
            if isinstance(answer, Exception):
                raise answer
            return answer

        def settled():
            looked.append(1)
            return settled_answers[len(looked) - 1]

        def sleep(seconds):
            now[0] += seconds

        result = retries.call(
            send, OPTS, outage_mod.Outage('test', clock=lambda: now[0]),
            sleep=sleep, clock=lambda: now[0], resend=resend,
            settled=settled)
        return result, len(sent), len(looked)

    def test_table(self):
        table = [
            # (sends, looks, result, sent, looked)
            ('answered at once', ['ok'], [], 'ok', 1, 0),
            ('lost, then Ironic shows it took it', [LOST], [True],
             True, 1, 1),
            ('lost, not taken, sent again', [LOST, 'ok'], [None],
             'ok', 2, 1),
            ('lost twice, then taken', [LOST, LOST], [None, True],
             True, 2, 2),
            ('lost, then refused: it had taken the first', [LOST, REFUSED],
             [None, True], True, 2, 2),
            ('an abort whose node left its wait state', [LOST], [False],
             False, 1, 1),
        ]
        for name, sends, looks, result, sent, looked in table:
            self.assertEqual((result, sent, looked),
                             self.call(sends, looks), name)

    def test_refused_without_a_lost_answer_asks_nothing(self):
        e = self.assertRaises(retries.IronicRequestFailed, self.call,
                              [REFUSED], [])
        self.assertEqual(400, e.status_code)

    def test_refused_after_a_loss_it_did_not_take(self):
        e = self.assertRaises(retries.IronicRequestFailed, self.call,
                              [LOST, REFUSED], [None, None])
        self.assertEqual(400, e.status_code)

    def test_tolerance_spent(self):
        self.assertRaises(retries.IronicUnreachable, self.call,
                          [LOST] * 50, [None] * 50)
