/* Static segments (the airfoil outline, plates), the coarse grid that finds the ones near a disc, and the
 * one contact per touch of a disc with a connected outline.
 *
 * One contact per touch. Segments that share end points (exactly equal floats) form a connected
 * outline, a component. A disc touching a component feels one force, from its closest point on the
 * whole component: overlap delta = r - |c - q| with q the point of the component nearest the centre
 * c, along (c - q) / |c - q|. That is the contact with the outline itself, whatever its panelling: a
 * straight wall of many collinear segments acts as one segment, a vertex shared by two segments is
 * one point, and a disc in the face region of one segment is not also pushed by its neighbour's end.
 * The potential k (r - dist(c, outline))^2 / 2 is continuous, so a disc sliding across a joint keeps
 * its energy. Separate components (two bodies, a flap) each give their own contact.
 *
 * A disc is compared with every segment whose box, grown by a radius, holds its centre (the coarse
 * grid below, or the segment tree of the BVH broad phase); the nearest point of each component is
 * kept in a small table (AD_SEG_TOUCH_MAX components at once; a disc touching more than that gets
 * the extra ones segment by segment). Ties go to the first segment met, so a point shared by two
 * segments is taken once. */
/* Two dimensions: the body is a set of 2D segments found through a 2D coarse grid; 3D replaces them
 * with triangles (STL) and the closest point on a triangle. */
#ifndef AD_PHYSICS_SEGMENT_H
#define AD_PHYSICS_SEGMENT_H

#include "contact.h"
#include "grid.h"

enum {
    AD_SEG_CLOSED = 4,      /* both vertices are shared: part of a closed outline */
    AD_SEG_COMP_SHIFT = 8,  /* flags >> AD_SEG_COMP_SHIFT: the segment's component (connected outline) */
};

/* A segment as the kernels read it: start, edge vector, 1/|edge|^2. 24 bytes. */
typedef struct ad_seg {
    float x0, y0, ex, ey, inv_len2;
    uint32_t flags; /* AD_SEG_CLOSED, and the component in the bits from AD_SEG_COMP_SHIFT */
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

#define AD_SEG_TOUCH_MAX 4

/* The nearest touching point of each component met so far, for one disc, and its segment. */
typedef struct ad_seg_touches {
    int n;
    uint32_t comp[AD_SEG_TOUCH_MAX], seg[AD_SEG_TOUCH_MAX];
    float d2[AD_SEG_TOUCH_MAX], qx[AD_SEG_TOUCH_MAX], qy[AD_SEG_TOUCH_MAX];
} ad_seg_touches;

/* The contact of a disc at (x, y) with the body point (qx, qy); its reaction goes to the body. */
AD_HD static inline void ad_contact_body_point(const ad_params *p, float x, float y, float vx, float vy, float qx,
                                               float qy, ad_accum *a)
{
    float fx, fy;
    if (ad_contact_point(p, x, y, vx, vy, qx, qy, &fx, &fy, a)) {
        a->body_fx -= fx;
        a->body_fy -= fy;
    }
}

/* One candidate segment, number `index` of the body, for the disc at (x, y): its closest point kept where
 * it is the nearest of its component so far and within a radius. Returns 1 when the table was full and
 * the point (in *qx, *qy) must be applied on its own (a disc among more components than it holds). */
AD_HD static inline int ad_seg_touch(const ad_params *p, const ad_seg *sp, uint32_t index, float x, float y,
                                     ad_seg_touches *t, float *qx_out, float *qy_out)
{
    ad_seg s = *sp;
    float qx, qy, u;
    ad_closest_on_segment(x, y, s.x0, s.y0, s.ex, s.ey, s.inv_len2, &qx, &qy, &u);
    float dx = x - qx, dy = y - qy, d2 = dx * dx + dy * dy;
    if (d2 >= p->radius * p->radius || d2 <= 0.0f) return 0;
    uint32_t comp = s.flags >> AD_SEG_COMP_SHIFT;
    for (int k = 0; k < t->n; k++)
        if (t->comp[k] == comp) {
            if (d2 < t->d2[k]) {
                t->d2[k] = d2;
                t->qx[k] = qx;
                t->qy[k] = qy;
                t->seg[k] = index;
            }
            return 0;
        }
    if (t->n == AD_SEG_TOUCH_MAX) {
        *qx_out = qx;
        *qy_out = qy;
        return 1;
    }
    t->comp[t->n] = comp;
    t->seg[t->n] = index;
    t->d2[t->n] = d2;
    t->qx[t->n] = qx;
    t->qy[t->n] = qy;
    t->n++;
    return 0;
}

/* A candidate segment of a disc's gather: the table's, or its own contact where the table is full. */
AD_HD static inline void ad_seg_touch_contact(const ad_params *p, const ad_seg *sp, uint32_t index, float x, float y,
                                              float vx, float vy, ad_seg_touches *t, ad_accum *a)
{
    float qx, qy;
    if (ad_seg_touch(p, sp, index, x, y, t, &qx, &qy)) ad_contact_body_point(p, x, y, vx, vy, qx, qy, a);
}

/* The contacts of the table: one a component. */
AD_HD static inline void ad_seg_touches_apply(const ad_params *p, const ad_seg_touches *t, float x, float y, float vx,
                                              float vy, ad_accum *a)
{
    for (int k = 0; k < t->n; k++) ad_contact_body_point(p, x, y, vx, vy, t->qx[k], t->qy[k], a);
}

/* Gathers the contacts of one disc with the segments near it. */
AD_HD static inline void ad_contact_segments(const ad_params *p, const ad_seg_grid *g, float x, float y, float vx,
                                             float vy, ad_accum *a)
{
    if (g->count == 0 || !(x >= g->box_x0 && x <= g->box_x1 && y >= g->box_y0 && y <= g->box_y1)) return;
    int cx = ad_cell_coord(x, g->origin_x, g->inv_cell_x, g->nx);
    int cy = ad_cell_coord(y, g->origin_y, g->inv_cell_y, g->ny);
    uint32_t c = (uint32_t)cy * (uint32_t)g->nx + (uint32_t)cx;
    ad_seg_touches t;
    t.n = 0;
    for (uint32_t k = g->start[c]; k < g->start[c + 1]; k++)
        ad_seg_touch_contact(p, &g->segs[g->index[k]], g->index[k], x, y, vx, vy, &t, a);
    ad_seg_touches_apply(p, &t, x, y, vx, vy, a);
}

#endif
