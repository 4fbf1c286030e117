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
# Build a real kube-apiserver, and fetch etcd, for the functional tests of
# the kubernetes label driver, from Debian's own packages:
#
#   * kube-apiserver from the source package `kubernetes` (1.20, vendored;
#     Debian builds only kubectl from it), compiled with Debian's
#     golang-1.19 and GOPROXY=off (nothing is fetched but Debian packages);
#   * etcd from the binary package `etcd-server`.
#
# Everything lands in a cache outside the clone (default
# ~/.cache/baremetal-orch/kube, or $BAREMETAL_ORCH_KUBE_CACHE):
#
#   <cache>/bin/kube-apiserver, <cache>/bin/etcd   the binaries
#   <cache>/build-info.json                        versions, build seconds
#
# A complete cache is reused at once (the warm path takes well under a
# second). Concurrent callers wait for one build (flock on <cache>/.lock).
# The system's apt configuration is left alone: the deb-src entries, package
# lists and downloads live in <cache>/apt (apt-get runs with private
# Dir:: options), and the packages are unpacked with dpkg -x, not installed.
# Needs apt-get, and dpkg-dev, make and flock, which it installs when they
# are missing (as root); and write access to the cache (apt's sandbox user
# is not used for the private directories).
#
# Usage: tools/build-kube-apiserver.sh     prints the cache directory on
#                                          success; exits non-zero, saying
#                                          why, on failure.

set -euo pipefail

CACHE=${BAREMETAL_ORCH_KUBE_CACHE:-$HOME/.cache/baremetal-orch/kube}
SOURCE_PACKAGE=kubernetes
GO_PACKAGES="golang-1.19-go golang-1.19-src"
ETCD_PACKAGE=etcd-server
GO_VERSION=1.19

say() {
    echo "build-kube-apiserver: $*" >&2
}

die() {
    say "ERROR: $*"
    exit 1
}

complete() {
    [ -x "$CACHE/bin/kube-apiserver" ] && [ -x "$CACHE/bin/etcd" ] &&
        [ -f "$CACHE/build-info.json" ]
}

mkdir -p "$CACHE"
if complete; then
    echo "$CACHE"
    exit 0
fi

command -v apt-get >/dev/null 2>&1 ||
    die "apt-get is missing: kube-apiserver is built from Debian's packages"
missing=""
command -v dpkg-source >/dev/null 2>&1 || missing="$missing dpkg-dev"
command -v make >/dev/null 2>&1 || missing="$missing make"
command -v flock >/dev/null 2>&1 || missing="$missing util-linux"
if [ -n "$missing" ]; then
    [ "$(id -u)" = 0 ] || die "missing Debian packages:$missing (install them as root)"
    say "installing$missing"
    # shellcheck disable=SC2086
    { apt-get -q update && DEBIAN_FRONTEND=noninteractive \
          apt-get -q install -y --no-install-recommends $missing; } \
        >&2 || die "could not install$missing"
fi

exec 9>"$CACHE/.lock"
say "waiting for the build lock $CACHE/.lock"
flock 9
if complete; then  # another process built it while we waited
    echo "$CACHE"
    exit 0
fi

started=$(date +%s)
WORK="$CACHE/work"
APT="$CACHE/apt"
rm -rf "$WORK" "$APT"
mkdir -p "$WORK/root" "$APT/sources.list.d" "$APT/lists/partial" \
         "$APT/archives/partial"
: > "$APT/sources.list"

# deb and deb-src entries of the system's own Debian mirrors.
found=0
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    sed -E 's/^Types:.*$/Types: deb deb-src/' "$f" \
        > "$APT/sources.list.d/$(basename "$f")"
    found=1
done
if [ -f /etc/apt/sources.list ]; then
    grep -E '^deb ' /etc/apt/sources.list | while read -r line; do
        echo "$line"
        echo "deb-src ${line#deb }"
    done > "$APT/sources.list"
    [ -s "$APT/sources.list" ] && found=1
fi
[ "$found" = 1 ] || die "no Debian apt sources found in /etc/apt"

