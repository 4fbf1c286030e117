#!/bin/bash
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
# Make sure the services the functional tests talk to answer on 127.0.0.1:
#
#   PostgreSQL 5432 (user postgres, trust), MariaDB 3306 (root, no password),
#   RabbitMQ 5672 (guest/guest) and Redis 6379.
#
# Idempotent and silent when everything already answers. A service that does
# not answer is started and waited for (ENSURE_SERVICES_TIMEOUT seconds, 60 by
# default); a service whose server is not installed is first installed from
# Debian's packages (and, for the databases, given the loopback access the
# tests expect). Exits non-zero, naming the service, when one cannot be
# brought up. Needs root for starting and installing; checking needs nothing.
#
# Usage: tools/ensure-services.sh [postgresql] [mariadb] [rabbitmq] [redis]
#                                 [zookeeper]
#        (no argument: the first four; ZooKeeper 127.0.0.1:2181, Debian's
#        zookeeperd, for the jobboard tests, only when named)

set -eu

TIMEOUT=${ENSURE_SERVICES_TIMEOUT:-60}
APT_UPDATED=0
FAILED=""

say() {
    echo "ensure-services: $*"
}

have() {
    command -v "$1" >/dev/null 2>&1
}

# True when something accepts a TCP connection on 127.0.0.1:$1.
port_open() {
    timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# --- health checks: each answers quickly and prints nothing ---------------

check_postgresql() {
    if have pg_isready; then
        pg_isready -q -h 127.0.0.1 -p 5432 -t 3
    else
        port_open 5432
    fi
}

mariadb_admin() {
    local admin
    for admin in mariadb-admin mysqladmin; do
        if have "$admin"; then
            "$admin" "$@"
            return
        fi
    done
    return 127
}

check_mariadb() {
    if have mariadb-admin || have mysqladmin; then
        mariadb_admin --protocol=tcp -h 127.0.0.1 -P 3306 -u root \
            --connect-timeout=3 ping >/dev/null 2>&1
    else
        port_open 3306
    fi
}

check_rabbitmq() {
    # RabbitMQ opens its AMQP listener at the end of its boot, so an open
    # port means it is ready for clients.
    port_open 5672
}

check_redis() {
    if have redis-cli; then
        [ "$(timeout 3 redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = \
            "PONG" ]
    else
        port_open 6379
    fi
}

check_zookeeper() {
    # "srvr" is in ZooKeeper's default four-letter-word whitelist.
    [ -n "$(timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/2181;
        echo srvr >&3; cat <&3' 2>/dev/null | grep -i '^Zookeeper version')" ]
}

# --- installation (only when the server is missing) -----------------------

apt_install() {
    if [ "$APT_UPDATED" = 0 ]; then
        say "running apt-get update"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        APT_UPDATED=1
    fi
    say "installing Debian package(s): $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

installed_postgresql() {
    have pg_ctlcluster && [ -n "$(ls /etc/postgresql 2>/dev/null)" ]
}

installed_mariadb() {
    [ -x /usr/sbin/mariadbd ]
}

installed_rabbitmq() {
    have rabbitmq-server
}

installed_redis() {
    have redis-server
}

installed_zookeeper() {
    [ -x /etc/init.d/zookeeper ] && [ -r /usr/share/java/zookeeper.jar ]
}

install_zookeeper() {
    apt_install zookeeperd
}

install_postgresql() {
    apt_install postgresql
}

install_mariadb() {
    apt_install mariadb-server
}

install_rabbitmq() {
    apt_install rabbitmq-server
}

install_redis() {
    apt_install redis-server
}

# After a fresh install: the access the tests expect (see the header).
configure_postgresql() {
    local hba
    for hba in /etc/postgresql/*/main/pg_hba.conf; do
        if ! grep -Eq '^host[[:space:]]+all[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' "$hba"; then
            say "allowing trust access from 127.0.0.1 in $hba"
            sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
            sed -i '1i local all all trust' "$hba"
        fi
    done
}

configure_mariadb() {
    say "allowing root@127.0.0.1 without a password"
    mariadb -u root -e "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
        GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
        FLUSH PRIVILEGES;"
}

configure_rabbitmq() {
    :
}

configure_redis() {
    :
}

configure_zookeeper() {
    :
}

# --- starting ---------------------------------------------------------------

start_postgresql() {
    pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start
}

start_mariadb() {
    # /run is a tmpfs on a rebooted machine: mariadbd needs its socket dir.
    mkdir -p /run/mysqld
    chown mysql:mysql /run/mysqld 2>/dev/null || true
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
}

start_rabbitmq() {
    rabbitmq-server -detached
}

start_redis() {
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 \
        --save "" --appendonly no --dir /var/lib/redis \
        --logfile /var/log/redis/ci.log
}

start_zookeeper() {
    # taskflow's ZooKeeper jobboard asks the server's version with "envi",
    # which ZooKeeper 3.5+ refuses unless whitelisted; the data directory
    # of Debian's zoo.cfg must belong to the zookeeper user.
    local cfg=/etc/zookeeper/conf/zoo.cfg datadir
    if ! grep -q '^4lw.commands.whitelist=' "$cfg"; then
        echo '4lw.commands.whitelist=envi,ruok,srvr,stat' >>"$cfg"
    fi
    datadir=$(sed -n 's/^dataDir=//p' "$cfg")
    mkdir -p "${datadir:-/var/lib/zookeeper}"
    chown -R zookeeper:zookeeper "${datadir:-/var/lib/zookeeper}"
    /etc/init.d/zookeeper start
}

wait_for() {
    local service=$1 deadline=$((SECONDS + TIMEOUT))
    while [ "$SECONDS" -lt "$deadline" ]; do
        if "check_$service"; then
            return 0
        fi
        sleep 1
    done
    "check_$service"
}

ensure() {
    local service=$1 fresh=0
    if "check_$service"; then
        return 0
    fi
    if ! "installed_$service"; then
        "install_$service" || {
            say "ERROR: could not install $service"
            FAILED="$FAILED $service"
            return 0
        }
        fresh=1
    fi
    say "$service does not answer: starting it"
    if ! "start_$service"; then
        say "ERROR: the start command of $service failed"
    fi
    if wait_for "$service"; then
        if [ "$fresh" = 1 ]; then
            "configure_$service"
            # Access rules are read at start-up or reload.
            if [ "$service" = postgresql ]; then
                pg_ctlcluster --skip-systemctl-redirect \
                    $(ls /etc/postgresql) main reload
            fi
        fi
        say "$service is up"
    else
        say "ERROR: $service did not answer within ${TIMEOUT}s"
        FAILED="$FAILED $service"
    fi
}

main() {
    local services="$*" service
    if [ -z "$services" ]; then
        services="postgresql mariadb rabbitmq redis"
    fi
    for service in $services; do
        case "$service" in
            postgresql|mariadb|rabbitmq|redis|zookeeper) ensure "$service" ;;
            *) say "ERROR: unknown service '$service'"; exit 2 ;;
        esac
    done
    if [ -n "$FAILED" ]; then
        say "ERROR: not answering:$FAILED (see their logs under /var/log)"
        exit 1
    fi
}

main "$@"
