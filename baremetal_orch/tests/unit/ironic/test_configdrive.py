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
"""The config drive is one a node (and Ironic) can read: a config-2 ISO
with openstack/<version>/meta_data.json under its ISO 9660, Joliet and
Rock Ridge names, gzipped and base64-encoded."""

import base64
import gzip
import io
import json
import os
import shutil
import subprocess
import tempfile
import types

import pycdlib

from baremetal_orch.ironic import configdrive
from baremetal_orch.tests import base

NODE = types.SimpleNamespace(
    ironic_uuid='1be26c0b-03f2-4d2e-ae87-c02d7f33c123', name='rack1-node7')
INPUTS = {'deploy_signal_id': 'http://orch:6385/v1/signals/d-1?token=s3cr3t',
          'deploy_signal_verb': 'POST', 'deploy_status_aware': 'true',
          'image_source': 'http://images/a.qcow2', 'root_gb': 10}


def _iso(drive):
    return gzip.decompress(base64.b64decode(drive))


class TestConfigDrive(base.TestCase):

    def test_meta_data_carries_the_inputs_under_meta(self):
        self.assertEqual(
            {'uuid': NODE.ironic_uuid, 'name': 'rack1-node7',
             'hostname': 'rack1-node7', 'meta': INPUTS},
            configdrive.meta_data(NODE, INPUTS))

    def test_every_version_under_every_name(self):
        metadata = configdrive.meta_data(NODE, INPUTS)
        drive = configdrive.build(metadata)
        self.assertIsInstance(drive, str)
        iso = pycdlib.PyCdlib()
        iso.open_fp(io.BytesIO(_iso(drive)))
        self.addCleanup(iso.close)
        self.assertEqual('config-2',
                         iso.pvd.volume_identifier.decode().strip())
        for version in configdrive.VERSIONS:
            path = '/openstack/%s/meta_data.json' % version
            # As Ironic's configdrive_utils reads it (ISO 9660 name), as a
            # Linux mount shows it (Rock Ridge), and Joliet.
            for name in ({'iso_path': path + ';1'}, {'rr_path': path},
                         {'joliet_path': path}):
                out = io.BytesIO()
                iso.get_file_from_iso_fp(out, **name)
                self.assertEqual(metadata, json.loads(out.getvalue()), name)
        self.assertEqual(metadata, configdrive.read(drive))

    def test_read_refuses_another_volume(self):
        iso = pycdlib.PyCdlib()
        iso.new(interchange_level=4, vol_ident='cidata')
        image = io.BytesIO()
        iso.write_fp(image)
        iso.close()
        drive = base64.b64encode(gzip.compress(image.getvalue()))
        self.assertRaisesRegex(ValueError, 'not labelled config-2',
                               configdrive.read, drive)

    def test_blkid_finds_the_label(self):
        # cloud-init and os-collect-config find the drive by its label.
        blkid = shutil.which('blkid') or '/sbin/blkid'
        if not os.path.exists(blkid):
            self.skipTest('no blkid on this machine')
        with tempfile.NamedTemporaryFile(suffix='.iso') as f:
            f.write(_iso(configdrive.build({'uuid': 'x'})))
            f.flush()
            out = subprocess.run([blkid, '-o', 'export', f.name],
                                 capture_output=True, text=True, check=True)
        self.assertIn('LABEL=config-2', out.stdout.splitlines())
        self.assertIn('TYPE=iso9660', out.stdout.splitlines())
