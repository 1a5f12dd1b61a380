#!/usr/bin/env bash
# Two builds of bench_core side by side on one machine: the commit before a change and after it,
# run alternately REPS times, medians and their ratio (after / before) per row. A refactoring that
# must not change speed keeps every ratio at 0.97 or above (issue 17).
# Usage: bench/compare_builds.sh OLD_BENCH NEW_BENCH REPS CSV_OUT -- BENCH_ARGS...
#   e.g. bench/compare_builds.sh old/build/bench_core build/bench_core 5 cmp.csv -- --backend cuda --fast \
#          --scene scenes/default.ini --sizes 1e6,1.6e7
set -uo pipefail
old=$1 new=$2 reps=$3 out=$4
shift 4
[ "${1:-}" = "--" ] && shift
tmp=$(mktemp -d)
for ((k = 1; k <= reps; k++)); do
  "$old" "$@" --csv "$tmp/old_$k.csv" > "$tmp/old_$k.log" 2>&1 || { echo "the old build failed"; tail -5 "$tmp/old_$k.log"; exit 1; }
  "$new" "$@" --csv "$tmp/new_$k.csv" > "$tmp/new_$k.log" 2>&1 || { echo "the new build failed"; tail -5 "$tmp/new_$k.log"; exit 1; }
done
python3 - "$tmp" "$reps" "$out" <<'PY'
import csv, os, statistics, sys
tmp, reps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def rows(tag, k):
    with open(f'{tmp}/{tag}_{k}.csv') as f:
        return list(csv.DictReader(f))
first = rows('old', 1)
col = os.environ.get('COLUMN', 'particle_steps_per_s')  # bench_3d: COLUMN=sphere_steps_per_s
res = []
for i, r in enumerate(first):
    o = [float(rows('old', k)[i][col]) for k in range(1, reps + 1)]
    n = [float(rows('new', k)[i][col]) for k in range(1, reps + 1)]
    mo, mn = statistics.median(o), statistics.median(n)
    res.append((r.get('backend', ''), r.get('case', ''), r.get('n', r.get('spheres', '')), mo, mn, mn / mo))
print('%-6s %-8s %10s %12s %12s %7s' % ('back', 'case', 'particles', 'before', 'after', 'ratio'))
for b, c, p, mo, mn, q in res: print('%-6s %-8s %10s %12.4g %12.4g %7.3f' % (b, c, p, mo, mn, q))
with open(out, 'w') as f:
    f.write('backend,case,particles,column,median_before,median_after,ratio,reps\n')
    for b, c, p, mo, mn, q in res: f.write(f'{b},{c},{p},{col},{mo:.6g},{mn:.6g},{q:.4f},{reps}\n')
PY
rm -rf "$tmp"
