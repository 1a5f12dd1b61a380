#!/usr/bin/python3
"""Plots docs/validation/free_molecular.csv (tests/validation_fm_sweep.c): CL and CD of a flat
plate in free-molecular flow against angle of attack, measured points with 3-sigma error bars and
2D free-molecular theory lines (frictionless walls, normal restitution e; the plate acts as a
stadium: its chord grown by the disc radius r). Also checks that the theory here, written again
independently, matches the theory column of the CSV (the C implementation).

    /usr/bin/python3 docs/validation/plot_free_molecular.py [CSV] [PNG]
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "free_molecular.csv")
PNG = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "images", "validation_free_molecular.png")
CHORD, RADIUS, STIFFNESS, MASS, KT_M = 20.0, 0.5, 1e5, 1.0, 1.0  # as in tests/validation_fm_sweep.c


def F(s):
    """Incident normal momentum flux / (n m sigma^2) of a drifting Maxwellian, s = S sin(theta)."""
    return s * math.exp(-s * s) / (2 * math.sqrt(math.pi)) + (1 + 2 * s * s) * (1 + math.erf(s)) / 4


def cp(S, e, sin_t):
    return 2 * (1 + e) * F(S * sin_t) / (S * S)


def circle_drag_per_q(S, e, R, n=2048):
    h = 2 * math.pi / n
    return R * h * sum(cp(S, e, math.cos((i + 0.5) * h)) * math.cos((i + 0.5) * h) for i in range(n))


def plate(S, e, aoa_deg, c=CHORD, r=RADIUS):
    a = math.radians(aoa_deg)
    dcp = cp(S, e, math.sin(a)) - cp(S, e, -math.sin(a))
    return dcp * math.cos(a), dcp * math.sin(a) + circle_drag_per_q(S, e, r) / c


def plate_soft_cd(S, e, aoa_deg):
    """CD with the soft-vertex deficit: the vertex arcs' drag times (1 - 0.93 lambda), lambda = v sqrt(m/k) / r,
    v = sqrt(U^2 + 2 kT/m) (trajectories of the linear spring as a central force, see free_molecular.md)."""
    U = S * math.sqrt(2 * KT_M)
    lam = math.sqrt(U * U + 2 * KT_M) * math.sqrt(MASS / STIFFNESS) / RADIUS
    return plate(S, e, aoa_deg)[1] - 0.93 * lam * circle_drag_per_q(S, e, RADIUS) / CHORD


rows = list(csv.DictReader(open(CSV)))
worst = 0.0
for r in rows:
    cl, cd = plate(float(r["S"]), float(r["e"]), float(r["aoa_deg"]))
    worst = max(worst, abs(cl - float(r["cl_theory"])), abs(cd - float(r["cd_theory"])))
print(f"theory: Python vs C largest difference {worst:.2e}")
assert worst < 1e-4, "the two theory implementations disagree"

fig, (axl, axd) = plt.subplots(1, 2, figsize=(11, 4.4))
colours = {1.0: "tab:blue", 2.0: "tab:orange", 5.0: "tab:green"}
for S in sorted({float(r["S"]) for r in rows}):
    sel = [r for r in rows if float(r["S"]) == S]
    e = float(sel[0]["e"])
    aoas = [i * 0.5 for i in range(181)]
    th = [plate(S, e, a) for a in aoas]
    col = colours.get(S, None)
    axl.plot(aoas, [t[0] for t in th], "-", color=col, label=f"theory S = {S:g}")
    axd.plot(aoas, [t[1] for t in th], "-", color=col, label=f"theory S = {S:g}")
    axd.plot(aoas, [plate_soft_cd(S, e, a) for a in aoas], ":", color=col, lw=1,
             label=f"+ soft vertices S = {S:g}")
    x = [float(r["aoa_deg"]) for r in sel]
    axl.errorbar(x, [float(r["cl"]) for r in sel], yerr=[3 * float(r["cl_se"]) for r in sel], fmt="o", ms=4,
                 color=col, capsize=2, label=f"DEM S = {S:g} (3 SE)")
    axd.errorbar(x, [float(r["cd"]) for r in sel], yerr=[3 * float(r["cd_se"]) for r in sel], fmt="o", ms=4,
                 color=col, capsize=2, label=f"DEM S = {S:g} (3 SE)")
for ax, name in ((axl, "lift coefficient CL"), (axd, "drag coefficient CD")):
    ax.set_xlabel("angle of attack [deg]")
    ax.set_ylabel(name)
    ax.set_xticks(range(0, 91, 10))
    ax.grid(alpha=0.3)
axd.legend(fontsize=7, ncol=3)
axl.legend(fontsize=7, ncol=2)
fig.suptitle(f"Flat plate in free-molecular flow (chord {CHORD:g} m, disc radius {RADIUS:g} m, specular walls e = 1)",
             fontsize=11)
fig.tight_layout()
os.makedirs(os.path.dirname(PNG), exist_ok=True)
fig.savefig(PNG, dpi=110)
print("wrote", PNG)
