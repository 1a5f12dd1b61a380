/* Static segments (the airfoil outline, plates) and the coarse grid that finds the ones near a disc. */
#ifndef AD_PHYSICS_SEGMENT_H
#define AD_PHYSICS_SEGMENT_H

#include "contact.h"
#include "grid.h"

enum {
    AD_SEG_OWNS_START = 1, /* this segment answers for contacts at its start vertex */
    AD_SEG_OWNS_END = 2,   /* ... and at its end vertex */
    AD_SEG_CLOSED = 4,     /* both vertices are shared: part of a closed outline */
};

/* A segment as the kernels read it: start, edge vector, 1/|edge|^2. 24 bytes. */
typedef struct ad_seg {
    float x0, y0, ex, ey, inv_len2;
    uint32_t flags; /* AD_SEG_OWNS_*: a vertex shared by two segments is owned by one */
} ad_seg;

/* Segments binned on a coarse grid (compressed rows: segments of cell c are
 * index[start[c] .. start[c+1])). Each segment sits in every cell its box, grown
 * by one radius, touches, so a disc looks in its own cell only. */
typedef struct ad_seg_grid {
    float origin_x, origin_y, inv_cell_x, inv_cell_y;
    int nx, ny;
    float box_x0, box_y0, box_x1, box_y1; /* all segments, grown by a radius: most discs stop here */
    uint32_t count;          /* segments */
    const uint32_t *start;   /* nx*ny + 1 */
    const uint32_t *index;
    const ad_seg *segs;
} ad_seg_grid;

/* One disc against one segment (both broad phases end here). */
AD_HD static inline void ad_contact_segment(const ad_params *p, const ad_seg *sp, float x, float y, float vx, float vy,
                                            ad_accum *a)
{
    ad_seg s = *sp;
    float qx, qy, t, fx, fy;
    ad_closest_on_segment(x, y, s.x0, s.y0, s.ex, s.ey, s.inv_len2, &qx, &qy, &t);
    /* a vertex shared with a neighbour segment is answered for once */
    if (t <= 0.0f && !(s.flags & AD_SEG_OWNS_START)) return;
    if (t >= 1.0f && !(s.flags & AD_SEG_OWNS_END)) return;
    if (ad_contact_point(p, x, y, vx, vy, qx, qy, &fx, &fy, a)) {
        a->body_fx -= fx;
        a->body_fy -= fy;
    }
}

/* Gathers the contacts of one disc with the segments near it. */
AD_HD static inline void ad_contact_segments(const ad_params *p, const ad_seg_grid *g, float x, float y, float vx,
                                             float vy, ad_accum *a)
{
    if (g->count == 0 || !(x >= g->box_x0 && x <= g->box_x1 && y >= g->box_y0 && y <= g->box_y1)) return;
    int cx = ad_cell_coord(x, g->origin_x, g->inv_cell_x, g->nx);
    int cy = ad_cell_coord(y, g->origin_y, g->inv_cell_y, g->ny);
    uint32_t c = (uint32_t)cy * (uint32_t)g->nx + (uint32_t)cx;
    for (uint32_t k = g->start[c]; k < g->start[c + 1]; k++)
        ad_contact_segment(p, &g->segs[g->index[k]], x, y, vx, vy, a);
}

#endif
