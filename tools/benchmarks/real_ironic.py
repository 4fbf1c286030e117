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
"""A real Ironic for benchmarks: the functional tests' fixture, on sqlite
or on a MariaDB database, with extra options.

:class:`Ironic` is :class:`~baremetal_orch_testing.fixtures.ironic.
IronicFixture` (PyPI ``ironic`` in a cached venv, standalone, noauth,
fake hardware, ``[conductor]sync_power_state_interval = -1``) plus:

* ``connection``: a database URL for Ironic (e.g. a MariaDB database of
  :class:`~baremetal_orch_testing.fixtures.databases.Database`);
  its schema is built with ``ironic-dbsync create_schema``. The venv has
  PyMySQL beside ``ironic``.
* ``options``: ``{section: {option: value}}`` added to Ironic's file
  (e.g. ``{'conductor': {'workers_pool_size': 300}}``).
"""

from baremetal_orch_testing.fixtures import ironic as ironic_fixture

#: Ironic and the MariaDB driver its SQLAlchemy URL names.
PACKAGES = ('ironic', 'PyMySQL')


def mysql_url(url):
    """A MariaDB URL as Ironic wants it (the driver named, utf8)."""
    if url.startswith('mysql://'):
        url = 'mysql+pymysql://' + url[len('mysql://'):]
    sep = '&' if '?' in url else '?'
    return url + sep + 'charset=utf8'


class Ironic(ironic_fixture.IronicFixture):
    """A real standalone Ironic; see the module documentation."""

    def __init__(self, connection=None, options=None, **kwargs):
        kwargs.setdefault('packages', PACKAGES)
        super().__init__(**kwargs)
        self.connection = connection
        self.options = {s: dict(o) for s, o in (options or {}).items()}

    def _write_config(self, directory, port):
        path = super()._write_config(directory, port)
        if directory != getattr(self, 'tmp', None):
            return path  # the shared sqlite schema template: left alone
        with open(path) as f:
            text = f.read()
        if self.connection:
            old = 'connection = sqlite:///%s/ironic.db' % directory
            if old not in text:
                raise RuntimeError('the fixture no longer writes %r' % old)
            text = text.replace(old, 'connection = %s' % self.connection)
        for section, options in sorted(self.options.items()):
            lines = ''.join('%s = %s\n' % item
                            for item in sorted(options.items()))
            header = '[%s]\n' % section
            if header in text:
                text = text.replace(header, header + lines, 1)
            else:
                text += '\n' + header + lines
        with open(path, 'w') as f:
            f.write(text)
        return path

    def _start(self):
        if self.connection:
            self._run('ironic-dbsync', '--config-file', self.config_file,
                      'create_schema', log='dbsync.log')
        super()._start()

    def pid(self):
        """The process id of the ``ironic`` process."""
        return self.process.pid
