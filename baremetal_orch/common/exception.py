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

"""The one exception hierarchy of baremetal_orch.

Every error the service raises on purpose derives from
:class:`BaremetalOrchException`. Each class carries:

* ``status``: the HTTP status the API answers with;
* ``code``: a stable, dotted machine-readable code used in API-SIG error
  documents (``{"errors": [{"code": ...}]}``);
* ``_msg_fmt``: the message, formatted with the keyword arguments.

The API maps any of these to its error document without a catch-all, so a
domain error can never become a 500 by accident.
"""

import http.client as http_client


class BaremetalOrchException(Exception):
    """Base of every baremetal_orch error."""

    status = http_client.INTERNAL_SERVER_ERROR
    code = 'baremetal_orch.error'
    _msg_fmt = 'An unknown error occurred.'
    # Whether the message may be shown to API users.
    safe = True

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self._msg_fmt % kwargs
            except (KeyError, TypeError, ValueError):
                # A programming error in a message must not hide the error.
                message = self._msg_fmt
        self.message = str(message)
        super().__init__(self.message)

    @property
    def title(self):
        return http_client.responses.get(self.status, 'Error')


# 400 ----------------------------------------------------------------------

class Invalid(BaremetalOrchException):
    status = http_client.BAD_REQUEST
    code = 'baremetal_orch.invalid'
    _msg_fmt = 'Invalid input: %(reason)s'


class InvalidParameterValue(Invalid):
    code = 'baremetal_orch.invalid_parameter'
    _msg_fmt = '%(reason)s'


class DriverNotEnabled(InvalidParameterValue):
    code = 'baremetal_orch.driver.not_enabled'
    _msg_fmt = ('The provisioning driver %(driver)s is not enabled: '
                '[DEFAULT]enabled_drivers = %(enabled)s')


class MissingExtra(BaremetalOrchException):
    """An optional feature is configured without its library."""
    code = 'baremetal_orch.missing_extra'
    _msg_fmt = ('%(feature)s needs the Python package %(package)s: install '
                "baremetal-orch[%(extra)s] (pip install "
                "'baremetal-orch[%(extra)s]')")


class SchemaValidationError(Invalid):
    code = 'baremetal_orch.schema_validation'
    _msg_fmt = 'Invalid %(what)s at %(path)s: %(reason)s'


class LimitExceeded(Invalid):
    """A request past one of the limits of baremetal_orch.common.limits."""
    code = 'baremetal_orch.limit_exceeded'
    _msg_fmt = '%(path)s: more than %(limit)s %(what)s (the limit)'


class InvalidName(Invalid):
    code = 'baremetal_orch.invalid_name'
    _msg_fmt = ('Invalid %(what)s %(name)r: a name is 1 to %(max)s letters, '
                'digits or "._~-", starting with a letter or a digit')


class PatchError(Invalid):
    code = 'baremetal_orch.invalid_patch'
    _msg_fmt = "Couldn't apply patch: %(reason)s"


class InvalidStrategy(Invalid):
    """A deployment strategy document is not valid."""
    code = 'baremetal_orch.strategy.invalid'
    _msg_fmt = 'Invalid deployment strategy: %(reason)s'


class StrategySchemaError(InvalidStrategy):
    code = 'baremetal_orch.strategy.schema'


class DuplicateGroupName(InvalidStrategy):
    code = 'baremetal_orch.strategy.duplicate_group'
    _msg_fmt = 'Invalid deployment strategy: duplicate group name %(name)s'


class UnknownDependency(InvalidStrategy):
    code = 'baremetal_orch.strategy.unknown_dependency'
    _msg_fmt = ('Invalid deployment strategy: group %(group)s depends on '
                'unknown group %(dependency)s')


class SelfDependency(InvalidStrategy):
    code = 'baremetal_orch.strategy.self_dependency'
    _msg_fmt = 'Invalid deployment strategy: group %(group)s depends on itself'


class DependencyCycle(InvalidStrategy):
    code = 'baremetal_orch.strategy.cycle'
    _msg_fmt = ('Invalid deployment strategy: dependency cycle between '
                'groups %(groups)s')


class InvalidCriteria(InvalidStrategy):
    code = 'baremetal_orch.strategy.criteria'
    _msg_fmt = ('Invalid deployment strategy: group %(group)s: %(reason)s')


class InvalidSelector(InvalidStrategy):
    code = 'baremetal_orch.strategy.selector'
    _msg_fmt = 'Invalid selector: %(reason)s'


