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
"""The fingerprints of every registered versioned object.

A failure here means an object's fields changed: bump its VERSION (and
describe the change in the comment above it), then update the table. The
fingerprint of a notification also covers the payload class it carries,
and that of a payload the fields it masks.
"""

import datetime

from oslo_utils import uuidutils
from oslo_versionedobjects import fields as ovo_fields
from oslo_versionedobjects import fixture

from baremetal_orch import notifications
from baremetal_orch.notifications import notify  # noqa: F401  (payloads)
from baremetal_orch import objects
from baremetal_orch.objects import base as obj_base
from baremetal_orch.objects import deployment
from baremetal_orch.tests import base

EXPECTED = {
    'Action': '1.0-0567171434d4cbd6f9eab44210751aae',
    'ActionControlNotification': '1.0-42f04812e94d86d4e1740df4c1d4a03d',
    'ActionControlPayload': '1.0-a8e1261ce5510a6afa497a5cbec57f02',
    'ActionNotification': '1.0-2f39f6603d9c64c530e812758cd8dab5',
    'ActionPayload': '1.0-33c267e635399bf258989f819d577eb0',
    'Chassis': '1.0-bbf31720592f6dcc554c617f6249ebab',
    'ChassisCRUDNotification': '1.0-16b4f01348aa536d887e3713d2c8faba',
    'ChassisCRUDPayload': '1.0-26db86a77999a5d98c5ff2fac1fa4f0f',
    'Deployment': '1.0-8a113fbe8f62ba9def058942ec97ffff',
    'DeploymentGroupNotification': '1.0-22d991a4bcbc161a106e3cf1e60e8b60',
    'DeploymentGroupPayload': '1.0-8652d38ac47d4be501a0666504e8ce48',
    'DeploymentSignalNotification': '1.0-0fd57bdef54e3d0a55b7acb2d0773788',
    'DeploymentSignalPayload': '1.0-dff677d4825bbd80ecd6281c0eba2fc0',
    'Event': '1.0-ee928593107449590c0dc69aacb5ed39',
    'EventType': '1.0-c188099c454f1e5cd1776362aa3d742a',
    'Node': '1.0-9f04c4a4e6f2405d6bd715f825294829',
    'NodeCRUDNotification': '1.0-393c81c5affcc1873eec164374bf8ccb',
    'NodeCRUDPayload': '1.0-79ab41cf46958d6f2cd72835f305b96f',
    'NodeConsoleNotification': '1.0-14660affa2b770614b27247e6b5621e5',
    'NodeLabelsNotification': '1.0-a52796d196e06923cfd744eb86a77a4b',
    'NodeLabelsPayload': '1.0-74b7619084f141b543fb6b4637076963',
    'NodeMaintenanceNotification': '1.0-14660affa2b770614b27247e6b5621e5',
    'NodePayload': '1.0-92c2f9fb0a204095a4e3280863e19d4d',
    'NodeSetProvisionStateNotification':
        '1.0-336f4a55b0bfd30c4c859a247d635947',
    'NodeSetProvisionStatePayload': '1.0-330a3ceecfd77a06c2e8a9a99d319c56',
    'NotificationPublisher': '1.0-14f506914f6253c4340c8064175e3aae',
    'Port': '1.0-0ffac0737aea308018f49436194c1010',
    'PortCRUDNotification': '1.0-0b8b775993e31dc35b712c81803dfb38',
    'PortCRUDPayload': '1.0-ad3874a3eac473a664ceaec65131d0ff',
    'Service': '1.0-cdf8e7393101b64daf5aad2efe97145b',
    'Strategy': '1.0-2a5c4f22de50859ce853bc509161becc',
    'Task': '1.0-f1ed086e5a29ce39787224ce8c2c8329',
}


def _our_classes():
    objects.register_all()
    notifications.register_all()
    return {name: classes for name, classes
            in obj_base.BaremetalOrchObjectRegistry.obj_classes().items()
            if classes[0].OBJ_PROJECT_NAMESPACE == 'baremetal_orch'}


def extra_data(cls):
    """What the wire format depends on beyond the field types."""
    nested = sorted((name, field.AUTO_TYPE._obj_name)
                    for name, field in cls.fields.items()
                    if isinstance(field, ovo_fields.ObjectField))
    return (tuple(nested), tuple(sorted(getattr(cls, 'MASKED', ()))))


class TestObjectVersions(base.TestCase):

    def test_versions(self):
        checker = fixture.ObjectVersionChecker(_our_classes())
        expected, actual = checker.test_hashes(EXPECTED,
                                               extra_data_func=extra_data)
        self.assertEqual(expected, actual,
                         'Some objects changed: bump their VERSION and '
                         'update EXPECTED')

    def test_every_object_is_in_the_table(self):
        self.assertEqual(sorted(EXPECTED), sorted(_our_classes()))

    def test_extra_data_distinguishes_payload_classes(self):
        classes = _our_classes()
        self.assertNotEqual(
            extra_data(classes['NodeCRUDNotification'][0]),
            extra_data(classes['PortCRUDNotification'][0]))


class TestFromTrusted(base.TestCase):
    """Objects of values the service made, without the fields' coercion
    (a group's deployment records)."""

    def test_values_are_stored_as_they_are_and_unchanged(self):
        uuid = uuidutils.generate_uuid()
        record = deployment.Deployment.from_trusted(
            uuid=uuid, status=deployment.IN_PROGRESS, final=False)
        self.assertEqual((uuid, 'IN_PROGRESS', False),
                         (record.uuid, record.status, record.final))
        self.assertEqual(set(), record.obj_what_changed())
        self.assertFalse(record.obj_attr_is_set('node_uuid'))

    def test_an_unknown_field_is_refused(self):
        e = self.assertRaises(KeyError, deployment.Deployment.from_trusted,
                              uuid=uuidutils.generate_uuid(), colour='red')
        self.assertIn('colour', str(e))


class TestAsUtc(base.TestCase):
    """The one rule for datetimes read from the database (objects, the
    batch path and the API's timestamps)."""

    def test_naive_is_utc(self):
        value = obj_base.as_utc(datetime.datetime(2026, 11, 28, 10, 0))
        self.assertEqual(datetime.timezone.utc, value.tzinfo)
        self.assertEqual('2026-11-28T10:00:00+00:00', value.isoformat())

    def test_aware_and_none_are_kept(self):
        plus_one = datetime.timezone(datetime.timedelta(hours=1))
        value = datetime.datetime(2026, 11, 28, 10, 0, tzinfo=plus_one)
        self.assertIs(value, obj_base.as_utc(value))
        self.assertIsNone(obj_base.as_utc(None))
