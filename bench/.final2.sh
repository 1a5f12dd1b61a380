source <(sed -n '/^setup_deps()/,/^}/p' bench/gpu_session.sh); setup_deps; export OUT
cmake --build build-gpu -j16 > $OUT/rebuild.log 2>&1 || tail $OUT/rebuild.log
s=$(date +%s); timeout 300 ./build-gpu/tests/test_gpu3 > $OUT/test_gpu3.log 2>&1; echo "test_gpu3 rc=$? $(( $(date +%s)-s )) s: $(tail -1 $OUT/test_gpu3.log)"; grep FAIL $OUT/test_gpu3.log | head -5; grep -A5 "reservoir against the CPU" $OUT/test_gpu3.log | cut -c1-60,150-260
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./build-gpu/tests/test_gpu3 quick > $OUT/memcheck_gpu3.log 2>&1; echo "memcheck gpu3 rc=$? $(grep -E 'ERROR SUMMARY' $OUT/memcheck_gpu3.log)"
timeout 100 compute-sanitizer --tool racecheck ./build-gpu/tests/test_gpu race > $OUT/racecheck_gpu.log 2>&1; echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $OUT/racecheck_gpu.log)"
./build-gpu/bench_3d --backend cuda --case all --sizes 1e6,1.6777216e7 --csv $OUT/bench_3d_cuda_all.csv > $OUT/bench_3d_cuda_all.log 2>&1; grep -E "^(gas|lattice|tunnel) " $OUT/bench_3d_cuda_all.log
./build-gpu/bench_core --backend cuda --fast --scene scenes/default.ini --sizes 1.6e7 > $OUT/bench_core_2d.log 2>&1; grep -E "1.6e\+07|16000000|1\.60e" $OUT/bench_core_2d.log | head -3; tail -3 $OUT/bench_core_2d.log
./build-gpu/aerodem run scenes/default.ini --backend cuda --steps 2000 --set output.surface=yes --out $OUT/run2d > $OUT/run2d.log 2>&1; echo "run rc=$?"; grep -i surface $OUT/run2d.log | head -2
