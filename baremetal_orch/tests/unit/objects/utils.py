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
"""Fixtures of the notification tests: a captured bus and a database."""

import fixtures
from oslo_config import cfg
from oslo_messaging import conffixture
from oslo_messaging.notify import _impl_test

from baremetal_orch.db import migration
from baremetal_orch.db.sqlalchemy import api as sqla_api
from baremetal_orch.notifications import notifier
from baremetal_orch.notifications import notify

CONF = cfg.CONF


class NotificationsFixture(fixtures.Fixture):
    """Notifications sent for real, on the ``fake:/`` transport.

    With the ``test`` driver of oslo.messaging they are captured in memory.

    :param level: ``[DEFAULT]notification_level`` (None: off).
    :param driver: the notification driver (``test`` captures in memory,
        ``messagingv2`` puts them on the fake transport for a listener).
    """

    def __init__(self, level='debug', driver='test'):
        super().__init__()
        self.level = level
        self.driver = driver

    def _setUp(self):
        messaging_conf = self.useFixture(conffixture.ConfFixture(CONF))
        messaging_conf.transport_url = 'fake:/'
        CONF.set_override('driver', [self.driver],
                          group='oslo_messaging_notifications')
        CONF.set_override('notification_level', self.level)
        # Captured in this process (the test driver).
        CONF.set_override('notification_sender', 'thread')
        self.addCleanup(CONF.clear_override, 'notification_sender')
        self.addCleanup(CONF.clear_override, 'driver',
                        group='oslo_messaging_notifications')
        self.addCleanup(CONF.clear_override, 'notification_level')
        notifier.cleanup()
        self.addCleanup(notifier.cleanup)
        _impl_test.reset()
        self.addCleanup(_impl_test.reset)
        self.addCleanup(notify.set_publisher, None, None)

    @property
    def messages(self):
        """The messages sent, oldest first.

        Dicts with ``event_type``, ``priority``, ``publisher_id`` and
        ``payload``.
        """
        # They are sent by the process's sender thread.
        notifier.flush(10)
        return [message for _ctxt, message, _priority, _retry
                in _impl_test.NOTIFICATIONS]

    def event_types(self):
        return [m['event_type'] for m in self.messages]


class DatabaseFixture(fixtures.Fixture):
    """A migrated in-memory sqlite database for this test."""

    def _setUp(self):
        CONF.set_override('connection', 'sqlite://', group='database')
        self.addCleanup(CONF.clear_override, 'connection', group='database')
        sqla_api.reset_engine()
        self.addCleanup(sqla_api.reset_engine)
        migration.upgrade()
