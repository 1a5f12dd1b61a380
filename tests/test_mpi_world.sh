#!/usr/bin/env bash
# backend = mpi on 1, 2, 3 and 4 ranks (tests/test_mpi_world.c): every case's fingerprints (the discs by id,
# the statistics, the body's impulse, the fields) must be the same for every rank count, bit for bit;
# each run checks on its own that no disc is lost or duplicated. A checkpoint written by 4 ranks is
# resumed by 2, and must end where the uninterrupted run ends (the field sums to rounding).
# Usage: test_mpi_world.sh BIN_DIR [RANKS...]
set -uo pipefail
bin=$1; shift
ranks=("$@"); [ ${#ranks[@]} -eq 0 ] && ranks=(1 2 3 4)
exe="$bin/test_mpi_world"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mpi=(mpirun --oversubscribe -x OMP_NUM_THREADS=1)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
# under AddressSanitizer (test.sh's second stage): OpenMPI's own allocations at exit are not ours to
# report, so leak detection is off for the ranks; the rest of ASan and UBSan stays on
mpi+=(-x ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 -x UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
fail=0
line() { # CASE NP [ARGS]: the run's line, its output kept
  local c=$1 np=$2; shift 2
  timeout 300 "${mpi[@]}" -np "$np" "$exe" "$c" "$@" > "$work/$c.$np.out" 2> "$work/$c.$np.err"
  local rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL: $c on $np ranks exited $rc:"; tail -5 "$work/$c.$np.err"; fail=1; fi
  grep -E "^(tunnel|crossing|verlet|rk4|pile|narrow) \[" "$work/$c.$np.out" | tail -1
  grep "^pile slabs" "$work/$c.$np.out" >&2
}
for c in crossing tunnel verlet rk4 pile narrow; do
  ref=""
  for np in "${ranks[@]}"; do
    got=$(line "$c" "$np")
    [ -n "$got" ] || { echo "FAIL: $c on $np ranks printed no result"; fail=1; }
    echo "$c, $np ranks: $got"
    if [ -z "$ref" ]; then ref=$got
    elif [ "$got" != "$ref" ]; then echo "FAIL: $c on $np ranks differs from ${ranks[0]} ranks"; fail=1; fi
  done
  [ "$c" = tunnel ] && tunnel_ref=$ref
  [ "$c" = rk4 ] && rk4_ref=$ref
done
# a checkpoint of 4 ranks resumed on 2: the resume case on 4 ranks runs half way and saves, on 2 it loads
for np in 4 2; do
  timeout 300 "${mpi[@]}" -np $np "$exe" resume 3000 "$work/half.ckpt" > "$work/r$np.out" 2> "$work/r$np.err" ||
    { echo "FAIL: the resume case on $np ranks"; tail -5 "$work/r$np.err"; fail=1; }
done
got=$(grep "^tunnel \[" "$work/r2.out" | tail -1)
echo "tunnel saved on 4 ranks, resumed on 2: $got"
# the discs and the statistics bit for bit; the fields' sums to rounding (mpi_fields.c: reloaded sums go to
# one column group), so the fields' fingerprint is left out and their density total compared to 9 digits
strip() { sed 's/ fields [0-9a-f]*//'; }
[ "$(echo "$got" | strip)" = "$(echo "$tunnel_ref" | strip)" ] ||
  { echo "FAIL: saved and resumed on 4 ranks differs from the uninterrupted run"; fail=1; }
# the same tunnel (symplectic Euler, then RK4) on one process with backend = cpu: the same physics, its
# sums in another order
for c in tunnel rk4; do
  timeout 300 "${mpi[@]}" -x AERODEM_TEST_BACKEND=cpu -np 1 "$exe" $c > "$work/cpu.$c.out" 2> "$work/cpu.$c.err" ||
    { echo "FAIL: the $c case on backend = cpu"; tail -5 "$work/cpu.$c.err"; fail=1; }
  cpu=$(grep "^$c \[" "$work/cpu.$c.out" | tail -1)
  echo "$c on backend = cpu: $cpu"
  ref=$tunnel_ref; [ $c = rk4 ] && ref=$rk4_ref
  # the disc count within 2 %, the body's impulse within 5 % (they agree bit for bit today: the sums of
  # float terms are exact in double, and a cell's discs mostly come in id order on the CPU too)
  python3 - "$cpu" "$ref" "$c" <<'PY' || fail=1
import sys
def nums(line):
    t = line.split()
    return {k: float(t[i + 1]) for i, k in enumerate(t[:-1]) if k in ("count", "Jx", "Jy")}
a, b = nums(sys.argv[1]), nums(sys.argv[2])
bad = [k for k, tol in (("count", 0.02), ("Jx", 0.05), ("Jy", 0.05)) if abs(a[k] - b[k]) > tol * abs(a[k])]
print(sys.argv[3], "mpi against cpu:", ", ".join("%s %g vs %g" % (k, b[k], a[k]) for k in a), "FAIL" if bad else "ok")
sys.exit(1 if bad else 0)
PY
done
echo "ok"
exit $fail
