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
"""``[oslo_messaging_notifications]driver = log`` on the all-in-one: the
notifications land in the service's ``log_file`` whichever sender sends
them (the child process of the default, or a thread)."""

import json
import os
import re

from baremetal_orch.tests.functional import base
from baremetal_orch_testing import services

SECRET = 'log-driver-secret-3f1c'
LINE = re.compile(r' (?P<pid>\d+) (?P<level>[A-Z]+) '
                  r'oslo\.messaging\.notification\.(?P<event>\S+) '
                  r'\[[^\]]*\] (?P<body>\{.*\})$')


class TestLogDriver(base.FunctionalTestCase):

    def start_aio(self, sender):
        tmp = self.log_dir
        port = services.free_port()
        self.log_file = os.path.join(tmp, 'baremetal-orch-service.log')
        conf = services.write_config(
            os.path.join(tmp, 'aio.conf'), services.base_sections(
                tmp, port, 'sqlite:///%s' % os.path.join(tmp, 'aio.sqlite'),
                DEFAULT={'host': 'aio', 'notification_level': 'info',
                         'notification_sender': sender,
                         'log_file': self.log_file},
                oslo_messaging_notifications={'driver': 'log'}))
        self.aio = self.start_process(['baremetal-orch', '--config-file',
                                       conf])
        endpoint = 'http://127.0.0.1:%d' % port
        self.wait_for_http(endpoint + '/v1', status=200, process=self.aio,
                           timeout=90)
        return services.Client(endpoint)

    def notifications(self):
        """(pid, level, event type, message) of each notification logged."""
        found = []
        if not os.path.exists(self.log_file):
            return found
        with open(self.log_file) as f:
            for line in f:
                match = LINE.search(line.rstrip('\n'))
                if match:
                    found.append((int(match['pid']), match['level'],
                                  match['event'], json.loads(match['body'])))
        return found

    def check_sender(self, sender):
        client = self.start_aio(sender)
        node = client.post('/v1/nodes', status=201, json={
            'name': 'logged', 'driver': 'fake',
            'driver_info': {'ipmi_password': SECRET}}).json()
        client.put('/v1/nodes/logged/states/provision',
                   json={'target': 'manage'}, status=202)
        client.wait_for_state('logged', 'manageable')
        wanted = {'baremetal.node.create.start', 'baremetal.node.create.end',
                  'baremetal.node.provision_set.start',
                  'baremetal.node.provision_set.end'}

        def logged():
            seen = {n[2] for n in self.notifications()
                    if n[3]['payload']['baremetal_orch_object.data'].get(
                        'uuid') == node['uuid']}
            return wanted <= seen
        client.wait_for(logged, timeout=60)
        found = self.notifications()
        self.assertTrue(all(level == 'INFO' for _p, level, _e, _m in found))
        # The publisher names the component that emits, as in split mode
        # (a listener filtering on baremetal-orch-conductor.* gets the
        # conductor's), not the all-in-one process.
        publishers = {e: m['publisher_id'] for _p, _l, e, m in found}
        self.assertEqual('baremetal-orch-api.aio',
                         publishers['baremetal.node.create.end'])
        self.assertEqual('baremetal-orch-conductor.aio',
                         publishers['baremetal.node.provision_set.end'])
        with open(self.log_file) as f:
            self.assertNotIn(SECRET, f.read())
        return {pid for pid, _l, _e, _m in found}

    def test_process_sender(self):
        pids = self.check_sender('process')
        # Written by the sender child, not by the service process.
        self.assertNotIn(self.aio.pid, pids)

    def test_thread_sender(self):
        pids = self.check_sender('thread')
        self.assertEqual({self.aio.pid}, pids)
