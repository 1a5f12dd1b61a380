#!/usr/bin/env python3
"""Plot docs/validation/haff.csv (tests/test_validation_haff.c out.csv ...) against Haff's law.
Run from the repository root: /usr/bin/python3 docs/validation/plot_haff.py
The parameters below are those of the test: N = 477 discs in a periodic 50 x 50 box, r = 0.5,
m = 1, e = 0.9, kT0/m = 1."""
import csv
import math
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

src = sys.argv[1] if len(sys.argv) > 1 else "docs/validation/haff.csv"
dst = sys.argv[2] if len(sys.argv) > 2 else "docs/images/validation_haff.png"
N, L, r, m, e = 477, 50.0, 0.5, 1.0, 0.9
n = N / L**2
phi = n * math.pi * r * r
g = (1 - 7 * phi / 16) / (1 - phi) ** 2
omega0 = 2 * math.sqrt(math.pi) * n * 2 * r * g  # at kT/m = 1
b = math.sqrt(math.pi) * (1 - e * e) * n * 2 * r * g / (2 * math.sqrt(m))  # d(T^-1/2)/dt
tau = 4 / ((1 - e * e) * omega0)
t_skip = 3 / omega0

runs = defaultdict(lambda: ([], []))
for row in csv.DictReader(open(src)):
    t, T = runs[row["seed"]]
    t.append(float(row["t"]))
    T.append(float(row["T"]))

fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.4))
for i, (seed, (t, T)) in enumerate(sorted(runs.items())):
    ax.loglog([1 + x / tau for x in t], T, "-", color=f"C{i}", lw=1, label=f"aerodem, seed {seed}")
    bx.plot(t, [x ** -0.5 for x in T], "-", color=f"C{i}", lw=1, label=f"aerodem, seed {seed}")
    # Haff from the temperature at t_skip, with the theoretical slope
    k0 = min(range(len(t)), key=lambda j: abs(t[j] - t_skip))
    a0 = T[k0] ** -0.5
    tt = [t_skip + j * (t[-1] - t_skip) / 200 for j in range(201)]
    if i == 0:
        ax.loglog([1 + x / tau for x in tt], [(a0 + b * (x - t_skip)) ** -2 for x in tt], "k--", lw=1.2,
                  label=f"Haff, tau = 4/((1-e^2) omega0) = {tau:.2f}")
        bx.plot(tt, [a0 + b * (x - t_skip) for x in tt], "k--", lw=1.2, label="Haff: slope sqrt(pi)(1-e^2) n sigma g/2")
        ax.axhline(T[k0] / 10, color="0.5", lw=0.8, ls=":", label="fit ends: T dropped 10x")
ax.set_xlabel("1 + t / tau")
ax.set_ylabel("kT / m")
ax.set_title(f"Freely cooling discs, e = {e}, phi = {phi:.3f}, N = {N}")
ax.legend(fontsize=7)
ax.grid(alpha=0.3, which="both")
bx.set_xlabel("t")
bx.set_ylabel("$(kT/m)^{-1/2}$")
bx.set_title("$T^{-1/2}$ is linear in t in the homogeneous cooling state")
bx.legend(fontsize=7)
bx.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(dst, dpi=110)
print("wrote", dst)
