#!/usr/bin/env bash
# Installs every dependency, builds fabscope twice and runs all tests:
#  - build/ (preset default: gcc, optimised, the GPU benchmark where CUDA is found): the shipped
#    programs, the integration tests (ctest label integration), the Debian package
#    (scripts/package-test.sh) and the soft-RoCE VM scenarios (tests/vm: a real RDMA stack under
#    qemu);
#  - build-asan/ (preset asan: clang, AddressSanitizer + UBSan + libFuzzer's coverage): the unit
#    tests, the CLI tests and every read-only command once more as an unprivileged user
#    (scripts/test-unprivileged.sh), and each libFuzzer target for 15 s (scripts/fuzz.sh).
# The unit tests are compiled once, in the sanitizer build; --no-asan builds and runs them in
# build/ instead (and fuzzes from the fuzz preset's own build unless --no-fuzz).
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
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown option '$a' (--no-asan, --no-vm, --no-unprivileged, --no-fuzz)" >&2; exit 3 ;;
  esac
done
scripts/install-deps.sh
jobs=$(nproc)
stage_start=$SECONDS
stage() {  # the time each part took, for anyone keeping the whole run short
  echo "test.sh: $1 took $((SECONDS - stage_start)) s" >&2
  stage_start=$SECONDS
}
unit=OFF
[ "$asan" = 1 ] || unit=ON
# Tests on, even where doctor.sh configured them off; unit tests only without the asan build.
# Both builds are unity builds (8 sources per compiler run: each compiles the JSON library's
# templates once instead of eight times), which halves a fresh build; a hand-made build without
# -DCMAKE_UNITY_BUILD=ON recompiles only the file that changed.
cmake --preset default -DFABSCOPE_BUILD_TESTS=ON -DFABSCOPE_UNIT_TESTS=$unit -DCMAKE_UNITY_BUILD=ON
cmake --build --preset default -j "$jobs"
stage "the default build"
ctest --preset default -j "$jobs"
stage "ctest (default build)"
scripts/package-test.sh build  # the .deb: lintian, apt-get install, doctor, man, purge
stage "the package test"
if [ "$vm" = 1 ]; then
  tests/vm/run.sh --quick --fabscope build/src/cli/fabscope
  tests/vm/cluster.sh --fabscope build/src/cli/fabscope  # several VMs: fabscope cluster
  tests/vm/mesh.sh --fabscope build/src/cli/fabscope     # several VMs: the exporter's probe mesh
  stage "the VM scenarios"
fi
unit_build=build
if [ "$asan" = 1 ]; then
  unit_build=build-asan
  cmake --preset asan -DFABSCOPE_BUILD_TESTS=ON -DFABSCOPE_UNIT_TESTS=ON -DCMAKE_UNITY_BUILD=ON
  cmake --build --preset asan -j "$jobs"
  stage "the asan build"
  ctest --preset asan -j "$jobs" -LE integration
  stage "ctest (asan build, unit tests)"
fi
if [ "$unpriv" = 1 ]; then
  scripts/test-unprivileged.sh "$unit_build"
  stage "the unprivileged run"
fi
if [ "$fuzz" = 1 ]; then
  if [ "$asan" = 1 ]; then
    scripts/fuzz.sh --time 15 --jobs "$jobs" --build-dir build-asan --no-build
  else
    scripts/fuzz.sh --time 15 --jobs "$jobs"
  fi
  stage "fuzzing"
fi
