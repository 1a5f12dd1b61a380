#!/usr/bin/env bash
# The live view end to end, as a user meets it: `aerodem run --live` serves the page; two headless
# Chromium viewers open it at once, one reading its DOM after the page drew frames, one taking a
# screenshot that must show a drawn page; the run goes on and is ended with Ctrl-C (a checkpoint, exit
# 130); `resume --live` and `sweep --live` serve their runs too. Needs chromium (Debian: chromium) and
# /usr/bin/python3; exits 77 (skipped) without chromium.
#
# Usage: test_live.sh AERODEM SOURCE_DIR [SCREENSHOT]: SCREENSHOT, where given, keeps the picture
# (docs/live_view.png comes from here).
set -u
AD=${1:?usage: test_live.sh AERODEM SOURCE_DIR [SCREENSHOT]}
SRC=${2:?usage: test_live.sh AERODEM SOURCE_DIR [SCREENSHOT]}
SHOT=${3:-}
. "$(dirname "$0")/cli_lib.sh" live
PY=/usr/bin/python3
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || { echo "skipped: no chromium (Debian: apt-get install chromium)"; exit 77; }
SCENE=$SRC/scenes/default.ini
QUICK=(--set output.video=no --set output.frame_interval=0)

# start_live NAME ARGS...: aerodem ARGS in the background (BG), PORT read from its first line.
start_live() {
    local name=$1
    shift
    "$AD" "$@" >"$T/$name.out" 2>"$T/$name.err" &
    BG=$!
    PORT=""
    for _ in $(seq 1 300); do
        PORT=$(sed -n 's|^aerodem: live view at http://127.0.0.1:\([0-9]*\)/$|\1|p' "$T/$name.out")
        [ -n "$PORT" ] && return 0
        kill -0 "$BG" 2>/dev/null || fail "$name: aerodem ended before serving the live view" "$T/$name.out" "$T/$name.err"
        sleep 0.2
    done
    fail "$name: no live view address in 60 s" "$T/$name.out" "$T/$name.err"
}

# stop_live NAME WANT: Ctrl-C, and the exit code it must end with.
stop_live() {
    kill -INT "$BG" 2>/dev/null
    wait "$BG"
    RC=$?
    BG=""
    expect_rc "$2" "$1 ended with Ctrl-C" "$1"
}

chrome() { # chrome WHAT ARGS...: headless Chromium with a profile and a home of its own
    mkdir -p "$T/home_$1"
    HOME="$T/home_$1" XDG_CONFIG_HOME="$T/home_$1" XDG_CACHE_HOME="$T/home_$1" timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
        --user-data-dir="$T/chrome_$1" --virtual-time-budget=6000 --window-size=1300,1500 "${@:2}" 2>"$T/chrome_$1.err"
}

# 1. A run with the live view, two viewers at once.
start_live run run "$SCENE" --steps 2000000 --threads 1 "${QUICK[@]}" --out "$T/run" --live 0
expect_in "$T/run.out" "ssh -L $PORT:localhost:$PORT" "the SSH hint"
chrome dom --dump-dom "http://127.0.0.1:$PORT/" >"$T/dom.html" &
DOM=$!
chrome shot --screenshot="$T/shot.png" "http://127.0.0.1:$PORT/" >/dev/null &
SHOTPID=$!
wait "$DOM" || fail "chromium --dump-dom failed" "$T/chrome_dom.err"
wait "$SHOTPID" || fail "chromium --screenshot failed" "$T/chrome_shot.err"
frames=$(sed -n 's/.*<body data-frames="\([0-9]*\)" data-step="\([0-9]*\)".*/\1/p' "$T/dom.html")
step=$(sed -n 's/.*<body data-frames="\([0-9]*\)" data-step="\([0-9]*\)".*/\2/p' "$T/dom.html")
[ -n "$frames" ] && [ "$frames" -ge 2 ] || fail "the page drew ${frames:-no} frames, expected 2 or more" "$T/dom.html"
[ "$step" -gt 0 ] || fail "the page shows step $step" "$T/dom.html"
expect_in "$T/dom.html" "/ 2000000 (" "the progress line"
expect_in "$T/dom.html" "backend cpu (1 threads)" "the run's settings"
expect_in "$T/dom.html" "[gas]" "the scene"
ok "two viewers at once; the page drew $frames frames, up to step $step, with its progress and settings"
read -r w h colours < <($PY "$SRC/tests/png_colours.py" "$T/shot.png") || fail "the screenshot is not a PNG"
[ "$colours" -ge 2000 ] || fail "the screenshot has $colours colours: the discs and maps were not drawn" "$T/chrome_shot.err"
[ -n "$SHOT" ] && cp "$T/shot.png" "$SHOT"
ok "the screenshot (${w} x ${h}) shows the drawn page: $colours colours"
kill -0 "$BG" 2>/dev/null || fail "the run ended while viewed" "$T/run.err"
stop_live run 130
[ -f "$T/run/checkpoint.ckpt" ] || fail "Ctrl-C left no checkpoint" "$T/run.err"
ok "the viewers gone, the run went on; Ctrl-C ended it with a checkpoint (exit 130)"

# 2. resume --live: the resumed run is served, labelled with its checkpoint.
start_live resume resume "$T/run/checkpoint.ckpt" --steps 2000000 --live 0
$PY "$SRC/tests/live_fetch.py" "$PORT" "checkpoint.ckpt" >"$T/resume.fetch" || fail "resume --live served no frame" "$T/resume.fetch" "$T/resume.err"
stop_live resume 130
rows=$(awk '{print $NF}' "$T/resume.fetch")
[ "$rows" -ge 10 ] || fail "the resumed run's page shows $rows force rows: not the run's history before the resume" "$T/resume.fetch"
ok "resume --live serves the resumed run, with its history from forces.csv: $(cat "$T/resume.fetch")"

# 3. sweep --live: one page for the whole sweep, each point labelled.
start_live sweep sweep "$SCENE" --set body.aoa=0:4:4 --steps 400000 --threads 1 "${QUICK[@]}" --out "$T/sweep" --live 0
$PY "$SRC/tests/live_fetch.py" "$PORT" "sweep: body.aoa = 0 (1 of 2)" >"$T/sweep.fetch" || fail "sweep --live served no frame" "$T/sweep.fetch" "$T/sweep.err"
stop_live sweep 130
ok "sweep --live serves its points: $(cat "$T/sweep.fetch")"

# 4. a port in use: a clear error, nothing run.
start_live first run "$SCENE" --steps 2000000 --threads 1 "${QUICK[@]}" --out "$T/first" --live 0
run taken run "$SCENE" --steps 100 "${QUICK[@]}" --out "$T/taken" --live "$PORT"
expect_rc 1 "a port in use" taken
expect_in "$T/taken.err" "cannot serve the live view on 127.0.0.1 port $PORT" "the message"
[ -e "$T/taken" ] && fail "a run whose live view could not start wrote $T/taken"
stop_live first 130
run bad run "$SCENE" --live 70000
expect_rc 2 "--live 70000" bad
expect_in "$T/bad.err" "--live 70000: expected a port" "the message"
ok "a port in use or out of range: refused by name before anything runs"
echo "$NCHECK passed, 0 failed"
