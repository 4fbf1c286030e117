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
    DATA_DIR=$TMP/data
    TEMPEST_CONFIG=$TMP/tempest.conf

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
    start_tls_proxy() { record start_tls_proxy "$@"; }
    sleep() { record sleep "$@"; }
    # DevStack's write_uwsgi_config, as lib/apache has it (the parts that
    # write the ini): a module path, and "http" when given a bind address.
    write_uwsgi_config() {
        record write_uwsgi_config "$@"
        local conf=$1 wsgi=$2 url=$3 http=$4 name=$5
        rm -rf $conf
        iniset "$conf" uwsgi module "$wsgi"
        iniset "$conf" uwsgi processes $API_WORKERS
        iniset "$conf" uwsgi master true
        iniset "$conf" uwsgi plugins http,python3
        if [[ -n "$http" ]]; then
            iniset "$conf" uwsgi http $http
        else
            iniset "$conf" uwsgi socket "/var/run/uwsgi/${name}.socket"
        fi
    }
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

#: The console scripts the plugin runs, recording their arguments;
#: ``service list`` shows a conductor whose "Alive" column is
#: $STUB_CONDUCTOR_ALIVE (the real command's table).
SCRIPT = textwrap.dedent('''\
    #!/bin/sh
    echo "%(name)s $*" >> "$TMP/calls.log"
    case "$*" in
        *"service list")
            alive=${STUB_CONDUCTOR_ALIVE:-True}
            echo "+------+--------------------------+----+----+-------+"
            echo "| Host | Binary                   | SK | CG | Alive |"
            echo "| dev  | baremetal-orch-api       |    |    | True  |"
            echo "| dev  | baremetal-orch-conductor |    |    | $alive |"
            ;;
    esac
''')
SCRIPTS = ('baremetal-orch-manage', 'baremetal-orch-status')


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

    def run_plugin(self, phases, services, env=None, status=0, environ=None):
        """Source settings, then plugin.sh for each phase, in one bash."""
        tmp = self.useFixture(fixtures.TempDir()).path
        os.makedirs(os.path.join(tmp, 'bin'))
        for name in SCRIPTS:
            path = os.path.join(tmp, 'bin', name)
            with open(path, 'w') as f:
                f.write(SCRIPT % {'name': name})
            os.chmod(path, 0o700)
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
            env=dict(environ or {}, TMP=tmp,
                     PATH=os.environ.get('PATH', '/usr/bin:/bin')))
        self.assertEqual(status, proc.returncode, proc.stderr[-3000:])
        run = PluginRun(tmp)
        run.stderr = proc.stderr
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
        # With every optional driver's library (setup.cfg extras).
        self.assertEqual(['setup_develop %s kubernetes,redis,zookeeper'
                          % os.path.join(run.tmp, 'opt', 'stack',
                                         'baremetal-orch')],
                         run.called('setup_develop'))
        # DevStack installs uwsgi: nothing pip-installed by hand.
        self.assertEqual([], run.called('pip_install'))
        self.assertEqual(['recreate_database baremetal_orch'],
                         run.called('recreate_database'))
        self.assertEqual(['baremetal-orch-status --config-file %s upgrade '
                          'check' % run.conf_file],
                         run.called('baremetal-orch-status'))
        self.assertEqual(['baremetal-orch-manage --config-file %s db '
                          'upgrade' % run.conf_file,
                          'baremetal-orch-manage --config-file %s service '
                          'list' % run.conf_file],
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
        self.assertEqual([], run.called('start_tls_proxy'))
        # Init (the schema, then the upgrade checks on it) before the API;
        # the API waited for before the conductor starts; the conductor
        # waited for (its heartbeat in service list) last.
        steps = [' '.join(c.split()[:3:2]) for c in run.calls
                 if c.split()[0] in ('recreate_database',
                                     'baremetal-orch-manage',
                                     'baremetal-orch-status', 'run_process',
                                     'wait_for_service')]
        self.assertEqual(
            ['recreate_database', 'baremetal-orch-manage ' + run.conf_file,
             'baremetal-orch-status ' + run.conf_file,
             'run_process /usr/local/bin/uwsgi', 'wait_for_service '
             'http://10.0.0.5:6388',
             'run_process ' + os.path.join(run.tmp, 'bin',
                                           'baremetal-orch-conductor'),
             'baremetal-orch-manage ' + run.conf_file],
            steps)

    def test_waits_for_the_conductor(self):
        # Not alive: polled once a second until the timeout, then the stack
        # dies naming the conductor.
        run = self.run_plugin(
            self.STACK, self.WITH_IRONIC, status=3,
            env={'BAREMETAL_ORCH_CONDUCTOR_TIMEOUT': '4'},
            environ={'STUB_CONDUCTOR_ALIVE': 'False'})
        self.assertIn('baremetal-orch-conductor did not start', run.stderr)
        self.assertEqual(5, len([c for c in run.called(
            'baremetal-orch-manage') if c.endswith('service list')]))
        self.assertEqual(['sleep 1'] * 4, run.called('sleep'))

    def test_uwsgi_ini_from_devstack(self):
        run = self.run_plugin(self.STACK, self.WITH_IRONIC)
        self.assertEqual(
            ['write_uwsgi_config %s baremetal_orch.wsgi:application  '
             '10.0.0.5:6388 baremetal-orch-api' % run.uwsgi_file],
            run.called('write_uwsgi_config'))
        uwsgi = run.config(run.uwsgi_file)['uwsgi']
        self.assertEqual('baremetal_orch.wsgi:application', uwsgi['module'])
        self.assertEqual('BAREMETAL_ORCH_CONFIG_FILES=%s' % run.conf_file,
                         uwsgi['env'])
        self.assertEqual('10.0.0.5:6388', uwsgi['http'])
        self.assertEqual('3', uwsgi['processes'])

    def test_tls_proxy(self):
        run = self.run_plugin(self.STACK, self.WITH_IRONIC + ('tls-proxy',))
        conf = run.config()
        # Clients: https on the service port; uwsgi: the internal port.
        self.assertEqual('https://10.0.0.5:6388',
                         conf.get('api', 'public_endpoint'))
        self.assertEqual(['get_or_create_endpoint baremetal-orchestration '
                          'RegionOne https://10.0.0.5:6388'],
                         run.called('get_or_create_endpoint'))
        self.assertEqual('10.0.0.5:16388',
                         run.config(run.uwsgi_file)['uwsgi']['http'])
        self.assertEqual(['wait_for_service 60 http://10.0.0.5:16388'],
                         run.called('wait_for_service'))
        self.assertEqual(['start_tls_proxy baremetal-orch * 6388 10.0.0.5 '
                          '16388'], run.called('start_tls_proxy'))
        for section in ('ironic', 'keystone_authtoken'):
            self.assertEqual('/opt/stack/data/ca-bundle.pem',
                             conf.get(section, 'cafile'), section)

    def test_no_tls_no_cafile(self):
        conf = self.run_plugin(self.STACK, self.WITH_IRONIC).config()
        self.assertFalse(conf.has_option('ironic', 'cafile'))
        self.assertFalse(conf.has_option('keystone_authtoken', 'cafile'))

    def test_test_config_writes_tempest_options(self):
        run = self.run_plugin(self.STACK + ('stack test-config',),
                              self.WITH_IRONIC + ('tempest',))
        tempest = run.config(os.path.join(run.tmp, 'tempest.conf'))
        drive = os.path.join(run.tmp, 'data', 'baremetal-orch',
                             'configdrive')
        self.assertEqual('True', tempest.get('service_available',
                                             'baremetal_orch'))
        self.assertEqual('True', tempest.get('enforce_scope',
                                             'baremetal_orch'))
        self.assertEqual(
            {'catalog_type': 'baremetal-orchestration',
             'endpoint_type': 'public', 'ironic_backend': 'True',
             'ironic_sync_timeout': '90', 'fake_configdrive_dir': drive},
            dict(tempest['baremetal_orch']))
        # The conductor writes the config drives where tempest reads them,
        # and syncs Ironic as often as the scenario expects.
        conf = run.config()
        self.assertEqual(drive, conf.get('fake_driver', 'configdrive_dir'))
        self.assertTrue(os.path.isdir(drive))
        self.assertEqual('10', conf.get('conductor', 'sync_interval'))

    def test_test_config_without_tempest_or_ironic(self):
        run = self.run_plugin(self.STACK + ('stack test-config',),
                              self.WITH_IRONIC)
        self.assertFalse(os.path.exists(os.path.join(run.tmp,
                                                     'tempest.conf')))
        self.assertFalse(run.config().has_section('fake_driver'))
        run = self.run_plugin(self.STACK + ('stack test-config',),
                              ('key', 'mysql', 'rabbit', 'tempest'))
        tempest = run.config(os.path.join(run.tmp, 'tempest.conf'))
        self.assertFalse(tempest.has_option('baremetal_orch',
                                            'ironic_backend'))

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

    def test_enabled_drivers(self):
        # Ironic only, the service's default; the tempest scenarios
        # simulate nodes with the fake driver too.
        for services, expected in [(self.WITH_IRONIC, 'ironic'),
                                   (self.WITH_IRONIC + ('tempest',),
                                    'fake,ironic')]:
            conf = self.run_plugin(self.STACK, services).config()
            self.assertEqual(expected,
                             conf.get('DEFAULT', 'enabled_drivers'), services)

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


#: Jobs and templates defined upstream that ours build on, with where
#: they are defined (read there when these files were written).
UPSTREAM_JOBS = {
    'devstack-tempest': 'openstack/tempest zuul.d/base.yaml',
    'openstack-tox': 'openstack/openstack-zuul-jobs zuul.d/jobs.yaml',
    'openstack-tox-functional-with-sudo':
        'openstack/openstack-zuul-jobs zuul.d/jobs.yaml',
}
UPSTREAM_TEMPLATES = {
    'check-requirements': 'openstack/requirements .zuul.d',
    'openstack-python3-jobs':
        'openstack/openstack-zuul-jobs zuul.d/project-templates.yaml',
    'openstack-cover-jobs':
        'openstack/openstack-zuul-jobs zuul.d/project-templates.yaml',
    'publish-openstack-docs-pti':
        'openstack/openstack-zuul-jobs zuul.d/project-templates.yaml',
    'api-ref-jobs':
        'openstack/openstack-zuul-jobs zuul.d/project-templates.yaml',
    'release-notes-jobs-python3':
        'openstack/openstack-zuul-jobs zuul.d/project-templates.yaml',
}


def bindep_profiles():
    """{profile: {platform: [package]}} of bindep.txt."""
    profiles = {}
    with open(os.path.join(REPO, 'bindep.txt')) as f:
        for line in f:
            line = line.split('#')[0].strip()
            if not line:
                continue
            package, _, tags = line.partition('[')
            tags = tags.rstrip(']').split()
            platforms = [t for t in tags if t.startswith('platform:')]
            for profile in (t for t in tags if ':' not in t):
                for platform in platforms or ['platform:any']:
                    profiles.setdefault(profile, {}).setdefault(
                        platform, []).append(package.strip())
    return profiles


class TestBindep(base.TestCase):

    def test_servers_tagged_for_dpkg_and_rpm(self):
        test = bindep_profiles()['test']
        # The three servers the functional tests need, on both families.
        for platform, servers in (
                ('platform:dpkg', ('mariadb-server', 'postgresql',
                                   'rabbitmq-server')),
                ('platform:rpm', ('mariadb-server', 'postgresql-server',
                                  'rabbitmq-server'))):
            for server in servers:
                self.assertIn(server, test[platform], platform)
        self.assertIn('graphviz', bindep_profiles()['doc']['platform:any'])


class TestZuul(base.TestCase):

    def load(self, name):
        with open(os.path.join(ZUUL, name)) as f:
            return yaml.safe_load(f)

    def jobs(self):
        return {j['job']['name']: j['job'] for j in self.load('jobs.yaml')}

    def tox_envs(self):
        parser = configparser.RawConfigParser()
        parser.read(os.path.join(REPO, 'tox.ini'))
        return {s.partition(':')[2] for s in parser.sections()
                if s.startswith('testenv:')} | {'py3'}

    def test_project_templates_and_jobs(self):
        project = self.load('project.yaml')[0]['project']
        # The PTI: unit, cover, docs, api-ref, release notes, requirements.
        self.assertEqual(set(UPSTREAM_TEMPLATES), set(project['templates']))
        jobs = self.jobs()
        for pipeline in ('check', 'gate'):
            names = [job if isinstance(job, str) else next(iter(job))
                     for job in project[pipeline]['jobs']]
            self.assertEqual(['baremetal-orch-tempest',
                              'baremetal-orch-tox-functional',
                              'baremetal-orch-tox-migrations'], names)
            for name in names:
                self.assertIn(name, jobs, pipeline)

    def test_parents_exist(self):
        jobs = self.jobs()
        for name, job in jobs.items():
            self.assertIn(job['parent'], set(jobs) | set(UPSTREAM_JOBS),
                          name)

    def test_tox_jobs_name_real_envs(self):
        envs = self.tox_envs()
        for name, job in self.jobs().items():
            if not job['parent'].startswith('openstack-tox'):
                continue
            self.assertIn(job['vars']['tox_envlist'], envs, name)
            self.assertIn(job['vars']['bindep_profile'], bindep_profiles())
        functional = self.jobs()['baremetal-orch-tox-functional']
        env = functional['vars']['tox_environment']
        # What tools/test-setup.sh installs for the broker fixture.
        with open(os.path.join(REPO, 'tools', 'test-setup.sh')) as f:
            self.assertIn(env['BAREMETAL_ORCH_RABBITMQCTL'], f.read())
        self.assertEqual(1, env['BAREMETAL_ORCH_REQUIRE_BROKER'])

    def test_tempest_job_runs_this_plugin(self):
        job = self.jobs()['baremetal-orch-tempest']
        self.assertEqual('devstack-tempest', job['parent'])
        variables = job['vars']
        self.assertEqual(['baremetal-orch'], variables['tempest_plugins'])
        # The regex selects the plugin's tests, and the plugin is the one
        # setup.cfg registers.
        self.assertEqual(r'^baremetal_orch_tempest_plugin\.',
                         variables['tempest_test_regex'])
        setup = configparser.RawConfigParser()
        setup.read(os.path.join(REPO, 'setup.cfg'))
        self.assertIn('baremetal_orch_tempest_plugin.plugin:',
                      setup.get('entry_points', 'tempest.test_plugins'))
        self.assertIn('baremetal_orch_tempest_plugin',
                      setup.get('files', 'packages').split())
        plugins = variables['devstack_plugins']
        self.assertEqual({'ironic', 'baremetal-orch'}, set(plugins))
        self.assertTrue(plugins['baremetal-orch'].endswith(
            '/openstack/baremetal-orch'))
        services = variables['devstack_services']
        for service in ('ir-api', 'ir-cond', 'baremetal-orch-api',
                        'baremetal-orch-conductor', 'tempest'):
            self.assertIs(True, services[service], service)
        off = {s for s, on in services.items() if not on}
        # RabbitMQ, MySQL, Keystone and the TLS proxy stay as DevStack's
        # jobs have them.
        self.assertEqual(set(), off & {'rabbit', 'mysql', 'key',
                                       'tls-proxy'})
        # Ironic as its own API-test job has it, fake hardware enabled.
        localrc = variables['devstack_localrc']
        self.assertEqual('noop', localrc['IRONIC_DEFAULT_NETWORK_INTERFACE'])
        self.assertIn('fake-hardware',
                      localrc['IRONIC_ENABLED_HARDWARE_TYPES'].split(','))
        self.assertIn('fake', localrc['IRONIC_ENABLED_POWER_INTERFACES'])
