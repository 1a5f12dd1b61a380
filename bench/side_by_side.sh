#!/usr/bin/env bash
# aerodem against LAMMPS on the same gas, same machine, same cores, interleaved (issue 24: LAMMPS at its
# best, every integrator of aerodem, CPU time beside wall time, the CPU model recorded).
#
# Usage: bench/side_by_side.sh            (after ./run.sh or a CMake build in build/)
# Env:   REPS [5]  rounds; each round runs, one after the other, on 1 and then 2 cores: LAMMPS, then
#                  aerodem with each integrator of INTEGRATORS
#        INTEGRATORS ["symplectic verlet"]  aerodem's integrators (bench_core --integrator: also euler, rk4)
#        STEPS [2000]  timed steps (after 100 untimed warm-up steps, both codes)
#        NSIDE [320]   lattice side: N = NSIDE^2 discs (102400)
#        LABEL [side_by_side]  -> bench/results/LABEL.csv (every run) and LABEL.txt (the table)
#        BENCH [build/bench_core]  LMP [lmp]
#        DIM [2]  3: the 3D sphere gas instead (issue 18): bench/lammps/in.gas3d against bench_3d's gas
#                 (--case gas --drift 0; symplectic Euler only), NSIDE [46] -> N = NSIDE^3 (97336),
#                 BENCH3 [build/bench_3d]; LABEL [side_by_side_3d]
#        OMP_WAIT_POLICY  as in the caller's environment (unset: OpenMP's default, what a user gets).
#
# The gas is bench/lammps/in.gas2d (LAMMPS) and bench_core's box (aerodem): discs d = 1 m, m = 1 kg,
# k_n = 1e4 N/m, e = 1, area fraction 0.3, periodic square box, velocity variance 1 m^2/s^2 a component,
# dt = t_c / 20 (docs/PERFORMANCE.md). LAMMPS runs as tuned in issue 24: `fix nve` (the model has no
# rotation: `nve/sphere` with `enforce2d` integrated it for nothing), skin 0.4, its default atom sort;
# before the rounds the script checks that this gives the thermo of the old input (nve/sphere,
# enforce2d, skin 0.2) to every digit on a small lattice. Wall time is each code's timed loop; CPU time
# is the whole process's user + system time (set-up included, both codes alike), per core.
# Interleaving matters on a shared VM: its speed drifts within minutes, which moves both codes together.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
REPS="${REPS:-5}"
DIM="${DIM:-2}"
STEPS="${STEPS:-2000}"
LMP="${LMP:-lmp}"
if [ "$DIM" = 3 ]; then
    INTEGRATORS=symplectic
    NSIDE="${NSIDE:-46}"
    LABEL="${LABEL:-side_by_side_3d}"
    BENCH="${BENCH3:-$root/build/bench_3d}"
    n=$((NSIDE * NSIDE * NSIDE))
    input="$here/lammps/in.gas3d"
else
    INTEGRATORS="${INTEGRATORS:-symplectic verlet}"
    NSIDE="${NSIDE:-320}"
    LABEL="${LABEL:-side_by_side}"
    BENCH="${BENCH:-$root/build/bench_core}"
    n=$((NSIDE * NSIDE))
    input="$here/lammps/in.gas2d"
fi
out="$root/bench/results/$LABEL.csv"
txt="$root/bench/results/$LABEL.txt"

