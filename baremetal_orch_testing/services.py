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
"""Running baremetal_orch's own processes in functional tests."""

import configparser
import json
import os
import time
import urllib.parse

import requests

from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing import helpers

HTTP_TIMEOUT = 30


def write_config(path, sections):
    """Write an ini file from {section: {option: value}}."""
    parser = configparser.ConfigParser(interpolation=None)
    for section, options in sections.items():
        if section != 'DEFAULT':
            parser.add_section(section)
        for key, value in options.items():
            parser.set(section, key, str(value))
    with open(path, 'w') as f:
        parser.write(f)
    return path


#: Seconds a request waits for a node locked by earlier work.
LOCKED_WAIT = 60


def _node_locked(resp):
    if resp.status_code != 409:
        return False
    try:
        return resp.json()['errors'][0]['code'] == 'baremetal_orch.node.locked'
    except (ValueError, KeyError, IndexError, TypeError):
        return False


class Client:
    """A tiny REST client of the API for the tests."""

    def __init__(self, endpoint, token=None):
        self.endpoint = endpoint.rstrip('/')
        self.session = requests.Session()
        if token:
            self.session.headers['X-Auth-Token'] = token

    def call(self, method, path, json=None, status=None, **kw):
        """One request; ``status`` is the status it must answer.

        A node locked by the work of an earlier request answers 409
        ``baremetal_orch.node.locked`` until that work ends: as the real
        clients do for Ironic, the request is sent again until the node is
        free (at most LOCKED_WAIT seconds), unless 409 is what the test
        expects.
        """
        deadline = time.monotonic() + LOCKED_WAIT
        while True:
            resp = self.session.request(method, self.endpoint + path,
                                        json=json, timeout=HTTP_TIMEOUT,
                                        **kw)
            if (status == 409 or not _node_locked(resp) or
                    time.monotonic() > deadline):
                break
            time.sleep(0.1)
        if status is not None and resp.status_code != status:
            raise AssertionError('%s %s: expected %s, got %s: %s' % (
                method, path, status, resp.status_code, resp.text))
        return resp

    def get(self, path, **kw):
        return self.call('GET', path, **kw)

    def post(self, path, json=None, **kw):
        return self.call('POST', path, json=json, **kw)

    def put(self, path, json=None, **kw):
        return self.call('PUT', path, json=json, **kw)

    def patch(self, path, json=None, **kw):
        return self.call('PATCH', path, json=json, **kw)

    def delete(self, path, **kw):
        return self.call('DELETE', path, **kw)

    def wait_for(self, predicate, timeout=120, interval=0.1):
        return helpers.wait_for(predicate, timeout, interval)

    def wait_for_state(self, node, state, timeout=120):
        def check():
            doc = self.get('/v1/nodes/%s' % node, status=200).json()
            if doc['provision_state'] == state:
                return doc
            if doc['provision_state'] in ('clean failed', 'deploy failed',
                                          'error'):
                raise AssertionError('node %s failed: %s' % (
                    node, doc['last_error']))
        return self.wait_for(check, timeout)

    def wait_for_action(self, uuid, timeout=300):
        def check():
            doc = self.get('/v1/actions/%s' % uuid, status=200).json()
            return doc if doc['state'] in ('complete', 'failed',
                                           'cancelled') else None
        return self.wait_for(check, timeout)


def base_sections(tmp, port, connection, **extra):
    sections = {
        # The tests simulate nodes with the fake driver and drive real
        # Ironic with the ironic one: both are enabled on purpose (a
        # split service's default enables ironic only).
        'DEFAULT': {'debug': 'false', 'enabled_drivers': 'fake,ironic'},
        'api': {'host_ip': '127.0.0.1', 'port': port,
                'auth_strategy': 'noauth'},
        'database': {'connection': connection},
        'conductor': {'heartbeat_interval': 1, 'heartbeat_timeout': 5},
    }
    for section, options in extra.items():
        sections.setdefault(section, {}).update(options)
    return sections


#: The drills call it from here.
free_port = helpers.free_port


def wait_for_live_conductor(client, timeout=60):
    """Wait until the services API shows a live conductor (nodes are bound
    to a live conductor when they are created)."""
    client.wait_for(lambda: any(
        s['alive'] for s in client.get(
            '/v1/services', status=200).json()['services']), timeout)


def agent_info(configdrive_dir, node_uuid):
    """The instance info the fake driver handed a node (what its agent
    reads from the config drive), or None before its deploy."""
    path = os.path.join(configdrive_dir, '%s.json' % node_uuid)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)['instance_info']


def signal_token(info):
    """The token in the query of the pre-signed ``deploy_signal_id``."""
    query = urllib.parse.urlparse(info['deploy_signal_id']).query
    return urllib.parse.parse_qs(query)['token'][0]


def start_all_in_one(test, **extra):
    """Start the all-in-one ``baremetal-orch`` (sqlite, noauth, no broker)
    for ``test``; return (process, Client). ``extra`` adds config
    sections ({section: {option: value}})."""
    port = free_port()
    tmp = test.log_dir
    sections = base_sections(
        tmp, port, 'sqlite:///%s' % os.path.join(tmp, 'aio.sqlite'),
        DEFAULT={'host': 'aio', 'rpc_transport': 'none'},
        api={'workers': 4})
    for section, options in extra.items():
        sections.setdefault(section, {}).update(options)
    conf = write_config(os.path.join(tmp, 'aio.conf'), sections)
    proc = test.start_process(['baremetal-orch', '--config-file', conf])
    # The all-in-one may not answer SIGTERM while it serves: 3 s, not 10,
    # before the SIGKILL.
    test.addCleanup(func_fixtures.stop_process, proc, 3)
    endpoint = 'http://127.0.0.1:%d' % port
    test.wait_for_http(endpoint + '/v1', status=200, process=proc,
                       timeout=60)
    return proc, Client(endpoint)
