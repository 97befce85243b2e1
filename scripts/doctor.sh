#!/usr/bin/env bash
# Installs the build dependencies, builds fabscope and runs `fabscope doctor` on this node.
# Extra arguments go to `fabscope doctor` (e.g. scripts/doctor.sh --json).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --build-only >&2
cmake --preset default >/dev/null
cmake --build --preset default --target fabscope >&2
exec build/src/cli/fabscope doctor "$@"
