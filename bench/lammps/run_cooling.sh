#!/usr/bin/env bash
# Makes docs/validation/lammps_cooling.csv: LAMMPS runs of the cooling gas of
# tests/test_validation_lammps.c, two per seed (plain, and with every atom moved at random by up to 1e-5,
# about a float's rounding of a position in this box: the chaos noise).
# Needs a build (build/tests/test_validation_lammps writes the initial states) and `lmp` (Debian lammps).
#
#   bench/lammps/run_cooling.sh [SEEDS...]      (default seeds 1 2 3; run from anywhere)
# Env: BUILD [build], LMP [lmp], OUT [docs/validation/lammps_cooling.csv]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
BUILD="${BUILD:-$root/build}"
LMP="${LMP:-lmp}"
OUT="${OUT:-$root/docs/validation/lammps_cooling.csv}"
seeds=("$@")
[ ${#seeds[@]} -eq 0 ] && seeds=(1 2 3)
# must match tests/test_validation_lammps.c
E=0.9 KN=1e3 NS=50 WIN=350 NWIN=60

export OMP_NUM_THREADS=1
work="$(mktemp -d /tmp/lammps_cooling.XXXXXX)"
trap 'rm -rf "$work"' EXIT
version="$("$LMP" -h | sed -n '2p' | sed 's/^ *//')"

{
  echo "# LAMMPS ($version), pair_style gran/hooke, bench/lammps/in.cooling2d via bench/lammps/run_cooling.sh, $(date -u +%Y-%m-%d)"
  echo "# e=$E kn=$KN steps_per_tc=$NS window=$WIN windows=$NWIN; code lammps_perturbed: every atom moved by up to 1e-5 (uniform) in x and y"
  echo "code,seed,step,t,ke,p"
} > "$work/out.csv"
for seed in "${seeds[@]}"; do
  "$BUILD/tests/test_validation_lammps" --data "$seed" "$work/gas.data"
  for kick in 0.0 1e-5; do
    code=lammps; [ "$kick" != 0.0 ] && code=lammps_perturbed
    t0=$(date +%s)
    "$LMP" -in "$here/in.cooling2d" -log "$work/log.$seed.$code" -screen none -nocite \
      -var data "$work/gas.data" -var out "$work/avg.txt" -var e $E -var kn $KN -var ns $NS \
      -var win $WIN -var nwin $NWIN -var kick $kick
    dt=$(awk '/^PARAMS/{split($3,a,"="); print a[2]}' "$work/log.$seed.$code")
    # t = 0 from the first thermo line (no contacts on the lattice, so P is the kinetic part)
    awk -v c="$code" -v s="$seed" '/^ *Step /{getline; printf "%s,%s,0,0.000000,%.10g,%.10g\n", c, s, $3, $4; exit}' \
      "$work/log.$seed.$code" >> "$work/out.csv"
    awk -v c="$code" -v s="$seed" -v dt="$dt" '!/^#/{printf "%s,%s,%d,%.6f,%s,%s\n", c, s, $1, $1*dt, $2, $3}' \
      "$work/avg.txt" >> "$work/out.csv"
    erot=$(awk '/^ *Step /{blk=1; next} /^Loop time/{blk=0} blk && $1 ~ /^[0-9]+$/ {e=$5} END{print e}' "$work/log.$seed.$code")
    echo "seed $seed $code: $(( $(date +%s) - t0 )) s, $(grep '^Loop time' "$work/log.$seed.$code"), erot at the end $erot"
  done
done
mv "$work/out.csv" "$OUT"
echo "wrote $OUT"
