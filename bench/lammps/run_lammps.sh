#!/usr/bin/env bash
# LAMMPS half of the aerodem throughput benchmark (2D elastic granular gas).
#
# Usage:  bench/lammps/run_lammps.sh            # benchmark runs only
#         SWEEP=1 bench/lammps/run_lammps.sh    # also neighbour-skin sweep first
# Env knobs (defaults in brackets):
#   SKIN [0.2]  EVERY [1]  SORTF [1000]  LABEL [gas2d]
#   STEPS_SMALL [2000]  STEPS_LARGE [300]  WARM [100]
#   NPS ["1 2"]  (MPI rank counts)   SIZES ["320 1000"] (nside; N = nside^2)
#   SWEEP_SKINS ["0.1 0.2 0.3 0.4 0.5"]  SWEEP_STEPS [600]  SWEEP_REPS [3]
#   REPS [3] / REPS_LARGE [2] (N > 200000)
#             repetitions of each benchmark run; the CSV keeps the fastest
#             (min loop time) and records the median in the settings column
#   MAX_FOREIGN [0.05] runs during which other processes kept more than this
#             many cores busy are discarded and repeated (MAX_TRIES [4] total);
#             before every run the script waits (QUIET_WAIT [600] s at most)
#             for 3 idle seconds
# Writes bench/results/lammps_${LABEL}.csv (and lammps_${LABEL}_sweep.csv).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
input="$here/in.gas2d"
resdir="$root/bench/results"
mkdir -p "$resdir"

LMP="${LMP:-lmp}"
SKIN="${SKIN:-0.2}"
EVERY="${EVERY:-1}"
SORTF="${SORTF:-1000}"
LABEL="${LABEL:-gas2d}"
STEPS_SMALL="${STEPS_SMALL:-2000}"
STEPS_LARGE="${STEPS_LARGE:-300}"
WARM="${WARM:-100}"
NPS="${NPS:-1 2}"
SIZES="${SIZES:-320 1000}"
SWEEP="${SWEEP:-0}"
SWEEP_SKINS="${SWEEP_SKINS:-0.1 0.2 0.3 0.4 0.5}"
SWEEP_STEPS="${SWEEP_STEPS:-600}"
SWEEP_REPS="${SWEEP_REPS:-3}"
REPS="${REPS:-3}"
REPS_LARGE="${REPS_LARGE:-2}"
MAX_TRIES="${MAX_TRIES:-4}"
MAX_FOREIGN="${MAX_FOREIGN:-0.05}"
QUIET_WAIT="${QUIET_WAIT:-600}"

export OMP_NUM_THREADS=1
mpiflags=(--bind-to core)
[ "$(id -u)" = 0 ] && mpiflags+=(--allow-run-as-root --oversubscribe)

work="$(mktemp -d /tmp/lammps_gas2d.XXXXXX)"
trap 'rm -rf "$work"' EXIT

ncpu=$(nproc)
# busy and total jiffies of the whole machine, from /proc/stat
cpustat() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }

# wait (up to QUIET_WAIT s, costs no CPU) until the machine has been idle,
# i.e. < MAX_FOREIGN busy cores, for 3 consecutive 1-second windows
wait_quiet() {
  local waited=0 ok=0 b0 t0 b1 t1
  while [ "$ok" -lt 3 ] && [ "$waited" -lt "$QUIET_WAIT" ]; do
    read -r b0 t0 < <(cpustat); sleep 1; read -r b1 t1 < <(cpustat)
    waited=$((waited+1))
    if awk -v b=$((b1-b0)) -v t=$((t1-t0)) -v c="$ncpu" -v m="$MAX_FOREIGN" \
         'BEGIN{exit !(t>0 && c*b/t <= m+0.02)}'; then ok=$((ok+1)); else ok=0; fi
  done
  [ "$waited" -gt 3 ] && echo "   (waited ${waited}s for an idle machine)" >&2
  return 0
}

