#!/usr/bin/env bash
# Validation (issue 19): a wing spanning a periodic 3D tunnel against the 2D run of its section at the same
# conditions. In a free-molecular gas (collisions off, specular walls) a section's forces per span depend only
# on the gas's velocities in the section's plane, which are the same Maxwellian in 2D and in 3D, and on its
# number density: CL and CD of the infinite wing must equal the 2D section's. Both runs go through the program
# as a user runs it (the shipped scenes default.ini and wing3d.ini with --set), NACA 0012 at 10 degrees, chord
# 8 m, U = 3 m/s, kT/m = 1 (speed ratio 2.1); the 2D gas is denser (its discs cost less) since the free-molecular
# coefficients do not depend on the density. They must agree within 2 combined standard errors.
#
# Usage: test_validation_wing3.sh AERODEM SOURCE_DIR
# WING3_AOA sets the angle of attack (default 10 degrees); WING3_CSV appends the result as a row
# `aoa,cl_2d,cl_2d_se,cl_3d,cl_3d_se,cd_2d,cd_2d_se,cd_3d,cd_3d_se` (tests/validation_wing3_sweep.sh).
set -u
AD=${1:?usage: test_validation_wing3.sh AERODEM SOURCE_DIR}
SRC=${2:?usage: test_validation_wing3.sh AERODEM SOURCE_DIR}
. "$(dirname "$0")/cli_lib.sh" wing3
COMMON=(--backend cpu --threads 2 --quiet --set tunnel.width=48 --set tunnel.height=24 --set tunnel.walls=periodic
        --set tunnel.reservoir=0 --set gas.collisions=no --set gas.velocity=3 --set gas.temperature=1
        --set body.naca=0012 --set body.panels=60 --set body.chord=8 --set body.aoa=${WING3_AOA:-10} --set body.x=16 --set body.y=12
        --set run.settle_steps=15000 --set output.force_interval=1000 --set output.field_cell=2
        --set output.frame_interval=0 --set output.png=no --set output.vtk=no --set output.video=no)
run two run "$SRC/scenes/default.ini" "${COMMON[@]}" --set body.shape=naca --set gas.area_fraction=0.4 \
    --set run.steps=${WING2D_STEPS:-300000} --out "$T/2d"
expect_rc 0 "the 2D section" two
run three run "$SRC/scenes/wing3d.ini" "${COMMON[@]}" --set body.shape=wing --set tunnel.depth=8 \
    --set gas.volume_fraction=0.1 --set run.steps=${WING3D_STEPS:-150000} --out "$T/3d"
expect_rc 0 "the wing across the periodic span" three
get() { sed -n "s/^$2 //p" "$1/summary.txt"; }
if [ -n "${WING3_CSV:-}" ]; then
    echo "${WING3_AOA:-10},$(get "$T/2d" cl),$(get "$T/2d" cl_se),$(get "$T/3d" cl),$(get "$T/3d" cl_se),$(get "$T/2d" cd),$(get "$T/2d" cd_se),$(get "$T/3d" cd),$(get "$T/3d" cd_se)" >>"$WING3_CSV"
fi
for c in cl cd; do
    a=$(get "$T/2d" $c) sa=$(get "$T/2d" ${c}_se) b=$(get "$T/3d" $c) sb=$(get "$T/3d" ${c}_se)
    line=$(awk -v a="$a" -v sa="$sa" -v b="$b" -v sb="$sb" -v c="$c" 'BEGIN {
        s = sqrt(sa * sa + sb * sb); d = b - a;
        printf "%s: 2D %.4f +- %.4f, 3D %.4f +- %.4f, difference %+.4f = %.2f combined standard errors\n", c, a, sa, b, sb, d, d / s;
        exit !(s > 0 && (d < 0 ? -d : d) <= 2 * s && sb < 0.1 * (b < 0 ? -b : b)) }')
    rc=$?
    echo "$line"
    [ $rc = 0 ] || fail "$c of the infinite wing is not its section's within 2 combined standard errors (or too noisy)"
    ok "$c of the wing spanning the periodic tunnel equals the 2D section's"
done
echo "test_validation_wing3: all $NCHECK checks passed"
