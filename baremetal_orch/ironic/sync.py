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
"""Node records from the Ironic nodes of one conductor service.

:func:`sync` lists the Ironic nodes of this service's shard and conductor
group (through :class:`~baremetal_orch.ironic.client.IronicClient`, which
never lists all nodes when ``[ironic]shard_key`` is set) and brings the
``ironic`` node records of the database in line:

* an Ironic node without a record gets one, owned by this service
  (``conductor = host``; its uuid is the Ironic node's uuid, so
  ``baremetal-orch-manage node move <ironic uuid>`` finds it);
* a record this service owns is updated (states, maintenance, shard,
  conductor group, last error, name); a record nobody owns (no
  ``conductor``, or a ``conductor`` with no service record any more) is
  adopted;
* a record owned by ANOTHER existing service is left alone, with a warning
  naming ``baremetal-orch-manage node move``: only that command moves
  nodes between services;
* a record of this service whose node left the listing is deleted only when
  :meth:`~baremetal_orch.ironic.client.IronicClient.node_exists_anywhere`
  says Ironic no longer has the node in any shard; a node that merely
  changed shard or group is kept, with a warning.

Legacy ``[ironic]peer_list`` mode (more than one peer): the nodes are spread
on a hash ring over the live peers; a node the ring gives to this service
is created or adopted when it has no owner, but a node another service owns
never moves automatically.

Concurrency with the conductor's own work: a record under a lock
(``reservation``) is not touched, and every update is a compare-and-set on
the record's owner, provision state and maintenance as read BEFORE Ironic
was listed, so a state change the conductor made meanwhile is never
overwritten with older Ironic data (it is picked up by the next sync).

Database work is batched: a few reads (the records in scope, the services,
the names wanted), one multi-row INSERT and one executemany UPDATE; only
deletions, which need Ironic's confirmation one node at a time, go one by
one.

Ironic's provision states are mapped onto this service's state machine
(:data:`STATE_MAP`): states it does not have become the nearest one it has
(``wait call-back`` is ``deploying``, a rescued or serviced node is
``active``, a node whose inspection failed is ``enroll``, so that prepare
manages it again).
"""

import threading

from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log
from oslo_utils import timeutils
from oslo_utils import uuidutils

from baremetal_orch.common import exception
from baremetal_orch.common import states
from baremetal_orch.db import api as dbapi
from baremetal_orch.ironic import client as ironic_client
from baremetal_orch.ironic import peers as ironic_peers

CONF = cfg.CONF
LOG = log.getLogger(__name__)

#: The Ironic fields a sync reads (``shard`` needs microversion 1.82).
FIELDS = ('uuid', 'name', 'provision_state', 'target_provision_state',
          'power_state', 'maintenance', 'maintenance_reason',
          'conductor_group', 'last_error')
SHARD_FIELD = 'shard'

#: Ironic provision state -> the state of a baremetal_orch node record.
STATE_MAP = {
    'enroll': states.ENROLL,
    'verifying': states.VERIFYING,
    'manageable': states.MANAGEABLE,
    'inspecting': states.VERIFYING,
    'inspect wait': states.VERIFYING,
    'inspect failed': states.ENROLL,
    'cleaning': states.CLEANING,
    'clean wait': states.CLEANING,
    'clean hold': states.CLEANING,
    'clean failed': states.CLEANFAIL,
    'available': states.AVAILABLE,
    'deploying': states.DEPLOYING,
    'wait call-back': states.DEPLOYING,
    'deploy hold': states.DEPLOYING,
    'deploy failed': states.DEPLOYFAIL,
    'active': states.ACTIVE,
    'deleting': states.DELETING,
    'error': states.ERROR,
    'adopting': states.DEPLOYING,
    'adopt failed': states.ERROR,
    'rescuing': states.ACTIVE,
    'rescue wait': states.ACTIVE,
    'rescue': states.ACTIVE,
    'rescue failed': states.ACTIVE,
    'unrescuing': states.ACTIVE,
    'unrescue failed': states.ACTIVE,
    'servicing': states.ACTIVE,
    'service wait': states.ACTIVE,
    'service hold': states.ACTIVE,
    'service failed': states.ACTIVE,
}

#: The keys of the summary :func:`sync` returns.
SUMMARY_KEYS = ('listed', 'created', 'updated', 'adopted', 'unchanged',
                'skipped_foreign', 'skipped_locked', 'skipped_changed',
                'skipped_ring', 'deleted', 'kept_moved', 'failed')


