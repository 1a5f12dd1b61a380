#!/usr/bin/env bash
# Builds aerodem on the lent GPU machine and runs the GPU tests and benchmarks; logs go to $OUT.
# Usage: bench/gpu_session.sh STAGE...   stages: build tests golden shock bvh broadphase sanitize bench bench3
#        bench3tunnel
#        compare dev bench-big grid profile profile3 resources live surface
# Libraries the machine lacks (libinih, libpng headers) come as Debian packages in .debs/ (an ignored
# folder carried to the machine), unpacked under /tmp/dep. Fetch them once on the development machine:
#   mkdir -p .debs && cd .debs && apt-get download libinih-dev libinih1 libinireader0 libpng-dev \
#       libpng16-16 zlib1g-dev zlib1g libmicrohttpd-dev libmicrohttpd12
# and name .debs in the device tool's carry list.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
T0=$(date +%s)
log() { echo "== [$(( $(date +%s) - T0 )) s] $*" | tee -a "$OUT/session.log"; }

setup_deps() {
  if [ ! -f /usr/include/ini.h ] || [ ! -f /usr/include/png.h ]; then
    mkdir -p /tmp/dep
    for f in .debs/*.deb; do dpkg -x "$f" /tmp/dep; done
    # libmicrohttpd's .pc asks for gnutls's for static links only; the machine has no gnutls .pc
    sed -i '/^Requires.private/d' /tmp/dep/usr/lib/x86_64-linux-gnu/pkgconfig/libmicrohttpd.pc 2>/dev/null
    z=$(find /tmp/dep -name 'libz.so.1.*' | head -1)
    [ -n "$z" ] && ln -sf "$z" /tmp/dep/usr/lib/x86_64-linux-gnu/libz.so
    cp -a /tmp/dep/lib/x86_64-linux-gnu/libz.so.1* /tmp/dep/usr/lib/x86_64-linux-gnu/ 2>/dev/null || true
    export PKG_CONFIG_PATH=/tmp/dep/usr/lib/x86_64-linux-gnu/pkgconfig:/tmp/dep/usr/share/pkgconfig
    export PKG_CONFIG_SYSROOT_DIR=/tmp/dep
    export CMAKE_PREFIX_PATH=/tmp/dep/usr
    export LD_LIBRARY_PATH=/tmp/dep/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
    export CPATH=/tmp/dep/usr/include
  fi
}

for stage in "$@"; do
  case "$stage" in
  build)
    log "machine"; nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$OUT/session.log"
    nvcc --version | tail -1 | tee -a "$OUT/session.log"; cmake --version | head -1 | tee -a "$OUT/session.log"
    which pkg-config || log "no pkg-config"
    setup_deps
    log "configure"
    cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
    grep "CUDA backend" "$OUT/configure.log"
    log "build"
    cmake --build build-gpu -j16 > "$OUT/build.log" 2>&1 || { grep -E "error|warning" "$OUT/build.log" | head -40; exit 1; }
    # grep -c exits 1 where it counts none: that is the stage's success, not its failure (set -o pipefail)
    echo "warnings: $(grep -c warning "$OUT/build.log")"
    ;;
  tests)
    setup_deps
    log "cell counters and their scan"
    ./build-gpu/tests/test_scan_gpu 2>&1 | tee "$OUT/test_scan_gpu.log" | tail -30
    log "gpu test"
    ./build-gpu/tests/test_gpu 2>&1 | tee "$OUT/test_gpu.log" | tail -25
    log "3D on the GPU against the CPU"
    ./build-gpu/tests/test_gpu3 2>&1 | tee "$OUT/test_gpu3.log" | grep -vE "^sphere-triangle" | tail -22
    log "core suite on the GPU backend"
    (cd build-gpu && AERODEM_TEST_BACKEND=cuda ctest -L core -E "threads|grid" --output-on-failure 2>&1 | tail -15) | tee "$OUT/ctest_core_cuda.log"
    ;;
  golden)
    setup_deps
    log "golden hashes (deterministic mode) and the CUDA backend against the plain reference, disc by disc"
    ./build-gpu/tests/test_golden 2>&1 | tee "$OUT/test_golden.log" | grep -E "cuda|checks" | tail -12
    ./build-gpu/tests/test_reference 2>&1 | tee "$OUT/test_reference.log" | tail -12
    ;;
  compare-build)
    # the tree of an older commit in old_tree/ (git archive COMMIT | tar -x -C old_tree, untracked), its
    # bench_core built beside build-gpu in the background (stage compare waits for it)
    setup_deps
    log "compare: building old_tree/ ($(cat old_tree/COMMIT 2>/dev/null))"
    (cmake -S old_tree -B build-old -DCMAKE_BUILD_TYPE=Release > "$OUT/configure-old.log" 2>&1 &&
     cmake --build build-old -j8 --target bench_core > "$OUT/build-old.log" 2>&1 || echo "the old tree's build failed") &
    ;;
  compare)
    # bench/compare_builds.sh: the old tree's bench_core and this one's, alternately, medians of REPS (5)
    setup_deps
    log "compare: waiting for the old build"; wait
    for mode in fast det; do
      flag=; [ $mode = fast ] && flag=--fast
      sizes=1e6,1.6e7; [ $mode = det ] && sizes=1.6e7
      log "compare: $mode, $sizes"
      bench/compare_builds.sh build-old/bench_core build-gpu/bench_core ${REPS:-5} "$OUT/compare_$mode.csv" -- \
        --backend cuda $flag --scene scenes/default.ini --sizes $sizes 2>&1 | tee "$OUT/compare_$mode.log"
    done
    ;;
  shock)
    setup_deps
    log "validation: wedge oblique shock and bow shock (long)"
    mkdir -p /tmp/shock
    ./build-gpu/tests/test_validation_shock /tmp/shock 2>&1 | tee "$OUT/shock.log" | tail -20
    tar -C /tmp -czf "$OUT/shock.tgz" shock
    ;;
  bvh)
    setup_deps
    log "BVH on the GPU: tests, memcheck, racecheck"
    ./build-gpu/tests/test_bvh gpu 2>&1 | tee "$OUT/test_bvh_gpu.log" | tail -25
    compute-sanitizer --tool memcheck --error-exitcode 9 ./build-gpu/tests/test_bvh gpu > "$OUT/bvh_memcheck.log" 2>&1; echo "bvh memcheck rc=$?"; tail -3 "$OUT/bvh_memcheck.log"
    compute-sanitizer --tool racecheck --error-exitcode 9 stdbuf -oL ./build-gpu/tests/test_bvh gpu quick > "$OUT/bvh_racecheck.log" 2>&1; echo "bvh racecheck rc=$?"; tail -12 "$OUT/bvh_racecheck.log"
    ;;
  dev)
    # the kernel variants of dev/cuda (as llm.c's dev/cuda): each program built with the nvcc line of its
    # header, run on its default sizes; each checks its variants against a reference and exits non-zero
    # when one disagrees. DEV="gather scan" runs only those.
    log "dev/cuda: build and run the kernel variants"
    mkdir -p build-dev
    for f in dev/cuda/*.cu; do
      name=$(basename "$f" .cu)
      case " ${DEV:-$name} " in *" $name "*) ;; *) continue ;; esac
      nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler=-Wall,-Wextra -Iinclude -Isrc "$f" -o "build-dev/$name" \
        > "$OUT/dev_$name.build.log" 2>&1 || { log "dev/cuda/$name: build failed"; tail -20 "$OUT/dev_$name.build.log"; continue; }
      echo "dev/cuda/$name warnings: $(grep -c warning "$OUT/dev_$name.build.log")"
      log "dev/cuda/$name"
      "./build-dev/$name" 2>&1 | tee "$OUT/dev_$name.log"
      log "dev/cuda/$name rc=${PIPESTATUS[0]}"
    done
    ;;
  broadphase)
    setup_deps
    log "benchmark: grid vs BVH, 1e5..1e7"
    ./build-gpu/bench_broadphase --backend cuda --sizes ${BP_SIZES:-1e5,1e6,1e7} --scene scenes/default.ini --csv "$OUT/broadphase.csv" 2>&1 | tee "$OUT/broadphase.log" | tail -40
    ;;
  profile3)
    # issue 18: where the 3D step's time goes, per kernel, at 1.68e7 spheres (gas, lattice, tunnel), 3 timed steps
    setup_deps
    for c in gas lattice tunnel; do
      log "ncu: 3D $c at 1.68e7 spheres"
      ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread \
          ./build-gpu/bench_3d --backend cuda --case $c --sizes 1.6777216e7 --steps 3 --warmup 2 > "$OUT/ncu3_$c.log" 2>&1
      echo "ncu rc=$?"
      python3 bench/ncu_table.py "$OUT/ncu3_$c.log" | tee "$OUT/ncu3_$c.txt"
    done
    ;;
  bench3)
    setup_deps
    log "benchmark: 3D gas and lattice on the GPU"
    ./build-gpu/bench_3d --backend cuda --sizes 1e6,1.6777216e7,1e8 --csv "$OUT/bench_3d_cuda.csv" 2>&1 | tee "$OUT/bench_3d_cuda.log"
    ;;
  bench3tunnel)
    setup_deps
    log "benchmark: the 3D tunnel with an inlet (issue 18's case (a)) on the GPU"
    ./build-gpu/bench_3d --backend cuda --case tunnel --sizes 1e6,1e7,1e8 --csv "$OUT/bench_3d_tunnel_cuda.csv" 2>&1 | tee "$OUT/bench_3d_tunnel_cuda.log"
    ;;
  sanitize)
    setup_deps
    log "compute-sanitizer memcheck"
    compute-sanitizer --tool memcheck --error-exitcode 9 ./build-gpu/tests/test_gpu quick > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$?"; tail -4 "$OUT/memcheck.log"
    compute-sanitizer --tool memcheck --error-exitcode 9 ./build-gpu/tests/test_gpu3 quick > "$OUT/memcheck3.log" 2>&1; echo "memcheck 3D rc=$?"; tail -2 "$OUT/memcheck3.log"
    log "compute-sanitizer racecheck"
    compute-sanitizer --tool racecheck --error-exitcode 9 stdbuf -oL ./build-gpu/tests/test_gpu race > "$OUT/racecheck.log" 2>&1; echo "racecheck rc=$?"; tail -4 "$OUT/racecheck.log"
    ;;
  bench)
    setup_deps
    log "benchmark: default tunnel, fast path"
    ./build-gpu/bench_core --backend cuda --fast --scene scenes/default.ini --sizes 1e6,1.6e7,6.4e7 --csv "$OUT/bench_core_fast.csv" 2>&1 | tee "$OUT/bench_core_fast.log"
    log "benchmark: default tunnel, deterministic"
    ./build-gpu/bench_core --backend cuda --scene scenes/default.ini --sizes 1e6,1.6e7 --csv "$OUT/bench_core_det.csv" 2>&1 | tee "$OUT/bench_core_det.log"
    ;;
  live)
    # the live view on a GPU run: the bow-shock scene (1.1e6 discs) with no viewer, then with a viewer
    # asking as the page does (bench/live_viewer.py); the run's rate from its last line
    setup_deps
    log "live view: bow shock on the GPU, no viewer, then one viewer"
    Q=(--steps ${LIVE_STEPS:-60000} --set output.frame_interval=0 --set output.video=no --set output.png=no --set output.vtk=no)
    ./build-gpu/aerodem run scenes/bow_shock.ini "${Q[@]}" --out /tmp/live_none --live 0 > "$OUT/live_none.log" 2>&1
    grep "done:" "$OUT/live_none.log"
    ./build-gpu/aerodem run scenes/bow_shock.ini "${Q[@]}" --out /tmp/live_one --live 0 > "$OUT/live_one.log" 2>&1 &
    pid=$!
    for i in $(seq 1 100); do port=$(sed -n 's|^aerodem: live view at http://127.0.0.1:\([0-9]*\)/$|\1|p' "$OUT/live_one.log"); [ -n "$port" ] && break; sleep 0.1; done
    python3 bench/live_viewer.py "$port" ${LIVE_VIEW_S:-6} | tee "$OUT/live_viewer.log"
    wait $pid
    grep "done:" "$OUT/live_one.log"
    cmp /tmp/live_none/forces.csv /tmp/live_one/forces.csv && echo "forces.csv: the same with and without a viewer"
    ;;
  bench-big)
    setup_deps
    log "benchmark: default tunnel, 2.56e8 and 1e9"
    ./build-gpu/bench_core --backend cuda --fast --scene scenes/default.ini --sizes 2.56e8,1e9 --steps 30 --threads 16 --csv "$OUT/bench_core_big.csv" 2>&1 | tee "$OUT/bench_core_big.log"
    ;;
  grid)
    setup_deps
    log "benchmark: the grid pipeline alone (bin + scan + scatter), 1e6 discs into 2e6 cells and 1.6e7 into 3.2e7"
    ./build-gpu/bench_grid_cuda --sizes ${GRID_SIZES:-1e6,1.6e7} --csv "$OUT/grid.csv" 2>&1 | tee "$OUT/grid.log"
    ;;
  profile)
    setup_deps
    log "ncu: kernel times and DRAM bytes at 1.6e7 discs, fast path, 3 steps"
    ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread \
        ./build-gpu/bench_core --backend cuda --fast --scene scenes/default.ini --sizes 1.6e7 --steps 3 > "$OUT/ncu.log" 2>&1
    echo "ncu rc=$?"
    ncu --clock-control none -k regex:k_interact -s 6 -c 1 --section SpeedOfLight --section Occupancy --section WarpStateStats \
        --section SchedulerStats --section MemoryWorkloadAnalysis --section LaunchStats \
        ./build-gpu/bench_core --backend cuda --fast --scene scenes/default.ini --sizes 1.6e7 --steps 3 > "$OUT/ncu_interact.log" 2>&1
    echo "ncu (k_interact sections) rc=$?"; grep -E "Duration|Throughput|Achieved Occupancy|Issued Ipc|No Eligible|Stall|Warp Cycles|Registers" "$OUT/ncu_interact.log" | head -30
    python3 bench/ncu_table.py "$OUT/ncu.log"
    ;;
  resources)
    log "registers and shared memory of the step's kernels"
    cuobjdump --dump-resource-usage build-gpu/libaerodem.a 2>/dev/null | grep -B1 -E "REG:" | grep -E "Function|REG" | \
      paste - - | sed -E 's/.*Function ([^ :]+).*REG:([0-9]+) STACK:([0-9]+) SHARED:([0-9]+) LOCAL:([0-9]+).*/\2 regs \3 stack \4 shared \5 local \1/' | \
      grep -E "k_interact|k_enter|k_reservoir|k_after|k_scatter|k_fields" | sort -u > "$OUT/resources.log"
    grep -E "k_interact.*grid_gather|k_enter|k_reservoir" "$OUT/resources.log" | cut -c1-140 | head -8
    ;;
  surface)
    # issue 20 on the GPU: the surface tests on the CUDA backend and against the CPU, the free-molecular
    # comparisons (Schaaf & Chambre's plate, the circle) on the GPU, memcheck, and the README's diffuse airfoil
    setup_deps
    log "surface: test_surface gpu"
    ./build-gpu/tests/test_surface gpu 2>&1 | tee "$OUT/test_surface_gpu.log" | tail -${SURF_TAIL:-25}
    log "surface: test_surface_fm on the GPU"
    AERODEM_TEST_BACKEND=cuda ./build-gpu/tests/test_surface_fm 2>&1 | tee "$OUT/test_surface_fm_cuda.log" | tail -30
    log "surface: memcheck of test_surface on the GPU backend"
    AERODEM_TEST_BACKEND=cuda compute-sanitizer --tool memcheck --error-exitcode 9 ./build-gpu/tests/test_surface \
        > "$OUT/surface_memcheck.log" 2>&1; echo "surface memcheck rc=$?"; tail -3 "$OUT/surface_memcheck.log"
    log "surface: scenes/diffuse_airfoil.ini on the GPU (${AIRFOIL_STEPS:-600000} steps)"
    ./build-gpu/aerodem run scenes/diffuse_airfoil.ini --backend cuda --steps ${AIRFOIL_STEPS:-600000} \
        --out /tmp/airfoil_cuda > "$OUT/diffuse_airfoil_cuda.log" 2>&1; echo "diffuse_airfoil rc=$?"
    tail -4 "$OUT/diffuse_airfoil_cuda.log"
    cp /tmp/airfoil_cuda/summary.txt "$OUT/diffuse_airfoil_cuda_summary.txt" 2>/dev/null
    cp /tmp/airfoil_cuda/surface.csv "$OUT/diffuse_airfoil_cuda_surface.csv" 2>/dev/null
    cp /tmp/airfoil_cuda/cp.png "$OUT/diffuse_airfoil_cuda_cp.png" 2>/dev/null
    ;;
  ranks)
    # issue 21 on the GPU: GPU ranks (rank_backend = cuda) sharing the H200, halos through pinned host
    # buffers: their test, the program under mpirun, what they refuse, and the scaling benchmark
    setup_deps
    log "ranks: tests/test_mpi_gpu.sh (1 to 3 ranks on the GPU)"
    bash tests/test_mpi_gpu.sh build-gpu/tests 2>&1 | tee "$OUT/test_mpi_gpu.log" | tail -${RANKS_TAIL:-30}
    log "ranks: mpirun -np 2 aerodem run scenes/closed_box.ini, GPU ranks"
    mpirun --allow-run-as-root --oversubscribe -np 2 ./build-gpu/aerodem run scenes/closed_box.ini --steps 4000 \
        --set run.rank_backend=cuda --out /tmp/box_ranks > "$OUT/closed_box_ranks.log" 2>&1; echo "closed_box rc=$?"
    tail -6 "$OUT/closed_box_ranks.log"
    log "ranks: the default scene whole on 2 GPU ranks against backend = cuda (ctest mpi_gpu_long)"
    bash tests/test_mpi_long.sh ./build-gpu/aerodem . cuda 2>&1 | tee "$OUT/mpi_gpu_long.log" | tail -8
    log "ranks: scaling (RANK_BACKEND=cuda bench/mpi_scaling.sh)"
    RANK_BACKEND=cuda RANKS="${SCALE_RANKS:-1 2 4}" STEPS=${SCALE_STEPS:-2000} WIDTH=${SCALE_WIDTH:-4096} \
      HEIGHT=${SCALE_HEIGHT:-1024} WEAK_WIDTH=${SCALE_WEAK:-2048} OUT="$OUT/mpi_scaling_gpu.csv" \
      bash bench/mpi_scaling.sh build-gpu 2>&1 | tee "$OUT/mpi_scaling_gpu.log" | tail -12
    ;;
  *) echo "unknown stage $stage"; exit 2 ;;
  esac
done
