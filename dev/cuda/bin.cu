/* Bin-kernel variants (plain atomics, warp-aggregated with __match_any_sync, with and without diagnostics) on a
 * uniform gas and a piled-up gas; each checked against a CPU count, timed with CUDA events.
 * Build: nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler=-Wall,-Wextra -Iinclude -Isrc dev/cuda/bin.cu -o bin
 * Run:   ./bin [N]   (N discs, default 1.6e7; exits 1 when a count differs from the CPU's) */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../../bench/bench_cuda_util.cuh"
#include "../../src/cuda/kernels.cuh"

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atof(argv[1]) : 16000000u;
    int failed = 0;
    /* the default tunnel's density: area fraction 0.3, radius 0.5, cell one diameter */
    double area = n * 3.14159265 * 0.25 / 0.3, H = sqrt(area / 2), W = 2 * H;
    ad_params p = {};
    p.x_min = p.origin_x = 0;
    p.y_min = p.origin_y = 0;
    p.x_max = (float)W;
    p.y_max = (float)H;
    p.nx = (int)ceil(W);
    p.ny = (int)ceil(H);
    p.inv_cell_x = p.inv_cell_y = 1.0f;
    size_t ncell = (size_t)p.nx * p.ny;
    printf("n = %u discs, %zu cells (%.2f cells per disc)\n", n, ncell, (double)ncell / n);
    printf("%-10s %-22s %10s %12s %14s\n", "gas", "variant", "us", "max/cell", "vs CPU count");
    for (int layout = 0; layout < 2; layout++) {
        std::vector<ad_state> s(n);
        for (unsigned i = 0; i < n; i++) {
            double x = urand() * W, y;
            /* piled: a barometric gas whose scale height is 1% of the box, as after settling */
            y = layout == 0 ? urand() * H : -0.01 * H * log(1.0 - urand() * 0.999999);
            s[i] = ad_state{(float)x, (float)fmin(y, H - 1e-3), 0, 0};
        }
        /* in cell order, as the engine keeps them */
        std::sort(s.begin(), s.end(), [&](const ad_state &a, const ad_state &b) {
            return ad_cell_index(&p, a.x, a.y) < ad_cell_index(&p, b.x, b.y);
        });
        std::vector<unsigned> ref(ncell, 0);
        unsigned refmax = 0;
        for (auto &q : s) refmax = std::max(refmax, ++ref[ad_cell_index(&p, q.x, q.y)]);
        ad_state *ds;
        unsigned *cell_of, *rank, *count;
        ad_step_sums *diag;
        CK(cudaMalloc(&ds, n * sizeof(ad_state)));
        CK(cudaMalloc(&cell_of, n * 4));
        CK(cudaMalloc(&rank, n * 4));
        CK(cudaMalloc(&count, ncell * 4));
        unsigned *ovf;
        CK(cudaMalloc(&ovf, 4));
        CK(cudaMemcpy(ds, s.data(), n * sizeof(ad_state), cudaMemcpyHostToDevice));
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        unsigned gb = (n + 255) / 256;
        CK(cudaMalloc(&diag, gb * sizeof(ad_step_sums)));
        const char *names[] = {"atomic", "atomic + diagnostics", "match_any", "match_any + diagnostics"};
        for (int v = 0; v < 4; v++) {
            float best = 1e30f;
            for (int rep = 0; rep < 7; rep++) {
                CK(cudaMemset(count, 0, ncell * 4));
                cudaEventRecord(e0);
                ad_bin_next b = {cell_of, rank, ad_counts{count, 0, ovf}, 64, NULL}; /* 32-bit counters: piles */
                if (v == 0) k_bin<false><<<gb, 256>>>(p, ds, ad_n{n, NULL}, b, diag);
                if (v == 1) k_bin<true><<<gb, 256>>>(p, ds, ad_n{n, NULL}, b, diag);
                if (v == 2) k_bin_aggregated<false><<<gb, 256>>>(p, ds, ad_n{n, NULL}, b, diag);
                if (v == 3) k_bin_aggregated<true><<<gb, 256>>>(p, ds, ad_n{n, NULL}, b, diag);
                cudaEventRecord(e1);
                CK(cudaEventSynchronize(e1));
                float ms;
                cudaEventElapsedTime(&ms, e0, e1);
                best = std::min(best, ms);
            }
            std::vector<unsigned> got(ncell);
            CK(cudaMemcpy(got.data(), count, ncell * 4, cudaMemcpyDeviceToHost));
            std::vector<ad_step_sums> d(gb);
            CK(cudaMemcpy(d.data(), diag, gb * sizeof(ad_step_sums), cudaMemcpyDeviceToHost));
            unsigned mx = 0;
            for (auto &x : d) mx = std::max(mx, x.occupancy);
            bool ok = got == ref && (v % 2 == 0 || mx == refmax);
            failed += !ok;
            printf("%-10s %-22s %10.1f %12u %14s\n", layout ? "piled" : "uniform", names[v], best * 1e3,
                   v % 2 ? mx : refmax, ok ? "equal" : "WRONG");
        }
        cudaFree(ds);
        cudaFree(cell_of);
        cudaFree(rank);
        cudaFree(count);
        cudaFree(ovf);
        cudaFree(diag);
    }
    return failed ? 1 : 0;
}
