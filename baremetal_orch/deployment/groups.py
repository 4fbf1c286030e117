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

"""The words of a site deployment and the state of one group, free of I/O:
group statuses and failure reasons, phases, the action's states and
results, the evaluation of a phase (:class:`PhaseResult`) and a group's
state (:class:`GroupState`), each with its persisted form."""

import dataclasses

from baremetal_orch.common import statuses
from baremetal_orch.deployment import criteria as criteria_mod

# Group statuses (PENDING and RUNNING only appear before the end).
PENDING = statuses.PENDING
RUNNING = statuses.RUNNING
SUCCESS = statuses.SUCCESS
FAILED = statuses.FAILED

# Reasons of a failed group.
DEPENDENCY_FAILED = 'dependency_failed'
PREPARE_CRITERIA_NOT_MET = 'prepare_criteria_not_met'
DEPLOY_CRITERIA_NOT_MET = 'deploy_criteria_not_met'
TIMEOUT = 'timeout'
# The action was aborted before the group could end.
ABORTED = 'aborted'
REASONS = (DEPENDENCY_FAILED, PREPARE_CRITERIA_NOT_MET,
           DEPLOY_CRITERIA_NOT_MET, TIMEOUT, ABORTED)

# Phases.
PREPARE = 'prepare'
DEPLOY = 'deploy'

# Action states and results (see outcome()).
STATE_RUNNING = statuses.RUNNING
STATE_COMPLETE = statuses.COMPLETE
STATE_FAILED = statuses.FAILED
RESULT_SUCCESS = statuses.SUCCESS
RESULT_SUCCESS_WITH_FAILURES = statuses.SUCCESS_WITH_FAILURES
RESULT_FAILED = statuses.FAILED


@dataclasses.dataclass(frozen=True)
class PhaseResult:
    """The evaluation of one phase of one group."""

    ok: bool
    misses: tuple = ()
    phase: str = None
    total: int = 0
    succeeded: int = 0

    def to_dict(self):
        return {'ok': self.ok, 'misses': [m.to_dict() for m in self.misses],
                'phase': self.phase, 'total': self.total,
                'succeeded': self.succeeded}

    @classmethod
    def from_dict(cls, d):
        return cls(ok=d['ok'],
                   misses=tuple(criteria_mod.Miss.from_dict(m)
                                for m in d['misses']),
                   phase=d['phase'], total=d['total'],
                   succeeded=d['succeeded'])


class GroupState:
    """Mutable state of one group (guarded by the SiteDeployment lock)."""

    def __init__(self):
        self.status = PENDING
        self.phase = None
        self.reason = None
        self.misses = []
        self.results = {}

    def to_dict(self):
        return {'status': self.status, 'phase': self.phase,
                'reason': self.reason,
                'misses': [m.to_dict() for m in self.misses],
                'results': {p: r.to_dict() for p, r in self.results.items()}}

    @classmethod
    def from_dict(cls, d):
        state = cls()
        state.status = d['status']
        state.phase = d['phase']
        state.reason = d['reason']
        state.misses = [criteria_mod.Miss.from_dict(m) for m in d['misses']]
        state.results = {p: PhaseResult.from_dict(r)
                         for p, r in d['results'].items()}
        return state