class InvalidLabel(Invalid):
    code = 'baremetal_orch.invalid_label'
    _msg_fmt = 'Invalid label %(label)s: %(reason)s'


class InvalidAction(Invalid):
    code = 'baremetal_orch.action.invalid'
    _msg_fmt = 'Invalid action: %(reason)s'


class UnsupportedMediaType(BaremetalOrchException):
    status = http_client.UNSUPPORTED_MEDIA_TYPE
    code = 'baremetal_orch.unsupported_media_type'
    _msg_fmt = 'Unsupported content type %(content_type)s'


class RequestTooLarge(BaremetalOrchException):
    status = http_client.REQUEST_ENTITY_TOO_LARGE
    code = 'baremetal_orch.request_too_large'
    _msg_fmt = ('The request body is larger than %(limit)s bytes '
                '([api]max_request_body_size).')


# 401/403 ------------------------------------------------------------------

class NotAuthorized(BaremetalOrchException):
    status = http_client.UNAUTHORIZED
    code = 'baremetal_orch.not_authorized'
    _msg_fmt = 'Not authorized.'


class InvalidSignalToken(NotAuthorized):
    code = 'baremetal_orch.signal.invalid_token'
    _msg_fmt = ('Missing or invalid signal token for deployment %(uuid)s '
                '(the token of its signal URL, or X-Signal-Token)')


class Forbidden(BaremetalOrchException):
    status = http_client.FORBIDDEN
    code = 'baremetal_orch.forbidden'
    _msg_fmt = 'Access was denied to the following resource: %(resource)s'


# 404 ----------------------------------------------------------------------

class NotFound(BaremetalOrchException):
    status = http_client.NOT_FOUND
    code = 'baremetal_orch.not_found'
    _msg_fmt = 'Resource could not be found.'


class NodeNotFound(NotFound):
    code = 'baremetal_orch.node.not_found'
    _msg_fmt = 'Node %(node)s could not be found.'


class PortNotFound(NotFound):
    code = 'baremetal_orch.port.not_found'
    _msg_fmt = 'Port %(port)s could not be found.'


class ChassisNotFound(NotFound):
    code = 'baremetal_orch.chassis.not_found'
    _msg_fmt = 'Chassis %(chassis)s could not be found.'


class StrategyNotFound(NotFound):
    code = 'baremetal_orch.strategy.not_found'
    _msg_fmt = 'Deployment strategy %(name)s could not be found.'


class ActionNotFound(NotFound):
    code = 'baremetal_orch.action.not_found'
    _msg_fmt = 'Action %(action)s could not be found.'


class TaskNotFound(NotFound):
    code = 'baremetal_orch.task.not_found'
    _msg_fmt = 'Task %(task)s could not be found.'


class DeploymentNotFound(NotFound):
    code = 'baremetal_orch.deployment.not_found'
    _msg_fmt = 'Deployment %(deployment)s could not be found.'


class ServiceNotFound(NotFound):
    code = 'baremetal_orch.service.not_found'
    _msg_fmt = 'Service %(host)s could not be found.'


class LabelNodeNotFound(NotFound):
    code = 'baremetal_orch.labels.node_not_found'
    _msg_fmt = 'Kubernetes node %(node)s could not be found.'


# 405/406 ------------------------------------------------------------------

class NotAcceptable(BaremetalOrchException):
    status = http_client.NOT_ACCEPTABLE
    code = 'baremetal_orch.not_acceptable'
    _msg_fmt = '%(reason)s'


class InvalidMicroversion(NotAcceptable):
    code = 'baremetal_orch.microversion'
    _msg_fmt = ('Version %(version)s was requested but the minimum and '
                'maximum supported versions are %(min)s and %(max)s.')


# 409 ----------------------------------------------------------------------

class Conflict(BaremetalOrchException):
    status = http_client.CONFLICT
    code = 'baremetal_orch.conflict'
    _msg_fmt = 'Conflict: %(reason)s'


class DuplicateName(Conflict):
    code = 'baremetal_orch.duplicate_name'
    _msg_fmt = 'A %(resource)s with name %(name)s already exists.'


class NodeLocked(Conflict):
    code = 'baremetal_orch.node.locked'
    _msg_fmt = ('Node %(node)s is locked by host %(host)s, please retry '
                'after the current operation is completed.')


class NodeInWrongState(Conflict):
    code = 'baremetal_orch.node.wrong_state'
    _msg_fmt = 'Node %(node)s: %(reason)s'


