#!/usr/bin/env bash
# What the body feels, panel by panel (issue 20), as a user runs it: the shipped diffuse-wall airfoil and the
# sphere shrunk with --set write surface.csv (its columns, upper and lower sides, the panels' forces adding up to
# forces.csv's averaged force), cp.png of its size, body.vtp read back by VTK with the panels' cell data; an
# interrupted run resumed ends with the uninterrupted run's surface.csv byte for byte (the batch means kept in the
# checkpoint); the resolved scene.ini states the wall temperature; bad surface keys are refused by key and line.
#
# Usage: test_surface_out.sh AERODEM SOURCE_DIR. Prints each check; exits 1 at the first that fails.
set -u

AD=${1:?usage: test_surface_out.sh AERODEM SOURCE_DIR}
SRC=${2:?usage: test_surface_out.sh AERODEM SOURCE_DIR}
. "$(dirname "$0")/cli_lib.sh" surface_out
PY=/usr/bin/python3

# png_size FILE: the width and height in a PNG's header
png_size() { "$PY" -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(*struct.unpack(">II", d[16:24]))' "$1"; }

# ------------------------------------------------------------------------------ 2D --
# diffuse_airfoil.ini with a 10 m chord in a 60 x 30 m tunnel: about 1300 discs, a few seconds.
SCENE=$SRC/scenes/diffuse_airfoil.ini
SMALL=(--backend cpu --threads 2 --quiet --set tunnel.width=60 --set tunnel.height=30 --set body.chord=10
       --set body.x=20 --set body.y=15 --set run.settle_steps=2000
       --set output.force_interval=500 --set output.frame_interval=0 --set output.video=no)
run a run "$SCENE" --steps 12000 "${SMALL[@]}" --out "$T/A"
expect_rc 0 "diffuse_airfoil.ini, 12000 steps" a
for f in surface.csv cp.png body.vtp; do [ -s "$T/A/$f" ] || fail "the 2D run wrote no $f" "$T/a.err"; done
expect_in "$T/A/scene.ini" "surface = diffuse" "scene.ini gives the body's surface model"
expect_in "$T/A/scene.ini" "wall_temperature = 1" "scene.ini states the wall temperature auto resolved to the stream's"
ok "a diffuse-wall airfoil writes surface.csv, cp.png, body.vtp; scene.ini states wall_temperature = 1"

# the columns, the sides, the panels' forces against forces.csv's averaged rows
"$PY" - "$T/A" 2 >"$T/check2.out" 2>&1 <<'EOF' || fail "surface.csv of the 2D run" "$T/check2.out" "$T/A/surface.csv"
import csv, math, sys
d, dims = sys.argv[1], int(sys.argv[2])
rows = list(csv.DictReader(open(d + "/surface.csv")))
head = open(d + "/surface.csv").readline().strip().split(",")
want = (["panel", "s", "x_c", "side", "length", "x", "y", "nx", "ny"] if dims == 2 else
        ["panel", "x", "y", "z", "nx", "ny", "nz", "area", "x_c", "side", "theta"])
want += ["cp", "cp_se", "cf", "cf_se", "ch", "ch_se", "contacts", "contact_rate", "contact_rate_se", "fx", "fy"]
want += [] if dims == 2 else ["fz"]
assert head == want, "columns %s, expected %s" % (head, want)
assert [int(r["panel"]) for r in rows] == list(range(len(rows))), "panels not numbered 0..n-1 in order"
sides = {r["side"] for r in rows}
assert sides == {"upper", "lower"}, "sides %s, expected upper and lower" % sides
forces = list(csv.DictReader(open(d + "/forces.csv")))
avg = [f for f in forces if int(f["averaged"]) > 0]
assert len(avg) >= 3, "only %d averaged force rows" % len(avg)
contacts = sum(int(r["contacts"]) for r in rows)
assert contacts > 40, "only %d contacts on the body" % contacts
for comp, col in (("fx", "drag"), ("fy", "lift")):
    panels = sum(float(r[comp]) for r in rows)
    total = sum(float(f[col]) for f in avg) / len(avg)
    tol = 1e-6 * max(abs(total), max(abs(float(r[comp])) for r in rows)) + 1e-9
    assert abs(panels - total) <= tol, "%s: the panels add to %.9g, forces.csv's mean %s is %.9g" % (comp, panels, col, total)
    assert abs(total) > 0, "no %s" % col
for r in rows:
    for k in ("cp", "cp_se", "cf", "ch", "contact_rate"):
        assert math.isfinite(float(r[k])), "panel %s: %s = %s" % (r["panel"], k, r[k])
if dims == 2:
    # Cp and Cf say what the force says: F = q L (-(Cp + p_inf/q) n + Cf t), t along the panel towards the
    # trailing edge; around a closed outline p_inf's part adds to 0. scene: area fraction 0.3 of discs of radius
    # 0.5 m and mass 1 kg, U = 3 sqrt(2 kT/m) (Mach 3), kT/m = 1, NACA 2412 at 8 degrees
    q = 0.5 * 0.3 / (math.pi * 0.25) * 18.0
    a = math.radians(8.0)
    u = (math.cos(a), -math.sin(a))
    fx = fy = 0.0
    for r in rows:
        n, L = (float(r["nx"]), float(r["ny"])), float(r["length"])
        t = (-n[1], n[0]) if -n[1] * u[0] + n[0] * u[1] >= 0 else (n[1], -n[0])
        fx += q * L * (-float(r["cp"]) * n[0] + float(r["cf"]) * t[0])
        fy += q * L * (-float(r["cp"]) * n[1] + float(r["cf"]) * t[1])
    for got, comp in ((fx, "fx"), (fy, "fy")):
        want = sum(float(r[comp]) for r in rows)
        assert abs(got - want) <= 2e-3 * max(abs(want), 1.0), "%s from Cp and Cf %.6g, the panels' %.6g" % (comp, got, want)
print("surface.csv: %d panels, %d contacts; the panels' forces add to forces.csv's" % (len(rows), contacts))
EOF
ok "surface.csv: its columns, upper and lower sides, finite coefficients; the panels' forces add up to forces.csv's"

read -r W H <<<"$(png_size "$T/A/cp.png")"
[ "$W" = 1094 ] && [ "$H" = 640 ] || fail "cp.png is $W x $H px, expected 1094 x 640"
ok "cp.png is 1094 x 640 px (an 800 x 500 plot, its axes, legend and the convention's line)"

# body.vtp: a line cell per panel with Cp, Cf, Ch and contact_rate equal to surface.csv's
if "$PY" -c 'import vtk' 2>/dev/null; then
    "$PY" - "$T/A" >"$T/vtk2.out" 2>&1 <<'EOF' || fail "VTK reads body.vtp back with the panels' cell data" "$T/vtk2.out"
import csv, sys, vtk
d = sys.argv[1]
rd = vtk.vtkXMLPolyDataReader()
rd.SetFileName(d + "/body.vtp")
rd.Update()
p = rd.GetOutput()
rows = list(csv.DictReader(open(d + "/surface.csv")))
assert p.GetNumberOfLines() == len(rows), "%d lines, %d panels" % (p.GetNumberOfLines(), len(rows))
cd = p.GetCellData()
for name, col in (("Cp", "cp"), ("Cf", "cf"), ("Ch", "ch"), ("contact_rate", "contact_rate")):
    a = cd.GetArray(name)
    assert a is not None and a.GetNumberOfTuples() == len(rows), "no cell array " + name
    for i, r in enumerate(rows):
        assert abs(a.GetValue(i) - float(r[col])) <= 1e-5 * abs(float(r[col])) + 1e-12, "%s[%d]" % (name, i)
assert cd.GetScalars().GetName() == "Cp"
print("body.vtp: %d line cells, Cp Cf Ch contact_rate" % p.GetNumberOfLines())
EOF
    ok "VTK reads body.vtp: a line cell per panel, cell data Cp, Cf, Ch, contact_rate equal to surface.csv's"
else
    ok "VTK's Python module is not installed: the read-back is skipped"
fi

# stopped at 6000 steps and resumed: the same surface.csv (the batch means are in the checkpoint)
run b1 run "$SCENE" --steps 6000 "${SMALL[@]}" --out "$T/B"
expect_rc 0 "the first 6000 steps" b1
run b2 resume "$T/B/checkpoint.ckpt" --steps 12000 --quiet
expect_rc 0 "resumed to 12000 steps" b2
cmp -s "$T/A/surface.csv" "$T/B/surface.csv" ||
    fail "surface.csv of the resumed run differs from the uninterrupted one's" "$T/A/surface.csv" "$T/B/surface.csv"
ok "a run resumed from its checkpoint ends with the uninterrupted run's surface.csv, byte for byte"

# ------------------------------------------------------------------------------ 3D --
SMALL3=(--backend cpu --threads 2 --quiet --set tunnel.width=30 --set tunnel.height=16 --set tunnel.depth=16
        --set body.chord=6 --set body.x=10 --set body.y=8 --set body.z=8 --set body.subdivisions=2
        --set run.settle_steps=200 --set output.force_interval=100 --set output.frame_interval=0
        --set output.video=no --set body.surface=maxwell --set body.accommodation=0.5)
run c run "$SRC/scenes/sphere3d.ini" --steps 800 "${SMALL3[@]}" --out "$T/C"
expect_rc 0 "sphere3d.ini with a maxwell surface, 800 steps" c
"$PY" - "$T/C" 3 >"$T/check3.out" 2>&1 <<'EOF' || fail "surface.csv of the 3D run" "$T/check3.out" "$T/C/surface.csv"
import csv, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/surface.csv")))
assert len(rows) == 320, "%d triangles, expected 320" % len(rows)
forces = list(csv.DictReader(open(d + "/forces.csv")))
avg = [f for f in forces if int(f["averaged"]) > 0]
for comp, col in (("fx", "drag"), ("fy", "lift"), ("fz", "side")):
    panels = sum(float(r[comp]) for r in rows)
    total = sum(float(f[col]) for f in avg) / len(avg)
    tol = 1e-6 * max(abs(total), max(abs(float(r[comp])) for r in rows)) + 1e-9
    assert abs(panels - total) <= tol, "%s: the triangles add to %.9g, forces.csv's mean %s is %.9g" % (comp, panels, col, total)
area = sum(float(r["area"]) for r in rows)
assert abs(area - 113.1) < 4, "the triangles' area %g, a 6 m sphere's is 113" % area
print("3D surface.csv: 320 triangles add up to forces.csv's force")
EOF
[ -s "$T/C/cp.png" ] || fail "the 3D run wrote no cp.png" "$T/c.err"
if "$PY" -c 'import vtk' 2>/dev/null; then
    "$PY" "$SRC/tests/vtk_readback.py" --mesh "$T/C/body.vtp" 162 320 0 --cells Cp,Cf,Ch,contact_rate >"$T/rb3.out" 2>&1 ||
        fail "VTK reads the 3D body.vtp back (162 points, 320 triangles, closed)" "$T/rb3.out"
fi
ok "3D: surface.csv per triangle adds up to forces.csv's force; cp.png; body.vtp read back by VTK"

# a specular body: no surface files by default (output.surface = auto), all of them with output.surface = yes
run d1 run "$SCENE" --steps 3000 "${SMALL[@]}" --set body.surface=specular --out "$T/D1"
expect_rc 0 "a specular body, output.surface = auto" d1
[ ! -e "$T/D1/surface.csv" ] && [ ! -e "$T/D1/cp.png" ] || fail "a specular body wrote surface files by default"
expect_in "$T/D1/scene.ini" "surface = no" "scene.ini gives output.surface = auto resolved to no"
run d2 run "$SCENE" --steps 3000 "${SMALL[@]}" --set body.surface=specular --set output.surface=yes --out "$T/D2"
expect_rc 0 "a specular body, output.surface = yes" d2
[ -s "$T/D2/surface.csv" ] && [ -s "$T/D2/cp.png" ] || fail "output.surface = yes wrote no surface files" "$T/d2.err"
ok "output.surface: auto writes no surface files for a specular body, yes does"

# --------------------------------------------------------------------- bad keys --
bad() { # bad NAME TEXT ARGS...: refused with exit code 2, the message holding TEXT
    local name=$1 text=$2
    shift 2
    run "$name" run "$SCENE" --steps 100 --quiet --out "$T/bad" "$@"
    expect_rc 2 "$name refused" "$name"
    expect_in "$T/$name.err" "$text" "$name: the message"
}
bad model "[body] surface = 'rough' is not allowed" --set body.surface=rough
bad range "[body] accommodation = 1.5 is out of range" --set body.surface=maxwell --set body.accommodation=1.5
bad maxwell "maxwell needs [body] accommodation" --set body.surface=maxwell
bad fixed "with surface = diffuse, whose accommodation is 1" --set body.accommodation=0.5
bad cold "[body] wall_temperature = 0 is out of range" --set body.wall_temperature=0
bad walls "[tunnel] wall_surface applies to solid walls" --set tunnel.wall_surface=diffuse
bad wallacc "[tunnel] wall_surface = maxwell needs [tunnel] wall_accommodation" --set tunnel.walls=solid \
    --set tunnel.wall_surface=maxwell
printf '[body]\nshape = naca\n\nsurface = sticky\n' >"$T/bad.ini"
run line run "$T/bad.ini" --steps 100 --quiet --out "$T/bad"
expect_rc 2 "a scene file with a bad surface" line
expect_in "$T/line.err" "bad.ini:4: [body] surface = 'sticky' is not allowed" "the file, the line and the key"
ok "bad surface keys refused with the key named (and the file and line from a scene file)"

echo "all $NCHECK checks passed"
