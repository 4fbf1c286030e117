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
"""Deployment signals from a node's agent, and the events they record.

The fake driver writes what a node would read from its config drive
(``[fake_driver]configdrive_dir``); these tests read it there and play the
node's agent, so they run only on the conductor's host
(``[baremetal_orch] fake_configdrive_dir``).
"""

import json
import os
from urllib import parse

from tempest import config
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from baremetal_orch_tempest_plugin.tests import base

CONF = config.CONF


class TestSignalsAndEvents(base.BaremetalOrchTest):

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.baremetal_orch.fake_configdrive_dir:
            raise cls.skipException(
                '[baremetal_orch] fake_configdrive_dir is not set')

    @classmethod
    def resource_setup(cls):
        super().resource_setup()
        tag = cls.name('signals')
        cls.nodes = [cls.create_node(name=cls.name('sig'), tags=[tag])
                     for _ in range(2)]
        cls.strategy = cls.name('signals')
        cls.create_strategy(cls.strategy, [
            {'name': 'agents', 'wait_for_signal': True,
             'selectors': [{'node_tags': [tag]}]}])

    def agent_info(self, node):
        path = os.path.join(CONF.baremetal_orch.fake_configdrive_dir,
                            '%s.json' % node['uuid'])

        def read():
            if os.path.exists(path):
                with open(path) as f:
                    return json.load(f)['instance_info']
        return base.wait_until(read, CONF.baremetal_orch.build_timeout,
                               CONF.baremetal_orch.build_interval,
                               'no config drive for %s' % node['name'])

    def signal(self, url, body, expect=200):
        """POST a signal as a stock heat-config agent does: to the
        pre-signed URL (the token in its query), a content-type header and
        no Keystone token."""
        resp, text = self.admin.raw_request(
            url, 'POST', headers={'Content-Type': 'application/json'},
            body=json.dumps(body))
        self.assertEqual(expect, resp.status, text)

    @staticmethod
    def token(info):
        query = parse.urlparse(info['deploy_signal_id']).query
        return parse.parse_qs(query)['token'][0]

    @decorators.idempotent_id('9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b01')
    def test_agent_signals_end_the_deploy(self):
        _, action = self.admin.create_action(
            'deploy_site', {'deployment_strategy': self.strategy})
        infos = [self.agent_info(n) for n in self.nodes]
        for info in infos:
            # Heat's input names, as strings.
            self.assertEqual(('true', 'POST', 'CFN_SIGNAL'),
                             (info['deploy_status_aware'],
                              info['deploy_signal_verb'],
                              info['deploy_signal_transport']))
        # A wrong token is refused, in the URL or in X-Signal-Token.
        url = infos[0]['deploy_signal_id']
        self.signal(url.split('?')[0] + '?token=forged',
                    {'deploy_status': 'IN_PROGRESS'}, expect=401)
        headers = self.admin.get_headers()
        headers['X-Signal-Token'] = 'forged'
        self.assertRaises(lib_exc.Unauthorized, self.admin._call, 'POST',
                          '/v1/signals/%s' % infos[0]['deployment_uuid'],
                          {'deploy_status': 'IN_PROGRESS'}, headers=headers)
        for info in infos:
            self.signal(info['deploy_signal_id'],
                        {'deploy_status': 'IN_PROGRESS',
                         'deploy_status_reason': 'configuring'})
        _, body = self.admin.list('events', action_uuid=action['uuid'])
        progress = [e for e in body['events']
                    if e['event_type'] == 'deployment.signal.in_progress']
        self.assertEqual({n['uuid'] for n in self.nodes},
                         {e['resource_uuid'] for e in progress})
        self.assertEqual('running', self.admin.show(
            'actions', action['uuid'])[1]['state'])
        # A stock heat-config agent: one final signal, status code 0.
        for info in infos:
            self.signal(info['deploy_signal_id'],
                        {'deploy_stdout': 'configured',
                         'deploy_status_code': 0})
        action = self.admin.wait_for_action(action['uuid'])
        self.assertEqual(('complete', 'success'),
                         (action['state'], action['result']),
                         action['report'])
        _, body = self.admin.list('deployments', action_uuid=action['uuid'])
        self.assertEqual(
            [('COMPLETE', 'configured', 0)] * 2,
            [(r['status'], r['deploy_stdout'], r['deploy_status_code'])
             for r in body['deployments']])
        # A signal after the final one is a conflict.
        self.signal(infos[0]['deploy_signal_id'],
                    {'deploy_status': 'IN_PROGRESS'}, expect=409)
        _, body = self.admin.list('events', resource_uuid=self.nodes[0][
            'uuid'], action_uuid=action['uuid'])
        self.assertIn('deployment.signal.complete',
                      [e['event_type'] for e in body['events']])
        for event in body['events']:
            self.assertNotIn(self.token(infos[0]), json.dumps(event))
