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
"""The DevStack plugin and the Zuul jobs, checked without DevStack.

The shell files must parse (``bash -n``); the plugin's phases are run in
bash with DevStack's helpers replaced by stubs (``iniset`` writes a real
ini file, the Keystone and process helpers record their calls), and the
configuration they leave behind is checked. The Zuul files must be YAML
with the jobs and templates the project relies on.
"""

import configparser
import os
import shlex
import subprocess
import textwrap

import fixtures
import yaml

from baremetal_orch.tests import base

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..',
                                    '..', '..'))
DEVSTACK = os.path.join(REPO, 'devstack')
SHELL_FILES = ('plugin.sh', 'settings', os.path.join('lib',
                                                     'baremetal-orch'))
ZUUL = os.path.join(REPO, 'zuul.d')

#: DevStack's globals and helpers, stubbed.
STUBS = textwrap.dedent('''\
    DEST=$TMP/opt/stack
    STACK_USER=stack
    SERVICE_PROTOCOL=http
    SERVICE_HOST=10.0.0.5
    KEYSTONE_SERVICE_URI=http://10.0.0.5/identity
    SERVICE_PASSWORD=service-secret
    SERVICE_DOMAIN_NAME=Default
    SERVICE_PROJECT_NAME=service
    REGION_NAME=RegionOne
    ENABLE_DEBUG_LOG_LEVEL=True
    SSL_BUNDLE_FILE=/opt/stack/data/ca-bundle.pem
    MEMCACHE_SERVERS=localhost:11211
    SERVICE_TIMEOUT=60
    API_WORKERS=3

    record() { printf '%s\\n' "$*" >> "$TMP/calls.log"; }
    # iniset FILE SECTION OPTION VALUE...: set the option in a real file
    # (replace it in its section, else append it to the section, else
    # append the section).
    iniset() {
        local file=$1 section=$2 option=$3
        shift 3
        touch "$file"
        awk -v header="[$section]" -v option="$option" -v value="$*" '
            function put() { print option " = " value; done = 1 }
            $0 == header { inside = 1; print; next }
            /^\\[/ { if (inside && !done) put(); inside = 0 }
            inside && !done && index($0, option " =") == 1 { put(); next }
            { print }
            END { if (!done) { if (!inside) print header; put() } }
        ' "$file" > "$file.new"
        mv "$file.new" "$file"
    }
    is_service_enabled() {
        local s
        for s in "$@"; do
            [[ ",$ENABLED_SERVICES," == *",$s,"* ]] && return 0
        done
        return 1
    }
    enable_service() {
        local s
        for s in "$@"; do ENABLED_SERVICES+=",$s"; done
    }
    define_plugin() { record define_plugin "$@"; }
    echo_summary() { :; }
    die() { echo "die: $*" >&2; exit 3; }
    get_transport_url() {
        echo "rabbit://stackrabbit:rabbit-secret@10.0.0.5:5672/"
    }
    database_connection_url() {
        echo "mysql+pymysql://root:db-secret@127.0.0.1/$1?charset=utf8"
    }
    configure_keystone_authtoken_middleware() {
        record configure_keystone_authtoken_middleware "$@"
        local conf=$1 user=$2 section=${3:-keystone_authtoken} stype=$4
        iniset $conf $section auth_type password
        iniset $conf $section interface public
        iniset $conf $section auth_url $KEYSTONE_SERVICE_URI
        iniset $conf $section username $user
        iniset $conf $section password $SERVICE_PASSWORD
        iniset $conf $section user_domain_name "$SERVICE_DOMAIN_NAME"
        iniset $conf $section project_name $SERVICE_PROJECT_NAME
        iniset $conf $section project_domain_name "$SERVICE_DOMAIN_NAME"
        iniset $conf $section www_authenticate_uri $KEYSTONE_SERVICE_URI
        if [[ -n "$stype" ]]; then
            iniset $conf $section service_type $stype
        fi
    }
    create_service_user() { record create_service_user "$@"; }
    get_or_create_service() { record get_or_create_service "$@"; }
    get_or_create_endpoint() { record get_or_create_endpoint "$@"; }
    recreate_database() { record recreate_database "$@"; }
    setup_develop() { record setup_develop "$@"; }
    pip_install() { record pip_install "$@"; }
    run_process() { record run_process "$@"; }
    stop_process() { record stop_process "$@"; }
    wait_for_service() { record wait_for_service "$@"; }
    get_python_exec_prefix() { echo "$TMP/bin"; }
    which() { echo "/usr/local/bin/$1"; }
    sudo() {
        record sudo "$@"
        case "$1" in
            install) mkdir -p "${@: -1}" ;;
            rm) "$@" ;;
        esac
    }
''')

