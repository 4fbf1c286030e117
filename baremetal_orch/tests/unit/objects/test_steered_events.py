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
"""The events of an action's controls (action.paused/resumed/aborted),
read back from a real database."""

import types

from oslo_utils import uuidutils

from baremetal_orch.db import api as dbapi
from baremetal_orch.objects import event as event_obj
from baremetal_orch.tests import base


class TestActionSteered(base.DbTestCase):

    def message(self, event_type, reason, requester):
        action = types.SimpleNamespace(uuid=uuidutils.generate_uuid(),
                                       name='deploy_site', state='running')
        event_obj.action_steered(action, event_type, reason=reason,
                                 requester=requester)
        (event,) = dbapi.list_events({'action_uuid': action.uuid})
        self.assertEqual((reason, requester), (event.details['reason'],
                                               event.details['requester']))
        return event.message

    def test_messages(self):
        for event_type, reason, requester, expected in (
                (event_obj.ACTION_ABORTED, 'bad wave', 'alice',
                 'deploy_site aborted by alice: bad wave'),
                (event_obj.ACTION_PAUSED, None, 'alice',
                 'deploy_site paused by alice'),
                # Without authentication (noauth) there is no requester.
                (event_obj.ACTION_ABORTED, 'bad wave', None,
                 'deploy_site aborted: bad wave'),
                (event_obj.ACTION_RESUMED, None, None,
                 'deploy_site resumed')):
            self.assertEqual(expected,
                             self.message(event_type, reason, requester))
