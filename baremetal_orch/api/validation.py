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

import itertools
import json
import math
import re
import sys

import jsonschema
import yaml

from baremetal_orch.common import exception
from baremetal_orch.common import limits


def _path(error):
    parts = []
    for part in error.absolute_path:
        if isinstance(part, int):
            parts.append('[%d]' % part)
        else:
            parts.append(('.' if parts else '') + str(part))
    return ''.join(parts) or '(body)'


def _reason(error):
    message = error.message
    if error.validator == 'maxLength':
        message = 'longer than %d characters (the limit)' % (
            error.validator_value)
    elif error.validator == 'maxItems':
        message = 'more than %d items (the limit)' % error.validator_value
    elif (error.validator == 'pattern'
            and error.validator_value == limits.NAME_PATTERN):
        message = ('%r is not a name: 1 to %d letters, digits or "._~-", '
                   'starting with a letter or a digit'
                   % (error.instance, limits.NAME_MAX_LENGTH))
    elif error.validator == 'additionalProperties':
        message = message.replace('Additional properties', 'Unknown '
                                  'field(s)')
    if len(message) > 500:
        # jsonschema quotes the value: a detail is not an echo of the body.
        message = message[:500] + '...'
    return message


def _canonical(value):
    """A hashable form of a JSON value, equal when jsonschema calls two
    values equal (1 and 1.0 alike, True and 1 not)."""
    if isinstance(value, bool) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ('number', value)
    if isinstance(value, str):
        return ('string', value)
    if isinstance(value, list):
        return ('array', tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ('object', tuple(sorted(
            (str(k), _canonical(v)) for k, v in value.items())))
    return ('other', repr(value))


def _unique_items(validator, unique, instance, schema):
    """uniqueItems in linear time: jsonschema compares every pair of items
    of different types (a list of 8,000 mixed items took 25 s)."""
    if not unique or not validator.is_type(instance, 'array'):
        return
    seen = set()
    for item in instance:
        key = _canonical(item)
        if key in seen:
            yield jsonschema.ValidationError(
                '%r has non-unique elements' % (instance,)
                if len(instance) <= 20 else 'the list has non-unique '
                'elements')
            return
        seen.add(key)


_Validator = jsonschema.validators.extend(
    jsonschema.Draft7Validator, {'uniqueItems': _unique_items})


def validate(schema, data, what='request body'):
    """Validate ``data``; SchemaValidationError (400) names the field."""
    validator = _Validator(schema)
    # The first errors only: a list of 100,000 wrong items is 100,000
    # errors (seconds of work) for one message.
    errors = sorted(itertools.islice(validator.iter_errors(data), 100),
                    key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        raise exception.SchemaValidationError(
            what=what, path=_path(error), reason=_reason(error))
    return data


class _NotJson(ValueError):
    """A number JSON has no form for (NaN, Infinity, 1e999)."""


def _no_constant(name):
    raise _NotJson('%s is not a JSON number' % name)


def _finite(text):
    value = float(text)
    if math.isinf(value):
        raise _NotJson('%s is too large for a JSON number' % text[:40])
    return value


def decode_text(body):
    """The text of a request body, which must be UTF-8 (RFC 8259).

    Strict: a body in another encoding (UTF-16, Latin-1...) is a 400
    naming the first byte that is not UTF-8. A lone surrogate encoded as
    UTF-8 (``ED A0 80``) is let through as the character, so that the walk
    of the parsed document (:func:`check_document`) refuses it naming its
    field. A leading byte order mark is dropped.
    """
    if isinstance(body, str):
        text = body
    else:
        try:
            text = body.decode('utf-8')
        except UnicodeDecodeError:
            try:
                text = body.decode('utf-8', 'surrogatepass')
            except UnicodeDecodeError as e:
                raise exception.InvalidParameterValue(
                    reason='The request body is not UTF-8 text: byte %d '
                           '(0x%02x) is not valid UTF-8 (%s).'
                           % (e.start, body[e.start], e.reason))
    return text[1:] if text.startswith('\ufeff') else text


def parse_json(body, max_size=None):
    """The JSON document of a request body (400 when malformed).

    Refused with a 400 naming the problem: a body that is not UTF-8;
    malformed JSON; NaN, Infinity and numbers too large for a float
    (RFC 8259 has none of them, and an answer holding them would not be
    JSON); integers of more than 4,300 digits (Python's limit); text no
    database takes (NUL, lone surrogates, raw or escaped: the detail
    names the field); nesting deeper than ``limits.MAX_DEPTH``.
    """
    if max_size is not None and len(body) > max_size:
        raise exception.RequestTooLarge(limit=max_size)
    if not body:
        raise exception.InvalidParameterValue(
            reason='The request body is empty; a JSON document is required.')
    text = decode_text(body)
    try:
        document = json.loads(text, parse_constant=_no_constant,
                              parse_float=_finite)
    except _NotJson as e:
        raise exception.InvalidParameterValue(
            reason='The JSON document in the request body holds a value '
                   'JSON cannot represent: %s' % e)
    except ValueError as e:
        raise exception.InvalidParameterValue(
            reason='Malformed JSON in the request body: %s' % _why(e))
    except RecursionError:
        raise _too_deep('JSON')
    check_document(document, 'JSON', strings=bool(
        _BAD_ESCAPE.search(text) or _BAD_CHAR.search(text)))
    return document


def parse_yaml(body):
    """The YAML document of a request body, as JSON would have it (400
    when malformed or not representable in JSON).

    Besides what :func:`parse_json` refuses: aliases of maps and lists
    (``&a ... *a``: a document that refers to itself never ends, and a few
    hundred bytes of nested aliases expand to millions of values), and
    YAML's dates, binary values and sets, which JSON has no form for.
    """
    if not body:
        raise exception.InvalidParameterValue(
            reason='The request body is empty; a YAML document is required.')
    text = decode_text(body)
    _check_flow_depth(text)
    # YAML's readers refuse a raw lone surrogate, naming a position only:
    # parsed as a noncharacter instead, it is found, and refused naming
    # its field, by check_document().
    text, stand_in = _stand_in_surrogates(text)
    try:
        # The C parser when there is one. Aliases are shared objects, not
        # copies, until check_document() refuses them.
        document = _load_yaml(text)
    except yaml.YAMLError as e:
        raise exception.InvalidParameterValue(
            reason='Malformed YAML in the request body: %s' % e)
    except RecursionError:
        raise _too_deep('YAML')
    except ValueError as e:
        # e.g. an integer of more than 4,300 digits.
        raise exception.InvalidParameterValue(
            reason='The YAML document in the request body holds a value '
                   'JSON cannot represent: %s' % _why(e))
    check_document(document, 'YAML', aliases=False, stand_in=stand_in)
    # What is checked is what is stored (as JSON): YAML's dates, binary
    # values and sets, or keys of those, have no JSON form.
    try:
        return json.loads(json.dumps(document, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise exception.InvalidParameterValue(
            reason='The YAML document in the request body holds a value '
                   'JSON cannot represent: %s' % e)
    except RecursionError:
        raise _too_deep('YAML')


def _why(error):
    """The message of a parser's ValueError, for a client."""
    text = str(error)
    if 'integer string conversion' in text:
        return 'an integer has more than %d digits' % (
            sys.get_int_max_str_digits())
    return text


def _stand_in_surrogates(text):
    """``text`` with its lone surrogates replaced by a noncharacter it
    does not hold otherwise, and that noncharacter (None when none)."""
    if not _SURROGATE.search(text):
        return text, None
    for code in range(0xFDD0, 0xFDF0):
        stand_in = chr(code)
        if stand_in not in text:
            return _SURROGATE.sub(stand_in, text), stand_in
    raise exception.InvalidParameterValue(
        reason='The request body holds a lone surrogate (text that is '
               'not valid Unicode).')


_YAML_LOADER = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)


def _load_yaml(body):
    # yaml.safe_load, with libyaml's parser when it is there.
    loader = _YAML_LOADER(body)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


_BRACKETS = re.compile(rb'[][{}]')


def _check_flow_depth(body):
    """Refuse YAML whose brackets nest deeper than ``limits.MAX_DEPTH``.

    Before any parsing: libyaml takes quadratic time over nested flow
    collections (``[[[[...``) and its C composer recurses without a limit
    (a crash past some 10,000 levels). Brackets inside quoted text count
    too: a document is refused a little early, never let through.
    (Block nesting needs a line per level and an indentation that grows,
    so a body within the size limit cannot nest blocks deep enough for
    either; check_document() bounds it after parsing.)
    """
    if isinstance(body, str):
        body = body.encode('utf-8', 'surrogatepass')
    depth = 0
    for match in _BRACKETS.finditer(body):
        if match.group() in (b'[', b'{'):
            depth += 1
            if depth > limits.MAX_DEPTH:
                raise limits.exceeded('levels of nesting', limits.MAX_DEPTH)
        elif depth:
            depth -= 1


#: The JSON escape of NUL or of a UTF-16 surrogate (U+D800 to U+DFFF):
#: the only ways a JSON string can hold either.
_BAD_ESCAPE = re.compile(r'\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})')
#: A raw NUL or lone surrogate in the text of a body.
_BAD_CHAR = re.compile('[\x00\ud800-\udfff]')
_SURROGATE = re.compile('[\ud800-\udfff]')


def check_text(text, what, where=None, stand_in=None):
    """400 for text no database column takes: NUL (PostgreSQL refuses it)
    or a lone surrogate (UTF-8 has no form for it); ``where`` names the
    field. ``stand_in`` is the character that replaced lone surrogates
    before parsing (see parse_yaml)."""
    at = ' in %s' % where if where else ''
    if '\x00' in text:
        raise exception.InvalidParameterValue(
            reason='%s holds a NUL character%s.' % (what, at))
    if stand_in is not None and stand_in in text:
        raise exception.InvalidParameterValue(
            reason='%s holds text that is not valid Unicode%s: a lone '
                   'surrogate' % (what, at))
    try:
        text.encode('utf-8')
    except UnicodeEncodeError as e:
        raise exception.InvalidParameterValue(
            reason='%s holds text that is not valid Unicode%s: %s '
                   '(U+%04X)' % (what, at, 'a lone surrogate'
                                 if e.reason == 'surrogates not allowed'
                                 else e.reason, ord(text[e.start])))


def _where(path):
    parts = []
    for part in path[:8]:
        if isinstance(part, int):
            parts.append('[%d]' % part)
        else:
            parts.append(('.' if parts else '') + str(part)[:40])
    return (''.join(parts) or '(body)') + ('...' if len(path) > 8 else '')


def _suspect(text, stand_in):
    # The quick test; check_text() says what is wrong, and where.
    return bool(_BAD_CHAR.search(text)) or (
        stand_in is not None and stand_in in text)


def _trail_path(trail):
    path = []
    while trail is not None:
        trail, part = trail
        path.append(part)
    return path[::-1]


def check_document(document, what, strings=True, aliases=True,
                   stand_in=None):
    """400 for what no request body may hold, in one walk.

    * nesting deeper than ``limits.MAX_DEPTH`` (LimitExceeded);
    * a float that is NaN or infinite (YAML's ``.nan``, ``.inf``);
    * with ``strings``, text no database column takes (:func:`check_text`),
      keys included;
    * unless ``aliases``, a map or list met twice: an alias, which may
      refer to itself (the walk stops at once) or expand without bound.

    Messages name the field (``tags[0]``, ``data.groups[1].name``).
    """
    label = 'The %s document in the request body' % what
    seen = set()
    stack = [(document, 0, None)]
    while stack:
        value, depth, trail = stack.pop()
        if isinstance(value, (dict, list)):
            if depth >= limits.MAX_DEPTH:
                raise limits.exceeded('levels of nesting', limits.MAX_DEPTH,
                                      _where(_trail_path(trail)))
            if not aliases:
                if id(value) in seen:
                    raise exception.InvalidParameterValue(
                        reason='%s uses a YAML alias (*name) of a map or '
                               'list; aliases are not accepted.' % label)
                seen.add(id(value))
            if isinstance(value, dict):
                for key, child in value.items():
                    if (strings and isinstance(key, str)
                            and _suspect(key, stand_in)):
                        check_text(key, label, 'a key of %s' % _where(
                            _trail_path(trail)), stand_in)
                    stack.append((child, depth + 1, (trail, key)))
            else:
                stack.extend((child, depth + 1, (trail, i))
                             for i, child in enumerate(value))
        elif isinstance(value, str):
            if strings and _suspect(value, stand_in):
                check_text(value, label, _where(_trail_path(trail)),
                           stand_in)
        elif isinstance(value, float):
            if math.isnan(value) or math.isinf(value):
                raise exception.InvalidParameterValue(
                    reason='%s holds %r, which is not a JSON number.'
                           % (label, value))


def _too_deep(what):
    # The parsers recurse once per level: past Python's recursion limit a
    # body is refused, not a 500.
    return exception.InvalidParameterValue(
        reason='The %s document in the request body is nested too deeply.'
               % what)
