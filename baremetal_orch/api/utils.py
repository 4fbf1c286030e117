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
"""Helpers shared by the API controllers."""

import copy
import json
import urllib.parse

import jsonpatch
from oslo_config import cfg
from oslo_utils import strutils
from oslo_utils import uuidutils
import pecan

from baremetal_orch.api import validation
from baremetal_orch.common import exception
from baremetal_orch.common import limits
from baremetal_orch.notifications import notify
from baremetal_orch.objects import base as obj_base

CONF = cfg.CONF

SORT_DIRS = ('asc', 'desc')


def context():
    return pecan.request.context


def rpcapi():
    return pecan.request.rpcapi


def json_body(schema=None, what='request body'):
    """The request's JSON body, validated against ``schema``."""
    content_type = (pecan.request.content_type or '').split(';')[0].strip()
    if content_type and content_type not in ('application/json', ''):
        raise exception.UnsupportedMediaType(content_type=content_type)
    body = validation.parse_json(pecan.request.body,
                                 CONF.api.max_request_body_size)
    if schema is not None:
        validation.validate(schema, body, what)
    return body


def document_body():
    """A JSON or YAML document (Content-Type: application/yaml)."""
    content_type = (pecan.request.content_type or '').split(';')[0].strip()
    body = pecan.request.body
    if len(body) > CONF.api.max_request_body_size:
        raise exception.RequestTooLarge(limit=CONF.api.max_request_body_size)
    if content_type in ('application/yaml', 'application/x-yaml',
                        'text/yaml'):
        return validation.parse_yaml(body)
    if content_type not in ('application/json', ''):
        raise exception.UnsupportedMediaType(content_type=content_type)
    return validation.parse_json(body)


def bool_param(name, value):
    if value is None:
        return None
    try:
        return strutils.bool_from_string(value, strict=True)
    except ValueError:
        raise exception.InvalidParameterValue(
            reason='Query parameter %s must be a boolean, not %r'
                   % (name, value))


#: Query parameters of every paged list.
PAGING = ('limit', 'marker', 'sort_key', 'sort_dir')
LIST_PARAMS = PAGING + ('fields',)


def check_query(params, allowed):
    """400 naming the query parameters a call does not know, or that it
    was given more than once (pecan passes those as lists)."""
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise exception.InvalidParameterValue(
            reason='Unknown query parameter(s): %s' % ', '.join(unknown))
    repeated = sorted(k for k, v in params.items() if isinstance(v, list))
    if repeated:
        raise exception.InvalidParameterValue(
            reason='Query parameter(s) given more than once: %s'
                   % ', '.join(repeated))


def list_params(limit=None, marker=None, sort_key=None, sort_dir=None,
                allowed_sort_keys=None):
    """Check and normalize the paging and sorting parameters."""
    max_limit = CONF.api.max_limit
    if limit is not None:
        try:
            limit = int(limit)
        except ValueError:
            raise exception.InvalidParameterValue(
                reason='limit must be an integer, not %r' % limit)
        if limit <= 0:
            raise exception.InvalidParameterValue(
                reason='limit must be positive, not %d' % limit)
    limit = min(limit or max_limit, max_limit)
    if sort_dir is not None and sort_dir not in SORT_DIRS:
        raise exception.InvalidParameterValue(
            reason='sort_dir must be asc or desc, not %r' % sort_dir)
    if (sort_key is not None and allowed_sort_keys is not None
            and sort_key not in allowed_sort_keys):
        raise exception.InvalidParameterValue(
            reason='The sort_key value %r is not one of: %s'
                   % (sort_key, ', '.join(sorted(allowed_sort_keys))))
    return limit, marker, sort_key, sort_dir


def fields_param(fields, allowed):
    if not fields:
        return None
    wanted = [f.strip() for f in fields.split(',') if f.strip()]
    unknown = sorted(set(wanted) - set(allowed))
    if unknown:
        raise exception.InvalidParameterValue(
            reason='Unknown field(s) in fields: %s' % ', '.join(unknown))
    return wanted


