#!/usr/bin/env bash
# Runs killed with SIGKILL at random moments (uniform over the run, so some land in checkpoint and
# output writes) and resumed until they finish; their outputs must equal an uninterrupted run's.
#
# Usage: test_kill.sh AERODEM SOURCE_DIR. AERODEM_KILL_RUNS sets the number of killed runs (default 20).
# After every kill, every file under a final name must be whole: equal to the uninterrupted run's
# file, a prefix of it (forces.csv, frames.csv), or a complete checkpoint or .pvd; temporary files
# (NAME.tmp) may be left by a kill. After the last resume: the same set of files, no temporary file,
# every file equal (scene.ini but for its run_id line; the checkpoint's particles,
# fields and caller block but for the run id).
set -u

AD=${1:?usage: test_kill.sh AERODEM SOURCE_DIR}
SRC=${2:?usage: test_kill.sh AERODEM SOURCE_DIR}
RUNS=${AERODEM_KILL_RUNS:-20}
# AERODEM_KILL_BACKEND=cuda runs it on the GPU (in deterministic mode: bit-identical runs)
BACKEND=${AERODEM_KILL_BACKEND:-cpu}
. "$(dirname "$0")/cli_lib.sh" kill

# A small closed box (about 340 discs), frequent force rows, frames, checkpoints on steps and on the
# wall clock (whose steps differ from run to run: the outputs must not depend on them).
ARGS=(run "$SRC/scenes/closed_box.ini" --steps 2400 --backend "$BACKEND" --threads 1 --quiet --set run.deterministic=yes
      --set tunnel.width=30 --set tunnel.height=30 --set run.settle_steps=600
      --set output.force_interval=50 --set output.frame_interval=800 --set output.checkpoint_interval=300
      --set output.checkpoint_seconds=0.15 --set output.png=yes --set output.vtk=yes --set output.video=no
      --set output.field_cell=3)

now_ms() { date +%s%3N; }

t0=$(now_ms)
"$AD" "${ARGS[@]}" --out "$T/ref" >"$T/ref.out" 2>&1 || fail "the uninterrupted run failed" "$T/ref.out"
TREF=$(($(now_ms) - t0))
[ "$TREF" -gt 0 ] || TREF=1
( cd "$T/ref" && find . -type f | sort ) >"$T/ref.files"

# ckpt_key FILE OUT: the particles and fields, and the caller block without its run id (the
# trailer is magic[8], id[8], source[1024]).
ckpt_key() {
    local p u len
    p=$(section_offset "$1" PART) || return 1
    u=$(section_offset "$1" USER) || return 1
    len=$(od -An -tu8 -j $((u + 8)) -N8 "$1" | tr -d ' ')
    {
        if [ "${AERODEM_KILL_BACKEND:-cpu}" = cuda ]; then
            # the GPU adds the field sums with atomics, in any order: their last bits vary from run to
            # run, so its key leaves out FLDS (the .vti files, compared below, hold the fields)
            local fl fe
            fl=$(section_offset "$1" FLDS) || return 1
            fe=$((fl + 16 + $(od -An -tu8 -j $((fl + 8)) -N8 "$1" | tr -d ' ')))
            tail -c +$((p + 1)) "$1" | head -c $((fl - p))
            tail -c +$((fe + 1)) "$1" | head -c $((u - fe))
        else
            tail -c +$((p + 1)) "$1" | head -c $((u - p))
        fi
        tail -c +$((u + 17)) "$1" | head -c $((len - 1032))
        tail -c +$((u + 17 + len - 1024)) "$1" | head -c 1024
    } >"$2"
}
ckpt_key "$T/ref/checkpoint.ckpt" "$T/ref.ckpt" || fail "the reference checkpoint has no PART or USER section"

