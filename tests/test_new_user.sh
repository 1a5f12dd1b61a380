#!/usr/bin/env bash
# The rough edges a new user met (issue 23), each as the user met it: a run shorter than the scene's
# settling, a free stream changed on the command line whichever key the scene gave it by, a run too
# short to average, discs pressed deep into each other, numbers in scene.ini as written, frames on
# one colour scale, a machine busy with other work, and `scene-keys --help`.
#
# Usage: test_new_user.sh AERODEM SOURCE_DIR. Prints each check; exits 1 at the first that fails.
set -u

AD=${1:?usage: test_new_user.sh AERODEM SOURCE_DIR}
SRC=${2:?usage: test_new_user.sh AERODEM SOURCE_DIR}
SCENE=$SRC/scenes/default.ini
. "$(dirname "$0")/cli_lib.sh" new_user
QUICK=(--set output.video=no --threads 1)
key() { sed -n "s/^$2 = //p" "$1/scene.ini"; } # key DIR NAME: its value in DIR/scene.ini

# The default scene settles for 50000 of its 150000 steps: --steps 300 settles for a third of 300.
run short run "$SCENE" --steps 300 "${QUICK[@]}" --out "$T/short"
expect_rc 0 "a run shorter than the scene's settling" short
expect_in "$T/short.err" "settle_steps shortened from 50000 to 100" "the note"
[ "$(key "$T/short" settle_steps)" = 100 ] || fail "scene.ini: settle_steps $(key "$T/short" settle_steps), expected 100"
expect_in "$T/short.out" "lift coefficient CL = " "the coefficients, averaged"
ok "--steps 300 on a scene that settles for 50000 of 150000 steps: settles for 100, noted, kept in scene.ini"

# A settling as long as the scene's run: refused, naming the key.
run too_long run "$SCENE" --set run.steps=300 --set run.settle_steps=300 "${QUICK[@]}" --out "$T/too_long"
expect_rc 2 "settle_steps = steps" too_long
expect_in "$T/too_long.err" "settle_steps" "the message"
ok "a settling as long as the run is refused, naming run.settle_steps"

# Too short to average: say why, not "CL = nan +- nan".
run one_row run "$SCENE" --steps 60 "${QUICK[@]}" --out "$T/one_row"
expect_rc 0 "60 steps" one_row
expect_in "$T/one_row.out" "lift and drag not averaged: 1 interval(s) of output.force_interval = 100 steps" "the reason"
grep -q "nan" "$T/one_row.out" && fail "a run too short to average prints nan" "$T/one_row.out"
ok "a run too short to average says why, and prints no nan"

# The scene gives mach = 3: --set gas.velocity=2 replaces it, and the resolved scene.ini (which gives
# the velocity) takes --set gas.mach=5; of two on one command line the last counts.
run vel run "$SCENE" --steps 60 --set gas.velocity=2 "${QUICK[@]}" --out "$T/vel"
expect_rc 0 "--set gas.velocity=2 on a scene that gives mach" vel
expect_in "$T/vel.out" "free stream U = 2 m/s" "the stream"
[ "$(key "$T/vel" velocity)" = 2 ] || fail "scene.ini: velocity $(key "$T/vel" velocity), expected 2"
run mach run "$T/vel/scene.ini" --steps 60 --set gas.mach=5 "${QUICK[@]}" --out "$T/mach"
expect_rc 0 "--set gas.mach=5 on the resolved scene.ini" mach
expect_in "$T/mach.out" "Mach M = 5 " "the stream"
run both run "$SCENE" --steps 60 --set gas.speed_ratio=2 --set gas.mach=4 "${QUICK[@]}" --out "$T/both"
expect_rc 0 "--set gas.speed_ratio=2 --set gas.mach=4" both
expect_in "$T/both.out" "Mach M = 4 " "the stream"
ok "the free stream set on the command line replaces the scene's, by velocity, speed_ratio or mach"

# Soft contacts at this stream: a warning naming the key and a stiffness that would do.
run soft run "$SCENE" --steps 300 --set gas.stiffness=30 "${QUICK[@]}" --out "$T/soft"
expect_rc 0 "stiffness 30 N/m" soft
expect_in "$T/soft.out" "warning: discs overlapped by up to" "the warning"
expect_in "$T/soft.out" "raise gas.stiffness (now 30 N/m" "the key"
grep -q "warning: discs overlapped" "$T/short.out" && fail "the shipped scene warns of overlaps" "$T/short.out"
ok "discs overlapping by more than a fifth of a radius: a warning with the key; the shipped scene has none"

# Numbers as written: 0.1, not 0.10000000000000001, in scene.ini and docs/SCENES.md.
[ "$(key "$T/short" max_move)" = 0.1 ] || fail "scene.ini: max_move = $(key "$T/short" max_move)"
grep -q "0000000000" "$T/short/scene.ini" && fail "scene.ini holds float noise" "$T/short/scene.ini"
grep -q "0000000000" "$SRC/docs/SCENES.md" && fail "docs/SCENES.md holds float noise"
ok "scene.ini and docs/SCENES.md print 0.1 as 0.1"

