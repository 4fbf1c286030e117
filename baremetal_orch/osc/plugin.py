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
"""OpenStackClient plugin: ``openstack baremetal orch ...``.

Registered under the ``openstack.cli.extension`` entry point group as
``baremetal_orch``; the commands live in ``openstack.baremetal_orch.v1``.

``--os-baremetal-orch-api-version`` (``OS_BAREMETAL_ORCH_API_VERSION``)
takes ``1`` (the newest microversion this client knows, the default),
``1.N`` or ``latest`` (the newest the server offers: its root document
lists the minimum and maximum); it is sent as ``OpenStack-API-Version:
baremetal-orchestration 1.N``.

Works with a Keystone session (the endpoint of the service type
``baremetal-orchestration`` comes from the catalog, or from
``baremetal_orchestration_endpoint_override`` in clouds.yaml) and without
one: ``openstack --os-auth-type none --os-endpoint http://HOST:PORT
baremetal orch node list``.
"""

import argparse
import logging
import re

from osc_lib import exceptions
from osc_lib import utils

from baremetal_orch.osc import client as client_mod

LOG = logging.getLogger(__name__)

API_NAME = 'baremetal_orch'
API_VERSION_OPTION = 'os_baremetal_orch_api_version'
DEFAULT_API_VERSION = '1'
#: Versions osc accepts without a warning (the major version picks the
#: command group ``openstack.baremetal_orch.v1``).
API_VERSIONS = ('1', 'latest') + tuple(
    '1.%d' % minor for minor in range(client_mod.LAST_KNOWN_MINOR + 1))
#: ``latest`` as osc carries it. osc loads the commands of the group named
#: after the major version, the text before the first dot
#: (``openstack.baremetal_orch.v1``): a bare ``latest`` would look for
#: ``openstack.baremetal_orch.vlatest`` and find no command at all.
LATEST = '1.' + client_mod.LATEST

_VERSION_RE = re.compile(r'^(1|1\.\d+|latest|1\.latest)$')


def normalize_version(value):
    """The API version option as osc must see it (``latest`` → ``1.latest``).
    """
    return LATEST if value == client_mod.LATEST else value


class _VersionAction(argparse.Action):
    """Store the option normalized by :func:`normalize_version`."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, normalize_version(values))


def check_api_version(check_version):
    """Validate ``--os-baremetal-orch-api-version``.

    :returns: True, telling osc to skip its own check against
        :data:`API_VERSIONS` (any ``1.N`` is acceptable: the server decides;
        ``latest`` arrives as :data:`LATEST`).
    :raises: CommandError for anything that is not ``1``, ``1.N`` or
        ``latest``.
    """
    if not _VERSION_RE.match(str(check_version)):
        raise exceptions.CommandError(
            'Invalid baremetal-orch API version %r: use 1, 1.N or latest'
            % check_version)
    return True


def make_client(instance):
    """The REST client of the ``instance`` ClientManager (lazily made)."""
    version = instance._api_version.get(API_NAME, DEFAULT_API_VERSION)
    override = instance.get_configuration().get(
        '%s_endpoint_override'
        % client_mod.SERVICE_TYPE.replace('-', '_'))
    LOG.debug('Instantiating baremetal-orch client, API version %s, '
              'endpoint override %s', version, override)
    return client_mod.Client(session=instance.session,
                             api_version=version,
                             endpoint_override=override,
                             region_name=instance.region_name,
                             interface=instance.interface)


def build_option_parser(parser):
    """Add ``--os-baremetal-orch-api-version`` to the global options."""
    parser.add_argument(
        '--os-baremetal-orch-api-version',
        metavar='<baremetal-orch-api-version>',
        action=_VersionAction,
        default=normalize_version(utils.env('OS_BAREMETAL_ORCH_API_VERSION',
                                            default=DEFAULT_API_VERSION)),
        help='Bare metal orchestration API version: 1 (the newest this '
             'client knows, default), 1.N or latest (the newest the server '
             'offers) (Env: OS_BAREMETAL_ORCH_API_VERSION)')
    return parser
