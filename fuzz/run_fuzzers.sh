#!/usr/bin/env bash
# Runs aerodem's fuzzers (fuzz/CMakeLists.txt) for a bounded time each and fails on any finding.
# Usage: fuzz/run_fuzzers.sh [--seconds S] [--runs N] [--bin DIR] [--work DIR] [--jobs J] [NAME...]
#   NAME: scene, airfoil, checkpoint, stl (default: all). --runs N stops after N inputs instead of a time
#   (a campaign: docs/HARDENING.md). The seed corpus (fuzz/corpus/NAME) is copied into a work corpus
#   (WORK/NAME) that grows with what the fuzzer finds; findings (crash-*, leak-*, timeout-*, oom-*)
#   land in WORK/NAME-findings and make the script exit 1.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
seconds=60 runs="" bin="$here/../build-fuzz/fuzz" work="" jobs=1
names=()
while [ $# -gt 0 ]; do
  case "$1" in
  --seconds) seconds=$2; shift 2 ;;
  --runs) runs=$2; shift 2 ;;
  --bin) bin=$2; shift 2 ;;
  --work) work=$2; shift 2 ;;
  --jobs) jobs=$2; shift 2 ;;
  -h|--help) sed -n 2,7p "$0"; exit 0 ;;
  *) names+=("$1"); shift ;;
  esac
done
[ ${#names[@]} -eq 0 ] && names=(scene airfoil checkpoint stl)
[ -z "$work" ] && work="$bin/work"
fail=0
for n in "${names[@]}"; do
  exe="$(cd "$bin" 2>/dev/null && pwd)/fuzz_$n"
  if [ ! -x "$exe" ]; then echo "run_fuzzers: no fuzzer $exe (build with -DAERODEM_FUZZ=ON)"; fail=1; continue; fi
  corpus="$work/$n" findings="$work/$n-findings"
  mkdir -p "$corpus" "$findings"
  cp -n "$here/corpus/$n"/* "$corpus"/ 2>/dev/null || true
  dict=()
  [ -f "$here/$n.dict" ] && dict=(-dict="$here/$n.dict")
  limit=(-max_total_time="$seconds")
  [ -n "$runs" ] && limit=(-runs="$runs")
  par=()
  [ "$jobs" -gt 1 ] && par=(-fork="$jobs")
  log="$work/$n.log"
  what="$seconds s"
  [ -n "$runs" ] && what="$runs inputs"
  echo "== fuzz_$n: $what, corpus $(ls "$corpus" | wc -l) files"
  # -timeout: an input that takes over 10 s is a hang; -rss_limit_mb: one over 2 GiB is a finding
  ( cd "$findings" && ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
      UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
      "$exe" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
      "${par[@]}" "${dict[@]}" "$corpus" ) > "$log" 2>&1
  rc=$?
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+[[:space:]]+DONE" "$log" | tail -3
  found=$(ls "$findings" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | wc -l)
  if [ $rc -ne 0 ] || [ "$found" -gt 0 ]; then
    echo "fuzz_$n: FAILED (exit $rc, $found findings in $findings); the log: $log"
    grep -E "ERROR|SUMMARY|runtime error|Timeout|deadly signal" "$log" | head -20
    fail=1
  else
    echo "fuzz_$n: no crash, leak, hang or sanitizer report"
  fi
done
exit $fail
