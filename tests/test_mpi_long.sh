#!/usr/bin/env bash
# The shipped default scene as a user runs it under mpirun, whole (150 000 steps, about 6 flow-through
# times), on 2 ranks: its coefficients against the one-process CPU run's figures that the README states
# (CL = 0.079 +- 0.015, CD = 0.216 +- 0.012: ./run.sh), within 2 combined standard errors, and the free stream
# measured ahead of the body within 1 % of the nominal (docs/VALIDATION.md, the free stream). Label long:
# about 2 minutes on 2 cores; AERODEM_LONG=1 ./test.sh runs it.
# Usage: test_mpi_long.sh AERODEM SOURCE_DIR
set -uo pipefail
exe=$1 src=$2
. "$(dirname "$0")/mpi_lib.sh"
timeout 1500 "${mpi[@]}" -np 2 "$exe" run "$src/scenes/default.ini" --set output.video=no --out "$work/out" \
    > "$work/run.log" 2>&1 || { echo "FAIL: the default scene on 2 ranks exited $?"; tail -5 "$work/run.log"; exit 1; }
grep -E "rank imbalance|done:" "$work/run.log"
python3 - "$work/out/summary.txt" <<'PY'
import sys
v = {}
for line in open(sys.argv[1]):
    t = line.split()
    if len(t) >= 2:
        try: v[t[0]] = float(t[1])
        except ValueError: pass
bad = []
for c, ref, se in (("cl", 0.079, 0.015), ("cd", 0.216, 0.012)):
    s = (se ** 2 + v[c + "_se"] ** 2) ** 0.5
    z = (v[c] - ref) / s
    print("%s on 2 ranks %.4f +- %.4f, one process %.3f +- %.3f: %.2f combined standard errors" % (c, v[c], v[c + "_se"], ref, se, z))
    if abs(z) > 2: bad.append(c)
for q in ("density", "velocity", "temperature"):
    r = v["free_stream_%s_ratio" % q]
    print("free stream %s: %+.2f %% of the nominal" % (q, 100 * (r - 1)))
    if abs(r - 1) > 0.01 + (0.01 if q == "temperature" else 0): bad.append(q)
print("FAIL: " + ", ".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
