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
"""taskflow's SQL persistence backend, as the conductors use it.

The flows of actions are saved in taskflow's own tables of the service
database, so a conductor that dies mid-action is resumed by the next one
without redoing finished work. Two costs of taskflow's backend are taken
off the critical path of an action, with the rows it writes unchanged:

* a save of the flow's state (running, success...) wrote every atom of the
  flow again, one UPDATE each (80 for a site of 20 groups), though only
  the flow's row changed: an atom whose row already holds its values
  (its progress aside, below) is not written;
* the first save of a new flow inserted its atoms one INSERT each: they
  are inserted together;
* taskflow saves an atom's progress (0.0 as it starts, 1.0 as it ends)
  apart from its state, each save a read and a write of the atom's row:
  half of an action's atom saves, and the 20 saves of a 20-group flow's
  start lay on its first groups' path. An atom's progress is not what a
  resumed flow goes on from (its state and results are), so a save that
  changes only the progress is not written: the row gets it with the
  atom's next save. (The rows of an action's flow are deleted once the
  action ended.)

The first two are overrides of private methods of taskflow's SQL backend
(``Connection._update_atom_details``, ``Connection._update_flow_details``)
and of a private attribute (``Connection._tables``); they are all in this
module, pinned to the constrained taskflow release by
``tests/unit/test_private_overrides.py``, and each names the upstream
change that retires it. The third overrides a public method
(``Connection.update_atom_details``).

Imported only where taskflow is (conductors, the manage command).
"""

import collections
import threading

from taskflow.persistence.backends import impl_sqlalchemy
from taskflow.persistence import models as tf_models

#: The keys of an atom's metadata that hold its progress.
_PROGRESS = ('progress', 'progress_details')


class Connection(impl_sqlalchemy.Connection):
    """taskflow's connection, writing only the atoms that changed more
    than their progress.

    Retired when taskflow's SQL backend writes only the atom details whose
    values changed (an UPDATE per changed atom in ``_update_atom_details``)
    and inserts a flow's new atom details in one executemany (in
    ``_update_flow_details``), and when taskflow's engine saves an atom's
    progress only with its state (``TaskAction.change_state``).
    """

    #: How many atoms' last written details are remembered (those of the
    #: running actions' flows; one forgotten is read and written again).
    REMEMBERED = 4096

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        #: {atom uuid: its details as last written, progress left out}.
        self._written = collections.OrderedDict()
        self._written_lock = threading.Lock()

    def update_atom_details(self, atom_detail):
        """Save an atom's details, unless they differ from what this
        connection last wrote of it only by their progress."""
        uuid = atom_detail.uuid
        with self._written_lock:
            if self._written.get(uuid) == _without_progress(atom_detail):
                self._written.move_to_end(uuid)
                return atom_detail
        written = super().update_atom_details(atom_detail)
        with self._written_lock:
            self._written[uuid] = _without_progress(written)
            self._written.move_to_end(uuid)
            while len(self._written) > self.REMEMBERED:
                self._written.popitem(last=False)
        return written

    def _update_atom_details(self, conn, ad, e_ad):
        before = _without_progress(e_ad)
        e_ad.merge(ad)
        if _without_progress(e_ad) != before:
            super()._update_atom_details(conn, e_ad, e_ad)

    def _update_flow_details(self, conn, fd, e_fd):
        new = [ad for ad in fd if e_fd.find(ad.uuid) is None]
        if new:
            rows = []
            for ad in new:
                row = ad.to_dict()
                row['parent_uuid'] = fd.uuid
                row['atom_type'] = tf_models.atom_detail_type(ad)
                rows.append(row)
            conn.execute(self._tables.atomdetails.insert(), rows)
            for ad in new:
                e_fd.add(ad)
        # The atoms just inserted are found now, equal to their rows.
        super()._update_flow_details(conn, fd, e_fd)


def _without_progress(atom_detail):
    details = atom_detail.to_dict()
    details['meta'] = {k: v for k, v in (details.get('meta') or {}).items()
                       if k not in _PROGRESS}
    return details


class Backend(impl_sqlalchemy.SQLAlchemyBackend):
    """taskflow's backend with one connection object: taskflow makes a new
    one, building its tables' metadata again (about 10 ms of Python), for
    every save of a flow's state. The object holds no database connection
    of its own (each call takes one from the engine's pool) and its close()
    does nothing, so one is shared.

    Retired when taskflow's ``SQLAlchemyBackend.get_connection`` reuses one
    connection object (or builds its tables' metadata once per backend),
    and makes its Connection class an attribute a subclass can set."""

    _shared = None

    def get_connection(self):
        if self._shared is None:
            # The lock serializes the upgrades of this backend's
            # connections: there is one.
            conn = Connection(self, upgrade_lock=threading.Lock())
            conn.validate()
            self._shared = conn
        return self._shared


def backend(engine):
    """The backend of the service database's ``engine``."""
    return Backend(
        {'connection': engine.url.render_as_string(hide_password=False)},
        engine=engine)
