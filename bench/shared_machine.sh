#!/usr/bin/env bash
# A run on a machine shared with other work: wall time of 20000 steps of scenes/default.ini on 2
# threads under each OpenMP waiting policy, on 1 thread, and with the threads left to aerodem
# (app/machine_load.c at the start, then the library's team, src/cpu/thread_team_cpu.c), on an idle
# machine, beside 4 busy loops, and with the 4 loops arriving 0.5 s after the run started (which the
# look at the start cannot see). Prints CSV (bench/results/cpu/shared_machine.csv).
# Usage: [PHASES="quiet loaded arriving"] [RUNS="default passive spin1e4 spin1e5 one_thread auto"]
#        bench/shared_machine.sh [AERODEM] [REPS]
set -u
AD=${1:-build/aerodem}
REPS=${2:-2}
SCENE=$(dirname "$0")/../scenes/default.ini
OUTDIR=$(mktemp -d)
trap 'rm -rf "$OUTDIR"; [ -n "${pids:-}" ] && kill $pids 2>/dev/null' EXIT
PHASES=${PHASES:-quiet loaded arriving}
RUNS=${RUNS:-default passive spin1e4 spin1e5 one_thread auto}
busy() { for _ in 1 2 3 4; do (while :; do :; done) & pids="$pids $!"; done; }
arrive() { # the 4 loops 0.5 s from now, their ids in $OUTDIR/arrived
  sleep 0.5
  for _ in 1 2 3 4; do (while :; do :; done) & echo $! >>"$OUTDIR/arrived"; done
  wait
}
one() { # LABEL THREADS ENV...: one run, a CSV row
  local label=$1 threads=$2
  shift 2
  case " $RUNS " in *" $label "*) ;; *) return ;; esac
  local s
  s=$(date +%s.%N)
  if [ $LOAD = arriving ]; then : >"$OUTDIR/arrived"; arrive & arriving=$!; fi
  env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$@" "$AD" run "$SCENE" --steps 20000 --threads "$threads" --quiet \
    --set output.video=no --set output.frame_interval=0 --set output.png=no --set output.vtk=no \
    --out "$OUTDIR/run" >/dev/null 2>"$OUTDIR/err"
  local took chosen
  took=$(echo "$(date +%s.%N) - $s" | bc)
  if [ $LOAD = arriving ]; then kill $(cat "$OUTDIR/arrived") "$arriving" 2>/dev/null; wait "$arriving" 2>/dev/null; fi
  chosen=$(sed -n 's/.*the run takes \([0-9]*\) thread.*/\1/p' "$OUTDIR/err")
  [ "$threads" = 0 ] && [ -z "$chosen" ] && chosen=$(nproc)
  echo "$LOAD,$label,$took,$chosen"
}
echo "load,run,wall_s,threads_chosen"
for LOAD in $PHASES; do
  pids=""
  if [ $LOAD = loaded ]; then
    busy
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
