/* The body's segments: their connected components (one contact per touch, segment.h), the coarse segment
 * grid and the segment tree that the backends' gathers walk, and ad_world_add_segments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../physics/bvh.h"
#include "world_internal.h"
#include "components.h"
#include "free_each.h"

/* The connected outlines (segment.h): segments that share an end point (equal floats) are one
 * component (components.c), numbered in the order of their first segment; a segment both of whose
 * ends are shared is part of a closed outline. */
static ad_status label_components(ad_segments *s)
{
    size_t n = s->count;
    float *pts = malloc((4 * n + 1) * sizeof *pts);
    uint32_t *comp = malloc((n + 1) * sizeof *comp);
    unsigned char *shared = malloc(2 * n + 1);
    ad_status st = ad_ok();
    if (!pts || !comp || !shared) st = ad_fail(AD_ERR_NO_MEMORY, "", "out of memory ordering segment vertices");
    for (size_t i = 0; i < n && !st.code; i++) {
        pts[4 * i] = s->raw[i].x0;
        pts[4 * i + 1] = s->raw[i].y0;
        pts[4 * i + 2] = s->raw[i].x1;
        pts[4 * i + 3] = s->raw[i].y1;
    }
    if (!st.code) st = ad_label_components(pts, 2, 2, n, comp, shared);
    for (size_t i = 0; i < n && !st.code; i++) {
        s->segs[i].flags = comp[i] << AD_SEG_COMP_SHIFT;
        if (shared[2 * i] && shared[2 * i + 1]) s->segs[i].flags |= AD_SEG_CLOSED;
    }
    AD_FREE_EACH(pts, comp, shared);
    return st;
}

/* Coarse grid of segments: cells of 4 contact grid cells, at most 2^20 cells. */
static ad_status build_segment_grid(ad_world *w)
{
    ad_segments *s = &w->seg;
    const ad_params *p = &w->params;
    double cw = 4.0 * p->cell_x, ch = 4.0 * p->cell_y;
    double nx = ceil(p->len_x / cw), ny = ceil(p->len_y / ch);
    while (nx * ny > 1048576.0) {
        cw *= 2.0;
        ch *= 2.0;
        nx = ceil(p->len_x / cw);
        ny = ceil(p->len_y / ch);
    }
    if (nx < 1) nx = 1;
    if (ny < 1) ny = 1;
    ad_seg_grid *g = &s->grid;
    g->origin_x = p->x_min;
    g->origin_y = p->y_min;
    g->inv_cell_x = (float)(1.0 / cw);
    g->inv_cell_y = (float)(1.0 / ch);
    g->nx = (int)nx;
    g->ny = (int)ny;
    size_t ncell = (size_t)nx * (size_t)ny;
    uint32_t *start = calloc(ncell + 1, sizeof *start);
    if (!start) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory building the segment grid");
    /* two passes over the cells each segment's grown box covers: count, then fill */
    uint32_t *index = NULL;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < s->count; i++) {
            const ad_segment *r = &s->raw[i];
            float rad = p->radius * 1.001f;
            int x0 = ad_cell_coord(fminf(r->x0, r->x1) - rad, g->origin_x, g->inv_cell_x, g->nx);
            int x1 = ad_cell_coord(fmaxf(r->x0, r->x1) + rad, g->origin_x, g->inv_cell_x, g->nx);
            int y0 = ad_cell_coord(fminf(r->y0, r->y1) - rad, g->origin_y, g->inv_cell_y, g->ny);
            int y1 = ad_cell_coord(fmaxf(r->y0, r->y1) + rad, g->origin_y, g->inv_cell_y, g->ny);
            for (int cy = y0; cy <= y1; cy++)
                for (int cx = x0; cx <= x1; cx++) {
                    size_t c = (size_t)cy * (size_t)g->nx + (size_t)cx;
                    if (pass == 0) start[c + 1]++;
                    else index[start[c]++] = (uint32_t)i;
                }
        }
        if (pass == 0) {
            for (size_t c = 0; c < ncell; c++) start[c + 1] += start[c];
            index = malloc((start[ncell] ? start[ncell] : 1) * sizeof *index);
            if (!index) {
                free(start);
                return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory building the segment grid");
            }
        }
    }
    /* the fill pass advanced start[c] to the end of cell c: shift back */
    for (size_t c = ncell; c > 0; c--) start[c] = start[c - 1];
    start[0] = 0;
    free(s->start);
    free(s->index);
    s->start = start;
    s->index = index;
    g->count = (uint32_t)s->count;
    g->box_x0 = g->box_y0 = INFINITY;
    g->box_x1 = g->box_y1 = -INFINITY;
    for (size_t i = 0; i < s->count; i++) {
        const ad_segment *r = &s->raw[i];
        g->box_x0 = fminf(g->box_x0, fminf(r->x0, r->x1) - p->radius * 1.001f);
        g->box_x1 = fmaxf(g->box_x1, fmaxf(r->x0, r->x1) + p->radius * 1.001f);
        g->box_y0 = fminf(g->box_y0, fminf(r->y0, r->y1) - p->radius * 1.001f);
        g->box_y1 = fmaxf(g->box_y1, fmaxf(r->y0, r->y1) + p->radius * 1.001f);
    }
    g->start = start;
    g->index = index;
    g->segs = s->segs;
    return ad_ok();
}

