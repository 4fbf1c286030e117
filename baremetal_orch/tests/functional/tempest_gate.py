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
"""Run the in-tree tempest plugin against what DevStack would start.

``tox -e tempest``
(``python -m baremetal_orch.tests.functional.tempest_gate``) starts, on
127.0.0.1:

* a real Keystone (:mod:`.fixtures.keystone`) with the service user, and the
  ``baremetal-orchestration`` and ``baremetal`` services and endpoints in
  its catalog;
* a real Ironic (:mod:`.fixtures.ironic`, fake hardware);
* the split deployment: ``baremetal-orch-manage db upgrade`` and
  ``baremetal-orch-status upgrade check`` on a MariaDB database, then the
  conductor and the API (Keystone auth) over a RabbitMQ virtual host;

writes ``tempest.conf`` (dynamic credentials from Keystone's admin, secure
RBAC scopes) and runs
``tempest run --regex '^baremetal_orch_tempest_plugin\\.'`` with tempest
from PyPI, installed in a cached virtualenv outside the clone
(:mod:`.fixtures.venvs`). The plugin reaches that virtualenv through
``PYTHONPATH``: a directory holding the plugin package and a distribution
record whose ``tempest.test_plugins`` entry point is the one this project's
installed metadata declares (so a plugin missing from ``setup.cfg`` is not
found). tempest's own output, totals included, is printed as it comes; the
exit code is tempest's.

Logs (services, tempest) go to ``$BAREMETAL_ORCH_TEMPEST_LOGS`` when set,
else to a temporary directory removed at the end.
"""

import argparse
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

import fixtures
import requests
import testtools

from baremetal_orch_testing import fixtures as func_fixtures
from baremetal_orch_testing.fixtures import broker
from baremetal_orch_testing.fixtures import databases
from baremetal_orch_testing.fixtures import ironic as ironic_fixture
from baremetal_orch_testing.fixtures import keystone
from baremetal_orch_testing.fixtures import venvs
from baremetal_orch_testing import services

#: tempest from PyPI, pinned: a new tempest release cannot turn CI red.
TEMPEST_PACKAGES = ('tempest==47.0.0',)
DIST = 'baremetal-orch'
ENTRY_POINT_GROUP = 'tempest.test_plugins'
PLUGIN_PACKAGE = 'baremetal_orch_tempest_plugin'
DEFAULT_REGEX = r'^baremetal_orch_tempest_plugin\.'
LOGS_ENV = 'BAREMETAL_ORCH_TEMPEST_LOGS'
BIN_DIR = os.path.dirname(sys.executable)
START_TIMEOUT = 90
#: Seconds between two Ironic syncs of the conductor: the scenario waits
#: for its Ironic nodes to be imported.
SYNC_INTERVAL = 2


class GateError(Exception):
    """The gate could not be set up."""


