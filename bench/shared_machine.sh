#!/usr/bin/env bash
# A run on a machine shared with other work: wall time of 20000 steps of scenes/default.ini on 2
# threads under each OpenMP waiting policy, on 1 thread, and with the threads left to aerodem
# (app/machine_load.c), on an idle machine and beside 4 busy loops. Prints CSV (bench/results/cpu/
# shared_machine.csv). Usage: bench/shared_machine.sh [AERODEM] [REPS]
set -u
AD=${1:-build/aerodem}
REPS=${2:-2}
SCENE=$(dirname "$0")/../scenes/default.ini
OUTDIR=$(mktemp -d)
trap 'rm -rf "$OUTDIR"; [ -n "${pids:-}" ] && kill $pids 2>/dev/null' EXIT
one() { # LABEL THREADS ENV...: one run, a CSV row
  local label=$1 threads=$2
  shift 2
  local s
  s=$(date +%s.%N)
  env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$@" "$AD" run "$SCENE" --steps 20000 --threads "$threads" --quiet \
    --set output.video=no --set output.frame_interval=0 --set output.png=no --set output.vtk=no \
    --out "$OUTDIR/run" >/dev/null 2>"$OUTDIR/err"
  local took chosen
  took=$(echo "$(date +%s.%N) - $s" | bc)
  chosen=$(sed -n 's/.*the run takes \([0-9]*\) thread.*/\1/p' "$OUTDIR/err")
  [ "$threads" = 0 ] && [ -z "$chosen" ] && chosen=$(nproc)
  echo "$LOAD,$label,$took,$chosen"
}
echo "load,run,wall_s,threads_chosen"
for LOAD in quiet loaded; do
  pids=""
  if [ $LOAD = loaded ]; then
    for _ in 1 2 3 4; do (while :; do :; done) & pids="$pids $!"; done
    sleep 1
  fi
  for _ in $(seq 1 "$REPS"); do
    one default 2
    one passive 2 OMP_WAIT_POLICY=passive
    one spin1e4 2 GOMP_SPINCOUNT=10000
    one spin1e5 2 GOMP_SPINCOUNT=100000
    one one_thread 1
    one auto 0
  done
  [ -n "$pids" ] && kill $pids
  pids=""
done
