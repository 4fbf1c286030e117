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
"""The Action object: a deploy_site, update_site or update_labels run."""

import datetime

from oslo_utils import timeutils

from baremetal_orch.common import statuses
from baremetal_orch.db import api as dbapi
from baremetal_orch.deployment import site as site_mod
from baremetal_orch.objects import base
from baremetal_orch.objects import fields as f

PENDING = statuses.PENDING
RUNNING = statuses.RUNNING
COMPLETE = statuses.COMPLETE
FAILED = statuses.FAILED
CANCELLED = statuses.CANCELLED
PAUSING = statuses.PAUSING
PAUSED = statuses.PAUSED
STATES = statuses.ACTION_STATES
FINAL_STATES = statuses.ACTION_FINAL_STATES
ACTIVE_STATES = statuses.ACTION_ACTIVE_STATES

DEPLOY_SITE = 'deploy_site'
UPDATE_SITE = 'update_site'
UPDATE_LABELS = 'update_labels'
RETRY = 'retry'
NAMES = (DEPLOY_SITE, UPDATE_SITE, UPDATE_LABELS, RETRY)


def held_nodes(action):
    """The UUIDs of the nodes an active action holds (an action row or
    object): inside an action a node is its UUID, never its name (a name
    may change, or pass to another node).

    They are the nodes of the snapshot admission stored in the action's
    parameters (``{uuid: name}``).
    """
    return sorted(((action.parameters or {}).get('snapshot') or {})
                  .get('nodes') or ())


def holder_of(node_uuid):
    """The active action (a row) that holds the node, or None."""
    for action in dbapi.active_actions_mentioning(node_uuid):
        if node_uuid in held_nodes(action):
            return action
    return None


def public_progress(action):
    """What ``GET /v1/actions/{uuid}`` shows of the progress: nodes per
    phase and the ETA, as the flow's last checkpoint wrote them (null
    before the action started, and for an update_labels action)."""
    return (action.progress or {}).get('summary')


def public_report(action):
    """What ``GET /v1/actions/{uuid}`` shows as the report.

    A running site action's report is a view of its one record, the
    rules' state of its last checkpoint (``progress['site']``) on the
    snapshot admission stored: it is built here when it is read, never
    written at a checkpoint. Once the action ended it is stored, as is the
    report of an update_labels action or of an action that could not run.
    A pending action shows what its row holds (no report yet).
    """
    if action.report or action.state == PENDING:
        return action.report
    snapshot = (action.parameters or {}).get('snapshot') or {}
    state = (action.progress or {}).get('site')
    if state is None or 'strategy' not in snapshot:
        # Not a site action, or one not started: what its row holds.
        return action.report
    return site_mod.SiteDeployment.from_dict(snapshot, state).report()


def started_groups(action):
    """The groups of a site action in the order they started."""
    return list(((action.progress or {}).get('site') or {}).get('order')
                or ())


@base.BaremetalOrchObjectRegistry.register
class Action(base.BaremetalOrchObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'id': f.IntegerField(),
        'uuid': f.UUIDField(),
        'name': f.EnumField(valid_values=NAMES),
        'parameters': f.FlexibleDictField(nullable=True),
        'state': f.EnumField(valid_values=STATES),
        'state_reason': f.StringField(nullable=True),
        'control': f.StringField(nullable=True),
        'result': f.StringField(nullable=True),
        'task_uuid': f.UUIDField(nullable=True),
        'conductor': f.StringField(nullable=True),
        'owner': f.StringField(nullable=True),
        'report': f.FlexibleDictField(nullable=True),
        'progress': f.FlexibleDictField(nullable=True),
        'started_at': f.DateTimeField(nullable=True),
        'finished_at': f.DateTimeField(nullable=True),
    }
    fields.update(base.BaremetalOrchObject.fields)

    @classmethod
    def get(cls, context, uuid):
        return cls._from_db_object(context, cls(), dbapi.get_action(uuid))

    @classmethod
    def list(cls, context, filters=None, limit=None, marker=None,
             sort_key=None, sort_dir=None):
        return cls._from_db_object_list(context, dbapi.list_actions(
            filters, limit, marker, sort_key, sort_dir))

    @classmethod
    def list_to_take(cls, context, dead_hosts, unheld_for):
        """The active actions of the conductors ``dead_hosts``, and those
        no conductor held for ``unheld_for`` seconds."""
        return cls._from_db_object_list(context, dbapi.list_actions_to_take(
            dead_hosts, timeutils.utcnow() - datetime.timedelta(
                seconds=unheld_for)))

    def create(self, context=None):
        self._from_db_object(context or self._context, self,
                             dbapi.create_action(self.obj_get_changes()))

    def save(self, context=None):
        values = self.obj_get_changes()
        if values:
            self._from_db_object(context or self._context, self,
                                 dbapi.update_action(self.uuid, values))