def enabled(conf=CONF):
    """Whether this conductor syncs Ironic nodes periodically.

    True when the Ironic backend is configured (``[ironic]auth_type`` or
    ``[ironic]endpoint_override``) and ``[conductor]sync_interval`` > 0.
    """
    opts = conf.ironic
    configured = bool(opts.auth_type or opts.endpoint_override)
    return configured and conf.conductor.sync_interval > 0


def map_state(ironic_state, default=None):
    """The record state for an Ironic provision state (or ``default``)."""
    return STATE_MAP.get(ironic_state, default)


def _version(text):
    return tuple(int(part) for part in text.split('.'))


class _Sync:
    """One run of :func:`sync` (its state and counters)."""

    def __init__(self, host, client):
        self.host = host
        self.client = client
        self.counts = dict.fromkeys(SUMMARY_KEYS, 0)
        self.inserts = []
        self.updates = []
        self.ring = None

    # --- reading ------------------------------------------------------------

    def _fields(self):
        fields = list(FIELDS)
        if _version(self.client.api_version) >= _version(
                ironic_client.SHARD_VERSION):
            fields.append(SHARD_FIELD)
        return fields

    def _live_ring(self, services):
        peers = set(CONF.ironic.peer_list or ())
        if len(peers) <= 1:
            return None
        alive = {s.host for s in services
                 if dbapi.is_alive(s, CONF.conductor.heartbeat_timeout)
                 and not s.disabled}
        return ironic_peers.PeerRing((peers & alive) | {self.host})

    def run(self):
        records = dbapi.ironic_records_in_scope(
            self.host, self.client.shard_key, self.client.conductor_group)
        inodes = self.client.list_nodes(fields=self._fields())
        self.counts['listed'] = len(inodes)
        services = dbapi.list_services()
        self.services = {s.host for s in services}
        self.ring = self._live_ring(services)
        by_uuid = {}
        for record in records:
            by_uuid.setdefault(record['ironic_uuid'], []).append(record)
        listed = {n['uuid'] for n in inodes}
        unread = listed.difference(by_uuid)
        if unread:
            for record in dbapi.ironic_records_by_uuid(unread):
                by_uuid.setdefault(record['ironic_uuid'], []).append(record)
        for inode in inodes:
            self._classify(inode, by_uuid.get(inode['uuid'], []))
        self._resolve_names()
        self._write()
        self._prune([r for r in records if r['conductor'] == self.host
                     and r['ironic_uuid'] not in listed])
        return self.counts

    # --- deciding -----------------------------------------------------------

    def _owner_state(self, record):
        owner = record['conductor']
        if owner == self.host:
            return 'own'
        if owner is None or owner not in self.services:
            return 'free'
        return 'foreign'

    def _classify(self, inode, records):
        uuid = inode['uuid']
        if len(records) > 1:
            LOG.warning('Ironic node %(uuid)s has %(count)d node records '
                        '(%(records)s): none is synced until only one '
                        'remains', {'uuid': uuid, 'count': len(records),
                                    'records': ', '.join(
                                        sorted(r['uuid'] for r in records))})
            self.counts['failed'] += 1
            return
        record = records[0] if records else None
        ours_on_ring = self.ring is None or self.ring.owns(self.host, uuid)
        if record is None:
            if ours_on_ring:
                self.inserts.append(self._new_values(inode))
            else:
                self.counts['skipped_ring'] += 1
            return
        owner = self._owner_state(record)
        if owner == 'foreign':
            self._warn_foreign(inode, record)
            self.counts['skipped_foreign'] += 1
            return
        if owner == 'free' and not ours_on_ring:
            self.counts['skipped_ring'] += 1
            return
        if record['reservation']:
            self.counts['skipped_locked'] += 1
            return
        values = self._values(inode, record)
        if owner == 'own' and all(values[k] == record[k]
                                  for k in dbapi.IRONIC_SYNCED_COLUMNS):
            self.counts['unchanged'] += 1
            return
        self.updates.append((record, values, owner == 'free'))

    def _warn_foreign(self, inode, record):
        LOG.warning('Ironic node %(ironic)s is in shard %(shard)s, conductor '
                    'group %(group)s of service %(host)s, but its node '
                    'record %(node)s is owned by service %(owner)s: left '
                    'alone. If %(owner)s is gone for good, force it down '
                    'and run "baremetal-orch-manage node move %(node)s '
                    '--service %(host)s".',
                    {'ironic': inode['uuid'], 'node': record['uuid'],
                     'shard': inode.get('shard', self.client.shard_key),
                     'group': inode.get('conductor_group'),
                     'host': self.host, 'owner': record['conductor']})

    def _values(self, inode, record=None):
        """The synced columns of a record, from an Ironic node."""
        current = record or {}
        state = map_state(inode.get('provision_state'))
        if state is None:
            LOG.debug('Ironic node %s is in state %s, which has no '
                      'counterpart here: record state kept',
                      inode['uuid'], inode.get('provision_state'))
            state = current.get('provision_state') or states.ENROLL
        values = {
            'name': inode.get('name') or current.get('name') or inode['uuid'],
            'provision_state': state,
            'target_provision_state': states.target_of(state),
            'power_state': inode.get('power_state'),
            'maintenance': bool(inode.get('maintenance')),
            'maintenance_reason': inode.get('maintenance_reason'),
            'conductor_group': inode.get('conductor_group') or None,
            'last_error': inode.get('last_error'),
        }
        # Without microversion 1.82 Ironic shows no shard: keep ours.
        values['shard'] = (inode.get(SHARD_FIELD) if SHARD_FIELD in inode
                           else current.get('shard'))
        return values

    def _new_values(self, inode):
        values = self._values(inode)
        values.update(uuid=inode['uuid'], ironic_uuid=inode['uuid'],
                      driver=dbapi.IRONIC_DRIVER, conductor=self.host,
                      console_enabled=False, driver_info={},
                      instance_info={}, extra={})
        return values

    def _resolve_names(self):
        """Keep names unique: a name another record holds is not taken."""
        wanted = {v['name'] for v in self.inserts}
        wanted.update(v['name'] for _r, v, _a in self.updates)
        holders = dbapi.node_ids_by('name', wanted)
        uuids = dbapi.node_ids_by(
            'uuid', [v['uuid'] for v in self.inserts])
        for values in self.inserts:
            if values['uuid'] in uuids:
                # Our uuid space is taken by another record: let the
                # database choose one (the Ironic uuid stays in ironic_uuid).
                values['uuid'] = uuidutils.generate_uuid()
            if values['name'] in holders:
                self._warn_name(values['ironic_uuid'], values['name'])
                values['name'] = values['ironic_uuid']
        for record, values, _adopt in self.updates:
            holder = holders.get(values['name'])
            if holder is not None and holder != record['id']:
                self._warn_name(record['ironic_uuid'], values['name'])
                values['name'] = record['name']

    @staticmethod
    def _warn_name(uuid, name):
        LOG.warning('Ironic node %(uuid)s is named %(name)s, a name another '
                    'node record already has: its record keeps another '
                    'name', {'uuid': uuid, 'name': name})

    # --- writing ------------------------------------------------------------

    def _write(self):
        now = timeutils.utcnow()
        if self.inserts:
            for values in self.inserts:
                values['created_at'] = now
            self._insert(self.inserts)
        self._update([u for u in self.updates if not u[2]], now, 'updated')
        self._update([u for u in self.updates if u[2]], now, 'adopted')

    def _insert(self, rows):
        try:
            dbapi.insert_ironic_records(rows)
            self.counts['created'] += len(rows)
            return
        except db_exc.DBDuplicateEntry:
            if len(rows) == 1:
                LOG.warning('Could not create the record of Ironic node %s: '
                            'its uuid or name was taken meanwhile',
                            rows[0]['ironic_uuid'])
                self.counts['failed'] += 1
                return
        # One row raced with another writer: retry them one by one.
        for row in rows:
            self._insert([row])

    def _update(self, updates, now, key):
        """Apply updates in one executemany; count them under ``key``."""
        if not updates:
            return
        try:
            changed = dbapi.update_ironic_records(
                [(r, v) for r, v, _a in updates], self.host, now)
        except db_exc.DBDuplicateEntry:
            if len(updates) == 1:
                LOG.warning('Could not update the record of Ironic node %s: '
                            'its new name was taken meanwhile',
                            updates[0][0]['ironic_uuid'])
                self.counts['failed'] += 1
                return
            for update in updates:
                self._update([update], now, key)
            return
        if key == 'adopted' and changed == len(updates):
            for record, _v, _a in updates:
                LOG.info('Service %(host)s adopted the record %(node)s of '
                         'Ironic node %(ironic)s (owner was %(owner)s)',
                         {'host': self.host, 'node': record['uuid'],
                          'ironic': record['ironic_uuid'],
                          'owner': record['conductor']})
        self.counts[key] += changed
        # Rows the CAS refused changed meanwhile: the next sync sees them.
        self.counts['skipped_changed'] += len(updates) - changed

    # --- deleting -----------------------------------------------------------

    def _prune(self, gone):
        for record in gone:
            if record['reservation']:
                self.counts['skipped_locked'] += 1
                continue
            try:
                exists = self.client.node_exists_anywhere(
                    record['ironic_uuid'])
            except ironic_client.IronicRequestFailed as exc:
                LOG.warning('Could not tell whether Ironic still has node '
                            '%(ironic)s (record %(node)s): record kept: '
                            '%(err)s', {'ironic': record['ironic_uuid'],
                                        'node': record['uuid'], 'err': exc})
                self.counts['failed'] += 1
                continue
            if exists:
                self._warn_moved(record)
                self.counts['kept_moved'] += 1
                continue
            try:
                dbapi.destroy_node(record['uuid'])
            except exception.NodeNotFound:
                continue
            except (exception.NodeLocked, exception.NodeHasPorts) as exc:
                LOG.warning('Ironic node %(ironic)s no longer exists, but '
                            'its record %(node)s cannot be deleted: %(err)s',
                            {'ironic': record['ironic_uuid'],
                             'node': record['uuid'], 'err': exc})
                self.counts['failed'] += 1
                continue
            LOG.info('Deleted the record %(node)s: Ironic no longer has node '
                     '%(ironic)s in any shard', {
                         'node': record['uuid'],
                         'ironic': record['ironic_uuid']})
            self.counts['deleted'] += 1

    def _warn_moved(self, record):
        LOG.warning('Ironic node %(ironic)s (record %(node)s) left shard '
                    '%(shard)s / conductor group %(group)s of service '
                    '%(host)s but still exists in Ironic: record kept. Move '
                    'it to the service of its new shard with '
                    '"baremetal-orch-manage node move %(node)s --service '
                    '<host>".', {'ironic': record['ironic_uuid'],
                                 'node': record['uuid'],
                                 'shard': self.client.shard_key,
                                 'group': self.client.conductor_group,
                                 'host': self.host})


