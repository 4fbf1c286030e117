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
"""Request bodies and queries checked against JSON schemas."""

import json
import re

import jsonschema
import yaml

from baremetal_orch.common import exception


def _path(error):
    parts = []
    for part in error.absolute_path:
        if isinstance(part, int):
            parts.append('[%d]' % part)
        else:
            parts.append(('.' if parts else '') + str(part))
    return ''.join(parts) or '(body)'


def _reason(error):
    if error.validator == 'additionalProperties':
        return error.message.replace('Additional properties', 'Unknown '
                                     'field(s)')
    if error.validator == 'required':
        return error.message
    return error.message


def validate(schema, data, what='request body'):
    """Validate ``data``; SchemaValidationError (400) names the field."""
    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(validator.iter_errors(data),
                    key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        raise exception.SchemaValidationError(
            what=what, path=_path(error), reason=_reason(error))
    return data


def parse_json(body, max_size=None):
    """The JSON document of a request body (400 when malformed)."""
    if max_size is not None and len(body) > max_size:
        raise exception.RequestTooLarge(limit=max_size)
    if not body:
        raise exception.InvalidParameterValue(
            reason='The request body is empty; a JSON document is required.')
    try:
        document = json.loads(body)
    except ValueError as e:
        raise exception.InvalidParameterValue(
            reason='Malformed JSON in the request body: %s' % e)
    except RecursionError:
        raise _too_deep('JSON')
    if _BAD_ESCAPE.search(body):
        _check_unicode(document, 'JSON')
    return document


def parse_yaml(body):
    """The YAML document of a request body, as JSON would have it (400
    when malformed or not representable in JSON)."""
    if not body:
        raise exception.InvalidParameterValue(
            reason='The request body is empty; a YAML document is required.')
    try:
        document = yaml.safe_load(body)
    except yaml.YAMLError as e:
        raise exception.InvalidParameterValue(
            reason='Malformed YAML in the request body: %s' % e)
    except RecursionError:
        raise _too_deep('YAML')
    # What is checked is what is stored (as JSON): YAML's dates, binary
    # values and sets, or keys of those, have no JSON form.
    _check_unicode(document, 'YAML')
    try:
        return json.loads(json.dumps(document))
    except (TypeError, ValueError) as e:
        raise exception.InvalidParameterValue(
            reason='The YAML document in the request body holds a value '
                   'JSON cannot represent: %s' % e)
    except RecursionError:
        raise _too_deep('YAML')


#: The JSON escape of NUL or of a UTF-16 surrogate (U+D800 to U+DFFF):
#: the only ways a JSON string can hold either.
_BAD_ESCAPE = re.compile(rb'\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})')


def check_text(text, what):
    """400 for text no database column takes: NUL (PostgreSQL refuses it)
    or a lone surrogate (UTF-8 has no form for it)."""
    if '\x00' in text:
        raise exception.InvalidParameterValue(
            reason='%s holds a NUL character.' % what)
    try:
        text.encode('utf-8')
    except UnicodeEncodeError as e:
        raise exception.InvalidParameterValue(
            reason='%s holds text that is not valid Unicode: %s'
                   % (what, e.reason))


def _check_unicode(document, what):
    """check_text() on every string of a document, keys included."""
    what = 'The %s document in the request body' % what
    stack = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            check_text(value, what)
        elif isinstance(value, dict):
            stack.extend(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def _too_deep(what):
    # The parsers recurse once per level: past Python's recursion limit a
    # body is refused, not a 500.
    return exception.InvalidParameterValue(
        reason='The %s document in the request body is nested too deeply.'
               % what)
