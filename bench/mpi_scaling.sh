#!/usr/bin/env bash
# Scaling of backend = mpi on CPU ranks: the program as a user runs it (mpirun -np N aerodem run), the
# shipped default tunnel (NACA 2412, Mach 3, area fraction 0.3) made larger. RANK_BACKEND=cuda: GPU ranks
# (the ranks of the host share its GPUs in turn) on the same tunnel (or BOX=1: the shipped closed box,
# scenes/closed_box.ini, the case of the 2026-12-03 figures, before GPU ranks ran open sides) made larger,
# beside backend = cuda in one process; on a machine with several GPUs it runs unchanged, one rank a GPU.
#   strong: one tunnel of WIDTH x HEIGHT m on 1..N ranks (the same discs; efficiency = T1 / (N TN));
#   weak:   a tunnel WEAK_WIDTH m long per rank (the slabs cut along the stream; efficiency = T1 / TN);
#   beside them backend = cpu (the optimised CPU backend) on 1 and 2 threads on the strong case: each
#   rank runs the plain pipeline (src/reference/plain_dim.h), not the CPU backend's fast path.
# Prints a table and writes CSV (OUT, default bench/results/cpu/mpi_scaling.csv). Every rate is the run's
# own "done" line (disc-steps per second of wall time over the stepping, outputs included), the efficiency
# is taken from the rates, and the rank imbalance is the slowest rank's busy time (sort and pass) over the mean.
# Usage: [RANK_BACKEND=cpu|cuda] [BOX=1] [RANKS="1 2"] [STEPS=1000] [WIDTH=480] [HEIGHT=240] [WEAK_WIDTH=240] [OUT=...]
#        bench/mpi_scaling.sh [BUILD]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
exe="$build/aerodem"
ranks=${RANKS:-1 2} steps=${STEPS:-1000} width=${WIDTH:-480} height=${HEIGHT:-240} weak=${WEAK_WIDTH:-240}
rank_backend=${RANK_BACKEND:-cpu}
out=${OUT:-$here/results/cpu/mpi_scaling.csv}
[ "$rank_backend" = cuda ] && out=${OUT:-$here/results/h200/mpi_scaling_gpu.csv}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mpi=(mpirun --oversubscribe -x OMP_NUM_THREADS=1)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
common=(--steps "$steps" --set run.settle_steps=$((steps / 2)) --set output.frame_interval=1000000
        --set output.video=no --set body.y=$((height / 2)) --set tunnel.height="$height")
scene=$here/../scenes/default.ini
[ "$rank_backend" = cuda ] && common+=(--set run.rank_backend=cuda)
if [ "${BOX:-0}" = 1 ]; then
  scene=$here/../scenes/closed_box.ini
  common=(--steps "$steps" --set run.settle_steps=$((steps / 2)) --set output.frame_interval=1000000
          --set output.video=no --set tunnel.height="$height" --set run.rank_backend="$rank_backend")
fi
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
gpu=""; [ "$rank_backend" = cuda ] && gpu=", GPU $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
echo "mpi_scaling: $(date -u +%F) commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null) on ${cpu:-?}, $(nproc) cores$gpu, rank_backend $rank_backend"
echo "case,backend,ranks,threads,width_m,height_m,discs,steps,seconds,disc_steps_per_s,efficiency,rank_imbalance" > "$out"
printf "%-7s %-4s %5s %7s %9s %9s %8s %12s %10s %9s\n" case back ranks threads tunnel discs seconds disc-steps/s efficiency imbalance
t1_strong="" t1_weak=""
one() { # CASE BACKEND RANKS THREADS WIDTH
  local c=$1 b=$2 np=$3 th=$4 w=$5 log="$work/$1.$2.$3.$4.log"
  local cmd=("$exe" run "$scene" "${common[@]}" --set tunnel.width="$w" --out "$work/o" --threads "$th")
  if [ "$b" = mpi ] && [ "$np" -gt 1 ]; then "${mpi[@]}" -np "$np" "${cmd[@]}" > "$log" 2>&1
  else "${cmd[@]}" --backend "$b" > "$log" 2>&1; fi
  local done_line secs rate discs imb
  done_line=$(grep "^  done:" "$log")
  secs=$(echo "$done_line" | sed 's/.* steps in \([0-9.]*\) s.*/\1/')
  rate=$(echo "$done_line" | sed 's/.*(\([0-9.e+]*\) disc-steps.*/\1/')
  discs=$(echo "$done_line" | sed 's/.*, \([0-9]*\) discs at the end.*/\1/')
  imb=$(sed -n 's/.*busy time is \([0-9.]*\) x the mean.*/\1/p' "$log"); imb=${imb:-1}
  local eff=""
  # efficiency from the rates (3 digits; the seconds are printed to 0.1 s): strong, the rate over N times
  # one rank's; weak, the rate per rank over one rank's
  if [ "$b" = mpi ]; then
    if [ "$c" = strong ]; then
      [ -z "$t1_strong" ] && t1_strong=$rate
      eff=$(awk -v a="$t1_strong" -v b="$rate" -v n="$np" 'BEGIN { printf "%.2f", b / (n * a) }')
    else
      [ -z "$t1_weak" ] && t1_weak=$rate
      eff=$(awk -v a="$t1_weak" -v b="$rate" -v n="$np" 'BEGIN { printf "%.2f", b / (n * a) }')
    fi
  fi
  echo "$c,$b,$np,$th,$w,$height,$discs,$steps,$secs,$rate,$eff,$imb" >> "$out"
  printf "%-7s %-4s %5s %7s %9s %9s %8s %12s %10s %9s\n" "$c" "$b" "$np" "$th" "${w}x$height" "$discs" "$secs" "$rate" "${eff:--}" "$imb"
}
for np in $ranks; do one strong mpi "$np" 1 "$width"; done
for np in $ranks; do one weak mpi "$np" 1 $((weak * np)); done
if [ "$rank_backend" = cuda ]; then
  one strong cuda 1 0 "$width"
else
  one strong cpu 1 1 "$width"
  one strong cpu 1 2 "$width"
fi
echo "csv: $out"
