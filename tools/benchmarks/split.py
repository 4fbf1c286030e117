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
"""The split deployment for benchmarks: ``baremetal-orch-api`` and one
``baremetal-orch-conductor``, processes of their own, over RabbitMQ (a
vhost of its own) and a database (a sqlite file, the embedded default, or
a fresh database on a server), fake nodes.

The same methods as :class:`tools.benchmarks.harness.Service`: nodes and
strategies are written before the clock (the nodes straight into the
database, the strategy through the API), and
:meth:`tools.benchmarks.processes.Processes.run_action` times a
``deploy_site`` from its ``POST`` to its end as seen by polling
``GET /v1/actions/{uuid}``.
"""

from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing import services
from tools.benchmarks import processes

#: ``[DEFAULT]host`` of the conductor, which the nodes are bound to.
HOST = 'conductor-1'


def config_sections(tmp, port, connection, transport_url, overrides=None,
                    host=HOST):
    """The configuration of both processes ({section: {option: value}}):
    RPC over ``transport_url``, ``overrides`` ({(section, option): value},
    what :func:`tools.benchmarks.makespan.conductor_overrides` gives)
    applied last. Heartbeats every 2 s, stale after 30 s: a loaded 2-core
    machine must not make the API find the conductor dead."""
    sections = services.base_sections(
        tmp, port, connection,
        DEFAULT={'rpc_transport': 'oslo', 'host': host,
                 'transport_url': transport_url,
                 'rpc_response_timeout': 60},
        conductor={'heartbeat_interval': 2, 'heartbeat_timeout': 30})
    for (section, option), value in (overrides or {}).items():
        sections.setdefault(section, {})[option] = value
    return sections


class Split(processes.Processes):
    """API and conductor processes, RabbitMQ and a database."""

    COMMANDS = {'conductor': 'baremetal-orch-conductor',
                'api': 'baremetal-orch-api'}
    HOST = HOST

    def _setUp(self):
        self.rabbit = self.useFixture(broker.RabbitMQ())
        super()._setUp()

    def sections(self):
        return config_sections(self.tmp, self.port, self.connection,
                               self.rabbit.transport_url, self.overrides)
