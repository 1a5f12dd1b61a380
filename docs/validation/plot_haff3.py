#!/usr/bin/env python3
"""Plot docs/validation/haff3.csv (tests/test_validation_haff3 out.csv) against Haff's law in 3D.
Run from the repository root: /usr/bin/python3 docs/validation/plot_haff3.py
The CSV holds the test's samples from t_skip on: t, the measured T and Haff's T from the first sample
with the theoretical slope b (the test's header derives it)."""
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

src = sys.argv[1] if len(sys.argv) > 1 else "docs/validation/haff3.csv"
dst = sys.argv[2] if len(sys.argv) > 2 else "docs/images/validation_haff3.png"
t, T, H = [], [], []
for row in csv.DictReader(open(src)):
    t.append(float(row["t"]))
    T.append(float(row["T"]))
    H.append(float(row["T_haff"]))

fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.4))
ax.plot(t, T, "-", lw=1.2, label="aerodem, 2292 spheres")
ax.plot(t, H, "k--", lw=1, label="Haff (theoretical slope)")
ax.set_yscale("log")
ax.set_xlabel("t [s]")
ax.set_ylabel("kT [J]")
ax.set_title("3D cooling: phi = 0.15, e = 0.9")
ax.legend()
bx.plot(t, [x ** -0.5 for x in T], "-", lw=1.2, label="aerodem")
bx.plot(t, [x ** -0.5 for x in H], "k--", lw=1, label="Haff: T^-1/2 linear in t")
bx.set_xlabel("t [s]")
bx.set_ylabel("T^(-1/2) [J^-1/2]")
bx.set_title("slope -3.9 % of theory, R^2 = 0.99995")
bx.legend()
fig.tight_layout()
fig.savefig(dst, dpi=110)
print("wrote", dst)
