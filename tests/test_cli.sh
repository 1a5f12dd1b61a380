#!/usr/bin/env bash
# The aerodem program end to end: help and exit codes, refused input, a real run and its files, Ctrl-C and resume.
#
# Usage: test_cli.sh AERODEM SOURCE_DIR. Prints each check; exits 1 at the first that fails, showing what happened.
set -u

AD=${1:?usage: test_cli.sh AERODEM SOURCE_DIR}
SRC=${2:?usage: test_cli.sh AERODEM SOURCE_DIR}
SCENE=$SRC/scenes/default.ini
. "$(dirname "$0")/cli_lib.sh" cli

# ----------------------------------------------------------------- commands and help --

run help --help
expect_rc 0 "aerodem --help" help
expect_in "$T/help.out" "usage: aerodem COMMAND" "aerodem --help"
ok "aerodem --help: exit 0, usage"

run run_help run --help
expect_rc 0 "aerodem run --help" run_help
expect_in "$T/run_help.out" "usage: aerodem run SCENE.ini" "aerodem run --help"
ok "aerodem run --help: exit 0, usage"

run resume_help resume --help
expect_rc 0 "aerodem resume --help" resume_help
expect_in "$T/resume_help.out" "usage: aerodem resume CHECKPOINT" "aerodem resume --help"
ok "aerodem resume --help: exit 0, usage"

run info info
expect_rc 0 "aerodem info" info
expect_in "$T/info.out" "cpu backend: yes" "aerodem info"
expect_in "$T/info.out" "cuda backend:" "aerodem info"
expect_in "$T/info.out" "bytes per sphere" "aerodem info (3D memory)"
expect_in "$T/info.out" "live view: yes" "aerodem info (the live view, built with libmicrohttpd)"
expect_in "$T/info.out" "a run with threads = 0 takes" "aerodem info (the free cores)"
ok "aerodem info: exit 0, backends listed"

run noargs
expect_rc 2 "aerodem with no arguments" noargs
expect_in "$T/noargs.out" "usage:" "aerodem with no arguments"
ok "aerodem (no arguments): exit 2, usage"

run frob frobnicate
expect_rc 2 "aerodem frobnicate" frob
expect_in "$T/frob.err" "frobnicate" "aerodem frobnicate"
ok "aerodem frobnicate: exit 2, names the command"

# ------------------------------------------------------------------------- bad input --

# refused NAME WANT_RC ARGS... -- TEXTS...: the run is refused with WANT_RC, stderr holds every TEXT,
# nothing on stdout, and the --out folder still holds only its sentinel.
refused() {
    local name=$1 want=$2
    shift 2
    local args=()
    while [ "$1" != "--" ]; do
        args+=("$1")
        shift
    done
    shift
    local out=$T/$name.dir
    mkdir -p "$out"
    echo keep >"$out/SENTINEL"
    run "$name" "${args[@]}" --out "$out" --quiet
    expect_rc "$want" "$name" "$name"
    for text in "$@"; do expect_in "$T/$name.err" "$text" "$name: the message"; done
    [ -s "$T/$name.out" ] && fail "$name: printed on stdout" "$T/$name.out"
    local left
    left=$(cd "$out" && find . -mindepth 1 | sort | tr '\n' ' ')
    [ "$left" = "./SENTINEL " ] || fail "$name: the output folder holds '$left', expected only ./SENTINEL"
    [ "$(cat "$out/SENTINEL")" = keep ] || fail "$name: the sentinel was overwritten"
    ok "$name: exit $want, '$*' on stderr, nothing written"
}

printf '; a scene with a key that does not exist\n[gas]\nradius = 0.5\n\nwarp = 9\n' >"$T/unknown_key.ini"
refused unknown_key 2 run "$T/unknown_key.ini" -- "unknown_key.ini:5:" "warp" "[gas]"

printf '[tunnel]\nwidth = 120\n[gas]\nmass = heavy\n' >"$T/not_number.ini"
refused not_number 2 run "$T/not_number.ini" -- "not_number.ini:4:" "mass" "heavy" "not a number"

