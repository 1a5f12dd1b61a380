#!/usr/bin/env bash
# The program's outputs under resumes, reused folders, full disks and unwritable folders
# (docs/HARDENING.md): frames.csv with its header and not repeated (and an older one without the
# header resumed), no temporary file left, the wall-clock checkpoint,
# resume into another run's folder refused, resume --out NEWDIR consistent, pictures that cannot be
# drawn refused at start, a failure at the end keeping the checkpoint and summary, a full disk and an
# unwritable folder named with the last good checkpoint kept, long and empty output paths.
#
# Usage: test_outputs.sh AERODEM SOURCE_DIR. Prints each check; exits 1 at the first that fails.
set -u

AD=${1:?usage: test_outputs.sh AERODEM SOURCE_DIR}
SRC=${2:?usage: test_outputs.sh AERODEM SOURCE_DIR}
. "$(dirname "$0")/cli_lib.sh" outputs
run_id() { sed -n 's/^; run_id //p' "$1/scene.ini"; }
no_temps() { # no_temps DIR WHAT
    local t
    t=$(find "$1" -name '*.tmp' -o -name '*.tmp.*')
    [ -z "$t" ] || fail "$2: temporary files left: $t"
}

# A small closed box (about 340 discs) on one thread: a second or two per run.
SCENE=$SRC/scenes/closed_box.ini
BOX=(--backend cpu --threads 1 --quiet --set tunnel.width=30 --set tunnel.height=30 --set run.settle_steps=200
     --set output.force_interval=50 --set output.frame_interval=250 --set output.video=no --set output.field_cell=3)

# ------------------------------------------------------ periodic checkpoints, resume --

run a1 run "$SCENE" --steps 1000 "${BOX[@]}" --set output.checkpoint_interval=300 --out "$T/A"
expect_rc 0 "run A (1000 steps, a checkpoint every 300)" a1
no_temps "$T/A" "run A with periodic checkpoints"
ok "a run with periodic checkpoints leaves no temporary file"

# A kill after the rows and frames of steps 1000..2000 were written, with the checkpoint of step
# 1000 the last good one: the resume must drop those rows, not repeat them.
cp "$T/A/checkpoint.ckpt" "$T/A1000.ckpt"
run a2 resume "$T/A/checkpoint.ckpt" --steps 2000 --quiet
expect_rc 0 "resume of A to 2000 steps" a2
cp "$T/A/frames.csv" "$T/A.frames" && cp "$T/A/forces.csv" "$T/A.forces"
cp "$T/A1000.ckpt" "$T/A/checkpoint.ckpt"
: >"$T/A/frames/speed_000099.png.tmp" # what a kill during writes leaves (of frames not rewritten)
: >"$T/A/particles/particles_000099.vtp.tmp"
: >"$T/A/checkpoint.ckpt.tmp"
run a3 resume "$T/A/checkpoint.ckpt" --steps 2000 --quiet
expect_rc 0 "resume of A from step 1000 again" a3
[ "$(head -n 1 "$T/A/frames.csv")" = "index,step,time" ] || fail "frames.csv has no header line" "$T/A/frames.csv"
[ "$(grep -c '^index,' "$T/A/frames.csv")" = 1 ] || fail "frames.csv has its header more than once" "$T/A/frames.csv"
tail -n +2 "$T/A/frames.csv" | cut -d, -f1 >"$T/idx"
[ "$(sort -u "$T/idx" | wc -l)" = "$(wc -l <"$T/idx")" ] || fail "frames.csv repeats frames after a resume" "$T/A/frames.csv"
[ "$(wc -l <"$T/idx")" = 8 ] || fail "frames.csv after the resume has $(wc -l <"$T/idx") rows, expected 8" "$T/A/frames.csv"
cmp -s "$T/A/frames.csv" "$T/A.frames" || fail "frames.csv differs from the first resume's" "$T/A/frames.csv" "$T/A.frames"
[ "$(grep -c 'file=' "$T/A/particles.pvd")" = 8 ] ||
    fail "particles.pvd after the resume does not list the 8 frames of frames.csv" "$T/A/particles.pvd" "$T/A/frames.csv"
