#!/usr/bin/python3
"""Plots the shock validation (tests/test_validation_shock.c run with an output directory):
the time-averaged density around the wedge with the measured shock points, the fitted shock
lines and the theory (Rankine-Hugoniot for Henderson's hard-disc gas, and ideal gamma = 2), and
the density around the circle with the stagnation-line profile.

    /usr/bin/python3 docs/validation/plot_shock.py DIR [PNG]
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = sys.argv[1]
PNG = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "images", "validation_shock.png")


def read_field(path):
    rows = list(csv.DictReader(open(path)))
    xs = sorted({float(r["x"]) for r in rows})
    ys = sorted({float(r["y"]) for r in rows})
    n = np.full((len(ys), len(xs)), np.nan)
    ix = {x: i for i, x in enumerate(xs)}
    iy = {y: j for j, y in enumerate(ys)}
    for r in rows:
        n[iy[float(r["y"])], ix[float(r["x"])]] = float(r["n"])
    return np.array(xs), np.array(ys), n


def summary(path):
    return {k: float(v) for k, v in next(csv.DictReader(open(path))).items()}


have_bow = os.path.exists(os.path.join(DIR, "bow_field.csv"))
fig, axes = plt.subplots(1, 3 if have_bow else 1, figsize=(17 if have_bow else 7, 5.2))
axes = np.atleast_1d(axes)

xs, ys, n = read_field(os.path.join(DIR, "wedge_field.csv"))
s = summary(os.path.join(DIR, "wedge_summary.csv"))
ax = axes[0]
dx = xs[1] - xs[0]
im = ax.imshow(n / s["n1"], origin="lower", cmap="viridis", vmin=0, vmax=max(2.6, s["ratio_dense"] * 1.2),
               extent=[xs[0] - dx / 2, xs[-1] + dx / 2, ys[0] - dx / 2, ys[-1] + dx / 2])
fig.colorbar(im, ax=ax, label="n / n1")
tip, yc, c, th = s["x_tip"], s["y_axis"], s["chord"], math.radians(s["half_angle_deg"])
ax.fill([tip, tip + c, tip + c], [yc, yc + c * math.tan(th), yc - c * math.tan(th)], color="0.6")
pts = list(csv.DictReader(open(os.path.join(DIR, "wedge_shock_points.csv"))))
px = [float(p["x"]) for p in pts]
py = [float(p["y"]) for p in pts]
ax.plot(px, py, "w.", ms=3, label="measured shock (n = (n1 + n2)/2)")
xl = np.array([tip, tip + 1.15 * c])
for name, key, style in (("Henderson-gas RH", "beta_dense_deg", "r-"), ("ideal gamma = 2", "beta_ideal_deg", "m--")):
    b = math.radians(s[key])
    ax.plot(xl, yc + (xl - tip) * math.tan(b), style, lw=1, label="%s %.1f deg" % (name, s[key]))
    ax.plot(xl, yc - (xl - tip) * math.tan(b), style, lw=1)
ax.set_title("wedge %.0f deg, M = %.2f (Henderson gas): beta %.2f +- %.2f deg, n2/n1 %.3f (theory %.3f)"
             % (s["half_angle_deg"], s["mach_dense"], s["beta_deg"], s["beta_se_deg"], s["ratio"], s["ratio_dense"]),
             fontsize=8)
ax.set_xlabel("x [m]")
ax.set_ylabel("y [m]")
ax.legend(fontsize=7, loc="lower left")

if have_bow:
    xs, ys, n = read_field(os.path.join(DIR, "bow_field.csv"))
    b = summary(os.path.join(DIR, "bow_summary.csv"))
    ax = axes[1]
    dx = xs[1] - xs[0]
    im = ax.imshow(n / b["n1"], origin="lower", cmap="viridis", vmin=0, vmax=5,
                   extent=[xs[0] - dx / 2, xs[-1] + dx / 2, ys[0] - dx / 2, ys[-1] + dx / 2])
    fig.colorbar(im, ax=ax, label="n / n1")
    R = b["diameter"] / 2
    ax.add_patch(plt.Circle((b["x_nose_r"] + 0.5 + R, b["y_axis"]), R, color="0.6"))
    ax.set_title("circle D = %.0f m, M = %.2f: stand-off %.3f R" % (b["diameter"], b["mach_dense"],
                                                                     b["standoff_over_R"]), fontsize=8)
    ax.set_xlabel("x [m]")
    ax = axes[2]
    j = np.argmin(abs(ys - b["y_axis"]))
    prof = 0.5 * (n[j - 1] + n[j]) / b["n1"] if ys[j] > b["y_axis"] else 0.5 * (n[j] + n[j + 1]) / b["n1"]
    keep = xs < b["x_nose_r"] + 5
    ax.plot(xs[keep], prof[keep], "k.-", ms=3, label="stagnation line")
    ax.axhline(0.5 * (1 + b["ratio_normal"]), color="r", lw=0.8, label="(1 + RH jump)/2")
    ax.axvline(b["x_shock"], color="r", ls="--", lw=0.8, label="shock %.1f m" % b["x_shock"])
    ax.axvline(b["x_nose_r"], color="0.4", lw=1.5, label="nose + r")
    ax.axvline(b["x_nose_r"] - b["billig_dense"] * R, color="b", ls=":", lw=1,
               label="Billig (air) at M %.2f" % b["mach_dense"])
    ax.set_xlabel("x [m]")
    ax.set_ylabel("n / n1")
    ax.set_xlim(b["x_nose_r"] - 2 * R, b["x_nose_r"] + 5)
    ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(PNG, dpi=110)
print("wrote", PNG)