printf '[gas]\nradius = 0.5\nrestitution = 1.5 ; above 1\n' >"$T/out_of_range.ini"
refused out_of_range 2 run "$T/out_of_range.ini" -- "out_of_range.ini:3:" "restitution" "out of range"

refused set_not_number 2 run "$SCENE" --set gas.radius=abc -- "--set gas.radius=abc" "radius" "not a number"
refused set_no_dot 2 run "$SCENE" --set nodot=1 -- "--set nodot=1" "section.key=value"
refused steps_zero 2 run "$SCENE" --steps 0 -- "--steps 0"
refused backend_gpu 2 run "$SCENE" --backend gpu -- "--backend gpu"
# a missing scene is an I/O error (exit 1), not a usage error
refused missing_scene 1 run "$T/no_such_scene.ini" -- "no_such_scene.ini" "cannot open"

# issue 16: values that would make a run meaningless are refused up front, naming the key
BOX=$SRC/scenes/closed_box.ini
refused zero_discs 2 run "$BOX" --set gas.area_fraction=1e-6 -- "area_fraction = 1e-06" "no disc" "smallest that gives one"
refused heavy 2 run "$BOX" --set gas.mass=1e299 -- "[gas] mass = 1e+299"
refused gravity 2 run "$BOX" --set tunnel.gravity=1e30 -- "[tunnel] gravity = 1e+30"
refused hot 2 run "$BOX" --set gas.temperature=3e38 -- "gas.temperature" "beyond a float"
refused mach 2 run "$SCENE" --set gas.mach=1e20 -- "gas.mach" "beyond a float"
refused dt_tiny 2 run "$BOX" --set run.dt_max=1e-300 -- "run.dt_max" "would not move"
refused huge_tunnel 2 run "$BOX" --set tunnel.width=1e9 -- "tunnel.width" "cannot be resolved in float"

# libinih reads 198 characters of a line: a longer comment is a comment, a longer key line is refused
# with its own line number
x198=$(printf 'x%.0s' $(seq 198))
printf '[gas]\n;%s mass = 7\nradius = 0.5 ; %s\n\nwarp = 1\n' "$x198" "$x198" >"$T/long_comment.ini"
refused long_comment 2 run "$T/long_comment.ini" -- "long_comment.ini:5:" "warp"
printf '[body]\nfile = %s%s\n' "$x198" "$x198" >"$T/long_line.ini"
refused long_line 2 run "$T/long_line.ini" -- "long_line.ini:2: line is 403 characters long; at most 198"
printf '[gas]\nradius = 0\0.5\n' >"$T/nul.ini"
refused nul_byte 2 run "$T/nul.ini" -- "nul.ini:2:" "NUL"

# no output into the file-system root, no path cut short
refused out_empty 2 run "$SCENE" --out "" -- "--out ''" "file-system root"
refused out_blank 2 run "$SCENE" --out "   " -- "--out '   '" "file-system root"
long_out=$T/$(printf 'd%.0s' $(seq 1100))
refused out_long 2 run "$SCENE" --out "$long_out" -- "--out" "${#long_out} characters long; at most 1023"
refused dir_empty 2 run "$SCENE" --set output.dir= -- "--set output.dir=" "file-system root"
printf '[output]\ndir =   \n' >"$T/dir_empty.ini"
refused dir_empty_file 2 run "$T/dir_empty.ini" -- "dir_empty.ini:2:" "[output] dir is empty"
refused naca_semicolon 2 run "$SCENE" --set "body.naca=; 2412" -- "[body] naca" "';'"

# absurd numbers on the command line, each refused naming its option
for v in 1e400 nan inf -5 12abc 0x10 "" 2.5 1e16; do
    refused "steps_$v" 2 run "$SCENE" --steps "$v" -- "--steps $v"
done
for v in 5000 -1 1.5 nan; do
    refused "threads_$v" 2 run "$SCENE" --threads "$v" -- "--threads $v"
