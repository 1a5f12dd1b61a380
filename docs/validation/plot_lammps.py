#!/usr/bin/env python3
"""Plot the cooling gas of tests/test_validation_lammps.c in aerodem and LAMMPS (gran/hooke):
docs/validation/lammps_cooling.csv (bench/lammps/run_cooling.sh) and docs/validation/aerodem_cooling.csv
(build/tests/test_validation_lammps --csv docs/validation/aerodem_cooling.csv 1 2 3).
Run from the repository root: /usr/bin/python3 docs/validation/plot_lammps.py"""
import csv
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

ref = sys.argv[1] if len(sys.argv) > 1 else "docs/validation/lammps_cooling.csv"
ours = sys.argv[2] if len(sys.argv) > 2 else "docs/validation/aerodem_cooling.csv"
dst = sys.argv[3] if len(sys.argv) > 3 else "docs/images/validation_lammps.png"

curves = defaultdict(dict)  # (code, seed) -> step -> (t, ke, p)
for path in (ref, ours):
    for r in csv.DictReader(line for line in open(path) if not line.startswith("#")):
        curves[(r["code"], r["seed"])][int(r["step"])] = (float(r["t"]), float(r["ke"]), float(r["p"]))
seeds = sorted({s for (c, s) in curves if c == "aerodem" and ("lammps", s) in curves})
N = 10000

fig, axs = plt.subplots(2, 2, figsize=(12, 8), sharex=True)
for i, s in enumerate(seeds):
    lm, ad = curves[("lammps", s)], curves[("aerodem", s)]
    pt = curves.get(("lammps_perturbed", s), {})
    steps = sorted(set(lm) & set(ad))
    t = [lm[k][0] for k in steps]
    for col, ax, q in ((1, axs[0][0], "KE"), (2, axs[0][1], "P")):
        scale = 1.0 / N if col == 1 else 1.0
        ax.plot(t, [lm[k][col] * scale for k in steps], "-", color=f"C{i}", lw=1.6, alpha=0.6,
                label=f"LAMMPS, seed {s}")
        ax.plot(t, [ad[k][col] * scale for k in steps], "--", color=f"C{i}", lw=1.2, label=f"aerodem, seed {s}")
        dx = axs[1][col - 1]
        dx.plot(t, [100 * (ad[k][col] / lm[k][col] - 1) for k in steps], "-", color=f"C{i}", lw=1.2,
                label=f"aerodem - LAMMPS, seed {s}")
        if pt:
            dx.plot(t, [100 * (pt[k][col] / lm[k][col] - 1) for k in steps if k in pt], ":", color=f"C{i}", lw=1.2,
                    label=f"LAMMPS moved by 1e-5 - LAMMPS, seed {s}")
axs[0][0].set_yscale("log")
axs[0][0].set_ylabel("kinetic energy per disc (window mean)")
axs[0][0].set_title("Freely cooling discs, N = 10^4, phi = 0.25, e = 0.9, k_n = 1e3")
axs[0][1].set_yscale("log")
axs[0][1].set_ylabel("pressure (sum m v^2 + sum r.F) / (2 L^2) (window mean)")
axs[0][1].set_title("virial pressure, windows of 350 steps (0.49)")
for ax in axs[1]:
    ax.set_xlabel("t")
    ax.axhline(0, color="0.4", lw=0.8)
    ax.legend(fontsize=6.5, ncol=2)
axs[1][0].set_ylabel("relative difference of KE [%]")
axs[1][1].set_ylabel("relative difference of P [%]")
for row in axs:
    for ax in row:
        ax.grid(alpha=0.3, which="both")
axs[0][0].legend(fontsize=7, ncol=2)
fig.tight_layout()
fig.savefig(dst, dpi=110)
print("wrote", dst)