cmp -s "$T/A/forces.csv" "$T/A.forces" || fail "forces.csv differs from the first resume's" "$T/A/forces.csv" "$T/A.forces"
ok "resume from an earlier checkpoint trims frames.csv and forces.csv to it (no repeated row)"
no_temps "$T/A" "resume"
ok "resume removes the temporary files a kill left (checkpoint.ckpt.tmp, frames/*.png.tmp)"

# A folder of an aerodem older than frames.csv's header: the same run's folder at step 2000 with the
# header stripped, back to the checkpoint of step 1000. The resume reads it, puts the header back
# and ends with A's files.
cp -r "$T/A" "$T/H" && cp "$T/A1000.ckpt" "$T/H/checkpoint.ckpt"
tail -n +2 "$T/A.frames" >"$T/H/frames.csv"
run h1 resume "$T/H/checkpoint.ckpt" --steps 2000 --quiet
expect_rc 0 "resume of a folder whose frames.csv has no header" h1
cmp -s "$T/H/frames.csv" "$T/A.frames" || fail "frames.csv of the headerless folder after a resume" "$T/H/frames.csv" "$T/A.frames"
for f in forces.csv particles.pvd fields.pvd summary.txt; do
    cmp -s "$T/H/$f" "$T/A/$f" || fail "$f of the headerless folder after a resume differs from A's" "$T/H/$f" "$T/A/$f"
done
ok "resume of a folder whose frames.csv has no header (an older aerodem): read, its header put back, A's files"

# ----------------------------------------------------------------- wall-clock checkpoint --

run keys scene-keys
expect_in "$T/keys.out" "checkpoint_seconds" "scene-keys lists checkpoint_seconds"
grep -q '^checkpoint_seconds = 300' "$T/A/scene.ini" || fail "the default checkpoint_seconds is not 300" "$T/A/scene.ini"
"$AD" run "$SCENE" --steps 1000000 "${BOX[@]}" --set output.checkpoint_interval=0 --set output.checkpoint_seconds=0.2 \
    --set output.png=no --set output.vtk=no --out "$T/W" >"$T/w.out" 2>"$T/w.err" &
BG=$!
for _ in $(seq 1 200); do
    [ -f "$T/W/checkpoint.ckpt" ] && break
    kill -0 "$BG" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$BG" 2>/dev/null || fail "the long run W ended early" "$T/w.out" "$T/w.err"
[ -f "$T/W/checkpoint.ckpt" ] || fail "no checkpoint within 20 s with checkpoint_seconds = 0.2 and checkpoint_interval = 0"
sleep 0.3
kill -9 "$BG"
wait "$BG" 2>/dev/null
BG=""
run w2 resume "$T/W/checkpoint.ckpt" --steps 1 --quiet
expect_rc 2 "resume of W's wall-clock checkpoint with --steps 1" w2
expect_in "$T/w2.err" "is at step" "resume of W's wall-clock checkpoint"
step=$(sed -n 's/.* is at step \([0-9]*\) already.*/\1/p' "$T/w2.err")
run w3 resume "$T/W/checkpoint.ckpt" --steps $((step + 100)) --quiet
expect_rc 0 "resume of W's wall-clock checkpoint to step $((step + 100))" w3
expect_in "$T/W/summary.txt" "steps $((step + 100))" "W's summary after the resume"
ok "checkpoint_seconds: a checkpoint on the wall clock with checkpoint_interval = 0 (step $step), survives kill -9, resumes"

# --------------------------------------------------------------------- run identity --

