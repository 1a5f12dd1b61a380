#!/usr/bin/env bash
# `aerodem sweep --resume`: a sweep of 3 points interrupted with SIGINT during its second point and
# resumed equals an uninterrupted one (polar.csv and polar.png byte for byte), without running its
# first point again; the Ctrl-C message gives the command that continues; folders of another sweep or
# scene are refused, naming the difference; a point whose record was lost after its final checkpoint
# is finished from it; --resume into a new folder just runs.
#
# Usage: test_sweep_resume.sh AERODEM. Prints each check; exits 1 at the first that fails.
set -u
AD=${1:?usage: test_sweep_resume.sh AERODEM}
. "$(dirname "$0")/cli_lib.sh" sweep_resume

# test_sweep.sh's free-molecular airfoil on one thread (bit-identical across a resume), made longer:
# a point is about a second in a release build, with a checkpoint every 500 of its 30000 steps
BASE=("$(dirname "$0")/data/sweep_fm.ini" --set run.steps=30000 --set run.settle_steps=3000
      --set run.deterministic=yes --set output.checkpoint_interval=500)
SWEEP=(sweep "${BASE[@]}" --set body.aoa=-15:15:15 --quiet)
# every file of a folder with its inode, modification time (ns) and size: a file written again differs
stamp() { (cd "$1" && find . -type f -printf '%P %i %T@ %s\n' | sort); }
last_step() { tail -n 1 "$1" 2>/dev/null | cut -d, -f1; }

run ref "${SWEEP[@]}" --out "$T/ref"
expect_rc 0 "the uninterrupted sweep" ref
[ "$(wc -l <"$T/ref/polar.csv")" = 4 ] || fail "the uninterrupted polar has not 3 rows" "$T/ref/polar.csv"
ok "the uninterrupted sweep of 3 points"

# The sweep into I, stopped (SIGSTOP) once its second point wrote a checkpoint; while it is stopped
# nothing moves, so what the folder shows is where it is: inside the second point (no folder of the
# third, no summary of the second, its forces rows before half of its steps). Then SIGINT and SIGCONT.
# Should a loaded machine have let it go too far, it is killed and started again.
interrupted=0
for attempt in 1 2 3; do
    rm -rf "$T/I"
    "$AD" "${SWEEP[@]}" --out "$T/I" >"$T/int.out" 2>"$T/int.err" &
    BG=$!
    while kill -0 "$BG" 2>/dev/null && [ ! -f "$T/I/aoa_0/checkpoint.ckpt" ]; do sleep 0.02; done
    kill -STOP "$BG" 2>/dev/null
    step=$(last_step "$T/I/aoa_0/forces.csv")
    if [ -f "$T/I/aoa_0/checkpoint.ckpt" ] && [ ! -e "$T/I/aoa_15" ] && [ ! -e "$T/I/aoa_0/summary.txt" ] &&
        [ -n "$step" ] && [ "$step" -lt 15000 ]; then
        kill -INT "$BG"
        kill -CONT "$BG"
        wait "$BG"
        RC=$?
        BG=""
        interrupted=1
        break
    fi
    kill -9 "$BG" 2>/dev/null
    kill -CONT "$BG" 2>/dev/null
    wait "$BG" 2>/dev/null
    BG=""
    echo "note: attempt $attempt found the sweep past the start of its second point (step '$step'); again"
done
[ "$interrupted" = 1 ] || fail "three attempts could not stop the sweep inside its second point" "$T/int.err"
expect_rc 130 "the sweep interrupted in its second point" int
grep -q '^status interrupted' "$T/I/aoa_0/summary.txt" || fail "point 2 was not interrupted" "$T/I/aoa_0/summary.txt"
[ -f "$T/I/aoa_0/checkpoint.ckpt" ] || fail "point 2 has no checkpoint"
[ ! -e "$T/I/aoa_0/sweep_point.txt" ] || fail "the interrupted point has a record of a finished point"
[ ! -e "$T/I/aoa_15" ] || fail "point 3 has a folder after an interruption in point 2"
[ "$(wc -l <"$T/I/polar.csv")" = 2 ] || fail "the polar of the interrupted sweep has not the 1 point done" "$T/I/polar.csv"
cmp -s <(head -n 2 "$T/I/polar.csv") <(head -n 2 "$T/ref/polar.csv") || fail "point 1's row differs" "$T/I/polar.csv"
ok "SIGINT in point 2: exit 130, its checkpoint, no folder of point 3, the polar of point 1"

# the message gives the command that continues: this command line with --resume, runnable as it is
again=$(sed -n 's/^  continue with: //p' "$T/int.err")
want="$AD ${SWEEP[*]} --out $T/I --resume"
[[ "$want" =~ ^[-A-Za-z0-9_@%+=:,./\ ]*$ ]] && { [ "$again" = "$want" ] ||
    fail "the Ctrl-C message gives '$again', not '$want'" "$T/int.err"; }
expect_in "$T/int.err" "stopped at point 2 of 3" "the sweep's own line"
ok "the Ctrl-C message gives the command that continues: $again"

