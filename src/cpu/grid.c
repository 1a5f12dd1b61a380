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

void ad_cpu_scan(const uint32_t *count, uint32_t *start, size_t ncell, uint32_t capacity, int threads,
                 ad_grid_diag *diag)
{
    enum { MAXT = 256 };
    int t = threads < 1 ? 1 : (threads > MAXT ? MAXT : threads);
    if (ncell < 65536) t = 1;
    uint32_t partial[MAXT + 1];
    uint32_t maxocc[MAXT];
    uint64_t over[MAXT];
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
        uint32_t sum = 0, mx = 0;
        uint64_t ov = 0;
        for (size_t c = a; c < b; c++) {
            uint32_t v = count[c];
            sum += v;
            mx = v > mx ? v : mx;
            ov += v > capacity ? v - capacity : 0;
        }
        partial[k + 1] = sum;
        maxocc[k] = mx;
        over[k] = ov;
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
    uint32_t mx = 0;
    uint64_t ov = 0;
    for (int j = 0; j < used; j++) {
        mx = maxocc[j] > mx ? maxocc[j] : mx;
        ov += over[j];
    }
    diag->max_occupancy = mx;
    diag->overflow = ov;
}

void ad_cpu_scatter(const uint32_t *cell_of, size_t n, const uint32_t *start, uint32_t *cursor, uint32_t *perm)
{
    /* serial and in index order, so the order inside a cell is the index order:
     * a stable sort, and the same for any number of threads */
    for (size_t i = 0; i < n; i++) {
        uint32_t c = cell_of[i];
        perm[start[c] + cursor[c]++] = (uint32_t)i;
    }
}
