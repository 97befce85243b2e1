#!/usr/bin/env bash
# Installs the build dependencies, builds fabscope and runs `fabscope doctor` on this node.
# Extra arguments go to `fabscope doctor` (e.g. scripts/doctor.sh --json).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --build-only >&2
# No GoogleTest needed to run doctor; a unity build (8 sources per compiler run) halves a fresh
# build's compile time.
cmake --preset default -DFABSCOPE_BUILD_TESTS=OFF -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build --preset default --target fabscope >&2
exec build/src/cli/fabscope doctor "$@"
