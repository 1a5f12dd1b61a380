/* The disc-disc (sphere-sphere) part of the gather pass in one dimension (included by gather.h with
 * AD_DIM 2, then 3; see dim.h): the neighbour cells are the stencil's rows (params.stencil: dy in
 * 2D, dy and dz in 3D), each row's cells one slot range, split where a periodic x wraps. No include
 * guard: it is meant to be included once a dimension. */
#include "dim.h"

/* Disc i (slot i of the cell-ordered arrays) with state `me`, binned in cell (cx, cy[, cz]). `s`
 * holds every disc's state in cell order, `start` the cell offsets (start[c]..start[c+1] are cell
 * c's slots). */
AD_HD static inline void AD_D(ad_gather_discs)(const ad_params *p, const uint32_t *start, const AD_STATE *s, uint32_t i,
                                               AD_STATE me, AD_IARGS(c), AD_ACCUM *a)
{
    int lo[2], hi[2];
    int runs = ad_neighbour_runs(cx, p->reach_x, p->nx, p->periodic_x, lo, hi);
    for (int k = 0; k < p->stencil.rows; k++) {
        int row = ad_neighbour_row(cy, p->stencil.dy[k], p->ny, p->periodic_y);
        if (row < 0) continue;
#if AD_DIM == 2
        uint32_t base = (uint32_t)row * (uint32_t)p->nx;
#else
        int layer = ad_neighbour_row(cz, p->stencil.dz[k], p->nz, p->periodic_z);
        if (layer < 0) continue;
        uint32_t base = ((uint32_t)layer * (uint32_t)p->ny + (uint32_t)row) * (uint32_t)p->nx;
#endif
        for (int r = 0; r < runs; r++) {
            /* the cells lo..hi of a row are contiguous, so their discs are one slot range */
            uint32_t j1 = start[base + (uint32_t)hi[r] + 1];
            for (uint32_t j = start[base + (uint32_t)lo[r]]; j < j1; j++) {
                if (j == i) continue;
                AD_STATE o = s[j];
#define AD_M(c) float d##c = ad_min_image(o.c - me.c, p->periodic_##c, p->len_##c, p->half_##c);
                AD_EACH(AD_M)
#undef AD_M
#define AD_M(c) float dv##c = o.v##c - me.v##c;
                AD_EACH(AD_M)
#undef AD_M
                AD_D(ad_contact_disc)(p, AD_PASS(d), AD_PASS(dv), a);
            }
        }
    }
}

#include "dim_end.h"