grep -qE "^time [0-9.e+-]+ s$" "$T/short/summary.txt" || fail "summary.txt: time without its unit" "$T/short/summary.txt"
grep -qE "^max_overlap [0-9.e+-]+ radius$" "$T/short/summary.txt" || fail "summary.txt: max_overlap without its unit" \
    "$T/short/summary.txt"
ok "summary.txt gives the units of its dimensional values"

# Frames coloured by speed on one scale for the run (the stream's 0 to U + 3 sigma: 4.243 + 3 for the
# default scene), named for it; by pressure when asked.
run frames run "$SCENE" --steps 300 --set output.frame_interval=150 "${QUICK[@]}" --out "$T/frames"
expect_rc 0 "frames every 150 steps" frames
expect_in "$T/frames.out" "frames: discs coloured by their speed, 0 to 7.243 m/s on every frame of the run" "the scale"
[ "$(grep -c "frames: discs coloured" "$T/frames.out")" = 1 ] || fail "the frames' scale was chosen more than once" \
    "$T/frames.out"
for k in 000000 000001; do # at steps 150 and 300
    [ -s "$T/frames/frames/speed_$k.png" ] || fail "no frames/speed_$k.png" "$T/frames.out"
done
run pframes run "$SCENE" --steps 150 --set output.frames=pressure "${QUICK[@]}" --out "$T/pframes"
expect_rc 0 "frames = pressure" pframes
[ -s "$T/pframes/frames/pressure_000000.png" ] || fail "no frames/pressure_000000.png" "$T/pframes.out"
ok "frames: speed on one fixed scale by default (frames/speed_*.png), pressure when asked"

# The BVH broad phase says so at the start, not the grid's size.
run bvh run "$SRC/scenes/flat_plate_rarefied.ini" --steps 20 --set run.broad_phase=bvh "${QUICK[@]}" --out "$T/bvh"
expect_rc 0 "broad_phase = bvh" bvh
expect_in "$T/bvh.out" "a Morton-code BVH over the discs" "the start"
grep -q "grid [0-9]* x [0-9]* cells" "$T/bvh.out" && fail "a BVH run prints the grid's size" "$T/bvh.out"
ok "a run on the BVH names it at the start"

# A sweep shows each point's progress, and its own line per point.
run sweep sweep "$SCENE" --steps 40 --set body.aoa=0:4:4 "${QUICK[@]}" --out "$T/sweep"
expect_rc 0 "a sweep of two points" sweep
[ "$(grep -c "step 40/40 (100%)" "$T/sweep.err")" = 2 ] || fail "a sweep without each point's progress" "$T/sweep.err"
expect_in "$T/sweep.out" "aoa = 4 (2 of 2)" "the sweep's line per point"
grep -q "free stream U" "$T/sweep.out" && fail "a sweep's point printed its whole report" "$T/sweep.out"
ok "a sweep shows each point's progress line and nothing more of it"

# A machine busy with other work: a run that leaves the threads to aerodem takes the free cores (one
# here), says so, and names --threads; --threads given is taken as given. Busy loops, twice the cores.
cores=$(nproc)
LOOPS=""
for _ in $(seq 1 $((2 * cores))); do (while :; do :; done) & LOOPS="$LOOPS $!"; done
sleep 0.5
run busy run "$SCENE" --steps 50 --set output.video=no --set run.threads=0 --out "$T/busy"
run busy_given run "$SCENE" --steps 50 --set output.video=no --threads "$cores" --out "$T/busy_given"
kill $LOOPS
expect_rc 0 "a run on a busy machine" busy
expect_in "$T/busy.err" "cores are busy with other work: the run takes 1 thread" "the note"
expect_in "$T/busy.err" "--threads $cores takes them all" "the key"
expect_in "$T/busy.out" "backend cpu (1 threads)" "the start"
[ "$(sed -n 's/^threads = //p' "$T/busy/scene.ini")" = 0 ] || fail "scene.ini does not keep threads = 0" "$T/busy/scene.ini"
expect_rc 0 "--threads on a busy machine" busy_given
grep -q "cores are busy" "$T/busy_given.err" && fail "--threads given, yet the note" "$T/busy_given.err"
expect_in "$T/busy_given.out" "($cores threads)" "the start"
ok "a busy machine: threads = 0 takes the free cores (1 of $cores) with a note; --threads $cores is taken as given"

run keys_help scene-keys --help
expect_rc 0 "scene-keys --help" keys_help
expect_in "$T/keys_help.out" "usage: aerodem scene-keys" "scene-keys --help"
run keys_extra scene-keys extra
expect_rc 2 "scene-keys extra" keys_extra
expect_in "$T/keys_extra.err" "scene-keys takes no argument, not 'extra'" "the message"
ok "scene-keys --help prints its usage; an argument is refused"

echo "all $NCHECK checks passed"
