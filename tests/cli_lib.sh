# What the shell tests share (test_cli.sh, test_new_user.sh, test_outputs.sh, test_kill.sh); sourced
# with a name:
#   . "$(dirname "$0")/cli_lib.sh" NAME
# gives T, a scratch folder removed at the end (BG, a background run, is killed first); ok and fail,
# which print each check (fail shows the files named after its message and exits 1); run,
# expect_rc and expect_in, which run the program ($AD) and check what it did; and section_offset,
# where a checkpoint's section starts.
T=$(mktemp -d "${TMPDIR:-/tmp}/aerodem_$1.XXXXXX")
BG=""
cleanup() {
    [ -n "$BG" ] && kill -9 "$BG" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

NCHECK=0
ok() {
    NCHECK=$((NCHECK + 1))
    printf 'ok   %s\n' "$1"
}
fail() {
    printf 'FAIL %s\n' "$1"
    shift
    for f in "$@"; do # files holding what happened
        [ -f "$f" ] && { printf -- '---- %s:\n' "${f#"$T"/}"; head -c 3000 "$f"; echo; }
    done
    exit 1
}

# run NAME ARGS...: runs aerodem ($AD) with stdout in $T/NAME.out, stderr in $T/NAME.err; the exit
# code in RC.
RC=0
run() {
    local name=$1
    shift
    "$AD" "$@" >"$T/$name.out" 2>"$T/$name.err"
    RC=$?
}

expect_rc() { # expect_rc WANT WHAT NAME
    [ "$RC" = "$1" ] || fail "$2: exit code $RC, expected $1" "$T/$3.out" "$T/$3.err"
}

expect_in() { # expect_in FILE TEXT WHAT
    grep -qF -- "$2" "$1" || fail "$3: '$2' not in ${1#"$T"/}" "$1"
}

# section_offset FILE TAG: a checkpoint section is tag[4], u32, u64 length, payload; the first
# follows a 16-byte header.
section_offset() {
    local f=$1 off=16 tag len
    while :; do
        tag=$(dd if="$f" bs=1 skip="$off" count=4 status=none)
        [ "$tag" = "$2" ] && { echo "$off"; return 0; }
        if [ "$tag" = "END." ] || [ -z "$tag" ]; then return 1; fi
        len=$(od -An -tu8 -j $((off + 8)) -N8 "$f" | tr -d ' ')
        off=$((off + 16 + len))
    done
}
