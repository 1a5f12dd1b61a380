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

/* Disc i to the next slot of its cell (the cursor), with the occupancy diagnostics. */
static inline void place(size_t i, uint32_t c, const uint32_t *start, uint32_t *cursor, const ad_state *src,
                         ad_state *dst, const uint32_t *isrc, uint32_t *idst, const ad_accel *asrc, ad_accel *adst,
                         uint32_t capacity, uint32_t *mx, uint64_t *ov)
{
    uint32_t r = cursor[c]++;
    size_t slot = (size_t)start[c] + r;
    dst[slot] = src[i];
    idst[slot] = isrc[i];
    if (adst) adst[slot] = asrc[i];
    *mx = r + 1 > *mx ? r + 1 : *mx;
    *ov += r >= capacity;
}

void ad_cpu_reorder(const uint32_t *cell_of, size_t n, const uint32_t *start, uint32_t *cursor, size_t ncell,
                    uint32_t capacity, int threads, const ad_state *src, ad_state *dst, const uint32_t *isrc,
                    uint32_t *idst, const ad_accel *asrc, ad_accel *adst, uint32_t *foreign, size_t foreign_cap,
                    ad_grid_diag *diag)
{
    enum { MAXT = 256 };
    int t = threads < 1 ? 1 : (threads > MAXT ? MAXT : threads);
    if (n < 2048) t = 1; /* small: not worth waking threads (the tests run 3000 discs on 2 to 4) */
    /* Thread k owns the cells [split[k], split[k+1]) and the discs of the index window
     * [k n / t, (k+1) n / t); the discs are still nearly in cell order (they moved less than
     * a cell since the last reorder), so its window holds nearly all the discs that land in
     * its cells, and the cells of evenly spaced discs give each thread about the same share.
     * Each thread lists its window's discs that land in other threads' cells ("foreign": the
     * few near a window's ends and the re-entered ones), then moves, in index order, the
     * discs of its cells: the foreign ones of the windows before its own, its own window's,
     * those of the windows after. Each cell is filled in index order, so the result is the
     * same for any number of threads. Should a window's foreign discs not fit their share of
     * `foreign`, every thread reads every disc instead (the same result, slower). */
    uint32_t split[MAXT + 1];
    size_t nf[MAXT];
    split[0] = 0;
    for (int k = 1; k < t; k++) {
        uint32_t c = cell_of[(size_t)k * n / (size_t)t];
        split[k] = c > split[k - 1] ? c : split[k - 1];
    }
    split[t] = (uint32_t)ncell;
    size_t share = t > 1 ? foreign_cap / (size_t)t : 0;
    int spill = 0;
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
        size_t a = (size_t)k * n / (size_t)t, b = (size_t)(k + 1) * n / (size_t)t;
        if (t > 1) {
            uint32_t *list = foreign + (size_t)k * share;
            size_t m = 0;
            for (size_t i = a; i < b; i++)
                if (cell_of[i] - lo >= width) {
                    if (m == share) {
                        __atomic_store_n(&spill, 1, __ATOMIC_RELAXED);
                        break;
                    }
                    list[m++] = (uint32_t)i;
                }
            nf[k] = m;
#pragma omp barrier
        }
        if (t == 1 || __atomic_load_n(&spill, __ATOMIC_RELAXED)) {
            for (size_t i = 0; i < n; i++) {
                uint32_t c = cell_of[i];
                if (c - lo >= width) continue; /* another thread's cell */
                place(i, c, start, cursor, src, dst, isrc, idst, asrc, adst, capacity, &mx, &ov);
            }
        } else {
            for (int j = 0; j < t; j++) {
                if (j == k) {
                    for (size_t i = a; i < b; i++) {
                        uint32_t c = cell_of[i];
                        if (c - lo < width)
                            place(i, c, start, cursor, src, dst, isrc, idst, asrc, adst, capacity, &mx, &ov);
                    }
                    continue;
                }
                const uint32_t *list = foreign + (size_t)j * share;
                for (size_t q = 0; q < nf[j]; q++) {
                    uint32_t i = list[q], c = cell_of[i];
                    if (c - lo < width)
                        place(i, c, start, cursor, src, dst, isrc, idst, asrc, adst, capacity, &mx, &ov);
                }
            }
        }
    }
    diag->max_occupancy = mx;
    diag->overflow = ov;
}