def plugin_site(directory):
    """A directory that makes the plugin visible to another interpreter.

    Holds a link to the plugin package and a minimal distribution record
    with the ``tempest.test_plugins`` entry point of this project's
    installed metadata. Returns the directory (for ``PYTHONPATH``).
    """
    try:
        dist = importlib.metadata.distribution(DIST)
    except importlib.metadata.PackageNotFoundError:
        raise GateError('%s is not installed in %s' % (DIST, sys.prefix))
    points = [ep for ep in dist.entry_points
              if ep.group == ENTRY_POINT_GROUP]
    if not points:
        raise GateError('%s is installed without a %s entry point: is it in '
                        'setup.cfg, and the project reinstalled?'
                        % (DIST, ENTRY_POINT_GROUP))
    spec = importlib.util.find_spec(PLUGIN_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise GateError('package %s is not importable' % PLUGIN_PACKAGE)
    package_dir = list(spec.submodule_search_locations)[0]
    os.makedirs(directory, exist_ok=True)
    os.symlink(package_dir, os.path.join(directory, PLUGIN_PACKAGE))
    info = os.path.join(directory, '%s-%s.dist-info' % (
        PLUGIN_PACKAGE, dist.version))
    os.makedirs(info)
    with open(os.path.join(info, 'METADATA'), 'w') as f:
        f.write('Metadata-Version: 2.1\nName: %s\nVersion: %s\n'
                % (PLUGIN_PACKAGE.replace('_', '-'), dist.version))
    with open(os.path.join(info, 'entry_points.txt'), 'w') as f:
        f.write('[%s]\n' % ENTRY_POINT_GROUP)
        for ep in points:
            f.write('%s = %s\n' % (ep.name, ep.value))
    return directory


def tempest_conf(keystone_fixture, workdir, configdrive_dir):
    """The text of ``tempest.conf`` for this deployment."""
    sections = {
        'DEFAULT': {'log_dir': workdir, 'log_file': 'tempest.log',
                    'use_stderr': 'false'},
        'auth': {'use_dynamic_credentials': 'true',
                 'create_isolated_networks': 'false',
                 'admin_username': 'admin',
                 'admin_password': keystone_fixture.admin_password,
                 'admin_project_name': 'admin',
                 'admin_domain_name': 'Default',
                 'admin_system': 'all'},
        'identity': {'uri_v3': keystone_fixture.auth_url,
                     'auth_version': 'v3',
                     'region': keystone.REGION},
        'identity-feature-enabled': {'api_v2': 'false'},
        'service_available': {'baremetal_orch': 'true', 'nova': 'false',
                              'neutron': 'false', 'glance': 'false',
                              'cinder': 'false', 'swift': 'false',
                              'horizon': 'false'},
        'enforce_scope': {'baremetal_orch': 'true', 'keystone': 'true'},
        'baremetal_orch': {'build_interval': '1', 'build_timeout': '180',
                           'ironic_backend': 'true',
                           'ironic_sync_timeout': '60',
                           'fake_configdrive_dir': configdrive_dir},
        'oslo_concurrency': {'lock_path': os.path.join(workdir, 'locks')},
    }
    lines = []
    for section, options in sections.items():
        lines.append('[%s]' % section)
        lines += ['%s = %s' % item for item in options.items()]
        lines.append('')
    return '\n'.join(lines)


class Deployment(fixtures.Fixture):
    """Keystone, Ironic, MariaDB, RabbitMQ and the split service."""

    def __init__(self, workdir):
        super().__init__()
        self.workdir = workdir
        self.procs = {}

    def _setUp(self):
        self.keystone = self.useFixture(keystone.KeystoneFixture())
        self.ironic = self.useFixture(ironic_fixture.IronicFixture())
        self.db = self.useFixture(databases.Database('mysql'))
        self.rabbit = self.useFixture(broker.RabbitMQ())
        port = func_fixtures.free_port()
        self.endpoint = 'http://127.0.0.1:%d' % port
        self.configdrive_dir = os.path.join(self.workdir, 'configdrive')
        os.makedirs(self.configdrive_dir)
        sections = services.base_sections(
            self.workdir, port, self.db.url,
            DEFAULT={'host': 'tempest-conductor', 'rpc_transport': 'oslo',
                     'enabled_drivers': 'fake,ironic',
                     'transport_url': self.rabbit.transport_url,
                     'rpc_response_timeout': 30},
            api={'auth_strategy': 'keystone',
                 'public_endpoint': self.endpoint},
            conductor={'sync_interval': SYNC_INTERVAL},
            ironic=dict(self.ironic.ironic_options(), poll_interval=0.2,
                        api_retry_interval=1),
            fake_driver={'configdrive_dir': self.configdrive_dir})
        sections['keystone_authtoken'] = self.keystone.authtoken_options()
        self.config_file = services.write_config(
            os.path.join(self.workdir, 'baremetal-orch.conf'), sections)
        # What DevStack's init does, then its start.
        for command in (('baremetal-orch-manage', 'db', 'upgrade'),
                        ('baremetal-orch-status', 'upgrade', 'check')):
            self._run(*command)
        self.keystone.register_service('baremetal-orchestration',
                                       'baremetal-orch', self.endpoint)
        self.keystone.register_service('baremetal', 'ironic',
                                       self.ironic.endpoint)
        self._start('baremetal-orch-conductor')
        self._start('baremetal-orch-api')
        self._wait(self._api_answers, 'the API at %s' % self.endpoint)
        self._wait(self._conductor_alive, 'a live conductor')

    def _run(self, script, *args):
        proc = subprocess.run(
            [os.path.join(BIN_DIR, script), '--config-file',
             self.config_file] + list(args), capture_output=True, text=True,
            stdin=subprocess.DEVNULL, timeout=300, check=False)
        if proc.returncode != 0:
            raise GateError('%s %s failed (exit %s):\n%s%s' % (
                script, ' '.join(args), proc.returncode, proc.stdout,
                proc.stderr))

    def _start(self, script):
        log = func_fixtures.LogFile(os.path.join(self.workdir,
                                                 script + '.log'))
        with open(log.path, 'ab') as out:
            proc = subprocess.Popen(
                [os.path.join(BIN_DIR, script), '--config-file',
                 self.config_file], stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, cwd=self.workdir,
                start_new_session=True)
        proc.log = log
        self.procs[script] = proc
        self.addCleanup(func_fixtures.stop_process, proc)

    def _wait(self, predicate, what):
        deadline = time.monotonic() + START_TIMEOUT
        while not predicate():
            for script, proc in self.procs.items():
                if proc.poll() is not None:
                    raise GateError('%s exited with %s:\n%s' % (
                        script, proc.returncode, proc.log.tail()))
            if time.monotonic() > deadline:
                raise GateError('no %s within %ss' % (what, START_TIMEOUT))
            time.sleep(0.2)

    def _api_answers(self):
        try:
            return requests.get(self.endpoint + '/v1',
                                timeout=5).status_code == 200
        except requests.RequestException:
            return False

    def _conductor_alive(self):
        token = self.keystone.admin_token(system=True)
        resp = requests.get(self.endpoint + '/v1/services', timeout=10,
                            headers={'X-Auth-Token': token})
        return resp.status_code == 200 and any(
            s['alive'] for s in resp.json()['services'])

    def tails(self, lines=30):
        """The last lines of each service's log, for a failure report."""
        out = []
        for script, proc in self.procs.items():
            out.append('--- %s (%s) ---\n%s' % (
                script, proc.log.path, proc.log.tail(lines)))
        return '\n'.join(out)


def run_tempest(venv, site, conf_file, workdir, regex, concurrency):
    """``tempest run`` in ``workdir``; its output streams to ours."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('OS_', 'PYTHON', 'TEMPEST_'))}
    env['PYTHONPATH'] = site
    cmd = [venvs.bin_path(venv, 'tempest'), 'run', '--config-file',
           conf_file, '--regex', regex, '--concurrency', str(concurrency)]
    print('$ %s' % ' '.join(cmd), flush=True)
    return subprocess.run(cmd, cwd=workdir, env=env,
                          stdin=subprocess.DEVNULL, check=False).returncode


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--regex', default=DEFAULT_REGEX)
    parser.add_argument('--concurrency', type=int, default=1)
    args = parser.parse_args(argv)

    logs = os.environ.get(LOGS_ENV)
    if logs:
        os.makedirs(logs, exist_ok=True)
        workdir = tempfile.mkdtemp(prefix='tempest-gate-', dir=logs)
        cleanup = None
    else:
        cleanup = tempfile.TemporaryDirectory(prefix='tempest-gate-')
        workdir = cleanup.name
    started = time.monotonic()
    try:
        print('tempest gate: logs in %s' % workdir, flush=True)
        venv = venvs.ensure_venv('tempest', TEMPEST_PACKAGES)
        site = plugin_site(os.path.join(workdir, 'plugin-site'))
        deployment = Deployment(workdir)
        try:
            deployment.setUp()
        except testtools.TestCase.skipException as exc:
            # The gate runs for real or fails: a missing service is an error.
            raise GateError('a service is missing: %s' % exc)
        try:
            print('tempest gate: services up in %.0f s' % (
                time.monotonic() - started), flush=True)
            conf_file = os.path.join(workdir, 'tempest.conf')
            with open(conf_file, 'w') as f:
                f.write(tempest_conf(deployment.keystone, workdir,
                                     deployment.configdrive_dir))
            rc = run_tempest(venv, site, conf_file, workdir, args.regex,
                             args.concurrency)
            if rc != 0:
                print(deployment.tails(), flush=True)
        finally:
            deployment.cleanUp()
    except (GateError, venvs.VenvError, fixtures.MultipleExceptions,
            func_fixtures.ServiceUnavailable) as exc:
        print('tempest gate: ERROR: %s' % exc, flush=True)
        rc = 1
    finally:
        if cleanup is not None:
            cleanup.cleanup()
    print('tempest gate: %s in %.0f s' % ('passed' if rc == 0 else 'FAILED',
                                          time.monotonic() - started),
          flush=True)
    return rc


if __name__ == '__main__':
    sys.exit(main())
