#!/usr/bin/env bash
# The program under mpirun, as a user runs it (app/ranks.c): `mpirun -np N aerodem run SCENE.ini`.
#  - the shipped default scene on 1 process (backend = mpi) and on 2, 3 and 4 ranks: every output file the
#    same byte for byte (forces.csv, summary.txt, the fields' .vti, the frames' .vtp and .png, the heat
#    maps), one progress and summary on the terminal, no scratch folder left behind;
#  - Ctrl-C (SIGINT) to rank 1 of 3 stops every rank at one step, writes the checkpoint and exits 130;
#    the checkpoint resumed on 2 ranks ends where a run of one process ends (the forces bit for bit);
#  - a folder rank 0 cannot make, an error of rank 1 alone, and a rank killed mid-run end the job with a
#    message, not a hang;
#  - a body with a diffuse surface: its forces and per-panel sums (surface.csv) the same on 2 ranks;
#  - a 3D scene (scenes/sphere3d.ini made small, its sphere's surface diffuse) on 2 ranks: every output
#    file the same byte for byte as one process's (forces.csv, surface.csv, summary.txt, the 3D fields);
#  - what does not run over ranks is refused once, by name: backend = cpu, sweep, --live.
# Usage: test_mpi_cli.sh AERODEM SOURCE_DIR
set -uo pipefail
exe=$1 src=$2
. "$(dirname "$0")/mpi_lib.sh"
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
scene="$src/scenes/default.ini"
short=(--steps 1500 --set run.settle_steps=500 --set output.frame_interval=500 --set output.video=no)
no_scratch() {
  [ -z "$(ls -A "$TMPDIR")" ] && return
  bad "$1: scratch folders left in TMPDIR: $(ls "$TMPDIR"; ls "$TMPDIR"/*)"
  ps -eo pid,stat,etime,args | grep -E "aerodem (run|resume|sweep|info)" | grep -v grep
  rm -rf "${TMPDIR:?}"/*
}

# --- the same outputs on 1 to 4 ranks
timeout 300 "$exe" run "$scene" --backend mpi "${short[@]}" --out "$work/np1" > "$work/np1.log" 2>&1 ||
  { bad "one process, backend = mpi"; tail -5 "$work/np1.log"; }
files=$(cd "$work/np1" && find . -type f ! -name checkpoint.ckpt ! -name scene.ini | sort)
[ "$(echo "$files" | wc -l)" -ge 10 ] || bad "one process wrote only: $files"
for np in 2 3 4; do
  timeout 300 "${mpi[@]}" -np $np "$exe" run "$scene" "${short[@]}" --out "$work/np$np" > "$work/np$np.log" 2>&1 ||
    { bad "$np ranks exited $?"; tail -5 "$work/np$np.log"; }
  grep -q "backend mpi ($np ranks x" "$work/np$np.log" || bad "$np ranks: the start line does not say $np ranks"
  [ "$(grep -c "^  done:" "$work/np$np.log")" = 1 ] || bad "$np ranks: not one summary on the terminal"
  same=0 differ=""
  for f in $files; do
    if cmp -s "$work/np1/$f" "$work/np$np/$f"; then same=$((same + 1)); else differ="$differ $f"; fi
  done
  [ -z "$differ" ] || bad "$np ranks: differs from one process:$differ"
  grep -q "^backend = mpi" "$work/np$np/scene.ini" || bad "$np ranks: scene.ini does not say backend = mpi"
  echo "$np ranks: $same files the same as one process's; $(grep '^cd \|^cl ' "$work/np$np/summary.txt" | tr '\n' ' ')"
  no_scratch "$np ranks"
done

# --- a diffuse body over the ranks: its panels' sums (integers, summed over the ranks) and surface.csv
dscene="$src/scenes/diffuse_airfoil.ini"
dshort=(--steps 1000 --set run.settle_steps=400 --set output.force_interval=200 --set output.video=no)
timeout 300 "$exe" run "$dscene" --backend mpi "${dshort[@]}" --out "$work/d1" > "$work/d1.log" 2>&1 ||
  { bad "the diffuse airfoil on one process"; tail -5 "$work/d1.log"; }
timeout 300 "${mpi[@]}" -np 2 "$exe" run "$dscene" "${dshort[@]}" --out "$work/d2" > "$work/d2.log" 2>&1 ||
  { bad "the diffuse airfoil on 2 ranks"; tail -5 "$work/d2.log"; }
for f in forces.csv surface.csv summary.txt; do
  [ -s "$work/d1/$f" ] || bad "the diffuse airfoil wrote no $f"
  cmp -s "$work/d1/$f" "$work/d2/$f" || bad "the diffuse airfoil on 2 ranks: $f differs from one process's"
done
echo "the diffuse airfoil on 2 ranks: forces.csv, surface.csv ($(($(wc -l < "$work/d2/surface.csv") - 1)) panels) and summary.txt the same as one process's"
no_scratch "the diffuse airfoil"

# --- Ctrl-C to rank 1 of 3, resumed on 2 ranks, against one process
rank_pid() { # OUT RANK: the pid of that rank of the run writing to OUT
  local p
  for p in $(pgrep -f -- "--out $1\$"); do
    grep -qx "OMPI_COMM_WORLD_RANK=$2" < <(tr '\0' '\n' < /proc/$p/environ 2>/dev/null) && { echo "$p"; return; }
  done
}
long=(--steps 30000 --set run.settle_steps=500 --set output.video=no --set output.frame_interval=100000)
timeout 300 "${mpi[@]}" -np 3 "$exe" run "$scene" "${long[@]}" --out "$work/int" > "$work/int.log" 2>&1 &
job=$!
for _ in $(seq 600); do # until the run has written force rows (its handlers are in place)
  [ "$({ wc -l < "$work/int/forces.csv"; } 2>/dev/null || echo 0)" -ge 4 ] && break
  sleep 0.1
done
pid=$(rank_pid "$work/int" 1)
[ -n "$pid" ] && kill -INT "$pid" || bad "no rank 1 to interrupt"
wait $job; rc=$?
[ $rc = 130 ] || { bad "Ctrl-C to rank 1: mpirun exited $rc, not 130"; tail -5 "$work/int.log"; }
at=$(sed -n 's/^aerodem: interrupted at step \([0-9]*\);.*/\1/p' "$work/int.log")
grep -q "mpirun -np 3 aerodem resume $work/int/checkpoint.ckpt" "$work/int.log" ||
  { bad "the interrupt does not say how to continue"; tail -12 "$work/int.log"; }
[ -n "$at" ] && [ "$at" -lt 6000 ] || bad "interrupted at step '$at' (expected before 6000)"
echo "Ctrl-C to rank 1 of 3: every rank stopped at step $at, exit $rc"
no_scratch "the interrupted run"
timeout 300 "${mpi[@]}" -np 2 "$exe" resume "$work/int/checkpoint.ckpt" --steps 6000 > "$work/res.log" 2>&1 ||
  { bad "resume on 2 ranks"; tail -5 "$work/res.log"; }
timeout 300 "$exe" run "$scene" --backend mpi "${long[@]}" --steps 6000 --out "$work/ref" > "$work/ref.log" 2>&1 ||
  { bad "the uninterrupted run"; tail -5 "$work/ref.log"; }
# the forces, the step and the counts bit for bit; the free-stream probe (columns 17-19: field sums, reloaded
# into one column group of the new decomposition) to rounding
python3 - "$work/ref/forces.csv" "$work/int/forces.csv" <<'PY' || fail=1
import sys
a, b = (open(p).read().split("\n") for p in sys.argv[1:3])
head = a[0].split(",")
bad = [] if len(a) == len(b) else ["%d rows against %d" % (len(b), len(a))]
for ra, rb in zip(a[1:], b[1:]):
    x, y = ra.split(","), rb.split(",")
    for k, (u, v) in enumerate(zip(x, y)):
        exact = not head[k].startswith("free_stream")
        if (u != v) if exact else abs(float(u) - float(v)) > 1e-5 * abs(float(u)):
            bad.append("step %s %s: %s against %s" % (x[0], head[k], v, u))
print("saved on 3 ranks, resumed on 2: %d force rows against one process's, %s" % (len(b) - 2, "; ".join(bad[:3]) or "the same"))
sys.exit(1 if bad else 0)
PY
no_scratch "the resumed run"

# --- failures end the job, with a message
touch "$work/afile"
out=$(timeout 120 "${mpi[@]}" -np 2 "$exe" run "$scene" "${short[@]}" --out "$work/afile/x" 2>&1); rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || bad "a folder rank 0 cannot make: exit $rc"
grep -q "cannot create the output folder $work/afile/x" <<< "$out" || bad "a folder rank 0 cannot make: no message"
echo "a folder rank 0 cannot make: exit $rc, $(echo "$out" | grep -c "aerodem: error") error line"
# a silent rank's own error (rank 1's scratch folder under a TMPDIR so long that its run folder's path
# does not fit): rank 1 tells it, prefixed, and ends the job; rank 0, waiting in a step, goes with it
deep="$work/r1"
while [ $((${#deep} + 251)) -lt 995 ]; do deep="$deep/$(printf 'd%.0s' $(seq 250))"; done
deep="$deep/$(printf 'e%.0s' $(seq $((995 - ${#deep} - 1))))"
mkdir -p "$deep"
printf '%s\n' "if [ \"\$OMPI_COMM_WORLD_RANK\" = 1 ]; then export TMPDIR='$deep'; fi" 'exec "$@"' > "$work/rank1_tmp.sh"
out=$(timeout 120 "${mpi[@]}" -np 2 bash "$work/rank1_tmp.sh" "$exe" run "$scene" "${short[@]}" --out "$work/own" 2>&1); rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || bad "rank 1's own error: exit $rc"
grep -q "^aerodem: rank 1 of 2 failed:" <<< "$out" && grep -q "^  rank 1: aerodem: error: rank 1: its scratch" <<< "$out" ||
  { bad "rank 1's own error is not told"; echo "$out" | head -8; }
[ -z "$(ls -A "$deep")" ] || bad "rank 1 left its scratch folder: $(ls "$deep")"
echo "rank 1's own error: told by rank 1, exit $rc"
timeout 300 "${mpi[@]}" -np 3 "$exe" run "$scene" "${long[@]}" --out "$work/kill" > "$work/kill.log" 2>&1 &
job=$!
for _ in $(seq 600); do
  [ "$({ wc -l < "$work/kill/forces.csv"; } 2>/dev/null || echo 0)" -ge 2 ] && break
  sleep 0.1
done
pid=$(rank_pid "$work/kill" 1)
t0=$(date +%s)
[ -n "$pid" ] && kill -KILL "$pid" || bad "no rank 1 to kill"
wait $job; rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || bad "rank 1 killed: mpirun exited $rc"
grep -qi "signal 9\|killed" "$work/kill.log" || bad "rank 1 killed: no message"
echo "rank 1 of 3 killed: the job ended in $(($(date +%s) - t0)) s, exit $rc"
rm -rf "${TMPDIR:?}"/* # what the killed ranks could not remove (the next job's ranks remove such folders too)

# --- a 3D scene over the ranks: a small sphere3d (30 x 16 x 16 m, about 1100 spheres), its surface diffuse
s3=(--steps 400 --set run.settle_steps=100 --set tunnel.width=30 --set tunnel.height=16 --set tunnel.depth=16
    --set body.chord=6 --set body.subdivisions=2 --set body.x=10 --set body.y=8 --set body.z=8 --set body.surface=diffuse
    --set output.force_interval=100 --set output.frame_interval=200 --set output.video=no)
timeout 300 "$exe" run "$src/scenes/sphere3d.ini" --backend mpi "${s3[@]}" --out "$work/t1" > "$work/t1.log" 2>&1 ||
  { bad "the 3D sphere on one process"; tail -5 "$work/t1.log"; }
timeout 300 "${mpi[@]}" -np 2 "$exe" run "$src/scenes/sphere3d.ini" "${s3[@]}" --out "$work/t2" > "$work/t2.log" 2>&1 ||
  { bad "the 3D sphere on 2 ranks"; tail -5 "$work/t2.log"; }
grep -q "backend mpi (2 ranks x" "$work/t2.log" || bad "the 3D sphere on 2 ranks: the start line does not say 2 ranks"
files3=$(cd "$work/t1" && find . -type f ! -name checkpoint.ckpt ! -name scene.ini | sort)
for f in ./forces.csv ./surface.csv ./summary.txt; do grep -qx "$f" <<< "$files3" || bad "the 3D sphere wrote no $f"; done
differ=""
for f in $files3; do cmp -s "$work/t1/$f" "$work/t2/$f" || differ="$differ $f"; done
[ -z "$differ" ] || bad "the 3D sphere on 2 ranks differs from one process:$differ"
echo "the 3D sphere on 2 ranks: $(echo "$files3" | wc -l) files the same as one process's"
no_scratch "the 3D sphere"

# --- refused, once, by name
refused() { # WHAT WANT CMD...: exit 2 or 1 within the timeout, WANT said once
  local what=$1 want=$2; shift 2
  local o; o=$(timeout 120 "$@" 2>&1); local rc=$?
  [ $rc -ne 0 ] && [ $rc -ne 124 ] || bad "$what: exit $rc"
  [ "$(echo "$o" | grep -c -- "$want")" = 1 ] || { bad "$what: '$want' not said once"; echo "$o" | head -5; }
  echo "$what: refused (exit $rc)"
}
refused "backend = cpu on 2 ranks" "backend cpu runs in one process" \
  "${mpi[@]}" -np 2 "$exe" run "$scene" --backend cpu --steps 100 --out "$work/c"
refused "a sweep on 2 ranks" "sweep runs its points in one process" \
  "${mpi[@]}" -np 2 "$exe" sweep "$scene" --set body.aoa=0:4:4 --steps 100 --out "$work/sw"
refused "--live on 2 ranks" "live watches one process" \
  "${mpi[@]}" -np 2 "$exe" run "$scene" --live 0 --steps 100 --out "$work/l"
# a job's silent ranks remove the scratch folders of ranks that are gone (an aborted job's ranks can
# outlive its mpirun for a moment: another job a second later)
for k in 1 2 3 4; do
  info=$("${mpi[@]}" -np 2 "$exe" info 2>&1)
  grep -q "mpi backend: yes .*this job: 2 processes" <<< "$info" || bad "info on 2 ranks: $info"
  [ -z "$(ls -A "$TMPDIR")" ] && break
  sleep 1
done
no_scratch "the refusals and a job after them"
[ $fail = 0 ] && echo "ok"
exit $fail