# run_one NP NSIDE STEPS SKIN EVERY SORTF
#  -> prints "seconds builds neighs_per_atom KE0 KE1 pair+neigh_s foreign_cores"
# foreign_cores = CPU time used on the machine by anything other than this
# run, divided by its wall time: clearly above 0 means another process
# competed for the 2 cores (or their shared cache) and the timing is suspect.
run_one() {
  local np=$1 nside=$2 steps=$3 skin=$4 every=$5 sortf=$6
  local log="$work/log.$np.$nside.$steps.$skin.$every.$sortf"
  local cmd=("$LMP" -in "$input" -log "$log" -screen none -nocite
             -var nside "$nside" -var steps "$steps" -var warm "$WARM"
             -var skin "$skin" -var every "$every" -var sortf "$sortf")
  local b0 t0 b1 t1
  wait_quiet
  read -r b0 t0 < <(cpustat)
  local tf="$work/time.$np.$nside"
  if [ "$np" -gt 1 ]; then
    /usr/bin/time -f '%e %U %S' -o "$tf" mpirun "${mpiflags[@]}" -np "$np" "${cmd[@]}"
  else
    /usr/bin/time -f '%e %U %S' -o "$tf" "${cmd[@]}"
  fi
  read -r b1 t1 < <(cpustat)
  # (busy CPU-seconds of the whole machine - CPU-seconds of our own run) / wall
  local foreign
  foreign=$(awk -v b=$((b1-b0)) -v hz="$(getconf CLK_TCK)" '
            {f=(b/hz-($2+$3))/$1; printf "%.3f", f}' "$tf")
  # the last "Loop time" line is the timed run (the first one is the warm-up)
  local secs builds nb ke0 ke1
  secs=$(grep '^Loop time' "$log" | tail -1 | awk '{print $4}')
  builds=$(grep '^Neighbor list builds' "$log" | tail -1 | awk '{print $NF}')
  nb=$(grep '^Ave neighs/atom' "$log" | tail -1 | awk '{print $NF}')
  # KE per atom at the start / end of the timed run (thermo column 3)
  ke0=$(awk '/^ *Step /{blk++; getline; if (blk==2) print $3}' "$log")
  ke1=$(awk '/^ *Step /{blk++} /^Loop time/{if (blk==2) print last} {if ($1 ~ /^[0-9]+$/) last=$3}' "$log")
  local pn
  pn=$(awk '/^Pair +\|/{p=$5} /^Neigh +\|/{q=$5} END{printf "%.4f", p+q}' "$log")
  echo "$secs $builds $nb $ke0 $ke1 $pn $foreign"
}

hdr="code,n,cores,steps,seconds,particle_steps_per_s,per_core,settings"

if [ "$SWEEP" = 1 ]; then
  sweepcsv="$resdir/lammps_${LABEL}_sweep.csv"
  echo "$hdr" > "$sweepcsv"
  echo "== skin sweep: N=102400, 1 rank, $SWEEP_STEPS steps, neigh every $EVERY delay 0 check yes, $SWEEP_REPS interleaved reps"
  printf '%4s %6s %10s %14s %8s %10s %10s %8s\n' rep skin seconds pstep/s builds neigh/atom pair+neigh foreign
  for rep in $(seq 1 "$SWEEP_REPS"); do
    for s in $SWEEP_SKINS; do
      read -r secs builds nb ke0 ke1 pn fo < <(run_one 1 320 "$SWEEP_STEPS" "$s" "$EVERY" "$SORTF")
      ps=$(awk -v n=102400 -v st="$SWEEP_STEPS" -v t="$secs" 'BEGIN{printf "%.4e", n*st/t}')
      printf '%4s %6s %10s %14s %8s %10s %10s %8s\n' "$rep" "$s" "$secs" "$ps" "$builds" "$nb" "$pn" "$fo"
      echo "lammps,102400,1,$SWEEP_STEPS,$secs,$ps,$ps,skin=$s;every=$EVERY;delay=0;check=yes;sort=$SORTF;builds=$builds;pair_plus_neigh_s=$pn;rep=$rep;foreign_cores=$fo" >> "$sweepcsv"
    done
  done
  echo "-- best (min) loop time per skin:"
  awk -F, 'NR>1{split($8,a,";"); sk=a[1]; if(!(sk in m) || $5<m[sk]) m[sk]=$5} END{for(k in m) printf "   %-10s %s s\n", k, m[k]}' "$sweepcsv" | sort
fi

csv="$resdir/lammps_${LABEL}.csv"
echo "$hdr" > "$csv"
echo "== benchmark: skin $SKIN, neigh every $EVERY delay 0 check yes, sort $SORTF, warm-up $WARM steps, best of $REPS (N<=200000) / $REPS_LARGE"
printf '%9s %5s %6s %10s %14s %14s %7s %9s %9s\n' N cores steps seconds pstep/s per_core builds KE0 KE1
for nside in $SIZES; do
  n=$((nside*nside))
  if [ "$n" -le 200000 ]; then steps=$STEPS_SMALL; reps=$REPS; else steps=$STEPS_LARGE; reps=$REPS_LARGE; fi
  for np in $NPS; do
    all=(); best=""; bb=""; bke0=""; bke1=""; clean=0; tries=0; skipped=0; cbest=""; cfo=""; cbb=""
    while [ "$clean" -lt "$reps" ] && [ "$tries" -lt "$MAX_TRIES" ]; do
      tries=$((tries+1))
      read -r secs builds nb ke0 ke1 pn fo < <(run_one "$np" "$nside" "$steps" "$SKIN" "$EVERY" "$SORTF")
      if awk -v f="$fo" -v m="$MAX_FOREIGN" 'BEGIN{exit !(f>m)}'; then
        echo "   (discarded: ${secs}s with ${fo} foreign busy cores)"
        skipped=$((skipped+1))
        if [ -z "$cbest" ] || awk -v a="$secs" -v b="$cbest" 'BEGIN{exit !(a<b)}'; then
          cbest=$secs; cfo=$fo; cbb=$builds
        fi
        continue
      fi
      clean=$((clean+1))
      all+=("$secs")
      if [ -z "$best" ] || awk -v a="$secs" -v b="$best" 'BEGIN{exit !(a<b)}'; then
        best=$secs; bb=$builds; bke0=$ke0; bke1=$ke1
      fi
    done
    if [ "$clean" -eq 0 ]; then
      # keep the fastest contended run, clearly flagged: it is only a lower
      # bound on LAMMPS's throughput and should be re-measured on an idle box
      ps=$(awk -v n="$n" -v st="$steps" -v t="$cbest" 'BEGIN{printf "%.4e", n*st/t}')
      pc=$(awk -v n="$n" -v st="$steps" -v t="$cbest" -v c="$np" 'BEGIN{printf "%.4e", n*st/t/c}')
      printf '%9s %5s %6s %10s %14s %14s %7s   CONTENDED (%s foreign cores): lower bound only\n' "$n" "$np" "$steps" "$cbest" "$ps" "$pc" "$cbb" "$cfo"
      echo "lammps,$n,$np,$steps,$cbest,$ps,$pc,skin=$SKIN;every=$EVERY;delay=0;check=yes;sort=$SORTF;mpi_ranks=$np;builds=$cbb;CONTENDED_foreign_cores=$cfo;lower_bound_only;tries=$tries" >> "$csv"
      continue
    fi
    med=$(printf '%s\n' "${all[@]}" | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
    ps=$(awk -v n="$n" -v st="$steps" -v t="$best" 'BEGIN{printf "%.4e", n*st/t}')
    pc=$(awk -v n="$n" -v st="$steps" -v t="$best" -v c="$np" 'BEGIN{printf "%.4e", n*st/t/c}')
    printf '%9s %5s %6s %10s %14s %14s %7s %9s %9s   all: %s\n' "$n" "$np" "$steps" "$best" "$ps" "$pc" "$bb" "$bke0" "$bke1" "${all[*]}"
    echo "lammps,$n,$np,$steps,$best,$ps,$pc,skin=$SKIN;every=$EVERY;delay=0;check=yes;sort=$SORTF;mpi_ranks=$np;builds=$bb;best_of=$clean;median_s=$med;discarded_contended=$skipped" >> "$csv"
  done
done
echo "wrote $csv"