/* The BVH broad phase's tree over the segments (src/physics/bvh.h, core/leaf_tree.h: Morton keys of
 * the segments' centres sorted stably, Karras's nodes, boxes bottom-up), built on one thread (a body
 * has a few thousand segments) and rebuilt when segments change; both backends read it. */
static ad_status build_segment_tree(ad_world *w)
{
    ad_segments *s = &w->seg;
    const ad_params *p = &w->params;
    ad_leaf_tree_free(&s->tree_nodes);
    memset(&s->tree, 0, sizeof s->tree);
    if (w->def.broad_phase != AD_BROAD_PHASE_BVH || s->count == 0) return ad_ok();
    size_t n = s->count;
    uint32_t *code = malloc(n * sizeof *code);
    ad_bvh_box *box = malloc(n * sizeof *box);
    ad_status st = ad_ok();
    if (!code || !box) st = ad_fail(AD_ERR_NO_MEMORY, "", "out of memory building the segment tree");
    float rad = p->radius * 1.001f; /* the segment grid's margin */
    for (size_t i = 0; i < n && !st.code; i++) {
        const ad_segment *r = &s->raw[i];
        ad_state centre = {0.5f * (r->x0 + r->x1), 0.5f * (r->y0 + r->y1), 0.0f, 0.0f};
        code[i] = ad_bvh_key(p, centre);
        box[i] = (ad_bvh_box){fminf(r->x0, r->x1) - rad, fminf(r->y0, r->y1) - rad, fmaxf(r->x0, r->x1) + rad,
                              fmaxf(r->y0, r->y1) + rad};
    }
    if (!st.code) st = ad_leaf_tree_build(&s->tree_nodes, code, box, n);
    AD_FREE_EACH(code, box);
    if (st.code) return st;
    s->tree.t = s->tree_nodes.t;
    s->tree.item = s->tree_nodes.item;
    s->tree.segs = s->segs;
    return ad_ok();
}

ad_status ad_world_add_segments(ad_world *w, const ad_segment *seg, size_t n)
{
    if (!w) return ad_fail(AD_ERR_INVALID, "w", "world is NULL");
    if (w && w->params.dims == 3)
        return ad_fail(AD_ERR_INVALID, "dimensions", "segments are the body of a 2D world: a 3D world's body is "
                       "triangles (ad_world_add_triangles)");
    if (n == 0) return ad_ok();
    if (!seg) return ad_fail(AD_ERR_INVALID, "segments", "segment array is NULL");
    for (size_t i = 0; i < n; i++) {
        const ad_segment *r = &seg[i];
        if (!isfinite(r->x0) || !isfinite(r->y0) || !isfinite(r->x1) || !isfinite(r->y1))
            return ad_fail(AD_ERR_INVALID, "segments", "segment %zu has a non-finite end point", i);
        if (r->x0 == r->x1 && r->y0 == r->y1)
            return ad_fail(AD_ERR_INVALID, "segments", "segment %zu has zero length (both ends at %g, %g)", i, r->x0,
                           r->y0);
    }
    ad_segments *s = &w->seg;
    if (s->count + n > ((size_t)1 << 24))
        return ad_fail(AD_ERR_CAPACITY, "segments", "too many segments (%zu): at most 2^24 are supported",
                       s->count + n);
    if (s->count + n > s->cap) {
        size_t cap = (s->count + n) * 2;
        ad_seg *a = realloc(s->segs, cap * sizeof *a);
        if (a) s->segs = a;
        ad_segment *b = realloc(s->raw, cap * sizeof *b);
        if (b) s->raw = b;
        if (!a || !b) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory adding %zu segments", n);
        s->cap = cap;
    }
    AD_TRY(ad_panels_resize(&w->panels, s->count + n));
    for (size_t i = 0; i < n; i++) {
        const ad_segment *r = &seg[i];
        ad_seg *k = &s->segs[s->count + i];
        s->raw[s->count + i] = *r;
        k->x0 = r->x0;
        k->y0 = r->y0;
        k->ex = r->x1 - r->x0;
        k->ey = r->y1 - r->y0;
        k->inv_len2 = 1.0f / (k->ex * k->ex + k->ey * k->ey);
    }
    s->count += n;
    AD_TRY(label_components(s));
    AD_TRY(build_segment_grid(w));
    AD_TRY(build_segment_tree(w));
    return w->ops->set_segments(w);
}
