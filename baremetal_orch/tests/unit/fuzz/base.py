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
"""What the fuzz tests share: settings, the case counter, JSON values.

``BAREMETAL_ORCH_FUZZ_EXAMPLES`` is the number of hypothesis examples per
test method (default 60, so the unit suite stays fast; ``tox -e fuzz``
raises it). Every example a test runs is counted; the count of a test is
attached to its result as the ``fuzz-cases`` detail and, when
``BAREMETAL_ORCH_FUZZ_LOG`` names a file, appended to it as one
``<count> <test id>`` line (stestr runs tests in several processes, so a
file is what adds them up)::

    python -m baremetal_orch.tests.unit.fuzz.base reset
    python -m baremetal_orch.tests.unit.fuzz.base report
"""

import collections
import os
import sys

import hypothesis
from hypothesis import strategies as st
from testtools import content

EXAMPLES_ENV = 'BAREMETAL_ORCH_FUZZ_EXAMPLES'
LOG_ENV = 'BAREMETAL_ORCH_FUZZ_LOG'
DEFAULT_EXAMPLES = 60

#: Cases run in this process, by test id.
COUNTS = collections.Counter()


def examples():
    """Examples per test method, from the environment."""
    return max(1, int(os.environ.get(EXAMPLES_ENV) or DEFAULT_EXAMPLES))


def settings(scale=1.0):
    """hypothesis settings of a fuzz test.

    No deadline (the database is real), no example database (nothing
    written to the checkout), and no health checks: the fixtures are
    built once per test method on purpose, and generated bodies are big.
    """
    return hypothesis.settings(
        max_examples=max(1, int(examples() * scale)), deadline=None,
        database=None, suppress_health_check=list(hypothesis.HealthCheck),
        print_blob=True)


class FuzzMixin:
    """Counts the examples of a test; records the count when it ends."""

    def setUp(self):
        super().setUp()
        self.cases = 0
        self.addCleanup(self._record_cases)

    def case(self):
        """Call once at the start of every example."""
        self.cases += 1

    def _record_cases(self):
        COUNTS[self.id()] += self.cases
        self.addDetail('fuzz-cases', content.text_content(str(self.cases)))
        path = os.environ.get(LOG_ENV)
        if path:
            # One short O_APPEND write per test: safe across processes.
            with open(path, 'a', encoding='utf-8') as f:
                f.write('%d %s\n' % (self.cases, self.id()))


def report(path):
    """``(total, {test id: cases})`` of a fuzz log."""
    per_test = collections.Counter()
    with open(path, encoding='utf-8') as f:
        for line in f:
            count, _sep, test_id = line.strip().partition(' ')
            if test_id:
                per_test[test_id] += int(count)
    return sum(per_test.values()), per_test


# JSON values ---------------------------------------------------------------

#: Numbers past what a float, a 32-bit or a 64-bit column can hold.
HUGE_NUMBERS = st.sampled_from([
    2 ** 31, -2 ** 31 - 1, 2 ** 63, -2 ** 63 - 1, 2 ** 64, 10 ** 308,
    10 ** 309, -10 ** 400, 1e308, -1e308, 5e-324, float('inf'),
    float('-inf'), float('nan')])

#: Strings that have broken parsers before: empty, blank, control
#: characters, NUL, lone surrogates (valid as JSON escapes), right-to-left
#: marks, combining characters, long ones.
ODD_STRINGS = st.sampled_from([
    '', ' ', '\t\n', '\x00', 'a\x00b', '\ud800', 'x\udfffy', '\u202e',
    'e\u0301', '\U0001f600', '\ufeff', '%s', '%(name)s', '{0}', '../..',
    'a/b', 'a:b', ':', '::', 'NaN', 'null', 'true', '0x10', '-1', '1e999',
    '<script>', "'", '"', '\\', 'a' * 256, 'é' * 300, 'x' * 70000])

TEXT = st.one_of(st.text(max_size=12), ODD_STRINGS)
NUMBERS = st.one_of(st.integers(), st.floats(), HUGE_NUMBERS)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT)


def json_values(max_leaves=12):
    """Any JSON value, nested (keys are any strings)."""
    return st.recursive(
        SCALARS,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(TEXT, children, max_size=4)),
        max_leaves=max_leaves)


JSON = json_values()


def deep(value, depth, kind='list'):
    """``value`` nested ``depth`` times in lists or maps."""
    for _i in range(depth):
        value = [value] if kind == 'list' else {'a': value}
    return value


#: Depths of nesting, some past Python's recursion limit.
DEPTHS = st.sampled_from([1, 10, 100, 500, 990, 1100, 5000, 20000])


def main(argv):
    """``reset`` or ``report`` the fuzz log named by the environment."""
    path = os.environ.get(LOG_ENV)
    if not path or len(argv) != 2 or argv[1] not in ('reset', 'report'):
        sys.stderr.write('usage: %s=FILE %s reset|report\n'
                         % (LOG_ENV, argv[0]))
        return 2
    if argv[1] == 'reset':
        if os.path.exists(path):
            os.unlink(path)
        return 0
    total, per_test = report(path)
    for test_id, count in sorted(per_test.items()):
        print('%8d  %s' % (count, test_id))
    print('%8d  fuzz cases in total' % total)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
