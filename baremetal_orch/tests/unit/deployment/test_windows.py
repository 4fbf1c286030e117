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

"""Maintenance windows (doc/source/admin/steering.rst, parameters.windows)."""

import datetime
import json

import testscenarios

from baremetal_orch.common import exception
from baremetal_orch.common import limits
from baremetal_orch.deployment import windows
from baremetal_orch.tests import base

UTC = datetime.timezone.utc


def at(hour, minute=0, day=1):
    """2024-05-<day> <hour>:<minute> UTC."""
    return datetime.datetime(2024, 5, day, hour, minute, tzinfo=UTC)


def w(start, end):
    return {'start': start, 'end': end}


# 10:00-12:00Z and 14:00-16:00Z on 2024-05-01, the second with an offset.
TWO = [w('2024-05-01T16:00:00+02:00', '2024-05-01T18:00:00+02:00'),
       w('2024-05-01T10:00:00Z', '2024-05-01T12:00:00Z')]


class TestParse(testscenarios.WithScenarios, base.TestCase):
    """One row: windows -> merged (start, end) in UTC."""

    scenarios = [
        ('none', dict(given=None, expected=())),
        ('z', dict(given=[w('2024-05-01T10:00:00Z', '2024-05-01T12:00Z')],
                   expected=((at(10), at(12)),))),
        ('offset_converted_to_utc', dict(
            given=[w('2024-05-01T12:00:00+02:00',
                     '2024-05-01T09:00:00-05:00')],
            expected=((at(10), at(14)),))),
        ('sorted', dict(given=TWO,
                        expected=((at(10), at(12)), (at(14), at(16))))),
        ('overlaps_merged', dict(
            given=[w('2024-05-01T11:00Z', '2024-05-01T13:00Z'),
                   w('2024-05-01T10:00Z', '2024-05-01T12:00Z'),
                   w('2024-05-01T15:00Z', '2024-05-01T16:00Z')],
            expected=((at(10), at(13)), (at(15), at(16))))),
        ('contained_merged', dict(
            given=[w('2024-05-01T10:00Z', '2024-05-01T18:00Z'),
                   w('2024-05-01T12:00Z', '2024-05-01T13:00Z')],
            expected=((at(10), at(18)),))),
        ('touching_merged', dict(
            given=[w('2024-05-01T12:00Z', '2024-05-01T14:00+00:00'),
                   w('2024-05-01T10:00Z', '2024-05-01T14:00+02:00')],
            expected=((at(10), at(14)),))),
        ('across_midnight', dict(
            given=[w('2024-05-01T22:00Z', '2024-05-02T02:00Z')],
            expected=((at(22), at(2, day=2)),))),
    ]

    def test_parse(self):
        got = windows.parse(self.given)
        self.assertEqual(self.expected, got)
        for start, end in got:
            self.assertEqual(datetime.timedelta(0), start.utcoffset())
            self.assertEqual(datetime.timedelta(0), end.utcoffset())


class TestParseErrors(testscenarios.WithScenarios, base.TestCase):
    """One row: bad windows -> the 400's message."""

    good = w('2024-05-01T10:00Z', '2024-05-01T12:00Z')
    scenarios = [
        ('not_a_list', dict(given={'start': 'x'},
                            message='parameters.windows: a list of')),
        ('a_string', dict(given='2024-05-01T10:00Z/PT2H',
                          message='parameters.windows: a list of')),
        ('empty', dict(given=[], message='parameters.windows: at least '
                       'one window is required')),
        ('item_not_an_object', dict(
            given=[good, ['a', 'b']],
            message='parameters.windows[1]: a window is an object')),
        ('missing_end', dict(
            given=[good, {'start': '2024-05-01T10:00Z'}],
            message='parameters.windows[1]: missing end')),
        ('missing_both', dict(given=[{}], message='parameters.windows[0]: '
                              'missing start, end')),
        ('extra_key', dict(
            given=[dict(good, timezone='UTC')],
            message='parameters.windows[0]: unknown field(s) timezone')),
        ('unparsable', dict(
            given=[good, w('tomorrow', '2024-05-01T12:00Z')],
            message="parameters.windows[1].start: 'tomorrow' is not an "
                    "ISO 8601")),
        ('bad_day', dict(
            given=[w('2024-05-01T10:00Z', '2024-02-30T12:00Z')],
            message="parameters.windows[0].end: '2024-02-30T12:00Z' is "
                    "not an ISO 8601")),
        ('not_a_string', dict(
            given=[w(1714557600, '2024-05-01T12:00Z')],
            message='parameters.windows[0].start: an ISO 8601 date and '
                    'time is required, not int')),
        ('naive', dict(
            given=[good, w('2024-05-01T10:00:00', '2024-05-01T12:00Z')],
            message='parameters.windows[1].start: UTC offset required')),
        ('naive_end', dict(
            given=[w('2024-05-01T10:00Z', '2024-05-01T12:00')],
            message='parameters.windows[0].end: UTC offset required')),
        ('date_only', dict(
            given=[w('2024-05-01', '2024-05-02T00:00Z')],
            message='parameters.windows[0].start: UTC offset required')),
        ('end_equals_start', dict(
            given=[w('2024-05-01T12:00+02:00', '2024-05-01T10:00Z')],
            message='parameters.windows[0]: end 2024-05-01T10:00Z is not '
                    'after start 2024-05-01T12:00+02:00')),
        ('end_before_start', dict(
            given=[w('2024-05-01T12:00Z', '2024-05-01T10:00Z')],
            message='parameters.windows[0]: end 2024-05-01T10:00Z is not '
                    'after start')),
    ]

    def test_refused(self):
        error = self.assertRaises(exception.InvalidParameterValue,
                                  windows.parse, self.given)
        self.assertIn(self.message, error.message)
        self.assertEqual(400, error.status)


