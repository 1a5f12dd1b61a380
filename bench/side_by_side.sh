#!/usr/bin/env bash
# aerodem against LAMMPS on the same gas, same machine, same cores, interleaved.
#
# Usage: bench/side_by_side.sh            (after ./run.sh or a CMake build in build/)
# Env:   REPS [5]  rounds; each round runs, one after the other, LAMMPS on 1 rank,
#                  aerodem on 1 thread, LAMMPS on 2 ranks, aerodem on 2 threads
#        STEPS [2000]  timed steps (after 100 untimed warm-up steps, both codes)
#        NSIDE [320]   lattice side: N = NSIDE^2 discs (102400)
#        LABEL [side_by_side]  -> bench/results/LABEL.csv (every run) and LABEL.txt (the table)
#        BENCH [build/bench_core]  LMP [lmp]
#        OMP_WAIT_POLICY  as in the caller's environment (unset: OpenMP's default, what a user
#                  running aerodem gets; GCC's threads spin a while before they sleep). The test
#                  suite sets passive (tests run side by side there); on this benchmark passive
#                  cost aerodem 5-8 % on two threads (a futex sleep and wake at every region and
#                  barrier, about 10-20 us each on this VM, against a step of about 1.2 ms).
#
# The gas is bench/lammps/in.gas2d (LAMMPS) and bench_core's box (aerodem): discs d = 1 m,
# m = 1 kg, k_n = 1e4 N/m, e = 1, area fraction 0.3, periodic square box, square-lattice
# start, velocity variance 1 m^2/s^2 a component, dt = t_c / 20 (docs/PERFORMANCE.md).
# Interleaving matters on a shared VM: its speed drifts by 20-40 % within minutes, which
# moves both codes together; the table gives the ratio of the bests and of the medians.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
REPS="${REPS:-5}"
STEPS="${STEPS:-2000}"
NSIDE="${NSIDE:-320}"
LABEL="${LABEL:-side_by_side}"
BENCH="${BENCH:-$root/build/bench_core}"
LMP="${LMP:-lmp}"
n=$((NSIDE * NSIDE))
out="$root/bench/results/$LABEL.csv"
txt="$root/bench/results/$LABEL.txt"

command -v "$LMP" >/dev/null || { echo "side_by_side.sh: $LMP not found (Debian package lammps)" >&2; exit 1; }
[ -x "$BENCH" ] || { echo "side_by_side.sh: $BENCH not built (./run.sh builds it)" >&2; exit 1; }

mpiflags=(--bind-to core)
[ "$(id -u)" = 0 ] && mpiflags+=(--allow-run-as-root --oversubscribe)
work="$(mktemp -d /tmp/side_by_side.XXXXXX)"
trap 'rm -rf "$work"' EXIT

lammps() { # ranks -> seconds of the timed loop
    local np=$1 log="$work/log.$1"
    local cmd=("$LMP" -in "$here/lammps/in.gas2d" -log "$log" -screen none -nocite
               -var nside "$NSIDE" -var steps "$STEPS" -var warm 100)
    if [ "$np" -gt 1 ]; then OMP_NUM_THREADS=1 mpirun "${mpiflags[@]}" -np "$np" "${cmd[@]}" >/dev/null
    else OMP_NUM_THREADS=1 "${cmd[@]}" >/dev/null; fi
    grep '^Loop time' "$log" | tail -1 | awk '{print $4}'
}

aerodem() { # threads -> seconds of the timed steps
    "$BENCH" --sizes "$n" --steps "$STEPS" --warmup 100 --threads "$1" \
        --csv "$work/a.csv" >/dev/null
    tail -1 "$work/a.csv" | cut -d, -f7
}

commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
policy="${OMP_WAIT_POLICY:-default}"
echo "code,cores,round,n,steps,seconds,particle_steps_per_s,per_core,date,commit,omp_wait_policy" >"$out"
for r in $(seq 1 "$REPS"); do
    for cores in 1 2; do
        for code in lammps aerodem; do
            s=$($code "$cores")
            ps=$(awk -v n="$n" -v st="$STEPS" -v t="$s" 'BEGIN{printf "%.4e", n * st / t}')
            pc=$(awk -v n="$n" -v st="$STEPS" -v t="$s" -v c="$cores" 'BEGIN{printf "%.4e", n * st / t / c}')
            echo "$code,$cores,$r,$n,$STEPS,$s,$ps,$pc,$(date -u +%FT%TZ),$commit,$policy" >>"$out"
            printf 'round %d  %-7s %d core(s)  %8.3f s  %s particle-steps/s\n' "$r" "$code" "$cores" "$s" "$ps" >&2
        done
    done
done

python3 - "$out" <<'EOF' | tee "$txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
v = {}
for r in rows:
    v.setdefault((r["code"], int(r["cores"])), []).append(float(r["per_core"]))
print(f"{len(rows) // 4} interleaved rounds, N = {rows[0]['n']}, {rows[0]['steps']} timed steps, "
      f"commit {rows[0]['commit']}, {rows[0]['date'][:10]}, OMP_WAIT_POLICY {rows[0]['omp_wait_policy']}")
print("| cores | LAMMPS per core (best / median) | aerodem per core (best / median) | ratio of bests | ratio of medians |")
print("|---:|---:|---:|---:|---:|")
for c in (1, 2):
    l, a = v[("lammps", c)], v[("aerodem", c)]
    print(f"| {c} | {max(l):.3e} / {statistics.median(l):.3e} | {max(a):.3e} / {statistics.median(a):.3e} "
          f"| {max(a) / max(l):.2f}x | {statistics.median(a) / statistics.median(l):.2f}x |")
EOF
