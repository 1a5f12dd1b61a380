/* The plain pipeline of DESIGN.md, written once for both dimensions (plain_dim.h, included here for 2D
 * and 3D): ad_plain (discs) and ad_plain3 (spheres), their arrays and steps 1 to 4, and step 5's
 * entries and the reservoir (plain_open_dim.h). What does not depend on the dimension is here. */
#ifndef AD_REFERENCE_PLAIN_H
#define AD_REFERENCE_PLAIN_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/free_each.h"
#include "../core/world_internal.h"
#include "../physics/gather.h"
#include "../physics/gather3.h"
#include "../physics/integrate.h"
#include "../physics/open3.h"
#include "../physics/surface.h"

static inline double ad_plain_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline size_t ad_plain_blocks(size_t n) { return (n + AD_BLOCK - 1) / AD_BLOCK; }

/* Step 2: the cells' counts of the n particles binned in cell_of (32-bit counters), start = their
 * exclusive prefix sum (start[ncell] the total); count becomes the scatter's cursor. The largest count
 * and the particles past the cell capacity go to the statistics. */
static inline void ad_plain_scan(ad_world *w, const uint32_t *cell_of, size_t n, uint32_t *count, uint32_t *start,
                                 size_t ncell)
{
    memset(count, 0, ncell * sizeof *count);
    for (size_t i = 0; i < n; i++) count[cell_of[i]]++;
    uint32_t run = 0, most = 0, cap = w->stats.cell_capacity;
    uint64_t over = 0;
    for (size_t c = 0; c < ncell; c++) {
        uint32_t v = count[c];
        start[c] = count[c] = run;
        run += v;
        most = v > most ? v : most;
        over += v > cap ? v - cap : 0;
    }
    start[ncell] = run;
    w->stats.max_cell_occupancy = most;
    w->stats.cell_overflow = over;
}

#define AD_DIM 2
#include "plain_dim.h"
#include "plain_open_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "plain_dim.h"
#include "plain_open_dim.h"
#undef AD_DIM

#endif