# check_whole DIR: every file under a final name is whole (see the top)
check_whole() {
    local d=$1 f
    while IFS= read -r f; do
        f=${f#./}
        case "$f" in
        *.tmp | *.tmp.mp4) continue ;;
        forces.csv | frames.csv)
            [ -f "$T/ref/$f" ] || fail "$f is not in the uninterrupted run"
            cmp -s -n "$(stat -c %s "$d/$f")" "$d/$f" "$T/ref/$f" ||
                fail "$f after a kill is not a prefix of the uninterrupted run's" "$d/$f" "$T/ref/$f" ;;
        checkpoint.ckpt)
            [ "$(stat -c %s "$d/$f")" = "$(stat -c %s "$T/ref/$f")" ] || fail "checkpoint.ckpt after a kill has a wrong size" ;;
        *.pvd)
            [ "$(tail -n 1 "$d/$f")" = "</VTKFile>" ] || fail "$f after a kill is cut short" "$d/$f" ;;
        scene.ini)
            diff <(grep -v '^; run_id' "$d/$f") <(grep -v '^; run_id' "$T/ref/$f") >/dev/null ||
                fail "$f after a kill differs from the uninterrupted run's" "$d/$f" "$T/ref/$f" ;;
        *)
            [ -f "$T/ref/$f" ] || fail "$f after a kill is not in the uninterrupted run" 
            cmp -s "$d/$f" "$T/ref/$f" || {
                case "$f" in *.txt) diff "$d/$f" "$T/ref/$f" >"$T/diff.out" ;; *) cmp "$d/$f" "$T/ref/$f" >"$T/diff.out" 2>&1 ;; esac
                fail "$f after a kill differs from the uninterrupted run's (partial?)" "$T/diff.out"
            } ;;
        esac
    done < <(cd "$d" && find . -type f)
}

KILLS=0 RESUMES=0 FRESH=0
for ((run = 1; run <= RUNS; run++)); do
    D=$T/run$run
    want=$((1 + RANDOM % 3)) # kills in this run
    kills=0
    while :; do
        if [ -f "$D/checkpoint.ckpt" ]; then
            "$AD" resume "$D/checkpoint.ckpt" --quiet >"$T/last.out" 2>&1 &
            RESUMES=$((RESUMES + 1))
        else
            "$AD" "${ARGS[@]}" --out "$D" >"$T/last.out" 2>&1 &
            FRESH=$((FRESH + 1))
        fi
        BG=$!
        if [ "$kills" -lt "$want" ]; then
            # uniform over the uninterrupted run's length (a few ms resolution)
            ms=$(((RANDOM * 32768 + RANDOM) % (TREF + 1)))
            sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
            if kill -9 "$BG" 2>/dev/null; then
                wait "$BG" 2>/dev/null
                BG=""
                kills=$((kills + 1))
                KILLS=$((KILLS + 1))
                [ -d "$D" ] && check_whole "$D"
                continue
            fi
        fi
        wait "$BG"
        rc=$?
        BG=""
        [ "$rc" = 0 ] || fail "run $run: exit code $rc after $kills kills" "$T/last.out"
        break
    done
    ( cd "$D" && find . -type f | sort ) >"$T/run.files"
    diff "$T/ref.files" "$T/run.files" >"$T/diff.out" ||
        fail "run $run ($kills kills): the files differ from the uninterrupted run's" "$T/diff.out"
    while IFS= read -r f; do
        f=${f#./}
        case "$f" in
        checkpoint.ckpt)
            ckpt_key "$D/$f" "$T/run.ckpt" || fail "run $run: the final checkpoint has no PART or USER section"
            cmp -s "$T/run.ckpt" "$T/ref.ckpt" || fail "run $run ($kills kills): the final checkpoint differs" ;;
        scene.ini)
            diff <(grep -v '^; run_id' "$D/$f") <(grep -v '^; run_id' "$T/ref/$f") >"$T/diff.out" ||
                fail "run $run ($kills kills): $f differs" "$T/diff.out" ;;
        *)
            cmp -s "$D/$f" "$T/ref/$f" || {
                case "$f" in *.txt | *.csv) diff "$D/$f" "$T/ref/$f" >"$T/diff.out" ;; *) cmp "$D/$f" "$T/ref/$f" >"$T/diff.out" 2>&1 ;; esac
                fail "run $run ($kills kills): $f differs" "$T/diff.out"
            } ;;
        esac
    done <"$T/ref.files"
    printf 'ok   run %d: %d kills, outputs equal to the uninterrupted run\n' "$run" "$kills"
    rm -rf "$D"
done
echo "all $RUNS runs passed: $KILLS kills, $RESUMES resumes, $FRESH fresh starts, 0 mismatches (uninterrupted run ${TREF} ms)"
