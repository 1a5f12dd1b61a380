/* The grid pipeline alone on the GPU (DESIGN.md steps 1-3: bin, scan, which also clears the
 * counters for the next bin, scatter) with the engine's own kernels (src/cuda/kernels.cuh), for the CUDA issue's goal
 * "binning + scan + scatter of 10^6 particles into 2*10^6 cells under 50 microseconds".
 * In a step the bin runs inside the pass; here it is the standalone k_bin the engine runs
 * after the host changes the discs, so the three phases are measured as one pipeline.
 *
 * The discs: a uniform gas, in cell order as the engine keeps them, each then moved by up
 * to 0.2 cells (one step's worth), so the input order is the previous step's cell order.
 * Each pipeline is captured as a CUDA graph and replayed (the engine replays its steps the
 * same way); the phases are also replayed alone for a breakdown. The output is checked on
 * the host: a permutation, in cell order, and for the deterministic pipeline in the order
 * of a stable sort by cell.
 *
 * The cell counters are measured at the widths asked for (counts.cuh; the engine takes 8 bits
 * for cells one diameter wide, as here).
 *
 * Usage: bench_grid_cuda [--sizes N,N,...] [--bits B,B,...] [--cells-per-disc C] [--reps R] [--csv FILE] */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench_cuda_util.cuh"
#include "cuda/kernels.cuh"

struct grid_bufs {
    unsigned n, ncell;
    ad_params p;
    ad_state *s_in, *s_out;
    unsigned *id_in, *id_out, *cell_of, *rank, *count, *start, *members, *perm, *overflow;
    unsigned *dead; /* the removed discs' counter (none here: the gas is closed) */
    unsigned lg; /* the counters' width (counts.cuh): 32 >> lg bits */
    ad_step_sums *diag;
    unsigned *scan_state;
};

enum { PH_BIN, PH_SCAN, PH_SCATTER, PH_ALL };

/* One phase (or all) of the fast (det = 0) or deterministic (det = 1) pipeline on stream st. */
static void enqueue(grid_bufs &g, int det, int phase, cudaStream_t st)
{
    unsigned gb = (g.n + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK;
    if (phase == PH_BIN || phase == PH_ALL) {
        /* the cell kept where read back */
        ad_bin_next b = {det ? g.cell_of : NULL, g.rank, ad_counts{g.count, g.lg, g.overflow}, 0, g.dead};
        k_bin<false><<<gb, AD_CUDA_BLOCK, 0, st>>>(g.p, g.s_in, ad_n{g.n, NULL}, b, g.diag);
    }
    if (phase == PH_SCAN || phase == PH_ALL) {
        CK(ad_scan_counts(g.count, g.lg, g.start, g.scan_state, g.ncell, st));
    }
    if (phase == PH_SCATTER || phase == PH_ALL) {
        if (det) {
            ad_n nn = {g.n, NULL};
            unsigned dead_cell = (unsigned)g.p.nx * (unsigned)g.p.ny;
            k_cell_members<<<gb, AD_CUDA_BLOCK, 0, st>>>(nn, g.cell_of, g.rank, g.start, g.members);
            k_stable_rank<<<gb, AD_CUDA_BLOCK, 0, st>>>(nn, dead_cell, g.dead, g.cell_of, g.start, g.members, g.perm);
            k_gather<<<gb, AD_CUDA_BLOCK, 0, st>>>(nn, g.perm, g.s_in, g.id_in, NULL, g.s_out, g.id_out, NULL, NULL,
                                                   NULL);
        } else {
            k_scatter<<<gb, AD_CUDA_BLOCK, 0, st>>>(g.p, ad_n{g.n, NULL}, g.rank, g.start, g.s_in, g.id_in, NULL,
                                                    g.s_out, g.id_out, NULL, NULL, NULL);
        }
    }
    CK(cudaGetLastError());
}

/* Microseconds per replay of the phase as a graph: median of 5 batches of reps. */
static double time_graph(grid_bufs &g, int det, int phase, int reps, cudaStream_t st)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    enqueue(g, det, phase, st);
    CK(cudaStreamEndCapture(st, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int k = 0; k < 10; k++) CK(cudaGraphLaunch(exec, st)); /* warm-up */
    std::vector<double> t;
    for (int b = 0; b < 5; b++) {
        CK(cudaEventRecord(e0, st));
        for (int k = 0; k < reps; k++) CK(cudaGraphLaunch(exec, st));
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms * 1e3 / reps);
    }
    std::sort(t.begin(), t.end());
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    return t[2];
}