before=$(stamp "$T/I/aoa_-15")
id2=$(sed -n 's/^; run_id //p' "$T/I/aoa_0/scene.ini")
eval "$again" >"$T/res.out" 2>"$T/res.err"
RC=$?
expect_rc 0 "the sweep resumed with the printed command" res
[ "$(stamp "$T/I/aoa_-15")" = "$before" ] || fail "point 1 was run again: its files were written"
[ -f "$T/I/aoa_-15/sweep_point.txt" ] || fail "point 1 has no record"
# a fresh run would give the same numbers; continued from its checkpoint it is the same run
[ -n "$id2" ] && [ "$(sed -n 's/^; run_id //p' "$T/I/aoa_0/scene.ini")" = "$id2" ] &&
    grep -q "^run_id $id2\$" "$T/I/aoa_0/sweep_point.txt" ||
    fail "point 2 was run afresh, not continued (run $id2)" "$T/I/aoa_0/scene.ini"
cmp -s "$T/I/polar.csv" "$T/ref/polar.csv" ||
    fail "the resumed sweep's polar.csv differs from the uninterrupted one's" "$T/I/polar.csv" "$T/ref/polar.csv"
cmp -s "$T/I/polar.png" "$T/ref/polar.png" || fail "the resumed sweep's polar.png differs from the uninterrupted one's"
for f in forces.csv summary.txt frames.csv; do
    cmp -s "$T/I/aoa_0/$f" "$T/ref/aoa_0/$f" ||
        fail "point 2's $f differs after its resume" "$T/I/aoa_0/$f" "$T/ref/aoa_0/$f"
done
ok "--resume: point 1 untouched, point 2 continued, point 3 run; the polar byte for byte the uninterrupted one"

# a kill between point 3's final checkpoint and its record: --resume finishes it from the checkpoint
before=$(stamp "$T/I/aoa_-15")$(stamp "$T/I/aoa_0")
rm "$T/I/aoa_15/sweep_point.txt" "$T/I/aoa_15/density.png"
run fin "${SWEEP[@]}" --out "$T/I" --resume
expect_rc 0 "--resume with point 3's record lost" fin
[ "$(stamp "$T/I/aoa_-15")$(stamp "$T/I/aoa_0")" = "$before" ] || fail "points 1 and 2 were written again"
[ -s "$T/I/aoa_15/density.png" ] && [ -f "$T/I/aoa_15/sweep_point.txt" ] ||
    fail "point 3's end outputs were not written again"
cmp -s "$T/I/polar.csv" "$T/ref/polar.csv" ||
    fail "the polar differs after finishing point 3 from its checkpoint" "$T/I/polar.csv"
ok "a point whose record was lost after its final checkpoint: finished from it, the polar the same"

# another sweep in the folder: refused, naming the difference, nothing changed
before=$(stamp "$T/I")
run other "${SWEEP[@]}" --set gas.area_fraction=0.3 --out "$T/I" --resume
expect_rc 2 "--resume of a sweep with another --set" other
expect_in "$T/other.err" "area_fraction = 0.4 there, 0.3 in this sweep" "the refusal of another scene"
run range sweep "${BASE[@]}" --set body.aoa=-10:10:10 --quiet --out "$T/I" --resume
expect_rc 2 "--resume of a sweep over another range" range
expect_in "$T/range.err" "range = -15:15:15 there, -10:10:10 in this sweep" "the refusal of another range"
run steps "${SWEEP[@]}" --steps 20000 --out "$T/I" --resume
expect_rc 2 "--resume of a sweep with other --steps" steps
expect_in "$T/steps.err" "steps = 30000 there, 20000 in this sweep" "the refusal of other --steps"
[ "$(stamp "$T/I")" = "$before" ] || fail "a refused --resume changed the folder"
ok "--resume into a folder of another sweep (a --set, the range, --steps): refused, naming the difference, nothing written"

# a folder without sweep.ini (an older aerodem) whose points hold another scene: refused by point
cp -r "$T/I" "$T/O" && rm "$T/O/sweep.ini"
run old "${SWEEP[@]}" --set gas.area_fraction=0.3 --out "$T/O" --resume
expect_rc 2 "--resume into points of another scene" old
expect_in "$T/old.err" "$T/O/aoa_-15/" "the refusal names the point's folder"
expect_in "$T/old.err" "area_fraction = 0.4 there, 0.3 in this sweep" "the refusal of a point of another scene"
ok "--resume into point folders of another scene (no sweep.ini): refused, naming the folder and the difference"

run new sweep "${BASE[@]}" --set body.aoa=0:0:1 --steps 6000 --quiet --out "$T/N/deep" --resume
expect_rc 0 "--resume into a folder that does not exist" new
[ "$(wc -l <"$T/N/deep/polar.csv")" = 2 ] && [ -f "$T/N/deep/sweep.ini" ] ||
    fail "--resume into a new folder did not run the sweep" "$T/new.err"
ok "--resume into a new folder runs the sweep"

echo "all $NCHECK checks passed"