done
refused set_no_eq 2 run "$SCENE" --set gas.radius -- "--set gas.radius" "section.key=value"
refused set_unknown 2 run "$SCENE" --set gas.warp=1 -- "--set gas.warp=1" "unknown key 'warp'"
refused set_junk 2 run "$SCENE" --set gas.radius=0.5m -- "--set gas.radius=0.5m" "not a number"
refused set_huge 2 run "$SCENE" --set run.steps=1e400 -- "run.steps" "not a number"
refused resume_long 2 resume "$long_out.ckpt" -- "checkpoint's path is" "at most 1023"

# ------------------------------------------------------------------------ a real run --

R1=$T/run1
run run1 run "$SCENE" --steps 600 --set run.settle_steps=200 --set output.frame_interval=200 --out "$R1" --quiet
expect_rc 0 "a short run" run1
[ -s "$T/run1.out" ] && fail "a short run with --quiet printed on stdout" "$T/run1.out"
ok "short run (600 steps): exit 0, quiet"

for f in forces.csv summary.txt density.png pressure.png speed.png temperature.png frames/speed_000000.png \
    particles.pvd fields.pvd body.vtp scene.ini checkpoint.ckpt; do
    [ -s "$R1/$f" ] || fail "run1: $f is missing or empty"
done
ls "$R1"/particles/*.vtp >/dev/null 2>&1 || fail "run1: no particles/*.vtp"
ls "$R1"/fields/*.vti >/dev/null 2>&1 || fail "run1: no fields/*.vti"
ok "run1: forces.csv, summary.txt, PNGs, frames/, .pvd/.vtp/.vti, body.vtp, scene.ini, checkpoint.ckpt"

head -1 "$R1/forces.csv" | grep -q '^step,time,drag,lift,cd,cl,' || fail "forces.csv: unexpected header" "$R1/forces.csv"
rows=$(($(wc -l <"$R1/forces.csv") - 1))
[ "$rows" -ge 5 ] || fail "forces.csv: $rows rows, expected 6 (600 steps, one row per 100)" "$R1/forces.csv"
awk -F, 'NR > 1 && $6 !~ /^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ { bad = 1 } END { exit bad }' "$R1/forces.csv" ||
    fail "forces.csv: a cl value is not a number" "$R1/forces.csv"
ok "forces.csv: header and $rows rows with numeric cl"

expect_in "$R1/summary.txt" "status finished" "summary.txt"
expect_in "$R1/summary.txt" "steps 600" "summary.txt"
ok "summary.txt: finished at step 600"
head -1 "$R1/forces.csv" | grep -q ',discs,free_stream_density,free_stream_velocity,free_stream_temperature$' ||
    fail "forces.csv: no free-stream columns" "$R1/forces.csv"
for k in discs_entered discs_left free_stream_density free_stream_velocity free_stream_temperature \
    free_stream_density_ratio free_stream_velocity_ratio free_stream_temperature_ratio free_stream_off_nominal; do
    awk -v k="$k" '$1 == k && NF >= 2 { found = 1 } END { exit !found }' "$R1/summary.txt" ||
        fail "summary.txt: no $k line" "$R1/summary.txt"
done
ok "forces.csv and summary.txt: the measured free stream"

tmps=$(find "$R1" -name '*.tmp*')
[ -z "$tmps" ] || fail "run1 left temporary files: $tmps"
ok "run1: no *.tmp files"

if command -v ffmpeg >/dev/null 2>&1; then
    [ -s "$R1/speed.mp4" ] || fail "ffmpeg is installed but run1 has no speed.mp4" "$T/run1.err"
    ok "speed.mp4 made (ffmpeg found)"
else
    echo "skip speed.mp4: ffmpeg is not installed"
fi

# --------------------------------------------------------------- the scene reference --

run keys scene-keys
expect_rc 0 "aerodem scene-keys" keys
diff -u "$SRC/docs/SCENES.md" "$T/keys.out" >"$T/keys.diff" ||
    fail "docs/SCENES.md differs from 'aerodem scene-keys' (regenerate it: aerodem scene-keys > docs/SCENES.md)" \
        "$T/keys.diff"
ok "docs/SCENES.md equals 'aerodem scene-keys'"

# ------------------------------------------------------------------ VTK reads the files --

if /usr/bin/python3 -c 'import vtk' >/dev/null 2>&1; then
    /usr/bin/python3 - "$R1" >"$T/vtk.out" 2>&1 <<'EOF' || fail "VTK cannot read run1's files" "$T/vtk.out"
import os, sys, xml.etree.ElementTree as ET
import vtk
d = sys.argv[1]
def files(pvd):
    return [os.path.join(d, e.get("file")) for e in ET.parse(os.path.join(d, pvd)).getroot().iter("DataSet")]
def read(cls, path):
    r = cls()
    r.SetFileName(path)
    r.Update()
    return r.GetOutput()
parts, fields = files("particles.pvd"), files("fields.pvd")
assert parts and fields, "empty .pvd"
for p in parts:
    n = read(vtk.vtkXMLPolyDataReader, p).GetNumberOfPoints()
    assert n > 0, "%s: %d points" % (p, n)
for p in fields:
    g = read(vtk.vtkXMLImageDataReader, p)
    assert g.GetNumberOfPoints() > 0, "%s: no points" % p
    names = {g.GetCellData().GetArrayName(i) for i in range(g.GetCellData().GetNumberOfArrays())}
    names |= {g.GetPointData().GetArrayName(i) for i in range(g.GetPointData().GetNumberOfArrays())}
    missing = {"density", "velocity", "pressure", "temperature"} - names
    assert not missing, "%s lacks %s (has %s)" % (p, sorted(missing), sorted(names))
body = read(vtk.vtkXMLPolyDataReader, os.path.join(d, "body.vtp"))
assert body.GetNumberOfPoints() > 0, "body.vtp: no points"
print("read %d particle files, %d field files and body.vtp" % (len(parts), len(fields)))
EOF
    ok "VTK reads run1's files: $(cat "$T/vtk.out")"
else
    echo "skip VTK readback: /usr/bin/python3 cannot import vtk"
fi

# ------------------------------------------------------------ refused checkpoints --

cp "$R1/checkpoint.ckpt" "$T/corrupt.ckpt"
size=$(wc -c <"$T/corrupt.ckpt")
mid=$((size / 2))
byte=$(od -An -tu1 -j "$mid" -N1 "$T/corrupt.ckpt" | tr -d ' ')
printf '%b' "\\$(printf '%03o' $((byte ^ 0xFF)))" | dd of="$T/corrupt.ckpt" bs=1 seek="$mid" conv=notrunc status=none
cmp -s "$R1/checkpoint.ckpt" "$T/corrupt.ckpt" && fail "could not flip a byte of the checkpoint copy"
mkdir -p "$T/corrupt.dir"
run corrupt resume "$T/corrupt.ckpt" --out "$T/corrupt.dir" --quiet
expect_rc 2 "resume of a corrupt checkpoint" corrupt
expect_in "$T/corrupt.err" "corrupt" "resume of a corrupt checkpoint"
ok "resume of a checkpoint with a flipped byte: exit 2, 'corrupt'"

printf 'this is a text file, long enough to hold a checkpoint header\n' >"$T/text.ckpt"
run text resume "$T/text.ckpt" --out "$T/corrupt.dir" --quiet
expect_rc 2 "resume of a text file" text
expect_in "$T/text.err" "not an aerodem checkpoint" "resume of a text file"
ok "resume of a text file: exit 2, 'not an aerodem checkpoint'"

# ------------------------------------------------------------------ Ctrl-C and resume --

R2=$T/run2
"$AD" run "$SCENE" --steps 200000 --set run.settle_steps=200 --out "$R2" --quiet >"$T/run2.out" 2>"$T/run2.err" &
BG=$!
for _ in $(seq 300); do # up to 30 s for a few rows
    [ -f "$R2/forces.csv" ] && [ "$(wc -l <"$R2/forces.csv")" -ge 4 ] && break
    kill -0 "$BG" 2>/dev/null || break
    sleep 0.1
done
if ! [ -f "$R2/forces.csv" ] || [ "$(wc -l <"$R2/forces.csv")" -lt 4 ]; then
    fail "run2 wrote no force rows" "$T/run2.err"
fi
kill -INT "$BG"
wait "$BG"
RC=$?
BG=""
expect_rc 130 "run2 after SIGINT" run2
expect_in "$T/run2.err" "checkpoint" "run2's message after SIGINT"
expect_in "$T/run2.err" "aerodem resume" "run2's message after SIGINT"
[ -s "$R2/checkpoint.ckpt" ] || fail "run2: no checkpoint.ckpt after SIGINT"
tmps=$(find "$R2" -name '*.tmp*')
[ -z "$tmps" ] || fail "run2 left temporary files: $tmps"
expect_in "$R2/summary.txt" "status interrupted" "run2's summary.txt"
stopped=$(awk '$1 == "steps" { print $2 }' "$R2/summary.txt")
ok "SIGINT: exit 130 at step $stopped, checkpoint written, 'aerodem resume' suggested, no *.tmp"

N=$((stopped + 300))
run resume2 resume "$R2/checkpoint.ckpt" --steps "$N" --quiet
expect_rc 0 "resume of run2 to step $N" resume2
expect_in "$R2/summary.txt" "status finished" "run2's summary.txt after resume"
expect_in "$R2/summary.txt" "steps $N" "run2's summary.txt after resume"
ok "resume to step $N: exit 0, summary says finished at $N"

# ------------------------------------------------- resume is bit-identical through the CLI --

# A: 800 steps in one go on 2 threads; B: 400 steps, then resumed to 800 on 1 thread. On
# the CPU backend, named: on a machine with a GPU `auto` picks CUDA, whose fast mode adds
# forces in the order its atomics land, so two of its runs are not bit-identical.
SETS=(--set run.settle_steps=200 --set output.frame_interval=400 --set output.force_interval=100 --set output.video=no
      --backend cpu)
run runA run "$SCENE" --steps 800 "${SETS[@]}" --threads 2 --out "$T/A" --quiet
expect_rc 0 "run A (800 steps)" runA
run runB run "$SCENE" --steps 400 "${SETS[@]}" --threads 1 --out "$T/B" --quiet
expect_rc 0 "run B (400 steps)" runB
run resumeB resume "$T/B/checkpoint.ckpt" --steps 800 --threads 1 --quiet
expect_rc 0 "resume of B to 800 steps" resumeB
cmp "$T/A/forces.csv" "$T/B/forces.csv" >"$T/cmp.out" 2>&1 ||
    fail "forces.csv of the resumed run B differs from the uninterrupted run A" "$T/cmp.out" "$T/A/forces.csv" \
        "$T/B/forces.csv"

# The final checkpoints: the particle and field sections must be equal byte for byte (the statistics
# section holds the thread count, the caller block the scene with its threads key).
for run_dir in A B; do
    ck=$T/$run_dir/checkpoint.ckpt
    p=$(section_offset "$ck" PART) || fail "checkpoint of $run_dir has no particle section"
    u=$(section_offset "$ck" USER) || fail "checkpoint of $run_dir has no caller block"
    tail -c +$((p + 1)) "$ck" | head -c $((u - p)) >"$T/$run_dir.state"
done
cmp "$T/A.state" "$T/B.state" >"$T/cmp.out" 2>&1 ||
    fail "the final particles or field sums of B differ from A's" "$T/cmp.out"
# summary.txt carries the averaged coefficients (the run state kept in the checkpoint)
grep -v '^scene ' "$T/A/summary.txt" >"$T/A.summary"
grep -v '^scene ' "$T/B/summary.txt" >"$T/B.summary"
diff "$T/A.summary" "$T/B.summary" >"$T/diff.out" || fail "summary.txt of B differs from A's" "$T/diff.out"
ok "resume through the CLI is bit-identical (2 threads in one go vs 1 thread resumed): forces.csv, particles, fields"

echo "all $NCHECK checks passed"