def collection(name, items, limit, marker_field='uuid', marker=None):
    """A list response, with a ``next`` link keeping every filter.

    :param marker: the marker of the last item; give it when ``?fields=``
        may have trimmed ``marker_field`` from the documents.
    """
    result = {name: items}
    if limit and len(items) >= limit:
        params = dict(pecan.request.GET.items())
        params['marker'] = (marker if marker is not None
                            else items[-1][marker_field])
        params['limit'] = str(limit)
        result['next'] = '%s%s?%s' % (
            pecan.request.host_url, pecan.request.path,
            urllib.parse.urlencode(sorted(params.items())))
    return result


def timestamp(value):
    """ISO 8601 with the UTC offset, whether the value came naive from the
    database or aware from an object."""
    if value is None:
        return None
    return obj_base.as_utc(value).isoformat()


def link(path):
    return [{'href': '%s/v1/%s' % (pecan.request.host_url, path),
             'rel': 'self'}]


def _op_text(op):
    """An operation for a message, without its value (a secret, maybe)."""
    if not isinstance(op, dict):
        return repr(op)
    return repr({k: v for k, v in op.items() if k != 'value'})


def _size(value, budget):
    """How many values ``value`` holds (containers and scalars), counted
    up to ``budget`` and a little past it at most."""
    count, stack = 0, [value]
    while stack and count <= budget:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def apply_patch(doc, patch, readonly=()):
    """Apply an RFC 6902 JSON patch to a resource document.

    Messages name the operation and its path, never a value: neither the
    one sent nor what the document holds there (driver_info's secrets).

    The document is copied once and the operations applied to the copy,
    in linear time. Limits (400, LimitExceeded): at most
    ``limits.MAX_PATCH_OPERATIONS`` operations; ``copy`` operations may
    not grow the document past ``limits.MAX_DOCUMENT_VALUES`` values
    (forty copies of a document into itself are 2**40 of it); the result
    nests no deeper than ``limits.MAX_DEPTH`` and its JSON is no larger
    than ``[api]max_request_body_size`` (what one request could store).
    """
    if not isinstance(patch, list):
        raise exception.PatchError(reason='a JSON patch must be a list of '
                                          'operations')
    if len(patch) > limits.MAX_PATCH_OPERATIONS:
        raise limits.exceeded('operations in a JSON patch',
                              limits.MAX_PATCH_OPERATIONS)
    for op in patch:
        if not isinstance(op, dict) or 'path' not in op or 'op' not in op:
            raise exception.PatchError(
                reason='each operation needs "op" and "path": %s'
                       % _op_text(op))
        if op['op'] not in ('add', 'remove', 'replace', 'move', 'copy',
                            'test'):
            raise exception.PatchError(reason='unknown op %r' % op['op'])
        if op['path'] == '' or op.get('from') == '':
            raise exception.PatchError(
                reason='the whole document cannot be replaced: %s'
                       % _op_text(op))
        for key in ('path', 'from'):
            top = str(op.get(key, '')).lstrip('/').split('/')[0]
            if top in readonly:
                raise exception.PatchError(
                    reason='%s cannot be changed' % op[key])
    budget = limits.MAX_DOCUMENT_VALUES
    doc = copy.deepcopy(doc)
    size = _size(doc, budget)
    for i, op in enumerate(patch):
        try:
            if op['op'] in ('add', 'replace'):
                size += _size(op.get('value'), budget)
            elif op['op'] == 'copy':
                size += _size(jsonpatch.JsonPointer(
                    str(op.get('from'))).resolve(doc, None), budget)
            if size > budget:
                raise limits.exceeded('values in the patched document',
                                      budget, 'operation %d' % i)
            jsonpatch.JsonPatch([op]).apply(doc, in_place=True)
        except jsonpatch.JsonPatchTestFailed:
            # Its message quotes values, or what jsonpointer's does.
            raise exception.PatchTestFailed(
                reason='operation %d %s: the test failed' % (i, _op_text(op)))
        except jsonpatch.JsonPatchException as e:
            raise exception.PatchError(
                reason='operation %d %s: %s' % (i, _op_text(op), e))
        except jsonpatch.JsonPointerException:
            # Its message quotes the part of the document it walked.
            raise exception.PatchError(
                reason='operation %d %s: the path does not exist in the '
                       'document' % (i, _op_text(op)))
        except (TypeError, AttributeError):
            raise exception.PatchError(
                reason='operation %d %s: the path or value is not valid '
                       'here' % (i, _op_text(op)))
    validation.check_document(doc, 'patched', strings=False)
    if len(json.dumps(doc, default=str)) > CONF.api.max_request_body_size:
        raise limits.exceeded(
            'bytes of JSON in the patched document '
            '([api]max_request_body_size)', CONF.api.max_request_body_size)
    return doc