run b1 run "$SCENE" --steps 500 "${BOX[@]}" --out "$T/B"
expect_rc 0 "run B" b1
ida=$(run_id "$T/A") idb=$(run_id "$T/B")
[ -n "$ida" ] && [ -n "$idb" ] && [ "$ida" != "$idb" ] || fail "runs A and B have no distinct run ids ('$ida', '$idb')"
grep -q "^; run_id $ida" "$T/A/scene.ini" || fail "A's scene.ini does not carry its run id" "$T/A/scene.ini"
cp "$T/B/forces.csv" "$T/B.forces"
run splice resume "$T/A/checkpoint.ckpt" --steps 3000 --out "$T/B" --quiet
expect_rc 2 "resume of A's checkpoint into B's folder" splice
expect_in "$T/splice.err" "$ida" "the refusal names A's run"
expect_in "$T/splice.err" "$idb" "the refusal names B's run"
cmp -s "$T/B/forces.csv" "$T/B.forces" || fail "B's forces.csv changed after the refused resume"
mkdir -p "$T/X" && cp "$T/B/forces.csv" "$T/X/" # the rows of some run, no scene.ini naming it
run splice2 resume "$T/A/checkpoint.ckpt" --steps 3000 --out "$T/X" --quiet
expect_rc 2 "resume of A's checkpoint into a folder with another run's forces.csv" splice2
expect_in "$T/splice2.err" "without a run id" "the refusal of a folder of an unknown run"
cmp -s "$T/X/forces.csv" "$T/B.forces" || fail "X's forces.csv changed after the refused resume"
ok "resume of one run's checkpoint into another run's folder: refused, naming both runs, nothing changed"

# ------------------------------------------------------------------- resume --out NEWDIR --

run n1 resume "$T/A1000.ckpt" --steps 2000 --out "$T/N" --quiet
expect_rc 0 "resume of A's step-1000 checkpoint into a new folder" n1
head -n 1 "$T/N/forces.csv" | grep -q '^step,time,' || fail "forces.csv in the new folder has no header" "$T/N/forces.csv"
[ "$(sed -n 2p "$T/N/forces.csv" | cut -d, -f1)" = 1050 ] || fail "the new folder's forces.csv does not start after step 1000" "$T/N/forces.csv"
[ "$(run_id "$T/N")" = "$ida" ] || fail "the continuation in N is not run $ida" "$T/N/scene.ini"
for pvd in particles.pvd fields.pvd; do
    for f in $(sed -n 's/.*file="\([^"]*\)".*/\1/p' "$T/N/$pvd"); do
        [ -f "$T/N/$f" ] || fail "$pvd in the new folder lists $f, which is not there" "$T/N/$pvd"
    done
done
[ "$(grep -c 'file=' "$T/N/particles.pvd")" = "$(($(wc -l <"$T/N/frames.csv") - 1))" ] ||
    fail "particles.pvd and frames.csv of the new folder list different frames" "$T/N/particles.pvd" "$T/N/frames.csv"
[ "$(cut -d, -f1 "$T/N/frames.csv" | tr '\n' ' ')" = "index 4 5 6 7 " ] || fail "frames.csv in the new folder" "$T/N/frames.csv"
grep -v '^scene ' "$T/N/summary.txt" >"$T/n.sum"
grep -v '^scene ' "$T/A/summary.txt" >"$T/a.sum"
diff "$T/n.sum" "$T/a.sum" >"$T/diff.out" || fail "the summary of the continuation differs from A's at 2000 steps" "$T/diff.out"
run n2 resume "$T/N/checkpoint.ckpt" --steps 2500 --quiet
expect_rc 0 "resume of N's checkpoint in N" n2
ok "resume --out NEWDIR: forces.csv with its header from the checkpoint on, .pvd and frames.csv list only frames there"

# a run state out of range in a checkpoint whose checksum is right (a frame count near 2^61)
if command -v python3 >/dev/null 2>&1; then
    python3 - "$T/A1000.ckpt" "$T/bad.ckpt" <<'EOF_PY'
