#!/usr/bin/env bash
# What each integrator costs on the CPU: bench_core's periodic box (N = 102400) with every integrator
# on 1 and 2 threads, in interleaved rounds (a round runs every build, integrator and thread count
# once, one after the other), then the medians, the spreads (min - max) and the cost per force
# evaluation against symplectic Euler of the same build, round by round (RK4 evaluates the forces
# four times a step, the others once).
#
# Usage: [REPS=5] [STEPS=400] [THREADS="1 2"] [INTEGRATORS="symplectic euler verlet rk4"]
#        bench/integrators.sh LABEL=BENCH_CORE [LABEL=BENCH_CORE ...] > rows.csv
# Prints every run as CSV on stdout (build,round,integrator,threads,p_steps_per_s,seconds) and the
# summary table on stderr. RK4 runs STEPS / 4 steps (about the same time).
set -u
REPS=${REPS:-5}
STEPS=${STEPS:-400}
THREADS=${THREADS:-1 2}
INTEGRATORS=${INTEGRATORS:-symplectic euler verlet rk4}
[ $# -ge 1 ] || { echo "usage: bench/integrators.sh LABEL=BENCH_CORE ..." >&2; exit 2; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
echo "build,round,integrator,threads,p_steps_per_s,seconds"
for r in $(seq 1 "$REPS"); do
  for t in $THREADS; do
    for i in $INTEGRATORS; do
      for b in "$@"; do
        label=${b%%=*} bench=${b#*=}
        s=$STEPS
        [ "$i" = rk4 ] && s=$((STEPS / 4))
        "$bench" --sizes 102400 --steps "$s" --warmup 20 --threads "$t" --integrator "$i" --csv "$tmp" >/dev/null 2>&1 ||
          { echo "$label $i $t: bench_core failed" >&2; continue; }
        # the CSV's last row: backend,case,n,threads,deterministic,steps,seconds,particle_steps_per_s,...
        tail -1 "$tmp" | awk -F, -v b="$label" -v r="$r" -v i="$i" -v t="$t" '{print b "," r "," i "," t "," $8 "," $7}'
      done
    done
  done
done
} | tee "$tmp.rows"
# the summary: per build, integrator and threads, the median and spread of particle-steps/s, and the
# median over rounds of (rate x evaluations a step) / (symplectic Euler's rate of that build, threads
# and round)
python3 - "$tmp.rows" >&2 <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sym = {(r["build"], r["threads"], r["round"]): float(r["p_steps_per_s"]) for r in rows if r["integrator"] == "symplectic"}
keys = sorted({(r["build"], r["integrator"], r["threads"]) for r in rows}, key=lambda k: (k[2], k[1], k[0]))
print("%-10s %-11s %3s %11s %25s %9s" % ("build", "integrator", "thr", "median", "min - max", "per eval"))
for b, i, t in keys:
    mine = [r for r in rows if (r["build"], r["integrator"], r["threads"]) == (b, i, t)]
    v = [float(r["p_steps_per_s"]) for r in mine]
    q = [float(r["p_steps_per_s"]) * (4 if i == "rk4" else 1) / sym[(b, t, r["round"])]
         for r in mine if (b, t, r["round"]) in sym]
    print("%-10s %-11s %3s %11.3e %11.3e - %-11.3e %8.2fx" % (b, i, t, statistics.median(v), min(v), max(v),
                                                        statistics.median(q) if q else float("nan")))
PY
rm -f "$tmp.rows"
