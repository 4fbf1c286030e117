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
"""A threaded HTTP/1.1 WSGI server (cheroot): no eventlet."""

import signal
import threading

from cheroot import wsgi
from oslo_log import log

LOG = log.getLogger(__name__)


class Server:
    def __init__(self, application, host, port, threads=4):
        self._server = wsgi.Server((host, port), application,
                                   numthreads=threads,
                                   server_name='baremetal-orch')
        self._server.prepare()
        self.port = self._server.bind_addr[1]
        self._thread = None

    def serve_forever(self, install_signals=True):
        if install_signals:
            # cheroot's stop() waits for its serve loop: never call it from
            # a signal handler running inside that loop.
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: threading.Thread(
                    target=self.stop, daemon=True).start())
        try:
            self._server.serve()
        finally:
            self._server.stop()

    def start(self):
        """Serve in a background thread (tests, the all-in-one)."""
        self._thread = threading.Thread(target=self._server.serve,
                                        daemon=True, name='wsgi')
        self._thread.start()

    def stop(self):
        self._server.stop()