import struct, sys, zlib
d = bytearray(open(sys.argv[1], 'rb').read())
off = 16  # sections after the header: tag[4], u32, u64 length, payload
while bytes(d[off:off + 4]) != b'USER':
    off += 16 + struct.unpack_from('<Q', d, off + 8)[0]
p = off + 16
tl = d.index(0, p) - p + 1               # the scene text and its NUL
struct.pack_into('<Q', d, p + tl + 72, 1 << 61)   # measure.frames
struct.pack_into('<I', d, len(d) - 4, zlib.crc32(bytes(d[:-4])))
open(sys.argv[2], 'wb').write(d)
EOF_PY
    run badm resume "$T/bad.ckpt" --steps 2000 --out "$T/BAD" --quiet
    expect_rc 2 "resume of a checkpoint with 2^61 frames" badm
    expect_in "$T/badm.err" "out of range" "resume of a checkpoint with 2^61 frames"
    [ ! -e "$T/BAD" ] || fail "the refused checkpoint wrote $T/BAD"
    ok "a checkpoint whose run state is out of range (2^61 frames, the checksum right): refused, nothing written"
fi

# ----------------------------------------------------------------- checks at the start --

cd "$T" || exit 1
run tall run "$SCENE" --steps 500 "${BOX[@]}" --set tunnel.width=10 --set tunnel.height=300 --out "$T/TALL"
expect_rc 2 "a tunnel 30 times taller than wide (frames 36000 px high)" tall
expect_in "$T/tall.err" "px" "the refusal of a picture too tall"
[ ! -e "$T/TALL" ] || fail "the refused run wrote $T/TALL"
run tall_ok run "$SCENE" --steps 300 "${BOX[@]}" --set tunnel.width=10 --set tunnel.height=300 \
    --set output.png=no --set output.vtk=no --out "$T/TALLOK"
expect_rc 0 "the same tunnel with png = no" tall_ok
ok "pictures too tall for the PNG limit: refused at the start (exit 2, nothing written); png = no runs"

# a failure at the very end (density.png cannot be renamed into place: a folder has its name) keeps
# the final checkpoint and the summary; resuming the finished checkpoint writes the end outputs
mkdir -p "$T/E/density.png"
run end run "$SCENE" --steps 500 "${BOX[@]}" --out "$T/E"
expect_rc 1 "a run whose density.png cannot be written" end
expect_in "$T/end.err" "density.png" "the end failure names the file"
expect_in "$T/E/summary.txt" "status finished" "the summary of the run that failed at its end"
[ -f "$T/E/checkpoint.ckpt" ] || fail "no final checkpoint after a failure at the end"
rmdir "$T/E/density.png"
run end2 resume "$T/E/checkpoint.ckpt" --quiet
expect_rc 0 "resume of the finished checkpoint" end2
[ -s "$T/E/density.png" ] || fail "resume of the finished run did not write density.png"
cmp -s "$T/E/forces.csv" "$T/B/forces.csv" || fail "E's forces.csv differs from B's (the same scene)"
ok "a failure at the end: checkpoint and summary written first; resume of the finished run writes the rest"

# --------------------------------------------------------------- full disk, unwritable --