APT_OPTS=(-o "Dir::Etc::SourceList=$APT/sources.list"
          -o "Dir::Etc::SourceParts=$APT/sources.list.d"
          -o "Dir::State::Lists=$APT/lists"
          -o "Dir::Cache=$APT/cache"
          -o "Dir::Cache::Archives=$APT/archives"
          -o "APT::Sandbox::User=root"
          -o "Acquire::Retries=3"
          -q)

say "apt-get update (private lists in $APT)"
apt-get "${APT_OPTS[@]}" update >"$WORK/apt-update.log" 2>&1 ||
    die "apt-get update failed: $(tail -5 "$WORK/apt-update.log")"

cd "$WORK"
say "downloading the source package $SOURCE_PACKAGE"
apt-get "${APT_OPTS[@]}" source --download-only "$SOURCE_PACKAGE" \
    >"$WORK/apt-source.log" 2>&1 ||
    die "apt-get source $SOURCE_PACKAGE failed: $(tail -5 "$WORK/apt-source.log")"
dsc=$(ls "$WORK"/${SOURCE_PACKAGE}_*.dsc | head -1)
dpkg-source --no-check -x "$dsc" "$WORK/src" >"$WORK/dpkg-source.log" 2>&1 ||
    die "dpkg-source -x $dsc failed: $(tail -5 "$WORK/dpkg-source.log")"

say "downloading $GO_PACKAGES $ETCD_PACKAGE"
# shellcheck disable=SC2086
apt-get "${APT_OPTS[@]}" download $GO_PACKAGES $ETCD_PACKAGE \
    >"$WORK/apt-download.log" 2>&1 ||
    die "apt-get download failed: $(tail -5 "$WORK/apt-download.log")"
for deb in "$WORK"/*.deb; do
    dpkg -x "$deb" "$WORK/root"
done
GOROOT="$WORK/root/usr/lib/go-$GO_VERSION"
[ -x "$GOROOT/bin/go" ] || die "no go binary in $GOROOT"
etcd_bin="$WORK/root/usr/bin/etcd"
[ -x "$etcd_bin" ] || die "no etcd binary in $ETCD_PACKAGE"

say "make WHAT=cmd/kube-apiserver (5 to 15 minutes on 2 cores)"
mkdir -p "$CACHE/gocache"
(
    cd "$WORK/src"
    export GOROOT GOPROXY=off GOFLAGS=-mod=vendor CGO_ENABLED=0 \
           GOCACHE="$CACHE/gocache" GOPATH="$WORK/gopath" \
           PATH="$GOROOT/bin:$PATH"
    make WHAT=cmd/kube-apiserver
) >"$WORK/make.log" 2>&1 ||
    die "make WHAT=cmd/kube-apiserver failed (log: $WORK/make.log): $(tail -15 "$WORK/make.log")"
built=$(find "$WORK/src/_output" -type f -name kube-apiserver -perm -u+x | head -1)
[ -n "$built" ] || die "the build produced no kube-apiserver binary"

mkdir -p "$CACHE/bin"
cp "$built" "$CACHE/bin/kube-apiserver.tmp"
cp "$etcd_bin" "$CACHE/bin/etcd.tmp"
mv "$CACHE/bin/kube-apiserver.tmp" "$CACHE/bin/kube-apiserver"
mv "$CACHE/bin/etcd.tmp" "$CACHE/bin/etcd"
kube_version=$(basename "$dsc" .dsc | sed "s/^${SOURCE_PACKAGE}_//")
etcd_version=$(dpkg-deb -f "$WORK"/${ETCD_PACKAGE}_*.deb Version)
seconds=$(( $(date +%s) - started ))
cat > "$CACHE/build-info.json.tmp" <<EOF
{"kubernetes_source_version": "$kube_version",
 "etcd_version": "$etcd_version",
 "go_version": "$GO_VERSION",
 "build_seconds": $seconds,
 "built_at": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"}
EOF
mv "$CACHE/build-info.json.tmp" "$CACHE/build-info.json"
# The source tree, the toolchain and the Go build cache are not needed
# any more (about 2 GiB).
rm -rf "$WORK" "$APT" "$CACHE/gocache"
say "built kube-apiserver $kube_version with go $GO_VERSION in ${seconds}s"
echo "$CACHE"
