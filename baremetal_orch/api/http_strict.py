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
"""Strict HTTP/1.1 request framing (RFC 9112) on top of waitress's parser.

waitress already refuses a malformed request line, whitespace before a
colon, a Content-Length or chunk size that is not plain digits, NUL and
bare CR in a field value, and reads chunked trailers and drops them. What
it lets through, and what a server that fronts anything must refuse (a
400, then the connection is closed):

* both ``Content-Length`` and ``Transfer-Encoding`` (waitress reads the
  chunks and keeps the connection: what follows the last chunk runs as a
  second request), or either of them repeated;
* ``Transfer-Encoding`` on anything but HTTP/1.1, or other than
  ``chunked``;
* a control character (CR, LF, NUL, TAB, DEL...) in the request line, or
  inside a field value (around it, spaces and tabs are allowed);
* a header line that starts with whitespace (obsolete line folding, which
  waitress joins to the line before);
* on HTTP/1.1, a missing, repeated or malformed ``Host``;
* a chunk size past the body limit (waitress would wait for that many
  bytes before its 413);
* a target in absolute form (RFC 9112 3.2.2) whose scheme is not http or
  https, or whose authority is not a host (empty, with user information).

A target in absolute form is accepted, and its authority replaces the
``Host`` header, as RFC 9112 3.2.2 asks of an origin server (waitress
keeps the header).

The parser and chunked receiver extended here are waitress internals,
pinned to the constrained waitress release by
``tests/unit/test_private_overrides.py``; retired when waitress's own
parser refuses each case above.
"""

import collections
import re

from waitress import parser as w_parser
from waitress import receiver as w_receiver
from waitress import utilities as w_utils

#: Control characters: none may appear in a request line or a value.
_CTL = re.compile(rb'[\x00-\x1f\x7f]')
#: RFC 9112 Host: uri-host [":" port], uri-host an IP literal or reg-name.
_HOST = re.compile(rb"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)"
                   rb"(?::[0-9]*)?")
_OWS = b' \t'


def check_head(head):
    """Refuse a request head RFC 9112 says a server must not trust.

    :param head: the request line and header lines, CRLF separated.
    :raises waitress.parser.ParsingError: naming the rule broken.
    """
    first, _sep, rest = head.partition(b'\r\n')
    if _CTL.search(first):
        raise w_parser.ParsingError(
            'The request line holds a control character (CR, LF, NUL, '
            'TAB or another)')
    counts = collections.Counter()
    values = {}
    for line in rest.split(b'\r\n'):
        if not line:
            continue
        if line[:1] in (b' ', b'\t'):
            raise w_parser.ParsingError(
                'A header line starts with whitespace (obsolete line '
                'folding is not accepted)')
        name, colon, value = line.partition(b':')
        if not colon or not name:
            raise w_parser.ParsingError('A header line has no name')
        shown = name.decode('latin-1')
        if name.rstrip(_OWS) != name:
            raise w_parser.ParsingError(
                'Header %r has whitespace before its colon' % shown)
        value = value.strip(_OWS)
        if _CTL.search(value):
            raise w_parser.ParsingError(
                'The value of header %r holds a control character (CR, '
                'LF, NUL, TAB or another)' % shown)
        key = name.lower()
        counts[key] += 1
        values[key] = value
    for key in (b'content-length', b'transfer-encoding', b'host'):
        if counts[key] > 1:
            raise w_parser.ParsingError(
                'Header %r is repeated' % key.decode('latin-1'))
    version = first.rsplit(b' ', 1)[-1]
    if b'transfer-encoding' in values:
        if b'content-length' in values:
            raise w_parser.ParsingError(
                'The request has both Content-Length and Transfer-Encoding')
        if version != b'HTTP/1.1':
            raise w_parser.ParsingError(
                'Transfer-Encoding is for HTTP/1.1 requests only')
        if values[b'transfer-encoding'].lower() != b'chunked':
            raise w_parser.ParsingError(
                'The only transfer coding accepted is "chunked"')
    if version == b'HTTP/1.1':
        if b'host' not in values:
            raise w_parser.ParsingError('An HTTP/1.1 request needs a Host')
        if not _HOST.fullmatch(values[b'host']):
            raise w_parser.ParsingError('The Host header is malformed')


class ChunkedReceiver(w_receiver.ChunkedReceiver):
    """waitress's chunked body, refused as soon as one chunk size is past
    ``limit`` (a body past it in several chunks is waitress's 413)."""

    limit = 0
    _remainder = 0

    @property
    def chunk_remainder(self):
        return self._remainder

    @chunk_remainder.setter
    def chunk_remainder(self, value):
        # waitress sets it to a new chunk's size, then counts it down.
        if value > self._remainder and value > self.limit:
            self.error = w_utils.BadRequest(
                'A chunk size is larger than the request body limit (%d '
                'bytes)' % self.limit)
            self.all_chunks_received = True
            value = 0
        self._remainder = value


class URITooLong(w_utils.BadRequest):
    code = 414
    reason = 'URI Too Long'


class Parser(w_parser.HTTPRequestParser):
    """waitress's request parser with :func:`check_head` before it.

    ``adj.body_limit`` is the largest body accepted, in bytes. A head past
    ``adj.max_request_header_size`` is a 414 while its request line has
    not ended, a 413 after (waitress's 431 for both).
    """

    line_ended = False
    head_seen = 0

    def received(self, data):
        if not self.line_ended and not self.headers_finished:
            # The request line may come in several pieces: it has ended
            # once a piece holds its LF within the limit.
            end = data.find(b'\n')
            self.line_ended = 0 <= end and self.head_seen + end < \
                self.adj.max_request_header_size
            self.head_seen += len(data)
        consumed = super().received(data)
        if isinstance(self.error, w_utils.RequestHeaderFieldsTooLarge):
            # waitress parsed a stand-in "GET / HTTP/1.0" line: the
            # answer is HTTP/1.1 whatever the request claimed.
            self.version = '1.1'
            limit = self.adj.max_request_header_size
            if self.line_ended:
                self.error = w_utils.RequestEntityTooLarge(
                    'The request headers are larger than %d bytes' % limit)
            else:
                self.error = URITooLong(
                    'The request line is longer than %d bytes' % limit)
        return consumed

    def parse_header(self, header_plus):
        try:
            check_head(header_plus)
        except w_parser.ParsingError:
            # The answer is HTTP/1.1 whatever the request claimed.
            self.version = '1.1'
            raise
        super().parse_header(header_plus)
        if self.proxy_scheme or self.proxy_netloc:
            self._absolute_form()
        if self.chunked:
            receiver = ChunkedReceiver(self.body_rcv.getbuf())
            receiver.limit = self.adj.body_limit
            self.body_rcv = receiver

    def _absolute_form(self):
        """Take the host of an absolute-form target (RFC 9112 3.2.2)."""
        netloc = self.proxy_netloc.encode('latin-1')
        if self.proxy_scheme.lower() not in ('http', 'https'):
            detail = 'A target in absolute form must be an http or https URI'
        elif not netloc or netloc[:1] == b':' or not _HOST.fullmatch(netloc):
            detail = ('The authority of a target in absolute form is not a '
                      'host')
        else:
            self.headers['HOST'] = self.proxy_netloc
            return
        # The answer is HTTP/1.1 whatever the request claimed.
        self.version = '1.1'
        raise w_parser.ParsingError(detail)
