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

from oslo_config import cfg

opts = [
    cfg.HostAddressOpt('host_ip', default='127.0.0.1',
                       help='Address the API server listens on.'),
    cfg.PortOpt('port', default=6388, help='Port the API server listens on.'),
    cfg.StrOpt('auth_strategy', default='keystone',
               choices=[('keystone', 'keystonemiddleware auth_token'),
                        ('noauth', 'no authentication (embedded default, '
                                   'tests)')],
               help='Authentication strategy of the API.'),
    cfg.IntOpt('max_limit', default=1000, min=1,
               help='Largest number of items a list call returns at once.'),
    cfg.IntOpt('max_request_body_size', default=1048576, min=1024,
               help='Largest request body accepted, in bytes.'),
    cfg.StrOpt('public_endpoint',
               help='Public URL of the API, used in links and signal URLs. '
                    'Defaults to the URL the request came to.'),
    cfg.FloatOpt('notification_wait', default=2.0, min=0,
                 help='Seconds a request waits, before the answer, for '
                      'the notifications it emitted to reach the message '
                      'bus, so that they come before those of whatever the '
                      'client does next. When the bus is away the answer '
                      'goes after this long and the notifications follow '
                      'when it is back. 0 answers at once.'),
    cfg.IntOpt('workers', default=4, min=1,
               deprecated_name='api_workers', deprecated_group='api',
               help='Workers of the API server of baremetal-orch-api and '
                    'of the all-in-one: the threads running requests in '
                    'its one process (the server is threaded, not forked; '
                    'run more processes behind a load balancer, or under '
                    'uwsgi, to use more cores).'),
    cfg.IntOpt('max_queued_requests', default=128, min=1,
               help='Requests that may wait for a free thread. Past '
                    'workers running and this many waiting, a request '
                    'is answered 503 (with Retry-After) at once, never with '
                    'a reset connection.'),
    cfg.IntOpt('backlog', default=4096, min=1,
               help='The listen(2) backlog: connections the kernel holds '
                    'before the server accepts them (the kernel caps it at '
                    'net.core.somaxconn).'),
    cfg.IntOpt('max_keepalive_connections', default=256, min=1,
               help='Connections kept open between requests. Past it, an '
                    'answer carries "Connection: close" and the client '
                    'opens a new connection for its next request. Past it '
                    'plus max_queued_requests and workers open connections, '
                    'the server accepts no new one until one closes (they '
                    'wait in the backlog). Keep it below the open files '
                    'limit of the process.'),
    cfg.IntOpt('max_request_header_size', default=65536, min=1024,
               help='Largest request line plus headers accepted, in bytes: '
                    'past it the answer is 414 (request line) or 413 '
                    '(headers).'),
    cfg.FloatOpt('header_timeout', default=10.0, min=1,
                 help='Seconds a client has to send a whole request head '
                      '(request line and headers), counted from when the '
                      'connection opened or its previous answer was sent; '
                      'the clock does not restart with each byte. Past '
                      'it the connection is closed (408 when part of a '
                      'head had arrived). A request body that stops '
                      'arriving for this long is answered 400 and the '
                      'connection closed. Idle and slow connections hold '
                      'no worker thread meanwhile.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='api')