/* The last pipeline's output against the host: a permutation of the input in cell order,
 * and for det the order of a stable sort by cell (ties in input order). */
static const char *verify(grid_bufs &g, int det, const std::vector<ad_state> &in)
{
    std::vector<ad_state> out(g.n);
    std::vector<unsigned> ids(g.n);
    CK(cudaMemcpy(out.data(), g.s_out, g.n * sizeof(ad_state), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ids.data(), g.id_out, g.n * 4, cudaMemcpyDeviceToHost));
    std::vector<char> seen(g.n, 0);
    unsigned prev_cell = 0;
    for (unsigned k = 0; k < g.n; k++) {
        unsigned i = ids[k];
        if (i >= g.n || seen[i]) return "not a permutation";
        seen[i] = 1;
        if (memcmp(&out[k], &in[i], sizeof(ad_state))) return "state does not follow its id";
        unsigned c = ad_cell_index(&g.p, out[k].x, out[k].y);
        if (k && c < prev_cell) return "not in cell order";
        if (det && k && c == prev_cell && i < ids[k - 1]) return "not stable";
        prev_cell = c;
    }
    return "ok";
}

int main(int argc, char **argv)
{
    std::vector<double> sizes = {1e6, 1.6e7};
    std::vector<int> widths = {8, 32};
    double cells_per_disc = 2.0;
    int reps = 200;
    const char *csv = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            sizes.clear();
            for (char *t = strtok(argv[++i], ","); t; t = strtok(NULL, ",")) sizes.push_back(atof(t));
        } else if (!strcmp(argv[i], "--bits") && i + 1 < argc) {
            widths.clear();
            for (char *t = strtok(argv[++i], ","); t; t = strtok(NULL, ",")) widths.push_back(atoi(t));
        } else if (!strcmp(argv[i], "--cells-per-disc") && i + 1 < argc) {
            cells_per_disc = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
            csv = argv[++i];
        } else {
            fprintf(stderr, "usage: bench_grid_cuda [--sizes N,N,...] [--bits B,B,...] [--cells-per-disc C] [--reps R] "
                            "[--csv FILE]\n");
            return 2;
        }
    }
    for (double s : sizes)
        if (!(s >= 1 && s <= 2e9) || !(cells_per_disc > 0) || reps < 1) {
            fprintf(stderr, "bench_grid_cuda: sizes must be in [1, 2e9], cells per disc > 0, reps >= 1\n");
            return 2;
        }
    for (int b : widths)
        if (b != 8 && b != 16 && b != 32) {
            fprintf(stderr, "bench_grid_cuda: --bits takes 8, 16 and 32\n");
            return 2;
        }
    int dev_count = 0;
    if (cudaGetDeviceCount(&dev_count) != cudaSuccess || dev_count == 0) {
        fprintf(stderr, "bench_grid_cuda: no CUDA device\n");
        return 77;
    }
    FILE *f = csv ? fopen(csv, "w") : NULL;
    if (csv && !f) {
        fprintf(stderr, "bench_grid_cuda: cannot write %s\n", csv);
        return 1;
    }
    if (f) fprintf(f, "n,cells,bits,mode,pipeline_us,bin_us,scan_us,scatter_us,check\n");
    printf("%11s %11s %4s %-13s %12s %9s %9s %11s  %s\n", "discs", "cells", "bits", "mode", "pipeline us", "bin us", "scan us", "scatter us", "check");
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    for (double size : sizes) {
        grid_bufs g = {};
        g.n = (unsigned)size;
        /* a box of square cells of side 1, nx = 2 ny, holding cells_per_disc cells a disc */
        double cells = g.n * cells_per_disc;
        int ny = (int)ceil(sqrt(cells / 2)), nx = (int)ceil(cells / ny);
        g.ncell = (unsigned)nx * (unsigned)ny;
        g.p.x_min = g.p.origin_x = 0;
        g.p.y_min = g.p.origin_y = 0;
        g.p.x_max = (float)nx;
        g.p.y_max = (float)ny;
        g.p.nx = nx;
        g.p.ny = ny;
        g.p.inv_cell_x = g.p.inv_cell_y = 1.0f;
        std::vector<ad_state> in(g.n);
        for (auto &q : in) q = ad_state{(float)(urand() * nx), (float)(urand() * ny), 0, 0};
        std::sort(in.begin(), in.end(), [&](const ad_state &a, const ad_state &b) {
            return ad_cell_index(&g.p, a.x, a.y) < ad_cell_index(&g.p, b.x, b.y);
        });
        for (auto &q : in) { /* one step's move, kept inside the box */
            q.x = (float)std::min(std::max(q.x + 0.4 * (urand() - 0.5), 0.0), nx - 1e-3);
            q.y = (float)std::min(std::max(q.y + 0.4 * (urand() - 0.5), 0.0), ny - 1e-3);
        }
        std::vector<unsigned> ids(g.n);
        for (unsigned i = 0; i < g.n; i++) ids[i] = i;
        size_t n4 = (size_t)g.n * 4;
        CK(cudaMalloc(&g.s_in, g.n * sizeof(ad_state)));
        CK(cudaMalloc(&g.s_out, g.n * sizeof(ad_state)));
        CK(cudaMalloc(&g.id_in, n4));
        CK(cudaMalloc(&g.id_out, n4));
        CK(cudaMalloc(&g.cell_of, n4));
        CK(cudaMalloc(&g.rank, n4));
        CK(cudaMalloc(&g.members, n4));
        CK(cudaMalloc(&g.perm, n4));
        CK(cudaMalloc(&g.count, ad_count_bytes(g.ncell, 0))); /* room for the widest */
        CK(cudaMalloc(&g.start, ad_start_slots(g.ncell, 0) * 4));
        CK(cudaMalloc(&g.scan_state, ad_scan_state_bytes(g.ncell, 0)));
        CK(cudaMalloc(&g.overflow, 4));
        CK(cudaMalloc(&g.dead, 4));
        CK(cudaMemset(g.dead, 0, 4));
        CK(cudaMalloc(&g.diag, ((g.n + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK) * sizeof(ad_step_sums)));
        CK(cudaMemcpy(g.s_in, in.data(), g.n * sizeof(ad_state), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(g.id_in, ids.data(), n4, cudaMemcpyHostToDevice));
        for (int bits : widths)
        for (int det = 0; det < 2; det++) {
            g.lg = bits == 8 ? 2 : bits == 16 ? 1 : 0;
            CK(cudaMemset(g.count, 0, ad_count_bytes(g.ncell, 0))); /* a fresh start */
            double ph[4];
            /* the bin alone counts on from replay to replay (it may pass the counters' width) */
            ph[PH_BIN] = time_graph(g, det, PH_BIN, reps, st);
            CK(cudaMemset(g.count, 0, ad_count_bytes(g.ncell, 0)));
            /* the scan and the scatter alone after a pipeline (valid counters and ranks) */
            for (int k = PH_SCAN; k <= PH_SCATTER; k++) {
                enqueue(g, det, PH_ALL, st);
                ph[k] = time_graph(g, det, k, reps, st);
            }
            /* the pipeline last, from cleared counters, so its output is the one checked; the
             * scan leaves the counters cleared for the next replay */
            CK(cudaMemset(g.count, 0, ad_count_bytes(g.ncell, 0)));
            CK(cudaMemset(g.overflow, 0, 4));
            ph[PH_ALL] = time_graph(g, det, PH_ALL, reps, st);
            const char *check = verify(g, det, in);
            unsigned over = 0;
            CK(cudaMemcpy(&over, g.overflow, 4, cudaMemcpyDeviceToHost));
            if (over) check = "a counter overflowed";
            const char *mode = det ? "deterministic" : "fast";
            printf("%11u %11u %4d %-13s %12.1f %9.1f %9.1f %11.1f  %s\n", g.n, g.ncell, bits, mode, ph[PH_ALL],
                   ph[PH_BIN], ph[PH_SCAN], ph[PH_SCATTER], check);
            if (f)
                fprintf(f, "%u,%u,%d,%s,%.2f,%.2f,%.2f,%.2f,%s\n", g.n, g.ncell, bits, mode, ph[PH_ALL], ph[PH_BIN],
                        ph[PH_SCAN], ph[PH_SCATTER], check);
            if (strcmp(check, "ok")) return 1;
        }
        void *bufs[] = {g.s_in, g.s_out, g.id_in, g.id_out, g.cell_of, g.rank, g.members, g.perm,
                        g.count, g.start, g.scan_state, g.overflow, g.dead, g.diag};
        for (void *b : bufs) CK(cudaFree(b));
    }
    if (f) fclose(f);
    printf("pipeline: bin + scan (clearing the counters) + scatter replayed as one CUDA graph, median of 5 x %d; the\n"
           "phases replayed alone (each a graph) do not add up to it exactly\n", reps);
    return 0;
}
