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
"""The secret sweep: no planted secret leaves the all-in-one service.

A real ``baremetal-orch`` (the embedded default) with notifications on,
written by oslo.messaging's ``log`` driver through the default sender (a
child process) into the service's ``log_file``, and ``debug = true`` so
that every log line there is. Marker secrets are planted in
``driver_info`` and ``instance_info`` under every secret key pattern
(password, secret, token, key, any case, any place in the key, and the
names oslo.utils knows) and in every shape of value (string, number,
boolean, list, map, maps in lists, deeper maps, a secret key deep under
plain keys, a ``password=...`` inside plain text); then every call of the
API and every notification is driven, and every byte that leaves the
service is searched for the markers: each answer (headers and body), the
log file (notifications included) and the process's own output. Every
marker must be missing from all of them; the counts are attached to the
test as ``secret-sweep``.
"""

import itertools
import json
import sqlite3

import requests
from testtools import content

from baremetal_orch.tests.functional import aio
from baremetal_orch.tests.functional import base

_COUNTER = itertools.count()

SECRET_KEYS = ('password', 'ipmi_password', 'PASSWORD', 'RedfishPassword',
               'secret', 'client_secret', 'SecretValue', 'token',
               'auth_token', 'X-Token', 'api_key', 'ssh_keys', 'KeyFile',
               'passphrase', 'configdrive', 'adminPass', 'sys_pswd')

#: Notifications the sweep must have seen in the log, so that it searched
#: them (and not an empty log).
EVENTS = ('baremetal.node.create.end', 'baremetal.node.update.end',
          'baremetal.node.delete.end', 'baremetal.node.maintenance_set.end',
          'baremetal.node.provision_set.end',
          'baremetal.node.console_set.end', 'baremetal.port.create.end')


def marker():
    return 'MARK%04dZ' % next(_COUNTER)


def shapes():
    """``(shape, value, markers)`` for every shape of a secret value."""
    out = []

    def add(shape, value, *marks):
        out.append((shape, value, set(marks)))

    m = marker()
    add('string', m, m)
    number = int('97531%04d13579' % next(_COUNTER))
    add('number', number, str(number))
    m1, m2 = marker(), marker()
    add('list', [m1, [m2]], m1, m2)
    m1, m2 = marker(), marker()
    add('map', {'current': m1, 'old': {'v': m2}}, m1, m2)
    m = marker()
    add('maps_in_list', [{'plain': m}], m)
    m = marker()
    add('boolean_and_text', {'enabled': True, 'pem': '-----BEGIN ' + m}, m)
    return out


def planted_info():
    """(driver_info, instance_info, markers)."""
    driver_info, instance_info, marks = {'fake_duration': 0}, {}, set()
    for i, key in enumerate(SECRET_KEYS):
        for shape, value, shape_marks in shapes():
            target = driver_info if i % 2 == 0 else instance_info
            target['%s_%s' % (shape, key)] = value
            marks |= shape_marks
    # A secret key deep under plain keys, in a list.
    m = marker()
    driver_info['plain'] = {'a': [{'b': {'c': {'d': {'api_token': m}}}}]}
    marks.add(m)
    # A secret written inside plain text.
    m = marker()
    driver_info['deploy_args'] = '--password %s --other x' % m
    instance_info['kernel_cmdline'] = 'console=ttyS0 password=%s' % m
    marks.add(m)
    return driver_info, instance_info, marks


