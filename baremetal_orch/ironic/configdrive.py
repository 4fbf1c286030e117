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
"""The config drive of a node deployed through Ironic.

An ISO 9660 image labelled ``config-2`` holding
``openstack/<version>/meta_data.json`` for each version of
:data:`VERSIONS` (the layout of openstacksdk's
``openstack.baremetal.configdrive``, with ISO 9660, Joliet and Rock Ridge
names as its ``genisoimage -l -allow-lowercase -J -r`` makes them), gzipped
and base64-encoded as Ironic's provision API takes it. It is built with
pycdlib, in memory, so neither this host nor Ironic's needs an ISO tool.

What the node's agent reads at deploy time travels here, in the request
that deploys the node, as a real node reads it from its config drive: no
separate update of the Ironic node is needed for it.
"""

import base64
import gzip
import io
import json

import pycdlib

#: Metadata versions written (openstacksdk's default).
VERSIONS = ('2012-08-10', 'latest')
#: The volume label a node's agent looks for.
LABEL = 'config-2'


def meta_data(node, inputs):
    """The ``meta_data.json`` of ``node``: ``meta`` holds ``inputs`` (the
    strings its agent reads), as Nova's instance metadata."""
    return {'uuid': node.ironic_uuid, 'name': node.name,
            'hostname': node.name, 'meta': dict(inputs)}


def build(metadata):
    """The config drive holding ``metadata``, as Ironic takes it.

    :returns: the gzipped ISO image, base64-encoded (a str).
    """
    iso = pycdlib.PyCdlib()
    iso.new(interchange_level=4, joliet=3, rock_ridge='1.09',
            vol_ident=LABEL)
    data = json.dumps(metadata).encode('utf-8')
    _directory(iso, '/openstack')
    for version in VERSIONS:
        folder = '/openstack/' + version
        _directory(iso, folder)
        path = folder + '/meta_data.json'
        iso.add_fp(io.BytesIO(data), len(data), iso_path=path + ';1',
                   rr_name='meta_data.json', joliet_path=path)
    image = io.BytesIO()
    iso.write_fp(image)
    iso.close()
    return base64.b64encode(gzip.compress(image.getvalue())).decode('ascii')


def _directory(iso, path):
    iso.add_directory(path, rr_name=path.rsplit('/', 1)[1],
                      joliet_path=path)


def read(configdrive, version='latest'):
    """The ``meta_data.json`` of a config drive :func:`build` made (or
    any config-2 drive with that file): for tests and operators' checks.
    """
    iso = pycdlib.PyCdlib()
    iso.open_fp(io.BytesIO(gzip.decompress(base64.b64decode(configdrive))))
    try:
        if iso.pvd.volume_identifier.decode().strip() != LABEL:
            raise ValueError('not a config drive: the volume is not '
                             'labelled %s' % LABEL)
        out = io.BytesIO()
        iso.get_file_from_iso_fp(
            out, iso_path='/openstack/%s/meta_data.json;1' % version)
        return json.loads(out.getvalue())
    finally:
        iso.close()
