#!/usr/bin/env bash
# GPU ranks (backend = mpi, rank_backend = cuda; tests/test_mpi_gpu.c) on 1, 2 and 3 ranks sharing this
# machine's GPUs, halos through pinned host buffers. Each run checks on its own that no disc is lost or
# duplicated and what the physics conserves. Here: one rank gives the bits of backend = cuda in one
# process; a run repeated on as many ranks gives the same bits, and in the crossing case 2 and 3 ranks the
# discs of one rank bit for bit (true of this gas, not promised in general); 2 and 3 ranks give the count, the momentum
# and the energy of one rank (momentum to float rounding, kinetic energy 1 %), and the plate's mean force within
# 3 of their combined standard errors; a checkpoint of 2 ranks resumes on 1 and on 3. The open tunnel: one
# rank the bits of backend = cuda, a repeated run on 2 ranks the same bits, 2 and 3 ranks (and a checkpoint of 2
# resumed on 3) the count, the stream's traffic, the probe and the panels' contacts within 3 % (counts of events:
# or 3 Poisson spreads) and the plate's
# (diffuse, 4 sampled panels: their impulse the body's, checked by each run) force within 3
# combined standard errors of one rank's; each run checks its own balance of discs. The load balance (a pile
# moving along x through a thin gas): the edges move on 2, 3 and 4 ranks and keep the fullest slab under 1.25
# of the even share, a repeated run on 2 ranks the same bits, the count, the momentum and the energy of one rank. Skipped (77) without
# a GPU. Usage: test_mpi_gpu.sh BIN_DIR [BIG]   (BIG: also the mpi_scaling benchmark's closed box)
set -uo pipefail
bin=$1
exe="$bin/test_mpi_gpu"
here=$(cd "$(dirname "$0")" && pwd)
nvidia-smi -L > /dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
. "$(dirname "$0")/mpi_lib.sh"
fail=0
run() { # NAME NP CASE [ARGS]: the run's result line
  local name=$1 np=$2; shift 2
  timeout 600 "${mpi[@]}" -np "$np" "$exe" "$@" > "$work/$name.out" 2> "$work/$name.err"
  local rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL: $name ($np ranks) exited $rc:" >&2; grep -m3 -E "FAIL|error" "$work/$name.err" >&2; fail=1; fi
  grep -E "^(crossing|body|resumed|tunnel|tunnel_resumed|pile) \[" "$work/$name.out" | tail -1
}
field() { sed -n "s/.* $2 \([^] ]*\).*/\1/p" <<< "$1"; }
# CASE on backend = cuda, then on 1, 2, 2 again and 3 GPU ranks: one rank the bits of backend = cuda, the two
# runs on 2 ranks the same bits; the lines into cuda, one, two, two_again, three
five_runs() {
  cuda=$(AERODEM_TEST_BACKEND=cuda run "$1_cuda" 1 "$1")
  one=$(run "$1_1" 1 "$1")
  two=$(run "$1_2" 2 "$1")
  two_again=$(run "$1_2again" 2 "$1")
  three=$(run "$1_3" 3 "$1")
  printf '%s, backend = cuda: %s\n1 rank:  %s\n2 ranks: %s\n2 again: %s\n3 ranks: %s\n' "$1" "$cuda" "$one" "$two" \
    "$two_again" "$three"
  [ -n "$one" ] && [ "$one" = "$cuda" ] || { echo "FAIL: $1 on one GPU rank differs from backend = cuda"; fail=1; }
  [ -n "$two" ] && [ "$two" = "$two_again" ] || { echo "FAIL: two runs of $1 on 2 GPU ranks differ"; fail=1; }
}
five_runs crossing
# more than the GPU ranks promise in general, but true of this gas (a disc's contact sums are exact in
# double whatever their order, and the discs that come are put in id order): the same discs, bit for bit,
# on every rank count
hash() { sed -n 's/.*hash \([0-9a-f]*\).*/\1/p' <<< "$1"; }
for got in "$two" "$three"; do
  [ -n "$(hash "$got")" ] && [ "$(hash "$got")" = "$(hash "$one")" ] || { echo "FAIL: the discs differ from one rank's"; fail=1; }
done
same_physics() { # ONE GOT: the count, the momentum along x (to float rounding) and the kinetic energy (1 %)
  python3 - "$1" "$2" <<'PY' || fail=1
import re, sys
def v(line): return dict(re.findall(r"(\w+) ([-+0-9.e]+)", line))
a, b = v(sys.argv[1]), v(sys.argv[2])
ok = a and b and a["count"] == b["count"] and abs(float(a["px"]) - float(b["px"])) <= 2e-5 * abs(float(a["px"])) \
     and abs(float(a["ke"]) - float(b["ke"])) <= 1e-2 * float(a["ke"])
print(("ok" if ok else "FAIL") + ": count, momentum and energy against one rank")
sys.exit(0 if ok else 1)
PY
}
for got in "$two" "$three"; do same_physics "$one" "$got"; done
b1=$(run body1 1 body)
b2=$(run body2 2 body)
b3=$(run body3 3 body)
printf 'body, 1 rank:  %s\nbody, 2 ranks: %s\nbody, 3 ranks: %s\n' "$b1" "$b2" "$b3"
for got in "$b2" "$b3"; do python3 "$here/mpi_gpu_compare.py" body "$b1" "$got" || fail=1; done
run saved 2 resume "$work/half.ckpt" > /dev/null
for np in 1 3; do
  got=$(run resumed$np $np resume "$work/half.ckpt")
  echo "saved on 2 ranks, resumed on $np: $got"
  [ -n "$got" ] && [ "$(field "$got" count)" = "$(field "$one" count)" ] || { echo "FAIL: the resume on $np ranks"; fail=1; }
done
# open sides (the wind tunnel): the reservoir's plan and the entries' room combined over the ranks
five_runs tunnel
run tsaved 2 tunnel_resume "$work/tunnel.ckpt" > /dev/null
tr3=$(run tres3 3 tunnel_resume "$work/tunnel.ckpt")
echo "tunnel saved on 2 ranks, resumed on 3: $tr3"
for got in "$two" "$three" "$tr3"; do python3 "$here/mpi_gpu_compare.py" tunnel "$one" "$got" || fail=1; done
# the load balance: the slabs' edges follow a pile moving along x (the case checks that they move), and a run
# repeated on as many ranks moves them alike (five_runs: the same bits)
five_runs pile
four=$(run pile_4 4 pile)
echo "4 ranks: $four"
for got in "$two" "$three" "$four"; do same_physics "$one" "$got"; done
grep -h "^pile:" "$work"/pile_*.out
[ $fail -eq 0 ] && echo "mpi_gpu: all passed"
exit $fail
