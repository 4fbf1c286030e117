#!/usr/bin/env bash
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
# The newcomer's path, as CI proves it on every run:
#
#   1. an sdist builds from the checkout, and a wheel builds from that sdist
#      (pbr's PEP 517 backend, in an isolated build environment);
#   2. in a fresh clone, with an empty HOME, the first command of README.rst
#      runs verbatim (it makes a venv, pip-installs the project -- a built
#      wheel, not an editable install -- and runs the all-in-one service on
#      the example site) and its report ends "complete (success)".
#
# Usage: tools/ci/newcomer-smoke.sh [PYTHON]   (PYTHON has the "build"
# package; default: python3). Exits non-zero, saying why, on any failure.

set -uo pipefail

PYTHON=${1:-python3}
# A relative path means the caller's directory: this script moves.
case "$PYTHON" in
    /*) ;;
    */*) PYTHON="$PWD/$PYTHON" ;;
esac
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say() { echo "newcomer-smoke: $*"; }
fail() { say "FAILED: $*"; exit 1; }

git clone -q "$repo" "$work/clone" || fail "git clone"
cd "$work/clone"

say "building an sdist, then a wheel from it"
"$PYTHON" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 || {
    tail -40 "$work/build.log"; fail "python -m build"; }
ls "$work/dist"/*.tar.gz "$work/dist"/*.whl >/dev/null 2>&1 ||
    fail "no sdist or wheel in $work/dist"
"$PYTHON" - "$work/dist" <<'PY' || fail "the wheel lacks the example site or the samples"
import sys, glob, zipfile
names = zipfile.ZipFile(glob.glob(sys.argv[1] + '/*.whl')[0]).namelist()
for wanted in ('etc/baremetal-orch/examples/site.yaml',
               'etc/baremetal-orch/examples/deployment-strategy.yaml',
               'etc/baremetal-orch/examples/failures/ntp-prepare-fails.yaml',
               'etc/baremetal-orch/baremetal-orch.conf.sample',
               'etc/baremetal-orch/policy.yaml.sample'):
    if not any(n.endswith('.data/data/' + wanted) for n in names):
        sys.exit('missing from the wheel: ' + wanted)
PY

# The first literal block of README.rst is the command, verbatim.
command=$("$PYTHON" - README.rst <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
start = next(i for i, line in enumerate(lines) if line.rstrip().endswith('::'))
block = []
for line in lines[start + 1:]:
    if line.strip() and not line.startswith('    '):
        break
    if line.strip():
        block.append(line.strip())
print(' '.join(block))
PY
) || fail "no command found in README.rst"
say "running README's first command: $command"
mkdir -p "$work/home"
HOME="$work/home" timeout 1200 bash -c "$command" >"$work/run.log" 2>&1
rc=$?
tail -12 "$work/run.log"
[ "$rc" -eq 0 ] || fail "the command exited with status $rc"
grep -Eq '^Action [0-9a-f-]+: complete \(success\)$' "$work/run.log" ||
    fail "the report does not end 'complete (success)'"
say "OK"
