/* A uniform grid in two or three dimensions, built as the reference documents build it: a counting
 * sort (bin every point's cell, an exclusive scan of the counts, a stable scatter into cell order),
 * and the neighbour search over the stencil (physics/stencil.h). The plain pipeline of issue 18's 3D
 * world, written for clarity (one thread); 2D is the case nz = 1. */
#ifndef AD_REFERENCE_GRID3_H
#define AD_REFERENCE_GRID3_H

#include <stddef.h>
#include <stdint.h>

#include "../core/status.h"
#include "../physics/stencil.h"

typedef struct ad_grid3 {
    int dims;                /* 2 or 3 */
    double lo[3], hi[3];     /* the domain [m]; in 2D lo[2] = hi[2] = 0 */
    int periodic[3];
    double cell;             /* the side of a cell (at least the search distance) [m] */
    /* derived by ad_grid3_init */
    int n[3];
    float origin[3], inv_cell[3], len[3], half[3];
    ad_stencil stencil;
} ad_grid3;

/* The cells of g (and its stencil, reach 1 a side): refused by name where the domain is empty or not
 * finite, the cell not positive, a periodic axis shorter than three cells, or the grid too large. */
ad_status ad_grid3_init(ad_grid3 *g);
uint32_t ad_grid3_cells(const ad_grid3 *g);
uint32_t ad_grid3_cell_of(const ad_grid3 *g, const float *p);

/* The counting sort of n points (p: 3 floats a point; z ignored in 2D): start[c] .. start[c + 1] are
 * cell c's places in order[], which holds point indices in cell order, each cell's in index order.
 * start holds cells + 1, order n. */
ad_status ad_grid3_sort(const ad_grid3 *g, const float *p, size_t n, uint32_t *start, uint32_t *order);

/* Calls pair(i, j, ctx) once for every pair i < j of points closer than r (<= the cell), with the
 * minimum image along periodic axes: the neighbour search over the sorted grid. */
void ad_grid3_pairs(const ad_grid3 *g, const float *p, size_t n, const uint32_t *start, const uint32_t *order,
                    float r, void (*pair)(uint32_t i, uint32_t j, void *ctx), void *ctx);

#endif
