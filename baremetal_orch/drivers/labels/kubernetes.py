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
"""The kubernetes label driver, on the official ``kubernetes`` client.

For one node: ``GET /api/v1/nodes/{name}``, compute the diff
(:func:`baremetal_orch.deployment.labels.diff`), then up to two
``PATCH /api/v1/nodes/{name}`` requests: first the labels to set, then the
labels to remove (``null`` values). No change, no PATCH.

The patches are sent as JSON merge patches (RFC 7386,
``Content-Type: application/merge-patch+json``), set explicitly: given a
dict body and no content type, the client picks a default that depends on
its version (strategic merge patch with kubernetes 37, after first choosing
JSON patch). For ``metadata.labels`` (a plain map) a merge patch and a
strategic merge patch mean the same; the explicit type makes the request
independent of the client version.

Every request carries ``[labels]request_timeout`` and is not retried
(urllib3 retries are disabled), so an unreachable or hanging API fails the
node within the timeout instead of blocking the conductor.
"""

import threading

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from oslo_config import cfg
from oslo_log import log
import urllib3

from baremetal_orch.common import exception
from baremetal_orch.deployment import labels as labels_mod
from baremetal_orch.drivers.labels import base

CONF = cfg.CONF
LOG = log.getLogger(__name__)

MERGE_PATCH = 'application/merge-patch+json'
_MAX_BODY_IN_REASON = 200


class KubernetesLabelDriver(base.LabelDriver):
    """Applies node labels through the Kubernetes API."""

    name = 'kubernetes'

    def __init__(self, kubeconfig=None, context=None, request_timeout=None):
        """Arguments default to the ``[labels]`` options."""
        self.kubeconfig = kubeconfig or CONF.labels.kubeconfig
        self.context = context or CONF.labels.context
        self.request_timeout = (request_timeout
                                or CONF.labels.request_timeout)
        self._lock = threading.Lock()
        self._api_client = None
        self._core = None

    def _core_api(self, node_name):
        """The CoreV1Api, created on first use (and again after a failure)."""
        with self._lock:
            if self._core is None:
                configuration = k8s_client.Configuration()
                # One attempt per request: no hidden retries behind the
                # timeout.
                configuration.retries = False
                try:
                    api_client = k8s_config.new_client_from_config(
                        config_file=self.kubeconfig, context=self.context,
                        persist_config=False,
                        client_configuration=configuration)
                except (k8s_config.ConfigException, OSError,
                        ValueError) as exc:
                    raise exception.LabelUpdateFailed(
                        node=node_name,
                        reason='cannot load kubeconfig %s (context %s): %s'
                               % (self.kubeconfig or '(default)',
                                  self.context or '(current)', exc))
                self._api_client = api_client
                self._core = k8s_client.CoreV1Api(api_client)
            return self._core

    def close(self):
        with self._lock:
            if self._api_client is not None:
                self._api_client.close()
            self._api_client = None
            self._core = None

    def _host(self):
        client = self._api_client
        return client.configuration.host if client is not None else '?'

    def _call(self, node_name, what, func, *args, **kwargs):
        """Run one API call, mapping every failure to our exceptions."""
        try:
            return func(*args, _request_timeout=self.request_timeout,
                        **kwargs)
        except k8s_client.ApiException as exc:
            if exc.status == 404:
                raise exception.LabelNodeNotFound(node=node_name)
            body = exc.body
            if isinstance(body, bytes):
                body = body.decode('utf-8', 'replace')
            body = (body or '').strip()[:_MAX_BODY_IN_REASON]
            raise exception.LabelUpdateFailed(
                node=node_name,
                reason='%s: Kubernetes API %s answered %s %s%s'
                       % (what, self._host(), exc.status, exc.reason or '',
                          (': %s' % body) if body else ''))
        except urllib3.exceptions.HTTPError as exc:
            raise exception.LabelUpdateFailed(
                node=node_name,
                reason='%s: Kubernetes API %s unreachable or too slow '
                       '(timeout %s s): %s'
                       % (what, self._host(), self.request_timeout, exc))

    def apply(self, node_name, labels):
        wanted = self.check_request(node_name, labels)
        core = self._core_api(node_name)
        node = self._call(node_name, 'reading the node', core.read_node,
                          node_name)
        existing = dict((node.metadata and node.metadata.labels) or {})
        label_diff = labels_mod.diff(existing, wanted)
        for body in labels_mod.merge_patches(label_diff):
            self._call(node_name, 'patching the labels', core.patch_node,
                       node_name, body, _content_type=MERGE_PATCH)
        LOG.info('Labels of Kubernetes node %(node)s: set %(set)s, '
                 'removed %(removed)s',
                 {'node': node_name, 'set': sorted(label_diff.to_set),
                  'removed': list(label_diff.to_remove)})
        return label_diff