def update_atomically(ctx, resource, obj, updating, change):
    """Change a resource and save it in one transaction that reads it
    again.

    :param resource: the CRUD notifications' resource, or None for none.
    :param obj: the resource as the request found it. ``change(obj)``
        first: what the change refuses there (4xx) is refused before
        anything is notified. Then ``start`` is notified.
    :param updating: the object's ``updating(...)`` context manager: a
        write transaction holding the resource's row lock, yielding the
        resource as it is now. ``change`` applies to that one, which is
        saved: a concurrent PATCH of the same resource waits for this one
        to commit, then applies to what it wrote. No update is lost, and a
        ``test`` operation holds; a request that loses a race (the
        resource changed or deleted meanwhile) notifies ``error``.
    :param change: ``change(obj)`` sets the changes on ``obj``.
    :returns: the saved object.
    """
    change(obj)
    if resource:
        notify.crud(ctx, resource, 'update', 'start', obj)
    try:
        with updating as fresh:
            change(fresh)
            fresh.save()
    except Exception as e:
        if resource:
            # (Notifying never raises.)
            notify.crud(ctx, resource, 'update', 'error', obj, exc=e)
        raise
    if resource:
        notify.crud(ctx, resource, 'update', 'end', fresh)
    return fresh


def require_ident(ident):
    """Refuse PATCH or DELETE on a whole collection.

    A 405, not the missing-argument TypeError (a 500) of the controller.
    """
    if ident is None:
        pecan.abort(405)
    return ident


def check_uuid(value, what):
    if not uuidutils.is_uuid_like(value):
        raise exception.InvalidParameterValue(
            reason='%s must be a UUID, not %r' % (what, value))
    return value


def record_list(name, params, list_func, to_dict, fields, sort_keys,
                filters=(), uuid_filters=()):
    """The answer of a list call over records (events, deployments...).

    Checks the query (paging, sorting, ``fields``, the filters, the filters
    that must be UUIDs), lists with ``list_func(filters, limit, marker,
    sort_key, sort_dir)`` and pages the documents ``to_dict(record,
    fields)`` make.
    """
    check_query(params, LIST_PARAMS + tuple(filters))
    limit, marker, sort_key, sort_dir = list_params(
        params.get('limit'), params.get('marker'), params.get('sort_key'),
        params.get('sort_dir'), sort_keys)
    wanted = fields_param(params.get('fields'), fields)
    given = {k: params[k] for k in filters if k in params}
    for key in uuid_filters:
        if key in given:
            check_uuid(given[key], key)
    records = list_func(given, limit, marker, sort_key, sort_dir)
    return collection(name, [to_dict(r, wanted) for r in records], limit,
                      marker=records[-1].uuid if records else None)


def record_doc(record, fields):
    """The document of a record (an object): its ``fields``, timestamps
    in ISO 8601."""
    doc = {}
    for field in fields:
        value = getattr(record, field)
        if field.endswith('_at') and value is not None:
            value = timestamp(value)
        doc[field] = value
    return doc
