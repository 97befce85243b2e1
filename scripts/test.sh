#!/usr/bin/env bash
# Installs every dependency, builds fabscope and runs all tests: the unit and integration tests
# on a normal build, the Debian package (scripts/package-test.sh), the soft-RoCE VM scenario
# (tests/vm/run.sh --quick: a real RDMA stack under qemu), then the unit tests again under
# AddressSanitizer + UBSan.
# The CLI tests and every read-only command also run once as an unprivileged user
# (scripts/test-unprivileged.sh), and each libFuzzer target runs for 15 s (scripts/fuzz.sh).
# Usage: scripts/test.sh [--no-asan] [--no-vm] [--no-unprivileged] [--no-fuzz]
set -euo pipefail
cd "$(dirname "$0")/.."
asan=1 vm=1 unpriv=1 fuzz=1
for a in "$@"; do
  case "$a" in
    --no-asan) asan=0 ;;
    --no-vm) vm=0 ;;
    --no-unprivileged) unpriv=0 ;;
    --no-fuzz) fuzz=0 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown option '$a' (--no-asan, --no-vm, --no-unprivileged, --no-fuzz)" >&2; exit 3 ;;
  esac
done
scripts/install-deps.sh
jobs=$(nproc)
cmake --preset default -DFABSCOPE_BUILD_TESTS=ON  # on, even where doctor.sh configured it off
cmake --build --preset default -j "$jobs"
ctest --preset default -j "$jobs"
scripts/package-test.sh build  # the .deb: lintian, apt-get install, doctor, man, purge
if [ "$unpriv" = 1 ]; then
  scripts/test-unprivileged.sh build
fi
if [ "$vm" = 1 ]; then
  tests/vm/run.sh --quick --fabscope build/src/cli/fabscope
  tests/vm/cluster.sh --fabscope build/src/cli/fabscope  # several VMs: fabscope cluster
  tests/vm/mesh.sh --fabscope build/src/cli/fabscope     # several VMs: the exporter's probe mesh
fi
if [ "$asan" = 1 ]; then
  cmake --preset asan -DFABSCOPE_BUILD_TESTS=ON
  cmake --build --preset asan -j "$jobs"
  ctest --preset asan -j "$jobs" -LE integration
fi
if [ "$fuzz" = 1 ]; then
  scripts/fuzz.sh --time 15 --jobs "$jobs"
fi
