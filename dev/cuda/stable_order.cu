/* The deterministic mode's order (DESIGN.md step 3): slot s of the next step takes disc perm[s], the order of a
 * stable sort by cell, two ways: the engine's without a sort (scatter.cuh: k_cell_members puts each cell's discs in
 * its slot range in the order of the bin's atomic ranks, k_stable_rank counts for each disc the discs of its cell
 * with a lower previous slot) against the first version, CUB's radix sort of (cell, previous slot) pairs over the
 * bits of the cell count; on a gas at the default tunnel's density in the previous step's cell order, each disc
 * moved by up to 0.2 cells, binned and scanned by the engine's kernels; each order checked against the host's
 * stable counting sort, timed with CUDA events.
 * Build: nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler=-Wall,-Wextra -Iinclude -Isrc dev/cuda/stable_order.cu \
 *          -o stable_order
 * Run:   ./stable_order [N,N,...]   (discs, default 1e6,1.6e7; exits 1 when an order differs from the host's)
 *
 * The radix sort was the measurement switch AD_CUDA_DET_SORT of the main tree (last in commit 923d1c8). */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "../../bench/bench_cuda_util.cuh"
#include "../../src/cuda/bin.cuh"
#include "../../src/cuda/scan.cuh"
#include "../../src/cuda/scatter.cuh"

__global__ void k_iota(unsigned n, unsigned *__restrict__ v)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = i;
}

static int bits_for(size_t ncell)
{
    int b = 1;
    while (b < 32 && ((size_t)1 << b) < ncell) b++;
    return b;
}

