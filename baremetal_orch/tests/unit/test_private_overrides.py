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
"""The libraries' internals the product extends, pinned to the versions
they were read against.

A few modules override private (or undocumented) members of a library
because no public API does the job; each names the upstream change that
would retire its override. Those overrides were checked against one
release of the library, recorded in :data:`CHECKED`: a move of
``upper-constraints.txt`` to another release fails here until the
overrides are read again against it (the members below, and what the
modules in :data:`CHECKED` assume of them) and :data:`CHECKED` follows.
The list is in doc/source/contributor/testing.rst too.
"""

import importlib.metadata
import inspect
import os
import re
import threading
import types

from oslo_versionedobjects import base as ovo_base
from pecan import compat as pecan_compat
from pecan import core as pecan_core
from pecan import util as pecan_util
from taskflow.persistence.backends import impl_sqlalchemy
from waitress import channel as w_channel
from waitress import parser as w_parser
from waitress import receiver as w_receiver
from waitress import server as w_server
from waitress import task as w_task

from baremetal_orch.objects import node as node_obj
from baremetal_orch.tests import base

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..',
                                    '..'))
UPPER_CONSTRAINTS = os.path.join(REPO, 'upper-constraints.txt')

#: distribution: (the release the overrides were read against, the
#: modules holding them).
CHECKED = {
    'taskflow': ('6.5.0', ('baremetal_orch/db/sqlalchemy/taskflow_store.py',)),
    'pecan': ('1.8.0', ('baremetal_orch/api/app.py',)),
    'oslo.versionedobjects': ('3.12.0', ('baremetal_orch/objects/base.py',
                                         'baremetal_orch/objects/fields.py',
                                         'baremetal_orch/objects/node.py')),
    'waitress': ('3.0.2', ('baremetal_orch/api/wsgi_server.py',
                           'baremetal_orch/api/http_strict.py')),
}

#: (distribution, upstream class, member, its signature, overridden by).
SIGNATURES = [
    ('taskflow', impl_sqlalchemy.Connection, '_update_atom_details',
     '(self, conn, ad, e_ad)', 'taskflow_store.Connection'),
    ('taskflow', impl_sqlalchemy.Connection, '_update_flow_details',
     '(self, conn, fd, e_fd)', 'taskflow_store.Connection'),
    ('taskflow', impl_sqlalchemy.Connection, '__init__',
     '(self, backend, upgrade_lock)', 'taskflow_store.Backend'),
    ('pecan', pecan_core.Pecan, 'get_args',
     '(self, state, all_params, remainder, argspec, im_self)', 'app.Pecan'),
    ('waitress', w_task.ErrorTask, 'execute', '(self)',
     'wsgi_server._ErrorTask'),
    ('waitress', w_task.WSGITask, 'execute', '(self)',
     'wsgi_server._WSGITask'),
    ('waitress', w_channel.HTTPChannel, '__init__',
     '(self, server, sock, addr, adj, map=None)', 'wsgi_server._Channel'),
    ('waitress', w_channel.HTTPChannel, 'service', '(self)',
     'wsgi_server._Channel'),
    ('waitress', w_channel.HTTPChannel, 'recv', '(self, buffer_size)',
     'wsgi_server._Channel'),
    ('waitress', w_channel.HTTPChannel, 'handle_close', '(self)',
     'wsgi_server._Channel'),
    ('waitress', w_server.BaseWSGIServer, 'add_task', '(self, task)',
     'wsgi_server._WaitressServer'),
    ('waitress', w_server.BaseWSGIServer, 'maintenance', '(self, now)',
     'wsgi_server._WaitressServer'),
    ('waitress', w_parser.HTTPRequestParser, 'received', '(self, data)',
     'http_strict.Parser'),
    ('waitress', w_parser.HTTPRequestParser, 'parse_header',
     '(self, header_plus)', 'http_strict.Parser'),
]


def constraint(distribution):
    """The version ``upper-constraints.txt`` pins ``distribution`` to."""
    pattern = re.compile(r'%s===(\S+)' % re.escape(distribution), re.I)
    with open(UPPER_CONSTRAINTS) as f:
        for line in f:
            found = pattern.fullmatch(line.split(';')[0].strip())
            if found:
                return found.group(1)
    return None


def recheck(distribution, version=None):
    """What to do when a pin fails."""
    checked, modules = CHECKED[distribution]
    version = version or importlib.metadata.version(distribution)
    if version == checked:
        return ('the overrides of %s internals in %s no longer match %s %s: '
                'read the members listed in %s again and fix the overrides'
                % (distribution, ', '.join(modules), distribution, version,
                   __name__))
    return ('the overrides of %s internals in %s were read against %s, '
            'not %s: read again, in %s %s, the upstream members listed in '
            '%s (SIGNATURES and the other tests) and what those modules '
            'assume of them, then set CHECKED[%r] to %r'
            % (distribution, ', '.join(modules), checked, version,
               distribution, version, __name__, distribution, version))


