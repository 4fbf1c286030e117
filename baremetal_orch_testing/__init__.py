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
"""What the tests and the benchmarks share: the real services as fixtures
(Ironic, Keystone, RabbitMQ, the databases, Redis and ZooKeeper,
kube-apiserver, the stock Heat agents, a TCP relay), the service processes
the functional tests and benchmarks start (:mod:`.services`), the raw HTTP
client (:mod:`.httpraw`) and the one copy of each test helper
(:mod:`.helpers`).

It lives outside ``baremetal_orch`` (not shipped) and outside its test
tree, so that ``tools/`` uses it without importing the tests.
"""