cp "$T/A1000.ckpt" "$T/F.ckpt"
mkdir -p "$T/F" && cp "$T/A1000.ckpt" "$T/F/checkpoint.ckpt"
cp "$T/A/scene.ini" "$T/A.forces" "$T/F/" # F is run A's folder, at step 2000 and back to the checkpoint of 1000
mv "$T/F/A.forces" "$T/F/forces.csv" && cp "$T/A.frames" "$T/F/frames.csv"
ksize=$(($(stat -c %s "$T/F.ckpt") / 1024 / 2))
( ulimit -f "$ksize"; exec "$AD" resume "$T/F/checkpoint.ckpt" --steps 2000 --quiet ) >"$T/full.out" 2>"$T/full.err"
RC=$?
expect_rc 1 "resume with a file size limit of $ksize KiB (a full disk)" full
expect_in "$T/full.err" "$T/F/" "the full-disk message names the path"
expect_in "$T/full.err" "checkpoint" "the full-disk message names the checkpoint to continue from"
cmp -s "$T/F/checkpoint.ckpt" "$T/F.ckpt" || fail "the last good checkpoint changed on a full disk"
no_temps "$T/F" "a write that failed on a full disk"
run full2 resume "$T/F/checkpoint.ckpt" --steps 2000 --quiet
expect_rc 0 "resume of the kept checkpoint once there is room" full2
cmp -s "$T/F/forces.csv" "$T/A.forces" || fail "forces.csv after the full disk and a resume differs from A's" "$T/F/forces.csv"
ok "a full disk (ulimit -f): exit 1, the path named, the last good checkpoint kept and resumed to A's results"

# forces.csv at the limit while the checkpoint fits: the first row appended fails, named
cp "$T/A1000.ckpt" "$T/F/checkpoint.ckpt"
lim=$(($(stat -c %s "$T/F.ckpt") / 1024 + 8))
row=$(sed -n 2p "$T/A.forces")
{ head -n 1 "$T/A.forces"; yes "$row" | head -n $(((lim * 1024 - 400) / (${#row} + 1))); } >"$T/F/forces.csv"
rm -f "$T/F/frames.csv"
( ulimit -f "$lim"; exec "$AD" resume "$T/F/checkpoint.ckpt" --steps 2000 --quiet ) >"$T/full4.out" 2>"$T/full4.err"
RC=$?
expect_rc 1 "resume where forces.csv reaches the limit of $lim KiB" full4
expect_in "$T/full4.err" "$T/F/forces.csv" "the message of a failed append"
cmp -s "$T/F/checkpoint.ckpt" "$T/F.ckpt" || fail "the last good checkpoint changed when forces.csv could not grow"
ok "a row that does not fit: exit 1, forces.csv named"

: >"$T/plain"
run unw run "$SCENE" --steps 300 "${BOX[@]}" --out "$T/plain/sub"
expect_rc 1 "a run into a folder under a regular file" unw
expect_in "$T/unw.err" "$T/plain/sub" "the unwritable-folder message"
run unw2 resume "$T/A1000.ckpt" --steps 1100 --out "$T/plain/sub" --quiet
expect_rc 1 "a resume into a folder under a regular file" unw2
expect_in "$T/unw2.err" "$T/plain/sub" "the unwritable-folder message of resume"
ok "an unwritable output folder: exit 1, the folder named, for run and resume"

# ------------------------------------------------------------------------ output paths --

run empty run "$SCENE" --steps 300 "${BOX[@]}" --out ""
[ "$RC" != 0 ] || fail "--out \"\" was accepted" "$T/empty.out"
[ ! -e /forces.csv ] && [ ! -e /scene.ini ] || fail "--out \"\" wrote into /"
long=$T
while [ ${#long} -lt 1000 ]; do long=$long/$(printf 'd%.0s' $(seq 1 60)); done
long=${long:0:1000}
run long run "$SCENE" --steps 300 "${BOX[@]}" --set output.png=no --out "$long"
expect_rc 0 "a run into a folder of ${#long} characters" long
[ -f "$long/forces.csv" ] && [ -f "$long/particles/particles_000000.vtp" ] || fail "the long folder has no forces.csv or frames"
run toolong run "$SCENE" --steps 300 "${BOX[@]}" --out "$long/$(printf 'e%.0s' $(seq 1 100))"
[ "$RC" != 0 ] || fail "an output folder over 1023 characters was accepted"
expect_in "$T/toolong.err" "characters" "the refusal of a folder over 1023 characters"
ok "output paths: empty refused, 1000 characters used whole, over 1023 refused"

echo "all $NCHECK checks passed"
