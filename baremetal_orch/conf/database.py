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

import os

from oslo_db import options as db_options


def default_sqlite_path():
    """Where every command of the service finds its embedded sqlite
    database when ``[database]connection`` is not set: the user's data
    directory (``$XDG_DATA_HOME``, by default ``~/.local/share``)."""
    base = (os.environ.get('XDG_DATA_HOME') or
            os.path.join(os.path.expanduser('~'), '.local', 'share'))
    return os.path.join(base, 'baremetal-orch', 'baremetal-orch.sqlite')


def register_opts(conf):
    db_options.set_defaults(conf,
                            connection='sqlite:///' + default_sqlite_path())


def list_opts():
    return db_options.list_opts()
