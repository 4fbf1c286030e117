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
"""The tests' one copy of each small helper (kept so by test_layers):

* :func:`wait_for` polls a condition with a deadline;
* :func:`wait_for_http` polls a URL until it answers (the ready-wait of
  every service the tests start);
* :func:`free_port` picks a free TCP port and reserves it from the
  other test workers;
* :func:`driver_node` makes a node as the provisioning drivers see it.
"""

import collections
import fcntl
import json
import os
import random
import socket
import tempfile
import time
import types

from oslo_utils import uuidutils
import requests


class Timeout(AssertionError):
    """A condition was not met in time (a test failure, as ``fail``)."""


class ProcessError(RuntimeError):
    """A background process ended early, a URL never answered, or no
    port could be given (:func:`free_port`)."""


def _check_alive(processes, what):
    for proc in processes:
        if proc.poll() is not None:
            log = getattr(proc, 'log', None)
            raise ProcessError('%s exited with %s before %s:\n%s' % (
                proc.args[0], proc.returncode, what,
                log.tail() if log is not None else ''))


def wait_for(predicate, timeout=120, interval=0.1, processes=()):
    """Poll until ``predicate()`` returns a true value; return it.

    Not a timing assertion: the timeout only bounds a hang.

    :param processes: processes (:class:`subprocess.Popen`, with a ``log``
        when they come from ``start_process``) whose exit stops the wait.
    :raises Timeout: when the deadline passes.
    :raises ProcessError: when one of ``processes`` has ended.
    """
    deadline = time.monotonic() + timeout
    while True:
        _check_alive(processes, 'the condition was met')
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise Timeout('condition not met within %s s' % timeout)
        time.sleep(interval)


def wait_for_http(url, timeout=30, status=None, process=None,
                  interval=0.1, get=requests.get, request_timeout=None,
                  **kwargs):
    """Poll ``url`` until it answers; return the response.

    :param status: a status code (or a collection of them) to wait for;
        default: any answer below 500.
    :param process: a process whose early exit stops the wait with its
        log in the error.
    :param get: the function that sends the GET (a session's, say);
        ``kwargs`` go to it.
    :param request_timeout: how long one GET may take (default: 5 s, or
        ``timeout`` when shorter).
    :raises ProcessError: when the deadline passes or ``process`` ends.
    """
    if isinstance(status, int):
        status = (status,)
    kwargs['timeout'] = request_timeout or min(5, timeout)
    last = []

    processes = [process] if process is not None else []

    def answered():
        _check_alive(processes, '%s answered' % url)
        try:
            resp = get(url, **kwargs)
        except requests.RequestException as exc:
            last[:] = [exc]
            return None
        if resp.status_code in status if status else resp.status_code < 500:
            return resp
        last[:] = ['HTTP %s' % resp.status_code]
        return None

    try:
        return wait_for(answered, timeout, interval)
    except Timeout:
        raise ProcessError('%s did not answer within %ss (last: %s)'
                           % (url, timeout, last[0] if last else None))


#: Where :func:`free_port` keeps a lock file a port it hands out.
PORT_LOCKS = os.path.join(tempfile.gettempdir(), 'baremetal-orch-ports')
#: The open lock files whose ``flock`` reserves the ports
#: :func:`free_port` gave this process, until it ends.
_held = []


def _ephemeral_low(path='/proc/sys/net/ipv4/ip_local_port_range'):
    """The first port of the kernel's ephemeral range (Linux's default
    when it cannot be read)."""
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def port_candidates():
    """The ports :func:`free_port` tries, in a random order: the 12,000
    below the kernel's ephemeral range, from which neither ``bind`` to
    port 0 nor an outgoing connection takes a port."""
    high = _ephemeral_low()
    ports = list(range(max(1024, high - 12000), high))
    random.shuffle(ports)
    return ports


def _bindable(host, port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host='127.0.0.1', candidates=None):
    """Return a TCP port free on ``host``, reserved for this process.

    The kernel's port 0 would do for one process, but the test workers
    are many: two of them were given the same port within a second, and
    one service answered the other's client. So a port is taken from
    below the ephemeral range (see :func:`port_candidates`) and reserved
    with an exclusive ``flock`` on a file of its own under
    :data:`PORT_LOCKS`, held until this process ends: no process that
    calls this function with the same ``$TMPDIR`` gets it meanwhile,
    this one included (a second ``flock`` on another opening of the file
    fails too). Nothing listens on it on return: the server the test
    starts binds it. The lock files stay, empty, one a port given.

    :param candidates: the ports to try, in order (default:
        :func:`port_candidates`).
    :raises ProcessError: when none of them is free.
    """
    os.makedirs(PORT_LOCKS, exist_ok=True)
    for port in port_candidates() if candidates is None else candidates:
        fd = os.open(os.path.join(PORT_LOCKS, str(port)),
                     os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        if _bindable(host, port):
            _held.append(fd)
            return port
        os.close(fd)
    raise ProcessError('no free port on %s among those tried' % host)


def driver_node(ironic_node=None, **values):
    """A node as the provisioning drivers see it.

    Backed by ``ironic_node`` (a node document of Ironic's) when given:
    its UUID, and its name, state, shard and conductor group unless
    ``values`` say otherwise.
    """
    fields = dict(uuid=uuidutils.generate_uuid(), name='node-1',
                  ironic_uuid=None, driver='ironic', driver_info={},
                  instance_info={}, provision_state='enroll', shard=None,
                  conductor_group=None)
    if ironic_node is not None:
        fields.update(ironic_uuid=ironic_node['uuid'],
                      name=ironic_node.get('name'),
                      provision_state=ironic_node['provision_state'],
                      shard=ironic_node.get('shard'),
                      conductor_group=ironic_node.get('conductor_group'))
    fields.update(values)
    node = types.SimpleNamespace(**fields)
    node.ident = node.name or node.uuid
    return node


def call_log_ends(path):
    """{(node name, call): [end times]} of the fake driver's calls that
    ended, from its ``[fake_driver]call_log`` (in the order they ended)."""
    times = collections.defaultdict(list)
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                entry = json.loads(line)
                if entry.get('stage') == 'end':
                    times[(entry['name'], entry['call'])].append(
                        entry['time'])
    return times


def completed_calls(path):
    """{(node name, call): count} of the fake driver's calls that ended."""
    return collections.Counter({key: len(ends) for key, ends in
                                call_log_ends(path).items()})
