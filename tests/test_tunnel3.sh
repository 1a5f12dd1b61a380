#!/usr/bin/env bash
# The 3D wind tunnel as a user runs it (issue 19): a shipped 3D scene shrunk with --set runs on the CPU and
# writes its files (forces.csv with the side force and the pitching moment, summary.txt with CL, CD, CY, Cm and
# the reference, 3D fields, heat maps of two slices, frames, the body's surface), read back by VTK; an interrupted
# run resumed gives the uninterrupted run's checkpoint, rows and summary byte for byte; the shipped STL is what
# `aerodem body-stl` makes; a wing spanning a periodic tunnel runs; bad 3D scenes are refused by key.
#
# Usage: test_tunnel3.sh AERODEM SOURCE_DIR. Prints each check; exits 1 at the first that fails.
set -u

AD=${1:?usage: test_tunnel3.sh AERODEM SOURCE_DIR}
SRC=${2:?usage: test_tunnel3.sh AERODEM SOURCE_DIR}
. "$(dirname "$0")/cli_lib.sh" tunnel3

# The shipped STL is the generator's.
run stl body-stl "$SRC/scenes/wing3d.ini" "$T/wing.stl" --set body.span=120 --set body.aoa=0 --set body.panels=40
expect_rc 0 "aerodem body-stl of wing3d.ini" stl
cmp -s "$T/wing.stl" "$SRC/scenes/meshes/wing_tips.stl" ||
    fail "scenes/meshes/wing_tips.stl is not what aerodem body-stl makes (see the header of scenes/stl_wing.ini)"
ok "scenes/meshes/wing_tips.stl is aerodem body-stl's output, byte for byte"

# sphere3d.ini shrunk: a 6 m sphere in a 30 x 16 x 16 m tunnel, about 1100 spheres.
SMALL=(--backend cpu --threads 2 --quiet --set tunnel.width=30 --set tunnel.height=16 --set tunnel.depth=16
       --set body.chord=6 --set body.x=10 --set body.y=8 --set body.z=8 --set run.settle_steps=200
       --set output.force_interval=100 --set output.frame_interval=400 --set output.video=no)
SCENE=$SRC/scenes/sphere3d.ini
run a run "$SCENE" --steps 800 "${SMALL[@]}" --out "$T/A"
expect_rc 0 "sphere3d.ini, 800 steps" a
for f in body.vtp forces.csv summary.txt scene.ini fields.pvd particles.pvd density.png density_x.png speed.png \
         pressure_x.png velocity_z_x.png frames/speed_000001.png fields/fields_000001.vti particles/particles_000001.vtp; do
    [ -s "$T/A/$f" ] || fail "the 3D run wrote no $f" "$T/a.err"
done
ok "the 3D run writes forces, summary, heat maps of both slices, frames, 3D fields, spheres and the body"
head -1 "$T/A/forces.csv" | grep -q '^step,time,drag,lift,side,moment_x,moment_y,moment_z,cd,cl,cy,cm,' ||
    fail "forces.csv of a 3D run lacks the side force and moments" "$T/A/forces.csv"
[ "$(grep -c '^[0-9]' "$T/A/forces.csv")" = 8 ] || fail "forces.csv should have 8 rows" "$T/A/forces.csv"
ok "forces.csv: force and moment vectors, CD, CL, CY, Cm, 8 rows"
for k in cd cd_se cl cy cy_se cm cm_se averaged_intervals ref_area ref_length pivot free_stream_density_ratio; do
    grep -q "^$k " "$T/A/summary.txt" || fail "summary.txt lacks $k" "$T/A/summary.txt"
done
# a sphere's reference area is its frontal disc: pi 3^2
expect_in "$T/A/summary.txt" "ref_area 28.2743 m^2" "the sphere's reference area"
expect_in "$T/A/summary.txt" "pivot 10 8 8 m" "the sphere's pivot"
awk '$1 == "cd" && !($2 > 0.5 && $2 < 6) { exit 1 }' "$T/A/summary.txt" ||
    fail "the sphere's drag coefficient is not between 0.5 and 6" "$T/A/summary.txt"
