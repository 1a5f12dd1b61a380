/* The CPU uniform grid: binning with the cell index kept, a parallel exclusive scan, a stable scatter. */
#include "grid.h"

#include <stdlib.h>
#include <string.h>

#include "../physics/grid.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void ad_cpu_bin(const ad_params *p, const ad_state *s, size_t n, uint32_t *cell_of, uint32_t *count, int threads,
                ad_grid_diag *diag)
{
    uint64_t outside = 0;
    const ad_params P = *p;
    if (threads <= 1) {
        for (size_t i = 0; i < n; i++) {
            ad_state q = s[i];
            uint32_t c = ad_cell_index(&P, q.x, q.y);
            cell_of[i] = c;
            count[c]++;
            outside += (uint64_t)ad_outside_domain(&P, q.x, q.y);
        }
    } else {
        /* integer counts: atomic increments give the same totals in any order */
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : outside)
        for (size_t i = 0; i < n; i++) {
            ad_state q = s[i];
            uint32_t c = ad_cell_index(&P, q.x, q.y);
            cell_of[i] = c;
            __atomic_fetch_add(&count[c], 1u, __ATOMIC_RELAXED);
            outside += (uint64_t)ad_outside_domain(&P, q.x, q.y);
        }
    }
    diag->outside = outside;
}

void ad_cpu_scan(const uint32_t *count, uint32_t *start, size_t ncell, int threads)
{
    enum { MAXT = 256 };
    int t = threads < 1 ? 1 : (threads > MAXT ? MAXT : threads);
    if (ncell < 65536) t = 1;
    if (t == 1) { /* one pass, nothing else: a dependent add per cell */
        uint32_t run = 0;
        for (size_t c = 0; c < ncell; c++) {
            start[c] = run;
            run += count[c];
        }
        start[ncell] = run;
        return;
    }
    uint32_t partial[MAXT + 1];
    int used = 1;
    /* pass 1: each chunk's total; pass 2: each chunk scans from its offset */
#pragma omp parallel num_threads(t)
    {
#ifdef _OPENMP
        int k = omp_get_thread_num(), nt = omp_get_num_threads();
#else
        int k = 0, nt = 1;
#endif
        size_t chunk = (ncell + (size_t)nt - 1) / (size_t)nt;
        size_t a = (size_t)k * chunk < ncell ? (size_t)k * chunk : ncell;
        size_t b = a + chunk < ncell ? a + chunk : ncell;
        uint32_t sum = 0;
        for (size_t c = a; c < b; c++) sum += count[c];
        partial[k + 1] = sum;
#pragma omp barrier
#pragma omp single
        {
            used = nt;
            partial[0] = 0;
            for (int j = 0; j < nt; j++) partial[j + 1] += partial[j];
        }
        uint32_t run = partial[k];
        for (size_t c = a; c < b; c++) {
            start[c] = run;
            run += count[c];
        }
    }
    start[ncell] = partial[used];
}

void ad_cpu_reorder(const uint32_t *cell_of, size_t n, const uint32_t *start, uint32_t *cursor, size_t ncell,
                    uint32_t capacity, int threads, const ad_state *src, ad_state *dst, const uint32_t *isrc,
                    uint32_t *idst, const ad_accel *asrc, ad_accel *adst, ad_grid_diag *diag)
{
    enum { MAXT = 256 };
    int t = threads < 1 ? 1 : (threads > MAXT ? MAXT : threads);
    if (n < 2048) t = 1; /* small: not worth waking threads (the tests run 3000 discs on 2 to 4) */
    /* Thread k owns the cells [split[k], split[k+1]) and moves, in index order, the
     * discs that land there: each cell is filled by one thread in index order, so the
     * result is the same for any split. The discs are still nearly in cell order, so
     * the cells of evenly spaced discs give each thread about the same share. */
    uint32_t split[MAXT + 1];
    split[0] = 0;
    for (int k = 1; k < t; k++) {
        uint32_t c = cell_of[(size_t)k * n / (size_t)t];
        split[k] = c > split[k - 1] ? c : split[k - 1];
    }
    split[t] = (uint32_t)ncell;
    uint32_t mx = 0;
    uint64_t ov = 0;
#pragma omp parallel num_threads(t) reduction(max : mx) reduction(+ : ov)
    {
#ifdef _OPENMP
        int k = omp_get_thread_num();
#else
        int k = 0;
#endif
        uint32_t lo = split[k], width = split[k + 1] - split[k];
        for (size_t i = 0; i < n; i++) {
            uint32_t c = cell_of[i];
            if (c - lo >= width) continue; /* another thread's cell */
            uint32_t r = cursor[c]++;
            size_t slot = (size_t)start[c] + r;
            dst[slot] = src[i];
            idst[slot] = isrc[i];
            if (adst) adst[slot] = asrc[i];
            mx = r + 1 > mx ? r + 1 : mx;
            ov += r >= capacity;
        }
    }
    diag->max_occupancy = mx;
    diag->overflow = ov;
}
