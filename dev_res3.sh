set -e
build() { cmake -S . -B $1 -DCMAKE_BUILD_TYPE=Release -DAERODEM_CUDA=OFF -DCMAKE_C_FLAGS="$2" >/dev/null && cmake --build $1 -j6 --target test_reservoir3 >/dev/null; }
build /tmp/b1 "-DRES3_SETTLE=40 -DRES3_END=240" &
build /tmp/b2 "-DRES3_SETTLE=40 -DRES3_END=240 -DAD_RES_DEPTH_WHOLE" &
wait
(/tmp/b1/tests/test_reservoir3 > $OUT/cubic.txt 2>&1 || true) &
(/tmp/b2/tests/test_reservoir3 > $OUT/whole.txt 2>&1 || true) &
wait