command -v "$LMP" >/dev/null || { echo "side_by_side.sh: $LMP not found (Debian package lammps)" >&2; exit 1; }
[ -x "$BENCH" ] || { echo "side_by_side.sh: $BENCH not built (./run.sh builds it)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "side_by_side.sh: /usr/bin/time not found (Debian package time)" >&2; exit 1; }

mpiflags=(--bind-to core)
[ "$(id -u)" = 0 ] && mpiflags+=(--allow-run-as-root --oversubscribe)
work="$(mktemp -d /tmp/side_by_side.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# The tuned input against the old one: the same thermo to every digit.
thermo() { # log -> the thermo rows
    awk '/^ *Step/{on=1; next} /^Loop time/{on=0} on' "$1"
}
if [ "$DIM" = 2 ]; then
"$LMP" -in "$here/lammps/in.gas2d" -log "$work/old.log" -screen none -nocite -var nside 64 -var steps 500 \
    -var integ nve/sphere -var twod 1 -var skin 0.2 >/dev/null
"$LMP" -in "$here/lammps/in.gas2d" -log "$work/new.log" -screen none -nocite -var nside 64 -var steps 500 >/dev/null
if ! cmp -s <(thermo "$work/old.log") <(thermo "$work/new.log"); then
    echo "side_by_side.sh: the tuned LAMMPS input does not give the old input's thermo" >&2
    diff <(thermo "$work/old.log") <(thermo "$work/new.log") >&2 || true
    exit 1
fi
echo "LAMMPS tuned (fix nve, skin 0.4) gives the old input's thermo to every digit ($(thermo "$work/new.log" | wc -l) rows)" >&2
fi

cpu_of() { awk '{print $1 + $2}' "$1"; } # /usr/bin/time -f "%U %S" output -> CPU seconds

lammps() { # ranks -> "wall cpu" of the timed loop / the process
    local np=$1 log="$work/log.$1"
    local cmd=("$LMP" -in "$input" -log "$log" -screen none -nocite
               -var nside "$NSIDE" -var steps "$STEPS" -var warm 100)
    if [ "$np" -gt 1 ]; then
        OMP_NUM_THREADS=1 /usr/bin/time -f "%U %S" -o "$work/t" mpirun "${mpiflags[@]}" -np "$np" "${cmd[@]}" >/dev/null
    else OMP_NUM_THREADS=1 /usr/bin/time -f "%U %S" -o "$work/t" "${cmd[@]}" >/dev/null; fi
    echo "$(grep '^Loop time' "$log" | tail -1 | awk '{print $4}') $(cpu_of "$work/t")"
}

aerodem() { # threads integrator -> "wall cpu"
    if [ "$DIM" = 3 ]; then
        /usr/bin/time -f "%U %S" -o "$work/t" "$BENCH" --case gas --drift 0 --sizes "$n" --steps "$STEPS" --warmup 100 \
            --threads "$1" --csv "$work/a.csv" >/dev/null
        # bench_3d's CSV: sphere-steps/s in column 6; the wall time of the timed steps from it
        echo "$(tail -1 "$work/a.csv" | awk -F, -v n="$n" -v st="$STEPS" '{printf "%.6f", n * st / $6}') $(cpu_of "$work/t")"
        return
    fi
    /usr/bin/time -f "%U %S" -o "$work/t" "$BENCH" --sizes "$n" --steps "$STEPS" --warmup 100 --threads "$1" \
        --integrator "$2" --csv "$work/a.csv" >/dev/null
    echo "$(tail -1 "$work/a.csv" | cut -d, -f7) $(cpu_of "$work/t")"
}

commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
policy="${OMP_WAIT_POLICY:-default}"
cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | tr ',' ' ')"
echo "code,integrator,cores,round,n,steps,seconds,cpu_seconds,particle_steps_per_s,per_core,date,commit,omp_wait_policy,cpu" >"$out"
row() { # code integrator cores round "wall cpu"
    local wall=${5% *} cpus=${5#* }
    local ps pc
    ps=$(awk -v n="$n" -v st="$STEPS" -v t="$wall" 'BEGIN{printf "%.4e", n * st / t}')
    pc=$(awk -v n="$n" -v st="$STEPS" -v t="$wall" -v c="$3" 'BEGIN{printf "%.4e", n * st / t / c}')
    echo "$1,$2,$3,$4,$n,$STEPS,$wall,$cpus,$ps,$pc,$(date -u +%FT%TZ),$commit,$policy,$cpu" >>"$out"
    printf 'round %d  %-7s %-10s %d core(s)  %8.3f s  (CPU %7.2f s)  %s particle-steps/s\n' "$4" "$1" "$2" "$3" \
        "$wall" "$cpus" "$ps" >&2
}
for r in $(seq 1 "$REPS"); do
    for cores in 1 2; do
        row lammps nve "$cores" "$r" "$(lammps "$cores")"
        for integ in $INTEGRATORS; do row aerodem "$integ" "$cores" "$r" "$(aerodem "$cores" "$integ")"; done
    done
done

python3 - "$out" "$DIM" <<'EOF' | tee "$txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
v, c = {}, {}
for r in rows:
    key = (r["code"], r["integrator"], int(r["cores"]))
    v.setdefault(key, []).append(float(r["per_core"]))
    c.setdefault(key, []).append(float(r["cpu_seconds"]))
r0 = rows[0]
print(f"{max(int(r['round']) for r in rows)} interleaved rounds, N = {r0['n']}, {r0['steps']} timed steps, commit "
      f"{r0['commit']}, {r0['date'][:10]}, OMP_WAIT_POLICY {r0['omp_wait_policy']}, CPU {r0['cpu']}")
print("LAMMPS tuned: fix nve, skin 0.4" + (" (the old input's thermo to every digit)" if sys.argv[2] != "3" else
      ", the 3D gas (bench/lammps/in.gas3d)"))
print("| cores | code | particle-steps/s per core: median (min - max) | median / LAMMPS's | process CPU s (median) |")
print("|---:|---|---:|---:|---:|")
for cores in (1, 2):
    lm = statistics.median(v[("lammps", "nve", cores)])
    for key in sorted(k for k in v if k[2] == cores):
        x = v[key]
        name = "LAMMPS" if key[0] == "lammps" else f"aerodem, {key[1]}"
        print(f"| {cores} | {name} | {statistics.median(x):.3e} ({min(x):.3e} - {max(x):.3e}) | "
              f"{statistics.median(x) / lm:.2f}x | {statistics.median(c[key]):.1f} |")
EOF