int main(int argc, char **argv)
{
    if (!bench_have_gpu()) return 2;
    std::vector<double> sizes = bench_sizes(argc, argv, 1, "1e6,1.6e7");
    const int reps = 21;
    int failed = 0;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    printf("a uniform gas at area fraction 0.3 (radius 0.5, cells one diameter), in the previous step's cell order, "
           "moved by up to 0.2 cells; median of %d\n", reps);
    printf("%11s %11s %-44s %9s %11s %9s  %s\n", "discs", "cells", "variant", "us", "discs/s", "vs engine", "check");
    for (double nd : sizes) {
        unsigned n = (unsigned)nd;
        int W, H;
        ad_params p = bench_gas_params(n, 0, &W, &H);
        size_t ncell = (size_t)W * H;
        /* the previous step's order: sorted by cell; then each disc moves */
        std::vector<ad_state> s(n);
        for (unsigned i = 0; i < n; i++) s[i] = ad_state{(float)(urand() * W), (float)(urand() * H), 0, 0};
        std::sort(s.begin(), s.end(), [&](const ad_state &a, const ad_state &b) {
            return ad_cell_index(&p, a.x, a.y) < ad_cell_index(&p, b.x, b.y);
        });
        for (auto &q : s) {
            q.x = std::min(std::max(q.x + (float)(0.4 * urand() - 0.2), 0.0f), W - 1e-3f);
            q.y = std::min(std::max(q.y + (float)(0.4 * urand() - 0.2), 0.0f), H - 1e-3f);
        }
        /* the host's stable counting sort */
        std::vector<unsigned> at(ncell + 1, 0), ref(n), got(n);
        for (auto &q : s) at[ad_cell_index(&p, q.x, q.y) + 1]++;
        for (size_t c = 0; c < ncell; c++) at[c + 1] += at[c];
        for (unsigned i = 0; i < n; i++) ref[at[ad_cell_index(&p, s[i].x, s[i].y)]++] = i;
        /* the engine's bin and scan: each disc's cell and atomic rank, the starts */
        unsigned lg = 2; /* 8-bit counters, the default tunnel's */
        ad_state *ds;
        unsigned *cell_of, *rank, *count, *start, *scan_state, *ovf, *dead, *members, *perm, *vals, *keys_out;
        CK(cudaMalloc(&ds, n * sizeof(ad_state)));
        CK(cudaMalloc(&cell_of, n * 4));
        CK(cudaMalloc(&rank, n * 4));
        CK(cudaMalloc(&count, ad_count_bytes(ncell, lg)));
        CK(cudaMalloc(&start, ad_start_slots(ncell, lg) * 4));
        CK(cudaMalloc(&scan_state, ad_scan_state_bytes(ncell, lg)));
        CK(cudaMalloc(&ovf, 4));
        CK(cudaMalloc(&dead, 4));
        CK(cudaMalloc(&members, n * 4));
        CK(cudaMalloc(&perm, n * 4));
        CK(cudaMalloc(&vals, n * 4));
        CK(cudaMalloc(&keys_out, n * 4));
        CK(cudaMemcpy(ds, s.data(), n * sizeof(ad_state), cudaMemcpyHostToDevice));
        CK(cudaMemset(count, 0, ad_count_bytes(ncell, lg)));
        CK(cudaMemset(ovf, 0, 4));
        CK(cudaMemset(dead, 0, 4));
        unsigned gb = (n + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK;
        ad_bin_next bin = {cell_of, rank, ad_counts{count, lg, ovf}, 64u, dead};
        k_bin<false><<<gb, AD_CUDA_BLOCK>>>(p, ds, ad_n{n, NULL}, bin, nullptr);
        CK(cudaGetLastError());
        CK(ad_scan_counts(count, lg, start, scan_state, ncell, 0));
        unsigned over = 0;
        CK(cudaMemcpy(&over, ovf, 4, cudaMemcpyDeviceToHost));
        if (over) {
            printf("a cell counter overflowed: no order to check\n");
            return 1;
        }
        int bits = bits_for(ncell);
        size_t temp_bytes = 0;
        CK(cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, cell_of, keys_out, vals, perm, (int)n, 0, bits));
        void *temp;
        CK(cudaMalloc(&temp, temp_bytes));
        /* closed worlds: no removed discs, so the dead cell (after the grid's) is empty */
        unsigned dead_cell = (unsigned)ncell;
        float engine_us = 0;
        for (int variant = 0; variant < 2; variant++) {
            std::vector<float> t(reps);
            for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
                CK(cudaMemset(perm, 0xff, n * 4));
                CK(cudaEventRecord(e0));
                if (variant == 0) {
                    k_cell_members<<<gb, AD_CUDA_BLOCK>>>(ad_n{n, NULL}, cell_of, rank, start, members);
                    k_stable_rank<<<gb, AD_CUDA_BLOCK>>>(ad_n{n, NULL}, dead_cell, dead, cell_of, start, members, perm);
                } else {
                    k_iota<<<gb, AD_CUDA_BLOCK>>>(n, vals);
                    size_t tb = temp_bytes;
                    CK(cub::DeviceRadixSort::SortPairs(temp, tb, cell_of, keys_out, vals, perm, (int)n, 0, bits));
                }
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                CK(cudaGetLastError());
                if (r >= 0) CK(cudaEventElapsedTime(&t[r], e0, e1));
            }
            std::sort(t.begin(), t.end());
            float us = t[reps / 2] * 1e3f;
            if (variant == 0) engine_us = us;
            CK(cudaMemcpy(got.data(), perm, n * 4, cudaMemcpyDeviceToHost));
            size_t bad = 0;
            for (unsigned k = 0; k < n; k++) bad += got[k] != ref[k];
            failed += bad != 0;
            char check[64], name[64];
            if (bad) snprintf(check, sizeof check, "WRONG: %zu slots", bad);
            else snprintf(check, sizeof check, "as the host");
            if (variant == 0) snprintf(name, sizeof name, "engine's (k_cell_members + k_stable_rank)");
            else snprintf(name, sizeof name, "CUB radix sort of (cell, slot), %d bits", bits);
            printf("%11u %11zu %-44s %9.1f %11.3e %9.3f  %s\n", n, ncell, name, us, n / (us * 1e-6), us / engine_us,
                   check);
        }
        unsigned *bufs[] = {cell_of, rank, count, start, scan_state, ovf, dead, members, perm, vals, keys_out};
        for (unsigned *b : bufs) CK(cudaFree(b));
        CK(cudaFree(ds));
        CK(cudaFree(temp));
    }
    return bench_verdict(failed, "order(s) differ from the host's stable sort", "all orders as the host's stable sort");
}
