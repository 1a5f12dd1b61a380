#!/usr/bin/env python3
"""Plot docs/validation/eos.csv (tests/validation_eos_sweep.c) against Henderson's hard-disc EOS.
Run from the repository root: /usr/bin/python3 docs/validation/plot_eos.py"""
import csv
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

src = sys.argv[1] if len(sys.argv) > 1 else "docs/validation/eos.csv"
dst = sys.argv[2] if len(sys.argv) > 2 else "docs/images/validation_eos.png"
rows = list(csv.DictReader(open(src)))
by_k = defaultdict(list)
for r in rows:
    by_k[float(r["k"])].append(r)


def henderson(p):
    return (1 + p * p / 8) / (1 - p) ** 2


fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.4))
ph = [i / 200 for i in range(0, 106)]
ax.plot(ph, [henderson(p) for p in ph], "k-", lw=1.2, label="Henderson 1975 (hard discs)")
style = {1e5: ("C0", "o"), 1e4: ("C1", "s"), 1e3: ("C3", "^")}
for k in sorted(by_k, reverse=True):
    c, m = style.get(k, ("C2", "x"))
    rs = by_k[k]
    phi = [float(r["phi_bulk"]) for r in rs]
    zw = [float(r["z_wall"]) for r in rs]
    zv = [float(r["z_vir"]) for r in rs]
    zh = [float(r["z_henderson"]) for r in rs]
    ax.plot(phi, zw, m, color=c, mfc="none", ms=7, label=f"k_n = {k:.0e}: wall")
    ax.plot(phi, zv, "+", color=c, ms=7, label=f"k_n = {k:.0e}: virial")
    bx.plot(phi, [100 * (a / b - 1) for a, b in zip(zw, zh)], m, color=c, mfc="none", ms=7, label=f"k_n = {k:.0e}: wall")
    bx.plot(phi, [100 * (a / b - 1) for a, b in zip(zv, zh)], "+", color=c, ms=7, label=f"k_n = {k:.0e}: virial")
ax.set_xlabel("bulk area fraction $\\phi$")
ax.set_ylabel("$Z = P / (n k T)$")
ax.set_title("Equation of state, elastic discs in a closed box (kT/m = 1)")
ax.legend(fontsize=7)
ax.grid(alpha=0.3)
bx.axhspan(-4, 4, color="0.9", label="test tolerance (k_n = 1e5)")
bx.axhline(0, color="k", lw=0.8)
bx.set_xlabel("bulk area fraction $\\phi$")
bx.set_ylabel("Z / Z_Henderson - 1 [%]")
bx.set_title("Deviation from Henderson")
bx.legend(fontsize=7, ncol=2)
bx.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(dst, dpi=110)
print("wrote", dst)