ok "summary.txt: the coefficients with standard errors, the reference area, length and pivot; CD in range"

# VTK reads the files back (the system interpreter has VTK; skipped without it)
if /usr/bin/python3 -c 'import vtk' 2>/dev/null; then
    RB=$SRC/tests/vtk_readback.py
    /usr/bin/python3 "$RB" --mesh "$T/A/body.vtp" 642 1280 0 >"$T/rb1.out" 2>&1 ||
        fail "VTK reads body.vtp back (642 points, 1280 triangles, closed)" "$T/rb1.out"
    /usr/bin/python3 "$RB" --image3 "$T/A/fields/fields_000001.vti" 15 8 8 0 0 0 2 2 2 \
        density:1,velocity:3,temperature:1,pressure:1,acceleration:3,contact_force:1,speed:1 >"$T/rb2.out" 2>&1 ||
        fail "VTK reads the 3D fields back (15 x 8 x 8 cells of 2 m)" "$T/rb2.out"
    N=$(sed -n 's/^particles //p' "$T/A/summary.txt")
    /usr/bin/python3 "$RB" --particles3 "$T/A/particles/particles_000001.vtp" "$N" id,velocity,pressure >"$T/rb3.out" 2>&1 ||
        fail "VTK reads the last frame's $N spheres back" "$T/rb3.out"
    NF=$(ls "$T/A/fields/"*.vti | wc -l) NP=$(ls "$T/A/particles/"*.vtp | wc -l)
    /usr/bin/python3 "$RB" --series "$T/A/fields.pvd" "$NF" >"$T/rb4.out" 2>&1 ||
        fail "VTK reads the series fields.pvd back ($NF data sets)" "$T/rb4.out"
    /usr/bin/python3 "$RB" --series "$T/A/particles.pvd" "$NP" "$N" >"$T/rb5.out" 2>&1 ||
        fail "VTK reads the series particles.pvd back ($NP data sets, $N spheres in the last)" "$T/rb5.out"
    ok "VTK reads back the body's surface, the 3D fields and the spheres, and the series of both (.pvd)"
else
    ok "VTK's Python module is not installed: the read-back is skipped"
fi

# Interrupted at 400 steps (the checkpoint of a shorter run) and resumed to 800: the same files.
run b1 run "$SCENE" --steps 400 "${SMALL[@]}" --out "$T/B"
expect_rc 0 "the first 400 steps" b1
run b2 resume "$T/B/checkpoint.ckpt" --steps 800 --quiet
expect_rc 0 "resumed to 800 steps" b2
for f in forces.csv summary.txt; do
    cmp -s "$T/A/$f" "$T/B/$f" || fail "$f of the resumed 3D run differs from the uninterrupted one's" "$T/b2.err"
done
# the checkpoints: the world (every section before the caller block) and the 3D run state (the block's last 72
# bytes, before END.) the same; the runs' ids (in the block's run tag) differ, as two runs' do
U=$(section_offset "$T/A/checkpoint.ckpt" USER) && E=$(section_offset "$T/A/checkpoint.ckpt" END.) ||
    fail "no USER or END. section in the 3D checkpoint"
cmp -s -n "$U" "$T/A/checkpoint.ckpt" "$T/B/checkpoint.ckpt" ||
    fail "the world in the resumed 3D run's checkpoint differs from the uninterrupted one's"
cmp -s <(tail -c +$((E - 72 + 1)) "$T/A/checkpoint.ckpt" | head -c 72) \
       <(tail -c +$((E - 72 + 1)) "$T/B/checkpoint.ckpt" | head -c 72) ||
    fail "the 3D run state (side force, moment sums) of the resumed run's checkpoint differs"
ok "a 3D run resumed from its checkpoint ends with the same world, 3D run state, forces.csv and summary.txt"

