source <(sed -n '/^setup_deps()/,/^}/p' bench/gpu_session.sh); setup_deps; export OUT
bash bench/gpu_session.sh build > $OUT/build_main.txt 2>&1; tail -2 $OUT/build_main.txt
s=$(date +%s); timeout 420 ./build-gpu/tests/test_gpu3 > $OUT/test_gpu3.log 2>&1; echo "test_gpu3 rc=$? $(( $(date +%s)-s )) s: $(tail -1 $OUT/test_gpu3.log)"
grep -iE "FAIL" $OUT/test_gpu3.log | head -8
grep -E "reservoir" $OUT/test_gpu3.log | head -12
s=$(date +%s); timeout 200 ./build-gpu/tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc=$? $(( $(date +%s)-s )) s: $(tail -1 $OUT/test_gpu.log)"; grep FAIL $OUT/test_gpu.log | head -5
./build-gpu/tests/test_golden > $OUT/test_golden.log 2>&1; echo "golden rc=$?: $(tail -1 $OUT/test_golden.log)"; grep -iE "FAIL|differ" $OUT/test_golden.log | head -5
./build-gpu/tests/test_reference > $OUT/test_reference.log 2>&1; echo "reference rc=$?: $(tail -1 $OUT/test_reference.log)"
(cd build-gpu && AERODEM_TEST_BACKEND=cuda timeout 120 ctest -R "^energy$" --output-on-failure > $OUT/energy_cuda.log 2>&1; echo "energy(cuda) rc=$?")
