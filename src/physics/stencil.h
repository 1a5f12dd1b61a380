/* The neighbour cells of a uniform grid as data, for two and three dimensions: the cells a disc or
 * sphere meets are rows along the first axis (one slot range a row once the counting sort has put
 * the cells in order), at the offsets of a table along the other axes: 2 reach_y + 1 rows in 2D (dy),
 * (2 reach_y + 1)(2 reach_z + 1) in 3D (dy, dz), each row split in at most two runs where a periodic
 * axis wraps (grid.h: ad_neighbour_runs, ad_neighbour_row). The per-axis arithmetic is grid.h's, the
 * same in every dimension. Issue 18's 3D grid (src/reference/grid3.c) walks it; tests/test_grid3.c
 * checks both dimensions against brute force. */
#ifndef AD_PHYSICS_STENCIL_H
#define AD_PHYSICS_STENCIL_H

#include "grid.h"

/* The table itself, ad_stencil, is in params.h: every kernel reads it there. */

/* The rows of a search reach_y by reach_z cells (reach_z = 0 in 2D), z outermost, then y: the order of
 * the cells in memory. 0 where the rows are more than AD_STENCIL_ROWS_MAX (a reach past 12 in 2D, past
 * 2 in 3D). */
static inline int ad_stencil_make(int reach_y, int reach_z, ad_stencil *s)
{
    if (reach_y < 0 || reach_z < 0 || (2 * reach_y + 1) * (2 * reach_z + 1) > AD_STENCIL_ROWS_MAX) return 0;
    s->rows = 0;
    for (int dz = -reach_z; dz <= reach_z; dz++)
        for (int dy = -reach_y; dy <= reach_y; dy++) {
            s->dy[s->rows] = (signed char)dy;
            s->dz[s->rows] = (signed char)dz;
            s->rows++;
        }
    return 1;
}

#endif
