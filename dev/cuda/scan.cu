/* The scan of the cell counters (DESIGN.md step 2) two ways: the engine's (scan.cuh: each tile's sum, the sums'
 * scan, each tile's starts, clearing the counters) against DESIGN.md's pipeline as written, CUB's device-wide
 * exclusive scan of the packed counters (8- or 16-bit inputs, 32-bit sums) and then a memset of the counters; at
 * each counter width, on the counts of a gas at the default tunnel's density (2.6 cells a disc); each checked
 * against the host's scan (starts, the total in the extra slot, the counters left cleared), timed with CUDA events.
 * Build: nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler=-Wall,-Wextra -Iinclude -Isrc dev/cuda/scan.cu -o scan
 * Run:   ./scan [N,N,...]   (discs, default 1e6,1.6e7; exits 1 when a variant's starts are wrong)
 *
 * CUB's scan was the measurement switch AD_CUDA_CUB_SCAN of the main tree (last in commit 923d1c8). */
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include "../../bench/bench_cuda_util.cuh"
#include "../../src/cuda/scan.cuh"

/* CUB's device-wide exclusive scan of the counters as they are packed (ncell + 1 of them, the last zero), into
 * 32-bit starts */
static cudaError_t cub_scan(void *temp, size_t &bytes, const unsigned *counts, unsigned lg, unsigned *start,
                            size_t ncell, cudaStream_t st)
{
    int m = (int)(ncell + 1);
    ::cuda::std::plus<> add;
    if (lg == 2) return cub::DeviceScan::ExclusiveScan(temp, bytes, (const uint8_t *)counts, start, add, 0u, m, st);
    if (lg == 1) return cub::DeviceScan::ExclusiveScan(temp, bytes, (const uint16_t *)counts, start, add, 0u, m, st);
    return cub::DeviceScan::ExclusiveScan(temp, bytes, counts, start, add, 0u, m, st);
}

int main(int argc, char **argv)
{
    if (!bench_have_gpu()) return 2;
    std::vector<double> sizes = bench_sizes(argc, argv, 1, "1e6,1.6e7");
    const int reps = 21;
    int failed = 0;
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    printf("counters of a uniform gas at area fraction 0.3 (radius 0.5, cells one diameter: 2.6 cells a disc); "
           "median of %d scans\n", reps);
    printf("%11s %11s %4s %-28s %9s %11s %9s  %s\n", "discs", "cells", "bits", "variant", "us", "GB/s", "vs engine",
           "check");
    for (double nd : sizes) {
        size_t n = (size_t)nd;
        size_t ncell = (size_t)ceil(n * 3.14159265358979 * 0.25 / 0.3);
        std::vector<unsigned> v(ncell + 1, 0), ref(ncell + 1);
        for (size_t i = 0; i < n; i++) v[std::min((size_t)(urand() * ncell), ncell - 1)]++;
        unsigned run = 0, most = 0;
        for (size_t c = 0; c <= ncell; c++) {
            ref[c] = run;
            run += v[c];
            most = std::max(most, v[c]);
        }
        for (int lgi = 2; lgi >= 0; lgi--) { /* 8, 16, 32 bits */
            unsigned lg = (unsigned)lgi, per = 1u << lg, bits = 32u >> lg;
            if (bits < 32 && most >> bits) continue; /* does not fit (never at this density) */
            size_t nwords = ad_count_bytes(ncell, lg) / 4, nslots = ad_start_slots(ncell, lg);
            std::vector<unsigned> words(nwords, 0), got(nslots), left(nwords);
            for (size_t c = 0; c < ncell; c++) words[c / per] |= v[c] << (bits * (unsigned)(c % per));
            unsigned *count, *count0, *start, *state;
            size_t cub_bytes = 0;
            CK(cub_scan(NULL, cub_bytes, NULL, lg, NULL, ncell, st));
            void *cub_temp;
            CK(cudaMalloc(&count, nwords * 4));
            CK(cudaMalloc(&count0, nwords * 4));
            CK(cudaMalloc(&start, nslots * 4));
            CK(cudaMalloc(&state, ad_scan_state_bytes(ncell, lg)));
            CK(cudaMalloc(&cub_temp, cub_bytes));
            CK(cudaMemcpy(count0, words.data(), nwords * 4, cudaMemcpyHostToDevice));
            /* bytes a scan must move: the counters read and cleared, the starts written */
            double bytes = 2.0 * ncell * bits / 8 + 4.0 * (ncell + 1);
            float engine_us = 0;
            for (int variant = 0; variant < 2; variant++) {
                std::vector<float> t(reps);
                for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
                    CK(cudaMemcpyAsync(count, count0, nwords * 4, cudaMemcpyDeviceToDevice, st));
                    CK(cudaMemsetAsync(start, 0xff, nslots * 4, st));
                    CK(cudaEventRecord(e0, st));
                    if (variant == 0) {
                        CK(ad_scan_counts(count, lg, start, state, ncell, st));
                    } else {
                        size_t b = cub_bytes;
                        CK(cub_scan(cub_temp, b, count, lg, start, ncell, st));
                        CK(cudaMemsetAsync(count, 0, nwords * 4, st));
                    }
                    CK(cudaEventRecord(e1, st));
                    CK(cudaEventSynchronize(e1));
                    if (r >= 0) CK(cudaEventElapsedTime(&t[r], e0, e1));
                }
                std::sort(t.begin(), t.end());
                float us = t[reps / 2] * 1e3f;
                if (variant == 0) engine_us = us;
                CK(cudaMemcpy(got.data(), start, nslots * 4, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(left.data(), count, nwords * 4, cudaMemcpyDeviceToHost));
                size_t bad = 0, dirty = 0;
                for (size_t c = 0; c <= ncell; c++) bad += got[c] != ref[c];
                for (size_t k = 0; k < nwords; k++) dirty += left[k] != 0;
                bool ok = !bad && !dirty;
                failed += !ok;
                char check[64];
                if (ok) snprintf(check, sizeof check, "as the host");
                else snprintf(check, sizeof check, "WRONG: %zu starts, %zu words not cleared", bad, dirty);
                printf("%11zu %11zu %4u %-28s %9.1f %11.1f %9.3f  %s\n", n, ncell, bits,
                       variant ? "CUB's scan + memset" : "engine's (three kernels)", us, bytes / (us * 1e3),
                       us / engine_us, check);
            }
            CK(cudaFree(count));
            CK(cudaFree(count0));
            CK(cudaFree(start));
            CK(cudaFree(state));
            CK(cudaFree(cub_temp));
        }
    }
    return bench_verdict(failed, "scan(s) differ from the host's", "all scans as the host's");
}
