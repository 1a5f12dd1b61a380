#!/usr/bin/env bash
# `aerodem sweep`: a symmetric airfoil in free-molecular flow over -15, 0, 15 degrees writes a
# polar whose lift is antisymmetric (within three combined standard errors) and a picture.
set -u
AERODEM=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cp "$(dirname "$0")/data/sweep_fm.ini" "$T/fm.ini"
fail() { echo "FAIL: $*"; exit 1; }
"$AERODEM" sweep "$T/fm.ini" --quiet 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "a sweep without a range exits $rc, expected 2"
grep -q "FROM:TO:STEP" "$T/err" || fail "no usage message: $(cat "$T/err")"
"$AERODEM" sweep "$T/fm.ini" --set body.aoa=-100:0:50 --out "$T/bad" --quiet 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "an out-of-range angle exits $rc, expected 2"
grep -q "aoa" "$T/err" || fail "the message does not name the key: $(cat "$T/err")"
[ ! -e "$T/bad" ] || fail "a refused sweep created its folder"
"$AERODEM" sweep "$T/fm.ini" --set body.aoa=-15:15:15 --out "$T/out" --quiet || fail "sweep exited $?"
[ -s "$T/out/polar.png" ] || fail "no polar.png"
[ "$(wc -l < "$T/out/polar.csv")" -eq 4 ] || fail "polar.csv should have a header and 3 rows: $(cat "$T/out/polar.csv")"
cat "$T/out/polar.csv"
awk -F, 'NR==2{lm=$2; sm=$3} NR==3{l0=$2; s0=$3} NR==4{lp=$2; sp=$3}
  END {
    z = (lm + lp) / sqrt(sm*sm + sp*sp); if (z < 0) z = -z
    z0 = l0 / s0; if (z0 < 0) z0 = -z0
    printf "CL(-15) + CL(15) = %.4f (%.2f combined SE); CL(0) = %.4f (%.2f SE); CL(15) = %.4f\n", lm + lp, z, l0, z0, lp
    if (z >= 3 || z0 >= 3 || !(lp > 3 * sp)) exit 1
  }' "$T/out/polar.csv" || fail "the polar of a symmetric airfoil is not antisymmetric, or 15 degrees does not lift"
echo "sweep: ok"