#: The console script init runs, recording its arguments.
MANAGE = '#!/bin/sh\necho "baremetal-orch-manage $*" >> "$TMP/calls.log"\n'


class TestShellSyntax(base.TestCase):

    def test_bash_n(self):
        for name in SHELL_FILES:
            path = os.path.join(DEVSTACK, name)
            proc = subprocess.run(['bash', '-n', path], capture_output=True,
                                  text=True, check=False)
            self.assertEqual(0, proc.returncode, '%s: %s' % (name,
                                                             proc.stderr))


class PluginRun:
    """The result of running plugin phases: the config and the calls."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.conf_dir = os.path.join(tmp, 'etc', 'baremetal-orch')
        self.conf_file = os.path.join(self.conf_dir, 'baremetal-orch.conf')
        self.uwsgi_file = os.path.join(self.conf_dir,
                                       'baremetal-orch-api-uwsgi.ini')
        log = os.path.join(tmp, 'calls.log')
        self.calls = []
        if os.path.exists(log):
            with open(log) as f:
                self.calls = f.read().splitlines()

    def config(self, path=None):
        parser = configparser.RawConfigParser()
        parser.optionxform = str
        self.read = parser.read(path or self.conf_file)
        return parser

    def called(self, prefix):
        return [c for c in self.calls if c.startswith(prefix + ' ')]


class TestPluginPhases(base.TestCase):

    def run_plugin(self, phases, services, env=None):
        """Source settings, then plugin.sh for each phase, in one bash."""
        tmp = self.useFixture(fixtures.TempDir()).path
        os.makedirs(os.path.join(tmp, 'bin'))
        manage = os.path.join(tmp, 'bin', 'baremetal-orch-manage')
        with open(manage, 'w') as f:
            f.write(MANAGE)
        os.chmod(manage, 0o700)
        script = [STUBS,
                  'ENABLED_SERVICES=%s' % ','.join(services),
                  'BAREMETAL_ORCH_CONF_DIR=$TMP/etc/baremetal-orch',
                  'source %s' % shlex.quote(os.path.join(DEVSTACK,
                                                         'settings'))]
        for key, value in (env or {}).items():
            script.append('%s=%s' % (key, shlex.quote(value)))
        for phase in phases:
            script.append('source %s %s' % (
                shlex.quote(os.path.join(DEVSTACK, 'plugin.sh')), phase))
        script.append('echo "ENABLED_SERVICES=$ENABLED_SERVICES"')
        proc = subprocess.run(
            ['bash', '-e', '-c', '\n'.join(script)], capture_output=True,
            text=True, check=False,
            env={'TMP': tmp, 'PATH': os.environ.get('PATH', '/usr/bin:/bin')})
        self.assertEqual(0, proc.returncode, proc.stderr[-3000:])
        run = PluginRun(tmp)
        run.services = proc.stdout.strip().rpartition(
            'ENABLED_SERVICES=')[2].split(',')
        return run

    STACK = ('stack install', 'stack post-config', 'stack extra')
    WITH_IRONIC = ('key', 'mysql', 'rabbit', 'ir-api', 'ir-cond')

    def test_settings_enable_both_services(self):
        run = self.run_plugin([], ['key'])
        self.assertIn('baremetal-orch-api', run.services)
        self.assertIn('baremetal-orch-conductor', run.services)
        self.assertEqual(['define_plugin baremetal-orch'], run.calls)

    def test_config_with_ironic(self):
        run = self.run_plugin(self.STACK, self.WITH_IRONIC)
        conf = run.config()
        expected = {
            ('DEFAULT', 'transport_url'):
                'rabbit://stackrabbit:rabbit-secret@10.0.0.5:5672/',
            ('DEFAULT', 'rpc_transport'): 'oslo',
            ('DEFAULT', 'debug'): 'True',
            ('database', 'connection'):
                'mysql+pymysql://root:db-secret@127.0.0.1/baremetal_orch'
                '?charset=utf8',
            ('api', 'auth_strategy'): 'keystone',
            ('api', 'host_ip'): '10.0.0.5',
            ('api', 'port'): '6388',
            ('api', 'public_endpoint'): 'http://10.0.0.5:6388',
            ('keystone_authtoken', 'auth_type'): 'password',
            ('keystone_authtoken', 'username'): 'baremetal-orch',
            ('keystone_authtoken', 'www_authenticate_uri'):
                'http://10.0.0.5/identity',
            ('keystone_authtoken', 'service_type'):
                'baremetal-orchestration',
            ('keystone_authtoken', 'user_domain_name'): 'Default',
            ('ironic', 'auth_type'): 'password',
            ('ironic', 'auth_url'): 'http://10.0.0.5/identity',
            ('ironic', 'username'): 'baremetal-orch',
            ('ironic', 'password'): 'service-secret',
            ('ironic', 'project_name'): 'service',
            ('ironic', 'region_name'): 'RegionOne',
            ('ironic', 'service_type'): 'baremetal',
            ('ironic', 'valid_interfaces'): 'public',
            ('labels', 'driver'): 'noop',
        }
        for (section, option), value in expected.items():
            self.assertEqual(value, conf.get(section, option),
                             '[%s] %s' % (section, option))
        self.assertFalse(conf.has_option('ironic', 'shard_key'))
        self.assertFalse(conf.has_option('DEFAULT', 'notification_level'))

    def test_keystone_service_and_endpoint(self):
        run = self.run_plugin(self.STACK, self.WITH_IRONIC)
        self.assertEqual(['create_service_user baremetal-orch admin'],
                         run.called('create_service_user'))
        self.assertEqual(['get_or_create_service baremetal-orch '
                          'baremetal-orchestration Bare metal orchestration'],
                         run.called('get_or_create_service'))
        self.assertEqual(['get_or_create_endpoint baremetal-orchestration '
                          'RegionOne http://10.0.0.5:6388'],
                         run.called('get_or_create_endpoint'))
        self.assertEqual(
            ['configure_keystone_authtoken_middleware %s baremetal-orch '
             'keystone_authtoken baremetal-orchestration' % run.conf_file],
            run.called('configure_keystone_authtoken_middleware'))

    def test_install_database_and_processes(self):
        run = self.run_plugin(self.STACK, self.WITH_IRONIC)
        self.assertEqual(['setup_develop %s' % os.path.join(
            run.tmp, 'opt', 'stack', 'baremetal-orch')],
            run.called('setup_develop'))
        self.assertEqual(['recreate_database baremetal_orch'],
                         run.called('recreate_database'))
        self.assertEqual(['baremetal-orch-manage --config-file %s db '
                          'upgrade' % run.conf_file],
                         run.called('baremetal-orch-manage'))
        self.assertEqual(
            ['run_process baremetal-orch-api /usr/local/bin/uwsgi '
             '--procname-prefix baremetal-orch-api --ini %s'
             % run.uwsgi_file,
             'run_process baremetal-orch-conductor %s --config-file %s'
             % (os.path.join(run.tmp, 'bin', 'baremetal-orch-conductor'),
                run.conf_file)],
            run.called('run_process'))
        self.assertEqual(['wait_for_service 60 http://10.0.0.5:6388'],
                         run.called('wait_for_service'))
        # The API's process starts before the conductor's, after init.
        order = [c.split()[0] for c in run.calls]
        self.assertLess(order.index('baremetal-orch-manage'),
                        order.index('run_process'))

    def test_uwsgi_ini(self):
        run = self.run_plugin(self.STACK, self.WITH_IRONIC)
        uwsgi = run.config(run.uwsgi_file)['uwsgi']
        self.assertEqual('baremetal_orch.wsgi:application', uwsgi['module'])
        self.assertEqual('BAREMETAL_ORCH_CONFIG_FILES=%s' % run.conf_file,
                         uwsgi['env'])
        self.assertEqual('10.0.0.5:6388', uwsgi['http-socket'])
        self.assertEqual('3', uwsgi['processes'])

    def test_without_ironic_no_ironic_section(self):
        run = self.run_plugin(self.STACK, ('key', 'mysql', 'rabbit'))
        conf = run.config()
        self.assertFalse(conf.has_section('ironic'))
        self.assertEqual('keystone', conf.get('api', 'auth_strategy'))

    def test_without_keystone_no_accounts(self):
        run = self.run_plugin(self.STACK, ('mysql', 'rabbit'))
        self.assertEqual([], run.called('get_or_create_service'))
        self.assertEqual([], run.called('create_service_user'))

    def test_options(self):
        run = self.run_plugin(
            self.STACK, self.WITH_IRONIC,
            env={'BAREMETAL_ORCH_NOTIFICATION_LEVEL': 'info',
                 'BAREMETAL_ORCH_IRONIC_SHARD_KEY': 'rack-a',
                 'BAREMETAL_ORCH_IRONIC_CONDUCTOR_GROUP': 'zone1',
                 'BAREMETAL_ORCH_LABELS_DRIVER': 'kubernetes'})
        conf = run.config()
        self.assertEqual('info', conf.get('DEFAULT', 'notification_level'))
        self.assertEqual('messagingv2',
                         conf.get('oslo_messaging_notifications', 'driver'))
        self.assertEqual('rack-a', conf.get('ironic', 'shard_key'))
        self.assertEqual('zone1', conf.get('ironic', 'conductor_group'))
        self.assertEqual('kubernetes', conf.get('labels', 'driver'))

    def test_unstack_and_clean(self):
        run = self.run_plugin(self.STACK + ('unstack', 'clean'),
                              self.WITH_IRONIC)
        self.assertEqual(['stop_process baremetal-orch-api',
                          'stop_process baremetal-orch-conductor'],
                         run.called('stop_process'))
        self.assertFalse(os.path.exists(run.conf_dir))

    def test_disabled_plugin_does_nothing(self):
        tmp_services = ('key', 'mysql')
        run = self.run_plugin(
            self.STACK, tmp_services,
            env={'ENABLED_SERVICES': ','.join(tmp_services)})
        self.assertEqual([], [c for c in run.calls
                              if not c.startswith('define_plugin')])


class TestZuul(base.TestCase):

    def load(self, name):
        with open(os.path.join(ZUUL, name)) as f:
            return yaml.safe_load(f)

    def test_project_templates_and_jobs(self):
        project = self.load('project.yaml')[0]['project']
        self.assertEqual({'openstack-python3-jobs', 'openstack-cover-jobs',
                          'publish-openstack-docs-pti',
                          'release-notes-jobs-python3'},
                         set(project['templates']))
        jobs = {j['job']['name'] for j in self.load('jobs.yaml')}
        for pipeline in ('check', 'gate'):
            for job in project[pipeline]['jobs']:
                name = job if isinstance(job, str) else next(iter(job))
                self.assertIn(name, jobs, pipeline)

    def test_tempest_job(self):
        jobs = {j['job']['name']: j['job'] for j in self.load('jobs.yaml')}
        job = jobs['baremetal-orch-tempest']
        self.assertEqual('devstack-tempest', job['parent'])
        plugins = job['vars']['devstack_plugins']
        self.assertEqual({'ironic', 'baremetal-orch'}, set(plugins))
        self.assertTrue(plugins['baremetal-orch'].endswith(
            '/openstack/baremetal-orch'))
        services = job['vars']['devstack_services']
        for service in ('ir-api', 'ir-cond', 'baremetal-orch-api',
                        'baremetal-orch-conductor'):
            self.assertIs(True, services[service], service)
        self.assertNotIn('rabbit', {s for s, on in services.items()
                                    if not on})
