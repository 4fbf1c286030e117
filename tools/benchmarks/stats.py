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
"""Summaries of interleaved measurements (A, B, A, B, ...)."""

import statistics


def summary(values, digits=3):
    """``{'min', 'median', 'max', 'n'}`` of ``values`` (rounded)."""
    values = list(values)
    if not values:
        raise ValueError('no values to summarise')
    return {'min': round(min(values), digits),
            'median': round(statistics.median(values), digits),
            'max': round(max(values), digits), 'n': len(values)}


def pair_ratios(ours, theirs):
    """The ratio ``ours[i] / theirs[i]`` of each interleaved pair."""
    if len(ours) != len(theirs):
        raise ValueError('%d values against %d: not pairs'
                         % (len(ours), len(theirs)))
    if any(t == 0 for t in theirs):
        raise ValueError('a zero baseline has no ratio')
    return [a / b for a, b in zip(ours, theirs)]


def interleaved(measures, pairs):
    """Run ``measures`` (callables, e.g. (A, B)) in turn ``pairs`` times:
    A, B, A, B, ... Return one list of results per callable."""
    results = [[] for _ in measures]
    for _ in range(pairs):
        for i, measure in enumerate(measures):
            results[i].append(measure())
    return results


def percentile(values, q):
    """The ``q``-th percentile (0 to 100) of ``values``, interpolated
    linearly between the two closest ranks (NumPy's default)."""
    values = sorted(values)
    if not values:
        raise ValueError('no values to take a percentile of')
    if not 0 <= q <= 100:
        raise ValueError('a percentile is between 0 and 100, not %s' % q)
    rank = (len(values) - 1) * q / 100.0
    low = int(rank)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (rank - low)
