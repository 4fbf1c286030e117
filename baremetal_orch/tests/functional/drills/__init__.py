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
"""Reliability drills: crashes, broker loss, concurrent actions.

R1 (kill -9 of the action's conductor, ten trials), R2 (RabbitMQ
stopped during an action), R6 (SIGHUP during an action), R8 (a paused
action through kill -9 and take-over) and R9 (an abort while the action's
conductor is dead) run only with
``BAREMETAL_ORCH_DRILLS=1``
(``tox -e drills``); R5 (concurrent actions) always runs. See
``doc/source/contributor/drills.rst``.
"""
