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
"""parameters.windows of site actions: checked, stored, shown by a dry
run (doc/source/admin/steering.rst)."""

import datetime

from baremetal_orch.common import limits
from baremetal_orch.tests.unit.api import test_actions

UTC = datetime.timezone.utc
PLUS_2 = datetime.timezone(datetime.timedelta(hours=2))


def window(start, end):
    return {'start': start.isoformat(), 'end': end.isoformat()}


class TestActionWindows(test_actions.ActionApiTestCase):

    def setUp(self):
        super().setUp()
        self.load_site()
        self.now = datetime.datetime.now(UTC).replace(microsecond=0)

    def hours(self, n, tz=UTC):
        return (self.now + datetime.timedelta(hours=n)).astimezone(tz)

    def test_bad_windows_are_refused_with_their_place(self):
        good = window(self.hours(-1), self.hours(1))
        for windows, code, detail in (
                # What the schema refuses...
                ([], 'baremetal_orch.schema_validation',
                 'parameters at windows'),
                ([good, {'start': good['start']}],
                 'baremetal_orch.schema_validation', "windows[1]: 'end'"),
                ([dict(good, tz='UTC')],
                 'baremetal_orch.schema_validation', 'windows[0]: Unknown'),
                ([good] * (limits.MAX_WINDOWS + 1),
                 'baremetal_orch.schema_validation', 'more than 100 items'),
                # ... and what admission refuses.
                ([good, {'start': '2024-05-01T10:00:00',
                         'end': good['end']}],
                 'baremetal_orch.invalid_parameter',
                 'parameters.windows[1].start: UTC offset required'),
                ([{'start': 'soon', 'end': good['end']}],
                 'baremetal_orch.invalid_parameter',
                 "parameters.windows[0].start: 'soon' is not an ISO 8601"),
                ([window(self.hours(1), self.hours(1, PLUS_2))],
                 'baremetal_orch.invalid_parameter',
                 'parameters.windows[0]: end %s is not after start'
                 % self.hours(1, PLUS_2).isoformat())):
            for dry_run in (False, True):
                body = {'name': 'deploy_site', 'dry_run': dry_run,
                        'parameters': {'windows': windows}}
                self.assertError(self.post('/v1/actions', body), 400, code,
                                 detail)
        self.assertEqual((0, 0), self.counts())

    def test_windows_are_stored_with_the_action(self):
        windows = [window(self.hours(-1, PLUS_2), self.hours(2)),
                   window(self.hours(24), self.hours(26))]
        created = self.post('/v1/actions', {
            'name': 'update_site', 'parameters': {'windows': windows}},
            status=201).json
        expected = {'deployment_strategy': 'deployment-strategy',
                    'windows': windows}
        self.assertEqual(expected, created['parameters'])
        action = self.finished(created['uuid'])
        self.assertEqual(expected, action['parameters'])
        self.assertEqual('complete', action['state'])

    def test_dry_run_shows_the_windows(self):
        windows = [window(self.hours(5, PLUS_2), self.hours(6, PLUS_2)),
                   window(self.hours(-3), self.hours(-2)),
                   window(self.hours(-1), self.hours(1)),
                   window(self.hours(0.5), self.hours(2))]
        plan = self.post('/v1/actions', {
            'name': 'deploy_site', 'dry_run': True,
            'parameters': {'windows': windows}}, status=200).json['plan']
        self.assertEqual([
            {'start': self.hours(-3).isoformat(),
             'end': self.hours(-2).isoformat(), 'status': 'past'},
            {'start': self.hours(-1).isoformat(),
             'end': self.hours(2).isoformat(), 'status': 'open'},
            {'start': self.hours(5).isoformat(),
             'end': self.hours(6).isoformat(), 'status': 'future'}],
            plan['windows'])
        self.assertEqual(['ntp', 'control', 'compute', 'empty'],
                         plan['order'])
        self.assertEqual((0, 0), self.counts())

    def test_dry_run_without_windows_has_none(self):
        plan = self.post('/v1/actions', {'name': 'deploy_site',
                                         'dry_run': True},
                         status=200).json['plan']
        self.assertNotIn('windows', plan)
