/* The gather pass for one disc: sum its contacts with discs in the neighbour cells, segments and walls.
 * Each disc writes only itself (Newton's third law is given up), so no two threads
 * ever write the same memory and the sum order is fixed by the cell order alone:
 * results do not depend on the number of threads. */
/* Two dimensions: the neighbour search walks rows of cells (the 3x3 block, reach_x by reach_y), the
 * wall contacts are four walls; 3D walks 3x3x3 and six walls. */
#ifndef AD_PHYSICS_GATHER_H
#define AD_PHYSICS_GATHER_H

#include "contact.h"
#include "grid.h"
#include "segment.h"
#include "state.h"

/* Disc i (slot i of the cell-ordered arrays) with position/velocity `me`, binned in
 * cell (cx, cy). `s` holds every disc's state in cell order, `start` the cell offsets
 * (start[c]..start[c+1] are cell c's slots). */
AD_HD static inline void ad_gather_discs(const ad_params *p, const uint32_t *start, const ad_state *s, uint32_t i,
                                         ad_state me, int cx, int cy, ad_accum *a)
{
    int lo[2], hi[2];
    int runs = ad_neighbour_runs(cx, p->reach_x, p->nx, p->periodic_x, lo, hi);
    for (int d = -p->reach_y; d <= p->reach_y; d++) {
        int row = ad_neighbour_row(cy, d, p->ny, p->periodic_y);
        if (row < 0) continue;
        uint32_t base = (uint32_t)row * (uint32_t)p->nx;
        for (int r = 0; r < runs; r++) {
            /* the cells lo..hi of a row are contiguous, so their discs are one slot range */
            uint32_t j1 = start[base + (uint32_t)hi[r] + 1];
            for (uint32_t j = start[base + (uint32_t)lo[r]]; j < j1; j++) {
                if (j == i) continue;
                ad_state o = s[j];
                float dx = ad_min_image(o.x - me.x, p->periodic_x, p->len_x, p->half_x);
                float dy = ad_min_image(o.y - me.y, p->periodic_y, p->len_y, p->half_y);
                ad_contact_disc(p, dx, dy, o.vx - me.vx, o.vy - me.vy, a);
            }
        }
    }
}

/* All contacts of one disc: other discs, segments and walls. */
AD_HD static inline void ad_gather_all(const ad_params *p, const ad_seg_grid *g, const uint32_t *start,
                                       const ad_state *s, uint32_t i, ad_state me, int cx, int cy, ad_accum *a)
{
    ad_accum_zero(a);
    if (p->disc_contacts) ad_gather_discs(p, start, s, i, me, cx, cy, a);
    ad_contact_segments(p, g, me.x, me.y, me.vx, me.vy, a);
    ad_contact_walls(p, me.x, me.y, me.vx, me.vy, a);
}

#endif
