#!/usr/bin/env python3
"""Plot docs/validation/contact.csv (build/tests/test_collision --csv docs/validation/contact.csv): restitution
and contact time of single contacts against the closed forms of the linear spring-dashpot,
e_meas = e and t_c = sqrt(m_eff/k) sqrt(pi^2 + ln^2 e).
Run from the repository root: /usr/bin/python3 docs/validation/plot_contact.py"""
import csv
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

src = sys.argv[1] if len(sys.argv) > 1 else "docs/validation/contact.csv"
dst = sys.argv[2] if len(sys.argv) > 2 else "docs/images/validation_contact.png"
rows = list(csv.DictReader(open(src)))
GEOMS = ["disc-disc", "disc-segment", "disc-wall"]
MARK = {"disc-disc": "o", "disc-segment": "s", "disc-wall": "^"}

fig, axs = plt.subplots(1, 3, figsize=(15, 4.6))

# 1, 2: relative errors against e for every k and phase, resolved and at the default resolution
for ax, which, title in ((axs[0], "resolved", "resolved: eta dt <= 0.002 (test)"),
                         (axs[1], "default", "default contact_steps = 20")):
    for i, g in enumerate(GEOMS):
        sel = [r for r in rows if r["set"] == which and r["geometry"] == g]
        off = (i - 1) * 0.012
        ax.plot([float(r["e"]) + off for r in sel], [100 * float(r["e_rel_err"]) for r in sel], MARK[g],
                color=f"C{i}", ms=4, alpha=0.6, label=f"{g}: restitution")
        ax.plot([float(r["e"]) + off for r in sel], [100 * float(r["tc_rel_err"]) for r in sel], MARK[g],
                mfc="none", color=f"C{i}", ms=4, alpha=0.6, label=f"{g}: contact time")
    ax.axhspan(-1, 1, color="0.85", zorder=0, label="restitution tolerance 1 %")
    for y in (-2, 2):
        ax.axhline(y, color="0.5", lw=0.8, ls="--")
    ax.set_xlabel("restitution e requested")
    ax.set_ylabel("measured / closed form - 1  [%]")
    ax.set_title(f"{title}\nk = 1e2 .. 1e6, 4 phases each")
    ax.grid(alpha=0.3)
axs[0].legend(fontsize=6.5, loc="lower right")
axs[0].set_ylim(-2.5, 2.5)
axs[1].set_yscale("symlog", linthresh=1)

# 3: worst restitution error over the phases against steps per contact
ax = axs[2]
worst = defaultdict(lambda: defaultdict(float))
steps = {}
for r in rows:
    if r["set"] != "resolution" or r["geometry"] != "disc-disc" or r["e"] == "1.00":
        continue
    key = (r["integrator"], r["e"])
    cs = float(r["contact_steps"])
    worst[key][cs] = max(worst[key][cs], abs(float(r["e_rel_err"])))
    steps[(key, cs)] = float(r["steps_per_contact"])
ls = {"symplectic-euler": "-", "verlet": "--", "rk4": ":"}
col = {"0.10": "C3", "0.50": "C1", "0.90": "C2"}
for (integ, e), d in sorted(worst.items()):
    xs = sorted(d)
    ax.loglog([steps[((integ, e), c)] for c in xs], [max(100 * d[c], 1e-3) for c in xs], ls[integ],
              marker=".", color=col[e], lw=1, label=f"{integ}, e = {e}")
ns = [8, 2000]
ax.loglog(ns, [100 * 3 * 2.303 / n for n in ns], color="k", lw=0.8, ls="-.", label="3 eta dt at e = 0.1 (first order)")
ax.axhline(1, color="0.5", lw=0.8)
ax.set_xlabel("steps per contact  t_c / dt")
ax.set_ylabel("worst |restitution error| over 4 phases [%]")
ax.set_title("time-step dependence, disc-disc, k = 1e4")
ax.legend(fontsize=6, ncol=2)
ax.grid(alpha=0.3, which="both")
fig.tight_layout()
fig.savefig(dst, dpi=110)
print("wrote", dst)
