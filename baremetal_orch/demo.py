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
"""Load an example site through the REST API and deploy it.

Used by ``baremetal-orch --site-dir DIR`` (the README's first command):
everything goes through the public API, as an operator's client would.
"""

import copy
import os
import time

import requests
import yaml

HEADERS = {'Content-Type': 'application/json'}


def _load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def _merge(base, overlay):
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def load_site(site_dir, failures=()):
    site = _load(os.path.join(site_dir, 'site.yaml'))
    nodes = {n['name']: copy.deepcopy(n) for n in site['nodes']}
    for name in failures:
        path = os.path.join(site_dir, 'failures', '%s.yaml' % name)
        overlay = _load(path) or {}
        for node, values in (overlay.get('nodes') or {}).items():
            _merge(nodes[node], values)
    return list(nodes.values())


def _check(resp):
    if resp.status_code >= 400:
        raise RuntimeError('%s %s: %s %s' % (
            resp.request.method, resp.request.url, resp.status_code,
            resp.text))
    return resp.json() if resp.content else None


class FreshDatabaseNeeded(Exception):
    """A failure overlay cannot be replayed on nodes that already exist."""


def run(endpoint, site_dir, failures=(), out=print, poll=0.2,
        database=None):
    """Create the nodes and the strategy, deploy, print the report.

    :param failures: names of overlays of ``site_dir/failures`` to apply
        to the nodes as they are created.
    :param database: where the service keeps its data (for messages).
    :returns: 0 when the action succeeded, 1 otherwise.
    :raises FreshDatabaseNeeded: when ``failures`` are given and nodes of
        the site already exist (deployed nodes would not replay them).
    """
    session = requests.Session()
    api = endpoint.rstrip('/') + '/v1'
    existing = {n['name'] for n in _check(session.get(
        api + '/nodes', params={'limit': 1000}, timeout=30))['nodes']}
    site = load_site(site_dir, failures)
    already = sorted(existing & {n['name'] for n in site})
    if failures and already:
        raise FreshDatabaseNeeded(
            'The failure case %s replays the example on nodes never '
            'deployed, but the database %s already holds %d nodes of the '
            'site (%s...). Use a fresh database: give --config-file a file '
            'with another [database]connection, or remove that database '
            'file.' % (', '.join(failures), database or 'of the service',
                       len(already), ', '.join(already[:3])))
    for node in site:
        if node['name'] not in existing:
            _check(session.post(api + '/nodes', json=node, timeout=30))
    with open(os.path.join(site_dir, 'deployment-strategy.yaml'), 'rb') as f:
        document = f.read()
    strategy = yaml.safe_load(document)
    name = strategy['metadata']['name']
    if session.get(api + '/deployment_strategies/' + name,
                   timeout=30).status_code == 404:
        _check(session.post(api + '/deployment_strategies', data=document,
                            headers={'Content-Type': 'application/yaml'},
                            timeout=30))
    action = _check(session.post(api + '/actions', json={
        'name': 'deploy_site',
        'parameters': {'deployment_strategy': name}}, timeout=30))
    out('deploy_site %s started' % action['uuid'])
    while action['state'] in ('pending', 'running'):
        time.sleep(poll)
        action = _check(session.get(api + '/actions/' + action['uuid'],
                                    timeout=30))
    print_report(action, out)
    return 0 if action['state'] == 'complete' else 1


def print_report(action, out=print):
    report = action.get('report') or {}
    out('Action %s: %s (%s)' % (action['uuid'], action['state'],
                                action['result']))
    out('%-20s %-8s %-8s %-26s %s' % ('group', 'critical', 'status',
                                      'reason', 'failed nodes'))
    for group in report.get('order', []) + sorted(
            set(report.get('groups', {})) - set(report.get('order', []))):
        entry = report['groups'][group]
        out('%-20s %-8s %-8s %-26s %s' % (
            group, entry.get('critical'), entry.get('status'),
            entry.get('reason') or '-',
            ', '.join(entry.get('failed_nodes') or []) or '-'))
    out('nodes: ' + ', '.join('%s=%s' % kv for kv in sorted(
        (report.get('nodes') or {}).items())))
