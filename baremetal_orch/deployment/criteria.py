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

"""Success criteria of a deployment group.

``percent_successful_nodes``, ``minimum_successful_nodes`` and
``maximum_failed_nodes`` are evaluated separately and must all hold; every
miss is recorded as ``{criterion, needed, actual}``. No criteria means no
check. An empty group is 100 % successful but counts 0 successful nodes, so
``minimum_successful_nodes: 1`` fails it.

The percentage is compared exactly (with fractions, no rounding): 2 of 3
nodes is 66.666...%, which misses 67 and 66.7 but meets 66.6. The ``actual``
reported for a percentage miss is rounded to one decimal for display only.
"""

import dataclasses
import fractions
import numbers

from baremetal_orch.common import exception

PERCENT = 'percent_successful_nodes'
MINIMUM = 'minimum_successful_nodes'
MAXIMUM_FAILED = 'maximum_failed_nodes'
NAMES = (PERCENT, MINIMUM, MAXIMUM_FAILED)


def _is_number(value):
    return (isinstance(value, numbers.Real)
            and not isinstance(value, bool))


def _is_count(value):
    if isinstance(value, bool) or not _is_number(value):
        return False
    # An int of any size is a count (float() of a huge one overflows).
    return isinstance(value, numbers.Integral) or float(value).is_integer()


@dataclasses.dataclass(frozen=True)
class Criteria:
    """The success criteria of a group; ``None`` means not checked."""

    percent_successful_nodes: float = None
    minimum_successful_nodes: int = None
    maximum_failed_nodes: int = None

    @classmethod
    def from_dict(cls, d, group=None, where='success_criteria'):
        """Build criteria from their document form.

        :raises: InvalidCriteria when ``d`` is not a map, is empty, has
            unknown keys, or a value is of the wrong type or out of range
            (percent 0-100, counts >= 0).
        """
        def bad(reason):
            return exception.InvalidCriteria(
                group=group if group is not None else '(unnamed)',
                reason='%s: %s' % (where, reason), path=where)

        if not isinstance(d, dict):
            raise bad('must be a map, got %r' % (d,))
        unknown = sorted(str(k) for k in d if k not in NAMES)
        if unknown:
            raise bad('unknown criterion %s (allowed: %s)'
                      % (', '.join(unknown), ', '.join(NAMES)))
        if not d:
            raise bad('must name at least one of %s' % ', '.join(NAMES))
        percent = d.get(PERCENT)
        if percent is not None:
            if not _is_number(percent) or not 0 <= percent <= 100:
                raise bad('%s must be a number between 0 and 100, got %r'
                          % (PERCENT, percent))
        counts = {}
        for name in (MINIMUM, MAXIMUM_FAILED):
            value = d.get(name)
            if value is not None:
                if not _is_count(value) or value < 0:
                    raise bad('%s must be an integer >= 0, got %r'
                              % (name, value))
                value = int(value)
            counts[name] = value
        return cls(percent_successful_nodes=percent,
                   minimum_successful_nodes=counts[MINIMUM],
                   maximum_failed_nodes=counts[MAXIMUM_FAILED])

    def to_dict(self):
        """The document form, with only the criteria that are set."""
        return {name: getattr(self, name) for name in NAMES
                if getattr(self, name) is not None}


@dataclasses.dataclass(frozen=True)
class Miss:
    """One criterion that was not met."""

    criterion: str
    needed: float
    actual: float

    def to_dict(self):
        return {'criterion': self.criterion, 'needed': self.needed,
                'actual': self.actual}

    @classmethod
    def from_dict(cls, d):
        return cls(d['criterion'], d['needed'], d['actual'])


def percent(total, succeeded):
    """The exact success percentage as a Fraction (100 for no nodes)."""
    if total == 0:
        return fractions.Fraction(100)
    return fractions.Fraction(succeeded * 100, total)


def evaluate(criteria, total, succeeded):
    """Evaluate ``criteria`` for a group; return the list of misses.

    :param criteria: a :class:`Criteria` or None (no check).
    :param total: the number of nodes of the group (its full node set).
    :param succeeded: how many of them succeeded in the phase; every other
        node, including one never started, counts as failed.
    :returns: a list of :class:`Miss`, empty when every criterion holds,
        in the order percent, minimum, maximum failed.
    """
    if total < 0 or not 0 <= succeeded <= total:
        raise exception.InvalidParameterValue(
            reason='succeeded (%s) must be between 0 and total (%s)'
            % (succeeded, total))
    if criteria is None:
        return []
    failed = total - succeeded
    misses = []
    needed = criteria.percent_successful_nodes
    if needed is not None:
        actual = percent(total, succeeded)
        if actual < fractions.Fraction(needed):
            misses.append(Miss(PERCENT, needed, round(float(actual), 1)))
    needed = criteria.minimum_successful_nodes
    if needed is not None and succeeded < needed:
        misses.append(Miss(MINIMUM, needed, succeeded))
    needed = criteria.maximum_failed_nodes
    if needed is not None and failed > needed:
        misses.append(Miss(MAXIMUM_FAILED, needed, failed))
    return misses


def reachable(criteria, total, failed):
    """Whether ``criteria`` can still hold once ``failed`` of the group's
    ``total`` nodes have failed, if every other node succeeds (what a
    ``fail_fast`` group asks before it starts another node).
    """
    if not 0 <= failed <= total:
        raise exception.InvalidParameterValue(
            reason='failed (%s) must be between 0 and total (%s)'
            % (failed, total))
    return not evaluate(criteria, total, total - failed)
