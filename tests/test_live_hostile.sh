#!/usr/bin/env bash
# The live view under attack: while a run with --live goes on, tests/live_hostile.py throws malformed
# and hostile requests at its server (traversals, foreign hosts, bad methods, huge requests, hundreds
# of connections, viewers waiting, bursts past the rate). Then the run is ended with Ctrl-C at some
# step K and resumed to K + 2000, and its forces.csv and coefficients must equal those of a run of
# K + 2000 steps without a live view, byte for byte: nothing a viewer does changes the run.
#
# Usage: test_live_hostile.sh AERODEM SOURCE_DIR. Needs /usr/bin/python3.
set -u
AD=${1:?usage: test_live_hostile.sh AERODEM SOURCE_DIR}
SRC=${2:?usage: test_live_hostile.sh AERODEM SOURCE_DIR}
. "$(dirname "$0")/cli_lib.sh" live_hostile
SCENE=$SRC/scenes/default.ini
# settling of 1000 steps: the hostile phase lasts thousands, so the averages start before the Ctrl-C on
# both runs (with 10000, a slow machine's K + 2000 fell inside the settling, which shortens a plain run's
# settling to the scene's share but not a resumed one's: CI, 2026-12-02)
SAME=(--threads 2 --set run.settle_steps=1000 --set output.video=no --set output.frame_interval=0)

"$AD" run "$SCENE" --steps 100000000 "${SAME[@]}" --out "$T/live" --live 0 >"$T/live.out" 2>"$T/live.err" &
BG=$!
PORT=""
for _ in $(seq 1 300); do
    PORT=$(sed -n 's|^aerodem: live view at http://127.0.0.1:\([0-9]*\)/$|\1|p' "$T/live.out")
    [ -n "$PORT" ] && break
    kill -0 "$BG" 2>/dev/null || fail "aerodem ended before serving the live view" "$T/live.out" "$T/live.err"
    sleep 0.2
done
[ -n "$PORT" ] || fail "no live view address in 60 s" "$T/live.out"
/usr/bin/python3 "$SRC/tests/live_hostile.py" "$PORT" >"$T/hostile.log" 2>&1
hostile=$?
sed 's/^/  /' "$T/hostile.log"
[ $hostile = 0 ] || fail "the server's answers to hostile requests" "$T/hostile.log" "$T/live.err"
ok "hostile requests refused while the run went on"

kill -INT "$BG"
wait "$BG"
RC=$?
BG=""
expect_rc 130 "the live run ended with Ctrl-C" live
K=$(sed -n 's/^aerodem: interrupted at step \([0-9]*\);.*/\1/p' "$T/live.err")
[ -n "$K" ] || fail "no step in the interrupted run's message" "$T/live.err"
run resume resume "$T/live/checkpoint.ckpt" --threads 2 --steps $((K + 2000))
expect_rc 0 "the live run resumed to step $((K + 2000))" resume
run plain run "$SCENE" --steps $((K + 2000)) "${SAME[@]}" --out "$T/plain"
expect_rc 0 "the same run without a live view" plain
cmp -s "$T/live/forces.csv" "$T/plain/forces.csv" || fail "forces.csv differs from the run without a live view" \
    "$T/live/forces.csv" "$T/plain/forces.csv"
grep "^c[ld]" "$T/live/summary.txt" >"$T/live.coef"
grep "^c[ld]" "$T/plain/summary.txt" >"$T/plain.coef"
[ -s "$T/plain.coef" ] && cmp -s "$T/live.coef" "$T/plain.coef" || fail "the coefficients differ" "$T/live.coef" "$T/plain.coef"
ok "the run under attack, ended at step $K and resumed: forces.csv and $(tr "\n" " " <"$T/plain.coef")as without a live view"
echo "$NCHECK passed, 0 failed"