class TestLimit(base.TestCase):

    def test_too_many_windows(self):
        many = [w('2024-05-01T10:00Z', '2024-05-01T11:00Z')] * (
            limits.MAX_WINDOWS + 1)
        error = self.assertRaises(exception.LimitExceeded, windows.parse,
                                  many)
        self.assertIn('parameters.windows', error.message)
        self.assertEqual(1, len(windows.parse(many[1:])))


class TestStateAt(testscenarios.WithScenarios, base.TestCase):
    """One row: windows, now -> (inside, closes_at, next_opens_at, sleep).

    The windows are 10:00-12:00Z and 14:00-16:00Z (given as 16:00+02:00
    to 18:00+02:00).
    """

    scenarios = [
        ('before_all', dict(given=TWO, now=at(9),
                            state=(False, None, at(10)), sleep=3600)),
        ('start_is_inside', dict(given=TWO, now=at(10),
                                 state=(True, at(12), at(14)),
                                 sleep=7200)),
        ('inside', dict(given=TWO, now=at(11, 30),
                        state=(True, at(12), at(14)), sleep=1800)),
        ('end_is_outside', dict(given=TWO, now=at(12),
                                state=(False, None, at(14)), sleep=7200)),
        ('between', dict(given=TWO, now=at(13),
                         state=(False, None, at(14)), sleep=3600)),
        ('second_via_offset', dict(given=TWO, now=at(14),
                                   state=(True, at(16), None),
                                   sleep=7200)),
        ('now_with_offset', dict(
            given=TWO, now=datetime.datetime(
                2024, 5, 1, 17, 0, tzinfo=datetime.timezone(
                    datetime.timedelta(hours=2))),
            state=(True, at(16), None), sleep=3600)),
        ('all_past', dict(given=TWO, now=at(16),
                          state=(False, None, None), sleep=None)),
        ('no_windows', dict(given=None, now=at(3),
                            state=(True, None, None), sleep=None)),
        ('empty_parsed', dict(given=(), now=at(3),
                              state=(True, None, None), sleep=None)),
        ('merged_overlap_keeps_inside', dict(
            given=[w('2024-05-01T10:00Z', '2024-05-01T12:00Z'),
                   w('2024-05-01T11:00Z', '2024-05-01T13:00Z')],
            now=at(12), state=(True, at(13), None), sleep=3600)),
        ('parsed_windows', dict(given=windows.parse(TWO), now=at(12, 30),
                                state=(False, None, at(14)), sleep=5400)),
    ]

    def test_state(self):
        state = windows.state_at(self.given, self.now)
        self.assertEqual(windows.WindowState(*self.state), state)
        self.assertEqual(self.sleep,
                         windows.seconds_until_change(self.given, self.now))


class TestDescribe(base.TestCase):

    def test_statuses_at_now(self):
        given = TWO + [w('2024-05-01T08:00Z', '2024-05-01T09:00Z')]
        described = windows.describe(given, at(11))
        self.assertEqual([
            {'start': '2024-05-01T08:00:00+00:00',
             'end': '2024-05-01T09:00:00+00:00', 'status': 'past'},
            {'start': '2024-05-01T10:00:00+00:00',
             'end': '2024-05-01T12:00:00+00:00', 'status': 'open'},
            {'start': '2024-05-01T14:00:00+00:00',
             'end': '2024-05-01T16:00:00+00:00', 'status': 'future'}],
            described)
        self.assertEqual(described, json.loads(json.dumps(described)))

    def test_boundaries(self):
        self.assertEqual(['open', 'future'], [
            d['status'] for d in windows.describe(TWO, at(10))])
        self.assertEqual(['past', 'future'], [
            d['status'] for d in windows.describe(TWO, at(12))])

    def test_none(self):
        self.assertEqual([], windows.describe(None, at(10)))


class TestNaiveNow(base.TestCase):

    def test_refused(self):
        naive = datetime.datetime(2024, 5, 1, 10)
        for func in (windows.state_at, windows.seconds_until_change,
                     windows.describe):
            self.assertRaises(ValueError, func, TWO, naive)
