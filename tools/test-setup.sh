#!/bin/bash -xe
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
#
# Run by OpenStack CI's tox jobs before tox (zuul-jobs' test-setup role),
# after bindep installed the servers of bindep.txt: gives PostgreSQL,
# MariaDB and RabbitMQ the loopback access the functional tests expect
# (tools/ensure-services.sh), and lets the job's user run rabbitmqctl,
# which Debian and Ubuntu allow only to root and rabbitmq, through sudo
# (the functional job keeps sudo and sets BAREMETAL_ORCH_RABBITMQCTL).

cd "$(dirname "$0")/.."

sudo -H bash tools/ensure-services.sh postgresql mariadb rabbitmq

wrapper=/usr/local/bin/baremetal-orch-rabbitmqctl
printf '#!/bin/sh\nexec sudo -n rabbitmqctl "$@"\n' | sudo tee $wrapper
sudo chmod 755 $wrapper
