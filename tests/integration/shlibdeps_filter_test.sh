#!/usr/bin/env bash
# The package's dpkg-shlibdeps filter (cmake/package.cmake) keeps the MPI plugin out of
# dpkg-shlibdeps, so MPI is no Depends of the package. The same files given to dpkg-shlibdeps
# unfiltered must name the MPI library (else this test could not tell).
# Usage: shlibdeps_filter_test.sh FILTER FABSCOPE_BINARY MPI_LINKED_MODULE
set -euo pipefail
filter=$1 bin=$2 plugin=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debian" "$tmp/DEBIAN" "$tmp/usr/bin" "$tmp/usr/lib/fabscope"
: >"$tmp/debian/control"  # dpkg-shlibdeps wants to be in a source tree, as CPack arranges
cp "$bin" "$tmp/usr/bin/fabscope"
cp "$plugin" "$tmp/usr/lib/fabscope/fabscope-mpi.so"
cd "$tmp"
raw=$(dpkg-shlibdeps -O ./usr/bin/fabscope ./usr/lib/fabscope/fabscope-mpi.so 2>&1)
filtered=$("$filter" -O ./usr/bin/fabscope ./usr/lib/fabscope/fabscope-mpi.so 2>&1)
echo "unfiltered: $raw"
echo "filtered:   $filtered"
grep -qi 'mpi' <<<"$raw" || { echo "FAIL: the stand-in plugin pulls in no MPI package"; exit 1; }
if grep -qi 'mpi' <<<"$filtered"; then echo "FAIL: MPI is a Depends through the filter"; exit 1; fi
grep -q 'libc6' <<<"$filtered" || { echo "FAIL: the binary's own dependencies are gone"; exit 1; }
echo OK
