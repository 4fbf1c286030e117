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
"""Every server process runs on oslo.service's threading backend.

The selection lives in :mod:`baremetal_orch.cmd` (not in the package's
``__init__``, which the OpenStackClient plugin imports too). Each test
starts a fresh interpreter that enters the server the way a real process
does (a console script's module, the WSGI module, the notification sender's
child), then imports oslo.messaging and oslo.service as the server does, and
reports which backend oslo.service chose.
"""

import configparser
import json
import os
import subprocess
import sys

import fixtures

from baremetal_orch.tests import base

SETUP_CFG = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..',
                         'setup.cfg')

#: What a server process does after its entry point; prints what it saw.
REPORT = '''
import json, sys
import oslo_messaging  # noqa: the RPC server, notifier (imports oslo.service)
from oslo_service import service  # noqa: the launcher
from oslo_service import backend
import futurist, taskflow.engines  # noqa: both probe for eventlet
print(json.dumps({
    'backend': backend.get_backend_type().value,
    'eventlet_backend': 'oslo_service.backend._eventlet' in sys.modules,
    # eventlet is installed (oslo.service requires it): not even imported.
    'eventlet_imported': sorted(
        name for name, module in sys.modules.items()
        if name.split('.')[0] == 'eventlet' and module is not None)}))
'''

THREADING = {'backend': 'threading', 'eventlet_backend': False,
             'eventlet_imported': []}


def console_script_modules():
    parser = configparser.ConfigParser()
    parser.read(SETUP_CFG)
    lines = parser['entry_points']['console_scripts'].strip().splitlines()
    return {line.split('=', 1)[0].strip():
            line.split('=', 1)[1].strip().partition(':')[0]
            for line in lines}


class TestServerBackend(base.TestCase):

    def probe(self, entry_code, env=None):
        """Run ``entry_code`` then :data:`REPORT` in a new interpreter."""
        proc = subprocess.run(
            [sys.executable, '-c', entry_code + '\n' + REPORT],
            capture_output=True, text=True, check=False, timeout=300,
            env=dict(os.environ, **(env or {})))
        self.assertEqual(0, proc.returncode, proc.stderr)
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def test_without_an_entry_point_oslo_service_picks_eventlet(self):
        # The control: what every server process would get if its entry
        # point did not select the backend first.
        seen = self.probe('import baremetal_orch.common.rpc')
        self.assertEqual('eventlet', seen['backend'])
        self.assertTrue(seen['eventlet_backend'])

    def test_console_scripts(self):
        scripts = console_script_modules()
        self.assertIn('baremetal-orch', scripts)
        for script, module in sorted(scripts.items()):
            self.assertTrue(module.startswith('baremetal_orch.cmd.'),
                            '%s is not under baremetal_orch.cmd' % script)
            self.assertEqual(THREADING,
                             self.probe('import %s' % module), script)

    def test_wsgi_module(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(tmp, 'api.conf')
        with open(path, 'w') as f:
            f.write('[database]\nconnection = sqlite:///%s\n'
                    % os.path.join(tmp, 'db.sqlite'))
        seen = self.probe('import baremetal_orch.wsgi',
                          env={'BAREMETAL_ORCH_CONFIG_FILES': path})
        self.assertEqual(THREADING, seen)

    def test_notification_sender_child(self):
        # What a spawned child does: import the target's module and call
        # it (here with the stop marker already queued).
        entry = '\n'.join([
            'import multiprocessing, queue, threading',
            'from baremetal_orch.notifications import sender_process as np',
            'items = queue.Queue()',
            'items.put(np._STOP)',
            'np._child_main({"DEFAULT": {"transport_url": "fake:/"}}, [],',
            '               items, multiprocessing.Value("Q", 0),',
            '               threading.Event())',
        ])
        self.assertEqual(THREADING, self.probe(entry))

    def test_benchmarks(self):
        # python -m tools.benchmarks.<name>, from the repository's root.
        root = os.path.dirname(SETUP_CFG)
        self.assertEqual(THREADING, self.probe(
            'import sys; sys.path.insert(0, %r)\n'
            'import tools.benchmarks.harness' % os.path.abspath(root)))

    def test_tests(self):
        self.assertEqual(THREADING,
                         self.probe('import baremetal_orch.tests'))
