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
"""The snapshot of a site action (its strategy document, its groups' node
sets, the names of its nodes) is stored once, with the action, and its
checkpoints never write it again."""

import contextlib
import json

import fixtures

from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import strategy as strategy_mod
from baremetal_orch.tests.unit.api import test_actions
from baremetal_orch.tests.unit.api import test_retry

ONCE = {'strategy': ['parameters.snapshot.strategy'],
        'group_nodes': ['parameters.snapshot.group_nodes'],
        'names': ['parameters.snapshot.nodes']}


class Parts:
    """Where the parts of an action's snapshot are found in stored JSON:
    ``{part: [paths]}``."""

    def __init__(self, groups, names):
        self.groups = set(groups)
        self.names = names

    def _part(self, value):
        if isinstance(value, dict):
            if value.get('schema') == strategy_mod.SCHEMA_NAME:
                return 'strategy'
            if value and set(value) == self.groups and all(
                    isinstance(v, list) for v in value.values()):
                return 'group_nodes'
            if value == self.names:
                return 'names'
        elif (isinstance(value, list) and value
              and all(isinstance(v, str) for v in value)
              and set(value) == set(self.names)):
            return 'node_list'
        return None

    def find(self, value, path, found=None):
        found = {} if found is None else found
        part = self._part(value)
        if part:
            found.setdefault(part, []).append(path)
        elif isinstance(value, dict):
            for key, item in value.items():
                self.find(item, '%s.%s' % (path, key), found)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                self.find(item, '%s.%d' % (path, i), found)
        return found


class TestSnapshotStoredOnce(test_actions.ActionApiTestCase):

    def setUp(self):
        super().setUp()
        # Its flow's details are read once it ended.
        self.config(group='taskflow', jobboard_save_logbook=True)
        for name, tag in sorted(test_retry.NODES.items()):
            info = {'fake_fail_phase': 'deploy'} if name == 'ctl02' else {}
            self.post('/v1/nodes', {'driver': 'fake', 'name': name,
                                    'tags': [tag], 'driver_info': info},
                      status=201)
        self.post('/v1/deployment_strategies', test_retry.STRATEGY,
                  status=201)
        self.parts = Parts(
            [g['name'] for g in test_retry.STRATEGY['data']['groups']],
            {n.uuid: n.name for n in dbapi.list_nodes()})
        self.checkpoints = []
        update = dbapi.update_action

        def spy(uuid, values, reload=True):
            if not reload:
                # A checkpoint of a running flow, as it is written.
                self.checkpoints.append(json.loads(json.dumps(values)))
            return update(uuid, values, reload=reload)
        self.useFixture(fixtures.MockPatchObject(dbapi, 'update_action',
                                                 spy))

    def run_action(self, body):
        created = self.post('/v1/actions', body, status=201).json
        return self.finished(created['uuid'])

    def stored(self, uuid):
        """Where the snapshot's parts are in what is stored of action
        ``uuid``: its row, its events, its flow's details."""
        row = dbapi.get_action(uuid)
        found = {}
        for column in ('parameters', 'progress', 'report'):
            self.parts.find(getattr(row, column), column, found)
        for event in dbapi.list_events({'action_uuid': uuid}):
            self.parts.find(event.details, 'event', found)
        with contextlib.closing(
                dbapi.taskflow_backend().get_connection()) as conn:
            for flow in conn.get_logbook(uuid):
                self.parts.find(flow.to_dict(), 'flow', found)
                for atom in flow:
                    self.parts.find(atom.to_dict(), 'atom', found)
        return found

    def test_stored_once_per_action_and_never_by_a_checkpoint(self):
        first = self.run_action({'name': 'deploy_site'})
        self.assertEqual('failed', first['state'])
        self.assertEqual(ONCE, self.stored(first['uuid']))
        retry = self.run_action({'name': 'retry',
                                 'parameters': {'action': first['uuid']}})
        self.assertEqual('failed', retry['state'])
        self.assertEqual(ONCE, self.stored(retry['uuid']))
        self.assertGreater(len(self.checkpoints), 4)
        self.assertEqual([{}] * len(self.checkpoints),
                         [self.parts.find(c, 'checkpoint')
                          for c in self.checkpoints])