def sync(context, host, client=None):
    """Bring the node records of service ``host`` in line with Ironic.

    :param context: the request context of the caller (an admin context).
    :param host: the ``[DEFAULT]host`` of the service that syncs.
    :param client: an :class:`~baremetal_orch.ironic.client.IronicClient`;
        one is built from ``cfg.CONF`` when omitted.
    :returns: a summary of counts, also logged: ``listed`` (Ironic nodes
        in scope), ``created``, ``updated``, ``adopted`` (records without a
        live owner record taken over), ``unchanged``, ``skipped_foreign``
        (owned by another service), ``skipped_locked`` (under a lock),
        ``skipped_changed`` (changed by the conductor during the sync),
        ``skipped_ring`` (peer_list mode: another peer's), ``deleted``,
        ``kept_moved`` (left the shard but still in Ironic), ``failed``.
    :raises: IronicRequestFailed when Ironic cannot be listed (nothing
        changed then).
    """
    client = client or ironic_client.IronicClient(CONF)
    watch = timeutils.StopWatch().start()
    counts = _Sync(host, client).run()
    LOG.info('Ironic sync of service %(host)s (shard %(shard)s, conductor '
             'group %(group)s) in %(secs).2f s: %(counts)s',
             {'host': host, 'shard': client.shard_key,
              'group': client.conductor_group, 'secs': watch.elapsed(),
              'counts': ', '.join('%s=%d' % (k, counts[k])
                                  for k in SUMMARY_KEYS)})
    return counts


class SyncJob:
    """The periodic sync of one conductor: one run at a time, one client.

    Call it (no arguments) from a periodic thread or an executor; a call
    made while another run is under way returns None at once.
    """

    def __init__(self, host, context=None, client=None):
        self.host = host
        self.context = context
        self.client = client or ironic_client.IronicClient(CONF)
        self._running = threading.Lock()
        self.last = None

    def __call__(self):
        if not self._running.acquire(blocking=False):
            LOG.debug('Ironic sync of %s already running: skipped',
                      self.host)
            return None
        try:
            self.last = sync(self.context, self.host, self.client)
            return self.last
        except ironic_client.IronicRequestFailed as exc:
            LOG.warning('Ironic sync of service %s failed: %s', self.host,
                        exc)
            return None
        except Exception:
            LOG.exception('Ironic sync of service %s failed', self.host)
            return None
        finally:
            self._running.release()
