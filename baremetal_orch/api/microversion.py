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
"""API microversions: ``OpenStack-API-Version: baremetal-orchestration 1.N``.

The header names the Keystone service type, as the API-SIG asks (a
keystoneauth Adapter typed by the catalog sends it so); the short name
``baremetal-orch`` is accepted too. Answers name the service type.

History (also in the api-ref):

* 1.0: the initial API — nodes, ports, chassis, node states, node filter,
  deployment strategies, actions, tasks, events, deployments, signals,
  services and shards.
"""

import microversion_parse

from baremetal_orch.common import exception

SERVICE_TYPE = 'baremetal-orchestration'
#: Other names the header may give the service, looked up after the type.
ALIASES = ('baremetal-orch',)
HEADER = 'OpenStack-API-Version'

MIN_VERSION = (1, 0)
MAX_VERSION = (1, 0)


def fmt(version):
    return '%d.%d' % version


def parse(headers):
    """The requested version as a tuple; the minimum when none is asked.

    :raises: InvalidParameterValue (400) for a malformed header,
        InvalidMicroversion (406) for an unsupported version.
    """
    raw = None
    for name in (SERVICE_TYPE,) + ALIASES:
        try:
            raw = microversion_parse.get_version(headers, service_type=name)
        except Exception:
            raw = None
        if raw is not None:
            break
    if raw is None:
        return MIN_VERSION
    raw = raw.strip()
    if raw == 'latest':
        return MAX_VERSION
    try:
        major, minor = (int(x) for x in raw.split('.'))
    except ValueError:
        raise exception.InvalidParameterValue(
            reason='Invalid %s header value %r: expected "%s 1.N"'
                   % (HEADER, raw, SERVICE_TYPE))
    version = (major, minor)
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise exception.InvalidMicroversion(
            version=raw, min=fmt(MIN_VERSION), max=fmt(MAX_VERSION))
    return version


def version_info(host_url):
    """The version object of v1, as both ``/`` and ``/v1`` show it."""
    return {'id': 'v1', 'status': 'CURRENT',
            'min_version': fmt(MIN_VERSION), 'version': fmt(MAX_VERSION),
            'links': [{'href': '%s/v1/' % host_url, 'rel': 'self'}]}
