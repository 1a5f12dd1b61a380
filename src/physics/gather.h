/* The gather pass for one disc: sum its contacts with discs in the neighbour cells, segments and walls.
 * Each disc writes only itself (Newton's third law is given up), so no two threads
 * ever write the same memory and the sum order is fixed by the cell order alone:
 * results do not depend on the number of threads. */
/* The disc-disc search is written once for both dimensions (gather_dim.h); the body's contacts are
 * 2D segments here, 3D triangles in gather3.h. */
#ifndef AD_PHYSICS_GATHER_H
#define AD_PHYSICS_GATHER_H

#include "contact.h"
#include "grid.h"
#include "segment.h"
#include "state.h"
#include "stencil.h"

#define AD_DIM 2
#include "gather_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "gather_dim.h"
#undef AD_DIM

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