class TestSecretSweep(base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        self.service = self.useFixture(aio.AllInOne({
            'DEFAULT': {'debug': 'true', 'notification_level': 'debug'},
            'oslo_messaging_notifications': {'driver': 'log'},
            'conductor': {'heartbeat_interval': 1},
        }))
        self.http = requests.Session()
        self.addCleanup(self.http.close)
        self.answers = []
        self.calls = 0
        self.markers = set()

    def call(self, method, path, body=None, status=None, raw=None,
             headers=None):
        kwargs = {'timeout': 60, 'headers': headers or {}}
        if raw is not None:
            kwargs['data'] = raw
        elif body is not None:
            kwargs['json'] = body
        resp = self.http.request(method, self.service.url + path, **kwargs)
        self.calls += 1
        self.answers.append(b''.join(
            ('%s: %s\n' % h).encode('latin-1') for h in resp.headers.items())
            + resp.content)
        if status is not None:
            self.assertEqual(status, resp.status_code,
                             '%s %s: %s' % (method, path, resp.text))
        return resp

    def wait_for(self, predicate, timeout=120):
        return super().wait_for(predicate, timeout, interval=0.2)

    def make_node(self, name, **extra):
        driver_info, instance_info, marks = planted_info()
        self.markers |= marks
        body = {'driver': 'fake', 'name': name, 'driver_info': driver_info,
                'instance_info': instance_info}
        body.update(extra)
        return self.call('POST', '/v1/nodes', body, 201).json()

    def provision(self, name, target, state):
        self.call('PUT', '/v1/nodes/%s/states/provision' % name,
                  {'target': target}, 202)
        self.wait_for(lambda: self.call(
            'GET', '/v1/nodes/%s' % name, status=200).json()[
                'provision_state'] == state)

    def drive_everything(self):
        node = self.make_node('n1', tags=['sweep'],
                              labels={'role': 'sweep'})
        self.make_node('n2', tags=['sweep'])
        for path in ('/v1/nodes/n1', '/v1/nodes/%s' % node['uuid'],
                     '/v1/nodes/n1?fields=driver_info,instance_info',
                     '/v1/nodes', '/v1/nodes?detail=true',
                     '/v1/nodes?fields=name,driver_info',
                     '/v1/nodes/n1/states'):
            self.call('GET', path, status=200)
        # Patches: secrets added in every shape, and refused patches.
        for shape, value, marks in shapes():
            self.markers |= marks
            self.call('PATCH', '/v1/nodes/n1', [
                {'op': 'add', 'path': '/driver_info/new_%s_secret' % shape,
                 'value': value}], 200)
        m = marker()
        self.markers.add(m)
        self.call('PATCH', '/v1/nodes/n1', [
            {'op': 'add', 'path': '/driver_info/private_key',
             'value': {'pem': m}},
            {'op': 'add', 'path': '/name', 'value': 'bad name'}], 400)
        for op in ({'op': 'copy', 'from': '/driver_info/string_password',
                    'path': '/extra/x'},
                   {'op': 'test', 'path': '/driver_info/string_password',
                    'value': 'x'},
                   {'op': 'move', 'from': '/driver_info/map_token',
                    'path': '/driver_info/plain2'},
                   {'op': 'remove', 'path': '/driver_info/map_token/nope'},
                   {'op': 'replace', 'path': '/driver_info/nope/x',
                    'value': 1}):
            self.call('PATCH', '/v1/nodes/n1', [op], 400)
        # Refused creations that carry secrets.
        driver_info, _ii, marks = planted_info()
        self.markers |= marks
        self.call('POST', '/v1/nodes', {'driver': 'fake', 'name': 'n1',
                                        'driver_info': driver_info}, 409)
        self.call('POST', '/v1/nodes', {'driver': 'nope', 'name': 'bad',
                                        'driver_info': driver_info}, 400)
        self.call('POST', '/v1/nodes', {'driver': 'fake', 'name': 'n9',
                                        'driver_info': dict(
                                            driver_info,
                                            fake_fail_phase='nope')}, 400)
        # Maintenance, console, provision states (conductor-side
        # notifications), ports, chassis.
        self.call('PUT', '/v1/nodes/n1/maintenance', {'reason': 'r'}, 202)
        self.call('DELETE', '/v1/nodes/n1/maintenance', status=202)
        self.call('PUT', '/v1/nodes/n1/states/console', {'enabled': True},
                  202)
        self.call('PUT', '/v1/nodes/n1/states/console', {'enabled': False},
                  202)
        chassis = self.call('POST', '/v1/chassis', {'description': 'c'},
                            201).json()
        port = self.call('POST', '/v1/ports', {
            'node_uuid': node['uuid'], 'address': '52:54:00:00:00:01'},
            201).json()
        self.call('PATCH', '/v1/ports/%s' % port['uuid'], [
            {'op': 'add', 'path': '/extra/a', 'value': 1}], 200)
        self.call('DELETE', '/v1/ports/%s' % port['uuid'], status=204)
        self.call('DELETE', '/v1/chassis/%s' % chassis['uuid'], status=204)
        self.call('POST', '/v1/nodes/filter', {'selectors': [
            {'node_tags': ['sweep']}]}, 200)
        for name in ('n1', 'n2'):
            self.provision(name, 'manage', 'manageable')
            self.provision(name, 'provide', 'available')
        # A site deployment of the nodes holding the secrets: actions,
        # reports, task trees, events, deployment records.
        self.call('POST', '/v1/deployment_strategies', {
            'schema': 'shipyard/DeploymentStrategy/v1',
            'metadata': {'name': 'sweep'},
            'data': {'groups': [{'name': 'all', 'critical': True,
                                 'depends_on': [],
                                 'selectors': [{'node_tags': ['sweep']}]}]},
        }, 201)
        self.call('POST', '/v1/actions', {
            'name': 'deploy_site', 'dry_run': True,
            'parameters': {'deployment_strategy': 'sweep'}}, 200)
        action = self.call('POST', '/v1/actions', {
            'name': 'deploy_site',
            'parameters': {'deployment_strategy': 'sweep'}}, 201).json()
        done = self.wait_for(lambda: (lambda a: a if a['state'] not in (
            'pending', 'running') else None)(self.call(
                'GET', '/v1/actions/%s' % action['uuid'], status=200).json()),
            timeout=300)
        self.assertEqual('complete', done['state'], done)
        labels = self.call('POST', '/v1/actions', {
            'name': 'update_labels',
            'parameters': {'target_nodes': ['n1']}}, 201).json()
        self.wait_for(lambda: self.call(
            'GET', '/v1/actions/%s' % labels['uuid'],
            status=200).json()['state'] not in ('pending', 'running'))
        for path in ('/v1/actions', '/v1/actions/%s' % action['uuid'],
                     '/v1/tasks/%s?tree=true' % done['task_uuid'],
                     '/v1/events', '/v1/events?action_uuid=%s'
                     % action['uuid'], '/v1/deployments',
                     '/v1/deployment_strategies',
                     '/v1/deployment_strategies/sweep', '/v1/services',
                     '/v1/shards', '/v1/nodes?detail=true'):
            self.call('GET', path, status=200)
        # Back down and away: provision and delete notifications.
        self.provision('n2', 'deleted', 'available')
        self.call('DELETE', '/v1/nodes/n2', status=204)

    def test_no_marker_leaves_the_service(self):
        self.drive_everything()
        # The notifications of the last requests are in the log before
        # the search (a log line per notification, in order).
        self.wait_for(lambda: b'baremetal.node.delete.end'
                      in self.service.log_since(0))
        output = self.service.all_output()
        text = output.decode('utf-8', 'replace')
        missing = [e for e in EVENTS if e not in text]
        leaks = {}
        for i, answer in enumerate(self.answers):
            for m in self.markers:
                if m.encode() in answer:
                    leaks.setdefault('answer %d' % i, []).append(m)
        for m in self.markers:
            if m in text:
                line = next(ln for ln in text.splitlines() if m in ln)
                leaks.setdefault('log', []).append('%s in %s' % (
                    m, line[:300]))
        figures = {'markers': len(self.markers), 'answers': len(self.answers),
                   'api_calls': self.calls,
                   'log_bytes': len(output),
                   'notifications_in_log': text.count(
                       'oslo.messaging.notification.baremetal.'),
                   'leaks': sum(len(v) for v in leaks.values())}
        self.addDetail('secret-sweep', content.json_content(figures))
        self.assertEqual({}, leaks)
        self.assertEqual([], missing, 'notifications missing from the '
                         'log: the sweep did not search them')
        self.assertGreater(len(self.markers), 200)
        self.assertNotIn('Traceback', text)
        # Not a vacuous search: the secrets did reach the service, stored
        # as sent for the driver to use.
        with sqlite3.connect(self.service.db_path) as db:
            stored = json.dumps([r[0] for r in db.execute(
                'SELECT driver_info FROM nodes')])
        self.assertTrue(any(m in stored for m in self.markers))