class InvalidStateRequested(Conflict):
    code = 'baremetal_orch.node.invalid_state_transition'
    _msg_fmt = ('The requested action "%(action)s" can not be performed on '
                'node "%(node)s" while it is in state "%(state)s".')


class NodeHasPorts(Conflict):
    code = 'baremetal_orch.node.has_ports'
    _msg_fmt = 'Node %(node)s still has ports; delete them first.'


class ChassisNotEmpty(Conflict):
    code = 'baremetal_orch.chassis.not_empty'
    _msg_fmt = 'Chassis %(chassis)s still contains nodes.'


class NodesBusy(Conflict):
    code = 'baremetal_orch.action.nodes_busy'
    _msg_fmt = ('Nodes %(nodes)s are already part of running action '
                '%(action)s.')


class ActionNotFinished(Conflict):
    code = 'baremetal_orch.action.not_finished'
    _msg_fmt = ('Cannot retry action %(action)s: it is %(state)s; only a '
                'complete, failed or cancelled action can be retried.')


class ActionAlreadyRetried(Conflict):
    code = 'baremetal_orch.action.already_retried'
    _msg_fmt = ('Action %(action)s was already retried by action '
                '%(newer)s: retry %(newer)s instead.')


class NodeHeldByAction(Conflict):
    code = 'baremetal_orch.node.held_by_action'
    _msg_fmt = ('Node %(node)s is held by running action %(action)s: it '
                'cannot be %(what)s until the action ends.')


class PatchTestFailed(Conflict):
    """A JSON patch ``test`` operation does not hold for the resource as
    it is now (RFC 5789: the patch conflicts with its state)."""
    code = 'baremetal_orch.patch_test_failed'
    _msg_fmt = "Couldn't apply patch: %(reason)s"


class SignalAfterFinal(Conflict):
    code = 'baremetal_orch.signal.already_final'
    _msg_fmt = 'Deployment %(uuid)s has already received its final signal.'


class NodeMoveRefused(Conflict):
    code = 'baremetal_orch.node.move_refused'
    _msg_fmt = 'Node %(node)s cannot be moved: %(reason)s'


class StrategyInUse(Conflict):
    code = 'baremetal_orch.strategy.in_use'
    _msg_fmt = ('Deployment strategy %(name)s is used by running action '
                '%(action)s.')


# 503 ----------------------------------------------------------------------

class ServiceUnavailable(BaremetalOrchException):
    status = http_client.SERVICE_UNAVAILABLE
    code = 'baremetal_orch.service_unavailable'
    _msg_fmt = '%(reason)s'


class DatabaseUnavailable(ServiceUnavailable):
    """The configured database cannot be opened (its URL is in the
    message, its password masked)."""
    code = 'baremetal_orch.database_unavailable'
    _msg_fmt = 'Cannot open the database %(url)s: %(reason)s'


class CoordinationUnavailable(ServiceUnavailable):
    """The taskflow jobboard's backend (Redis, ZooKeeper) cannot be
    reached: an action cannot be posted."""
    code = 'baremetal_orch.coordination_unavailable'
    _msg_fmt = ('The coordination backend %(backend)s is unavailable: '
                '%(reason)s')


class NoConductorAvailable(ServiceUnavailable):
    code = 'baremetal_orch.no_conductor'
    _msg_fmt = 'No conductor service is available to handle %(what)s.'


# Driver errors: recorded as task failures; an API call that meets one (a
# console or maintenance change the backend refused) answers 502: the
# request was good, the node's backend failed it.

class DriverError(BaremetalOrchException):
    status = http_client.BAD_GATEWAY
    code = 'baremetal_orch.driver.error'
    _msg_fmt = 'Driver error on node %(node)s: %(reason)s'


class ProvisioningFailed(DriverError):
    code = 'baremetal_orch.driver.provisioning_failed'
    _msg_fmt = 'Provisioning of node %(node)s failed: %(reason)s'


class ProvisioningTimeout(DriverError):
    code = 'baremetal_orch.driver.timeout'
    _msg_fmt = 'Node %(node)s did not reach %(state)s within %(timeout)s s'


class NodeNotInShard(DriverError):
    code = 'baremetal_orch.driver.not_in_shard'
    _msg_fmt = ('Node %(node)s is no longer in shard %(shard)s / conductor '
                'group %(group)s of this service')


class LabelUpdateFailed(DriverError):
    code = 'baremetal_orch.labels.failed'
    _msg_fmt = 'Label update of node %(node)s failed: %(reason)s'
