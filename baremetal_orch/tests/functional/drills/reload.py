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
"""What the reload tests share: rewriting a running process's config
file, sending it a signal, and how many driver calls ran at once."""

import configparser
import json
import os
import signal
import time


def set_options(path, section, **options):
    """Change options of the ini file ``path`` in place."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    if section != 'DEFAULT' and not parser.has_section(section):
        parser.add_section(section)
    for key, value in options.items():
        parser.set(section, key, str(value))
    with open(path, 'w') as f:
        parser.write(f)


def log_has(proc, text, after=0):
    """Whether the log of ``proc`` has ``text`` past byte ``after``."""
    with open(proc.log_path, errors='replace') as f:
        f.seek(after)
        return text in f.read()


def log_size(proc):
    return os.path.getsize(proc.log_path)


def wait_log(proc, text, after=0, timeout=30):
    """Wait until the log of ``proc`` has ``text`` (past ``after``)."""
    deadline = time.monotonic() + timeout
    while not log_has(proc, text, after):
        if proc.poll() is not None:
            raise AssertionError('%s exited with %s before logging %r:\n%s'
                                 % (proc.args[0], proc.returncode, text,
                                    proc.log.tail()))
        if time.monotonic() > deadline:
            raise AssertionError('%r not logged within %ss:\n%s'
                                 % (text, timeout, proc.log.tail()))
        time.sleep(0.1)


def reload(proc, path, section, **options):
    """Rewrite ``options`` in ``path``, SIGHUP ``proc``, and wait until
    oslo.config logged each change; returns the time of the signal."""
    set_options(path, section, **options)
    start = log_size(proc)
    sent = time.time()
    proc.send_signal(signal.SIGHUP)
    for key, value in options.items():
        wait_log(proc, 'Option %s.%s changed from' % (section, key), start)
        wait_log(proc, 'to [%s]' % value, start)
    return sent


def started(call_log, call, prefix=''):
    """Names of the nodes ``prefix``* whose driver call ``call`` began."""
    names = set()
    if os.path.exists(call_log):
        with open(call_log) as f:
            for line in f:
                entry = json.loads(line)
                if (entry['call'] == call and entry['stage'] == 'start'
                        and entry['name'].startswith(prefix)):
                    names.add(entry['name'])
    return names


def intervals(call_log, call, prefix=''):
    """{node name: (start, end)} of the driver calls ``call`` of the
    nodes named ``prefix``* that ended."""
    starts, found = {}, {}
    if not os.path.exists(call_log):
        return found
    with open(call_log) as f:
        for line in f:
            entry = json.loads(line)
            if entry['call'] != call or not entry['name'].startswith(prefix):
                continue
            if entry['stage'] == 'start':
                starts[entry['name']] = entry['time']
            elif entry['stage'] == 'end' and entry['name'] in starts:
                found[entry['name']] = (starts[entry['name']],
                                        entry['time'])
    return found


def max_overlap(spans):
    """How many of the (start, end) spans ran at the same instant, at
    most."""
    events = sorted([(s, 1) for s, _e in spans] + [(e, -1) for _s, e in
                                                   spans],
                    key=lambda item: (item[0], item[1]))
    running = best = 0
    for _t, step in events:
        running += step
        best = max(best, running)
    return best


def one_group_action(test, prefix, count, duration):
    """``count`` fake nodes tagged ``prefix`` and a one-group strategy
    over them; returns (names, strategy name)."""
    from baremetal_orch.tests.functional.drills import base
    names = ['%s-%02d' % (prefix, i) for i in range(count)]
    test.create_nodes([{'name': name, 'driver': 'fake', 'tags': [prefix],
                        'driver_info': {'fake_duration': duration}}
                       for name in names])
    test.client.post('/v1/deployment_strategies', status=201,
                     json=base.strategy_doc(prefix, [(prefix, prefix, ())]))
    return names, prefix


def post_action(client, strategy):
    return client.post('/v1/actions', status=201, json={
        'name': 'deploy_site',
        'parameters': {'deployment_strategy': strategy}}).json()
