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
"""``start_batch`` on MariaDB, which has no UPDATE ... RETURNING (the
statuses are read first), and on PostgreSQL (the UPDATE returns them):
the answers are those the unit tests hold on sqlite."""

import testscenarios

from baremetal_orch.tests.functional import test_db_races
from baremetal_orch.tests.unit.db import test_batches

load_tests = testscenarios.load_tests_apply_scenarios


class TestBatchStart(test_batches.BatchStartChecks,
                     test_db_races.ServerDatabaseTestCase):
    pass
