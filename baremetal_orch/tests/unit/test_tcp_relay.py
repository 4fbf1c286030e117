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
"""The TCP relay the Ironic outage tests put in front of Ironic's API: an
outage it plays is an outage for every connection, also one accepted as
the outage began."""

import socket
import socketserver
import threading
from unittest import mock

from baremetal_orch.tests import base
from baremetal_orch_testing.fixtures import tcp_relay


class _Echo(socketserver.BaseRequestHandler):
    def handle(self):
        try:
            while True:
                data = self.request.recv(1024)
                if not data:
                    return
                self.request.sendall(data)
        except OSError:
            return  # reset by the relay


class TestTcpRelay(base.TestCase):

    def setUp(self):
        super().setUp()
        server = socketserver.ThreadingTCPServer(('127.0.0.1', 0), _Echo)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.relay = self.useFixture(
            tcp_relay.TcpRelay(server.server_address[1]))

    def connect(self):
        # Not socket.create_connection: the relay's, which a test patches.
        conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.addCleanup(conn.close)
        conn.settimeout(5)
        conn.connect(('127.0.0.1', self.relay.port))
        return conn

    def echo(self, conn, data=b'ping'):
        """What comes back for ``data``: b'' or an OSError once the
        connection is reset."""
        try:
            conn.sendall(data)
            return conn.recv(1024)
        except OSError as e:
            return e

    def test_relays_then_refuses(self):
        conn = self.connect()
        self.assertEqual(b'ping', self.echo(conn))
        self.relay.refuse()
        self.assertNotEqual(b'ping', self.echo(conn))
        self.assertRaises(ConnectionRefusedError, self.connect)
        self.relay.resume()
        self.assertEqual(b'ping', self.echo(self.connect()))
        self.assertEqual(2, self.relay.accepted)

    def test_a_connection_accepted_as_the_outage_begins_is_reset(self):
        # The refusal lands after the relay accepted the client, while it
        # connects to what it fronts: the client must not be relayed.
        real = socket.create_connection

        def refused_meanwhile(*args, **kwargs):
            self.relay.refuse()
            return real(*args, **kwargs)

        with mock.patch.object(tcp_relay.socket, 'create_connection',
                               refused_meanwhile):
            try:
                conn = self.connect()
            except ConnectionResetError as e:
                answer = e  # reset before connect() returned
            else:
                answer = self.echo(conn)
            self.assertNotEqual(b'ping', answer)
        self.assertEqual(0, self.relay.accepted)
