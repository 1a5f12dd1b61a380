#!/usr/bin/env bash
# The shipped default scene as a user runs it under mpirun, whole (150 000 steps, about 6 flow-through
# times), on 2 ranks, against the same scene on one process with backend = cpu (about 20 s on 2 threads):
# CL and CD within 2 combined standard errors of each other, and the free stream measured ahead of the body
# within 1 % of the nominal (2 % for kT/m; docs/VALIDATION.md, the free stream). Label long: about 5 minutes
# on 2 cores; AERODEM_LONG=1 ./test.sh runs it. With RANK_BACKEND cuda (ctest mpi_gpu_long, labels gpu and
# long; skipped, 77, without a GPU): the 2 ranks are GPU ranks, the one process backend = cuda.
# Usage: test_mpi_long.sh AERODEM SOURCE_DIR [RANK_BACKEND]
set -uo pipefail
exe=$1 src=$2 rb=${3:-cpu}
one=(--backend cpu --threads 2)
if [ "$rb" = cuda ]; then
  nvidia-smi -L > /dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
  one=(--backend cuda)
fi
. "$(dirname "$0")/mpi_lib.sh"
timeout 1500 "${mpi[@]}" -np 2 "$exe" run "$src/scenes/default.ini" --set output.video=no --set run.rank_backend="$rb" \
    --out "$work/out" > "$work/run.log" 2>&1 ||
  { echo "FAIL: the default scene on 2 ranks ($rb) exited $?"; tail -5 "$work/run.log"; exit 1; }
grep -E "rank imbalance|done:" "$work/run.log"
timeout 900 "$exe" run "$src/scenes/default.ini" "${one[@]}" --set output.video=no --out "$work/cpu" \
    > "$work/cpu.log" 2>&1 || { echo "FAIL: the default scene on ${one[1]} exited $?"; tail -5 "$work/cpu.log"; exit 1; }
python3 - "$work/out/summary.txt" "$work/cpu/summary.txt" "${one[1]}" <<'PY'
import sys
def summary(path):
    v = {}
    for line in open(path):
        t = line.split()
        if len(t) >= 2:
            try: v[t[0]] = float(t[1])
            except ValueError: pass
    return v
v, one = summary(sys.argv[1]), summary(sys.argv[2])
bad = []
for c in ("cl", "cd"):
    s = (one[c + "_se"] ** 2 + v[c + "_se"] ** 2) ** 0.5
    z = (v[c] - one[c]) / s
    print("%s on 2 ranks %.4f +- %.4f, one process (%s) %.4f +- %.4f: %.2f combined standard errors" %
          (c, v[c], v[c + "_se"], sys.argv[3], one[c], one[c + "_se"], z))
    if abs(z) > 2: bad.append(c)
for q in ("density", "velocity", "temperature"):
    r = v["free_stream_%s_ratio" % q]
    print("free stream %s: %+.2f %% of the nominal" % (q, 100 * (r - 1)))
    if abs(r - 1) > 0.01 + (0.01 if q == "temperature" else 0): bad.append(q)
print("FAIL: " + ", ".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
