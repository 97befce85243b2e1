#!/usr/bin/env bash
# Installs every dependency, builds fabscope and runs all tests: the unit and integration tests
# on a normal build, then the unit tests again under AddressSanitizer + UBSan.
# Usage: scripts/test.sh [--no-asan]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
cmake --preset default
cmake --build --preset default -j "$jobs"
ctest --preset default -j "$jobs"
if [ "${1:-}" != "--no-asan" ]; then
  cmake --preset asan
  cmake --build --preset asan -j "$jobs"
  ctest --preset asan -j "$jobs" -LE integration
fi