class TestPinnedVersions(base.TestCase):

    def test_constraints_are_the_checked_releases(self):
        for distribution, (checked, _modules) in CHECKED.items():
            pinned = constraint(distribution)
            self.assertEqual(checked, pinned,
                             'upper-constraints.txt: ' +
                             recheck(distribution, pinned))

    def test_installed_releases_are_the_constraints(self):
        for distribution, (checked, _modules) in CHECKED.items():
            installed = importlib.metadata.version(distribution)
            self.assertEqual(
                checked, installed, '%s %s is installed: %s' % (
                    distribution, installed, recheck(distribution)))


class TestOverriddenMembers(base.TestCase):

    def test_signatures(self):
        for distribution, owner, name, expected, ours in SIGNATURES:
            where = '%s.%s.%s (overridden by %s)' % (
                owner.__module__, owner.__qualname__, name, ours)
            member = inspect.getattr_static(owner, name, None)
            self.assertIsNotNone(member, '%s is gone: %s' % (
                where, recheck(distribution)))
            self.assertEqual(
                expected, str(inspect.signature(getattr(owner, name))),
                '%s changed: %s' % (where, recheck(distribution)))

    def test_taskflow_connection_tables(self):
        # taskflow_store.Connection inserts into self._tables.atomdetails.
        conn = impl_sqlalchemy.Connection(
            types.SimpleNamespace(engine=None), threading.Lock())
        self.assertIn('atomdetails', dir(conn._tables),
                      recheck('taskflow'))

    def test_pecan_reads_argspecs_through_util_getargspec(self):
        # app._argspec replaces pecan.util._getargspec, which pecan's
        # util.getargspec calls (core, rest and routing import that).
        self.assertIn('_getargspec(method)',
                      inspect.getsource(pecan_util.getargspec),
                      recheck('pecan'))
        for module in ('core', 'rest', 'routing'):
            self.assertIs(pecan_util.getargspec, importlib.import_module(
                'pecan.' + module).getargspec, recheck('pecan'))

    def test_pecan_compat_getargspec_makes_a_class_per_call(self):
        # When it stops, remove app._argspec and its assignment.
        def controller(self, ident):
            pass
        first = pecan_compat.getargspec(controller)
        if type(first) is type(pecan_compat.getargspec(controller)):
            self.fail('pecan.compat.getargspec makes its ArgSpec type once '
                      'now: remove baremetal_orch.api.app._argspec')

    def test_waitress_dispatcher_and_receiver(self):
        # wsgi_server._Dispatcher.offer reads these of waitress's
        # dispatcher; http_strict.ChunkedReceiver wraps chunk_remainder.
        dispatcher = w_task.ThreadedTaskDispatcher()
        for name in ('lock', 'queue', 'queue_cv', 'threads',
                     'active_count', 'stop_count'):
            self.assertTrue(hasattr(dispatcher, name),
                            '%s: %s' % (name, recheck('waitress')))
        self.assertTrue(hasattr(w_receiver.ChunkedReceiver,
                                'chunk_remainder'),
                        recheck('waitress'))

    def test_versionedobjects_store_fields_under_get_attrname(self):
        # Node.from_rows, save_many and BaremetalOrchObject.from_trusted
        # store values where the setter does.
        node = node_obj.Node()
        node.name = 'n1'
        self.assertEqual('n1', getattr(node, ovo_base._get_attrname('name')),
                         recheck('oslo.versionedobjects'))
        setattr(node, ovo_base._get_attrname('driver'), 'fake')
        self.assertEqual('fake', node.driver, recheck('oslo.versionedobjects'))
        self.assertTrue(node.obj_attr_is_set('driver'),
                        recheck('oslo.versionedobjects'))

    def test_versionedobjects_collections_name_their_element_type(self):
        # fields.ListOfStringsField.trusted (Node.from_rows) gives a
        # coerced collection the element type coerce() gives it, read
        # from the private AUTO_TYPE._element_type.
        field = node_obj.Node.fields['tags']
        made = field.coerce(None, 'tags', ['a'])
        self.assertIs(made._element_type,
                      field.AUTO_TYPE._element_type,
                      recheck('oslo.versionedobjects'))
        self.assertEqual(type(made), type(field.trusted('tags', ['a'])),
                         recheck('oslo.versionedobjects'))
