#!/usr/bin/env bash
# Installs everything fabscope needs to build and test, from Debian/Ubuntu packages.
# Usage: sudo scripts/install-deps.sh [--build-only]
#   --build-only  compiler, CMake and libraries only (what `fabscope doctor` needs)
# Tested on Debian 12 (bookworm) and Ubuntu 24.04 (noble).
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then exec sudo -E "$0" "$@"; fi
  echo "install-deps.sh: must run as root (apt-get)" >&2; exit 1
fi
export DEBIAN_FRONTEND=noninteractive
build=(build-essential cmake ninja-build pkg-config git ca-certificates
       nlohmann-json3-dev libibverbs-dev librdmacm-dev file
       libibumad-dev libibmad-dev zlib1g-dev)
test=(libgtest-dev libgmock-dev openmpi-bin libopenmpi-dev prometheus
      qemu-system-x86 busybox-static cpio python3 python3-yaml wrk prometheus-node-exporter
      man-db bash-completion zsh lintian chromium systemd clang libclang-rt-dev
      slurmctld slurmd slurm-client munge
      ibsim-utils opensm infiniband-diags lldpd iproute2)
pkgs=("${build[@]}")
[ "${1:-}" = "--build-only" ] || pkgs+=("${test[@]}")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
