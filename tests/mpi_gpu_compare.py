"""test_mpi_gpu.sh's comparison of a run's result line with one rank's (exit 0 when it agrees).
Usage: python3 mpi_gpu_compare.py KIND ONE_RANK_LINE OTHER_LINE
  body:   the same disc count; the plate's mean force fx, fy within 3 combined standard errors;
  tunnel: the count, the stream's traffic (entered, left), the probe's discs and the panels' contacts within
          3 % (counts of events: or 3 Poisson spreads, two runs having parted ways), then the forces as body."""
import math
import re
import sys


def values(line):
    """The line's "name number" pairs (a whole number token: the hash's hex digits are not one)."""
    return {k: float(x) for k, x in re.findall(r"(\w+) ([-+]?[0-9.]+(?:e[-+]?[0-9]+)?)(?=[ \]])", line)}


kind, a, b = sys.argv[1], values(sys.argv[2]), values(sys.argv[3])
ok = bool(a and b)
if kind == "body":
    ok = ok and a["count"] == b["count"]
else:
    for k in ("count", "entered", "left", "probe_n", "contacts"):
        if not ok:
            break
        tol = max(0.03 * abs(a[k]), 0 if k == "probe_n" else 3 * math.sqrt(a[k] + b[k]))
        ok = abs(a[k] - b[k]) <= tol
        print(f"{k}: {a[k]:.6g} and {b[k]:.6g} (within {tol:.3g})")
for f in ("fx", "fy"):
    if not ok:
        break
    se = math.hypot(a[f + "_se"], b[f + "_se"])
    print(f"{f}: {a[f]:.5g} and {b[f]:.5g}, {abs(a[f] - b[f]) / se:.2f} combined SE")
    ok = abs(a[f] - b[f]) <= 3 * se
print(("ok" if ok else "FAIL") + f": the {kind} case against one rank")
sys.exit(0 if ok else 1)
