#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (preset fuzz: ASan+UBSan) and runs each
# for a fixed time, starting from its seeds (tests/fuzz/corpus/<name>) after replaying its
# regression inputs (tests/fuzz/regressions/<name>, inputs that once crashed). Every executable
# named fabscope_<name>_fuzz is run, whichever file declared it. A crash, a leak, an input slower
# than --timeout or more than --rss-mb MB of memory fails the run; the input is kept under the
# output directory with the libFuzzer log.
# Usage: scripts/fuzz.sh [--time SEC] [--runs N] [--jobs N] [--timeout SEC] [--rss-mb MB]
#                        [--out DIR] [--build-dir DIR] [--no-build] [NAME...]
#   --time SEC     fuzzing time per target (default 30)
#   --runs N       also stop a target after N executions (long runs: --time 3600 --runs 10000000)
#   --jobs N       targets run at once (default: number of CPUs)
#   --timeout SEC  an input that runs longer is a hang (default 5; libFuzzer's -timeout)
#   --rss-mb MB    memory limit of one target (default 2048; libFuzzer's -rss_limit_mb)
#   --out DIR      logs, new corpus entries and crash inputs (default BUILD_DIR/fuzz-out)
#   --build-dir DIR  a configured clang build with FABSCOPE_FUZZ=ON (default build-fuzz, preset
#                  fuzz: -O1); scripts/test.sh passes build-asan, whose build made the targets
#   --no-build     run what is built, build nothing
#   NAME...        only these targets (exporter_http, envfile, ...)
# Exit codes: 0 every target ran clean, 2 a target crashed, hung, leaked or ran out of memory,
# 3 usage error or no target built.
set -euo pipefail
cd "$(dirname "$0")/.."
time_s=30 runs=-1 jobs=$(nproc) timeout_s=5 rss_mb=2048 out= dir= build=1 names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) time_s=$2; shift ;;
    --runs) runs=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --timeout) timeout_s=$2; shift ;;
    --rss-mb) rss_mb=$2; shift ;;
    --out) out=$2; shift ;;
    --build-dir) dir=$2; shift ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option '$1' (see --help)" >&2; exit 3 ;;
    *) names+=("$1") ;;
  esac
  shift
done
if [ -z "$dir" ]; then
  dir=build-fuzz
  if [ "$build" = 1 ]; then cmake --preset fuzz >/dev/null; fi
fi
if [ "$build" = 1 ]; then
  [ -f "$dir/CMakeCache.txt" ] || { echo "fuzz.sh: $dir is not a configured build tree" >&2; exit 3; }
  grep -q '^FABSCOPE_FUZZ:BOOL=ON' "$dir/CMakeCache.txt" \
    || { echo "fuzz.sh: $dir was not configured with FABSCOPE_FUZZ=ON" >&2; exit 3; }
  cmake --build "$dir" --target fuzz -j "$(nproc)"
fi
: "${out:=$dir/fuzz-out}"
bin=$dir/tests/fuzz
if [ ${#names[@]} -eq 0 ]; then
  for f in "$bin"/fabscope_*_fuzz; do
    [ -x "$f" ] || continue
    n=${f##*/fabscope_}; names+=("${n%_fuzz}")
  done
fi
if [ ${#names[@]} -eq 0 ]; then echo "fuzz.sh: no fuzz target in $bin" >&2; exit 3; fi
mkdir -p "$out"

# One target: replay the regression inputs, then fuzz from the seeds. New inputs go to a work
# corpus under $out (the seeds in the repository are only read). Prints one summary line.
run_one() {
  local name=$1 exe="$bin/fabscope_$1_fuzz" log="$out/$1.log" work="$out/$1.corpus"
  local seeds=tests/fuzz/corpus/$1 regress=tests/fuzz/regressions/$1 rc=0
  if [ ! -x "$exe" ]; then echo "FAIL  $name: $exe not built"; return 1; fi
  mkdir -p "$work"
  local opts=(-timeout="$timeout_s" -rss_limit_mb="$rss_mb" -artifact_prefix="$out/$name-"
              -print_final_stats=1)
  : >"$log"
  if [ -d "$regress" ]; then
    local inputs=()
    for f in "$regress"/*; do [ -f "$f" ] && [ "${f##*/}" != SOURCE ] && inputs+=("$f"); done
    if [ ${#inputs[@]} -gt 0 ]; then
      "$exe" "${opts[@]}" "${inputs[@]}" >>"$log" 2>&1 || rc=$?
    fi
  fi
  local dirs=("$work")
  [ -d "$seeds" ] && dirs+=("$seeds")
  if [ $rc -eq 0 ]; then
    "$exe" "${opts[@]}" -max_total_time="$time_s" -runs="$runs" "${dirs[@]}" >>"$log" 2>&1 || rc=$?
  fi
  local done_runs cov
  done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  if [ $rc -ne 0 ]; then
    echo "FAIL  $name (exit $rc): $log"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|artifact_prefix|Test unit written)' "$log" | head -8 | sed 's/^/      /'
    return 1
  fi
  local secs
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  printf 'ok    %-16s %10s runs  cov %6s  %s s\n' "$name" "${done_runs:-?}" "${cov:-?}" "${secs:-$time_s}"
}
export -f run_one
export bin out time_s runs timeout_s rss_mb

failed=0
printf '%s\n' "${names[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {} || failed=1
if [ $failed -ne 0 ]; then
  echo "fuzz.sh: a target failed; the input that did it is named above (reproduce: $bin/fabscope_NAME_fuzz INPUT)" >&2
  exit 2
fi