# An infinite wing: NACA 0012 spanning a periodic tunnel (open tips on the periodic faces).
run w run "$SRC/scenes/wing3d.ini" --steps 300 --backend cpu --threads 2 --quiet --set tunnel.width=40 \
    --set tunnel.height=20 --set tunnel.depth=8 --set body.chord=8 --set body.x=12 --set body.y=10 \
    --set gas.volume_fraction=0.05 --set run.settle_steps=100 --set output.force_interval=50 \
    --set output.field_cell=2 --set output.frame_interval=0 --set output.video=no --set output.png=no --out "$T/W"
expect_rc 0 "a wing spanning the periodic tunnel" w
expect_in "$T/W/summary.txt" "ref_area 64 m^2" "the wing's reference area, span x chord"
ok "a wing across the periodic span runs, its reference area span x chord"

# A polar sweep of that wing over two angles: a polar with a row for each, its picture, a run folder each.
run sw sweep "$SRC/scenes/wing3d.ini" --set body.aoa=0:8:8 --steps 300 --backend cpu --threads 2 --quiet \
    --set tunnel.width=40 --set tunnel.height=20 --set tunnel.depth=8 --set body.chord=8 --set body.x=12 \
    --set body.y=10 --set gas.volume_fraction=0.05 --set run.settle_steps=100 --set output.force_interval=50 \
    --set output.field_cell=2 --set output.frame_interval=0 --set output.video=no --out "$T/SW"
expect_rc 0 "a 3D sweep over two angles" sw
[ -s "$T/SW/polar.png" ] || fail "the 3D sweep wrote no polar.png"
[ "$(wc -l <"$T/SW/polar.csv")" -eq 3 ] || fail "the 3D polar should have a header and 2 rows: $(cat "$T/SW/polar.csv")"
awk -F, 'NR > 1 && !($1 == 0 || $1 == 8) { exit 1 } NR > 1 && ($2 != $2 + 0 || $3 != $3 + 0) { exit 1 }' \
    "$T/SW/polar.csv" || fail "the 3D polar's rows are not the angles 0 and 8 with numbers: $(cat "$T/SW/polar.csv")"
ok "a 3D sweep writes its polar (polar.csv, polar.png) over the angles asked"

# Bad 3D scenes, refused by key with exit code 2 (1 for a file that cannot be read).
bad() { # bad NAME WANT_RC TEXT ARGS...
    local name=$1 want=$2 text=$3
    shift 3
    run "$name" run "$SCENE" --steps 10 --quiet --backend cpu --threads 1 --out "$T/bad" "$@"
    expect_rc "$want" "$name" "$name"
    expect_in "$T/$name.err" "$text" "$name"
}
bad naca3d 2 "[body] shape = naca is a 2D outline" --set body.shape=naca
bad sphere2d 2 "dimensions = 3" --set tunnel.dimensions=2
bad area 2 "area_fraction is 2D's" --set gas.area_fraction=0.1
bad outside 2 "outside the" --set body.chord=29
bad span 2 "longer than the tunnel's depth" --set body.shape=wing --set body.span=40
bad sweep 2 "[body] sweep = 20 deg on a wing spanning" --set body.shape=wing --set body.sweep=20
bad slice 2 "[output] slice_z = 99" --set output.slice_z=99
bad nostl 2 "needs a [body] file" --set body.shape=stl
bad missing 1 "nothere.stl" --set body.shape=stl --set body.file=nothere.stl
printf 'solid plate\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid\n' \
    >"$T/open.stl"
bad open 2 "open" --set body.shape=stl --set body.file="$T/open.stl"
ok "bad 3D scenes refused by key: a 2D shape, a 3D shape in 2D, area_fraction, a body outside, a span and a sweep, a slice, an STL missing or open"
[ -e "$T/bad/checkpoint.ckpt" ] && fail "a refused scene left a checkpoint"
ok "a refused 3D scene writes nothing"
echo "test_tunnel3: all $NCHECK checks passed"
