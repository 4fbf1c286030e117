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
"""The request context."""

from oslo_context import context


class RequestContext(context.RequestContext):
    """A request context; the noauth default is a system-scoped admin."""

    def to_policy_values(self):
        values = super().to_policy_values()
        values['project_id'] = self.project_id
        return values

    def ensure_thread_contain_context(self):
        if context.get_current() is None:
            self.update_store()


def get_admin_context():
    """An admin context for internal work (conductor, periodic tasks)."""
    return RequestContext(is_admin=True, roles=['admin', 'reader', 'member'],
                          system_scope='all', overwrite=False)


def from_dict(values):
    return RequestContext.from_dict(values or {})
