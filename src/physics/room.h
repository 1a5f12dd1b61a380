/* Whether a spot has room for a new disc (an entering disc at an open side, a disc the reservoir adds):
 * no centre of the gas and none of the step's earlier new spots within a diameter. Shared by both backends.
 *
 * The gas is searched as it is after the step's pass, through the broad phase the pass used: the
 * grid's `start` (slots in its cell order, positions moved by at most max_move radii since binning,
 * so cells within 1.5 diameters are searched) or the BVH's disc tree (query boxes grown the same).
 * Removed discs (open.h) have NaN positions and never block. The new spots of a step are listed in a
 * fixed order; spot k is compared with the spots before it whether or not they were placed, so that
 * each spot is judged on its own (in parallel, in any order) and the outcome is the same everywhere. */
/* Two dimensions: spots are bucketed on a 2D grid and judged against the gas in the 2D block of cells
 * within 1.5 diameters; 3D adds the third axis to both. */
#ifndef AD_PHYSICS_ROOM_H
#define AD_PHYSICS_ROOM_H

#include "bvh.h"
#include "grid.h"
#include "state.h"

/* Spots judged for room in one step, at most, on every backend: entries past it wait; the reservoir's
 * additions past it are left to the next step, whose boxes ask again. */
#define AD_ROOM_MAX 8192

AD_HD static inline int ad_room_wrap_cell(int c, int n, int periodic)
{
    if (c >= 0 && c < n) return c;
    if (!periodic) return -1;
    c %= n;
    return c < 0 ? c + n : c;
}

/* 1 when disc j is closer to (x, y) than a diameter. */
AD_HD static inline int ad_room_near(const ad_params *p, ad_state o, float x, float y)
{
    float ex = ad_min_image(o.x - x, p->periodic_x, p->len_x, p->half_x);
    float ey = ad_min_image(o.y - y, p->periodic_y, p->len_y, p->half_y);
    return ex * ex + ey * ey < p->diameter_sq; /* NaN (a removed disc): not near */
}

/* 1 when no disc of the gas is within a diameter of (x, y), through the grid. */
AD_HD static inline int ad_room_in_grid(const ad_params *p, const uint32_t *start, const ad_state *s, float x, float y)
{
    int rx = (int)(1.5f * p->diameter * p->inv_cell_x) + 1, ry = (int)(1.5f * p->diameter * p->inv_cell_y) + 1;
    if (2 * rx + 1 > p->nx) rx = p->nx / 2; /* every column once, also on a wrapped axis */
    if (2 * ry + 1 > p->ny) ry = p->ny / 2;
    int cx = ad_cell_coord(x, p->origin_x, p->inv_cell_x, p->nx);
    int cy = ad_cell_coord(y, p->origin_y, p->inv_cell_y, p->ny);
    for (int dy = -ry; dy <= ry; dy++) {
        int row = ad_room_wrap_cell(cy + dy, p->ny, p->periodic_y);
        if (row < 0) continue;
        for (int dx = -rx; dx <= rx; dx++) {
            int col = ad_room_wrap_cell(cx + dx, p->nx, p->periodic_x);
            if (col < 0) continue;
            uint32_t c = (uint32_t)row * (uint32_t)p->nx + (uint32_t)col;
            for (uint32_t j = start[c]; j < start[c + 1]; j++)
                if (ad_room_near(p, s[j], x, y)) return 0;
        }
    }
    return 1;
}

/* The same through a BVH world's disc tree (leaf i is slot i). */
AD_HD static inline int ad_room_in_tree(const ad_params *p, const ad_bvh *t, const ad_state *s, float x, float y)
{
    if (t->n == 0) return 1;
    uint32_t stack[AD_BVH_STACK];
    float h = 1.5f * p->diameter, sx[2], sy[2];
    ad_bvh_box b = {x - h, y - h, x + h, y + h};
    int nx = ad_bvh_shifts(b.x0, b.x1, p->periodic_x, p->x_min, p->x_max, p->len_x, sx);
    int ny = ad_bvh_shifts(b.y0, b.y1, p->periodic_y, p->y_min, p->y_max, p->len_y, sy);
    for (int a = 0; a < ny; a++)
        for (int c = 0; c < nx; c++) {
            ad_bvh_box q = {b.x0 + sx[c], b.y0 + sy[a], b.x1 + sx[c], b.y1 + sy[a]};
            ad_bvh_walk w;
            ad_bvh_walk_begin(t, &w, q, 0, stack, 1);
            for (uint32_t j = ad_bvh_walk_next(t, &w); j != AD_BVH_NONE; j = ad_bvh_walk_next(t, &w))
                if (ad_room_near(p, s[j], x, y)) return 0;
        }
    return 1;
}

/* ------------------------------------------------------------ the step's spots -- */

/* The step's new spots, listed in buckets by a cell at least a diameter wide, so that a spot meets
 * only the earlier spots near it rather than all of them (thousands a step in a large tunnel). The
 * test is the same: no earlier spot within a diameter; the buckets only choose what is compared
 * (two spots within a diameter lie in neighbouring cells, a periodic axis's cells wrapping), and a
 * bucket shared by far cells costs comparisons, never a result. ad_room_for_plain is the reference. */
#define AD_SPOT_BUCKETS 4096u /* a power of two */
#define AD_SPOT_NONE 0xFFFFFFFFu

/* A spot's cell along one axis [lo, lo + len): cells a little more than a diameter wide (rounding can
 * then never put two spots within a diameter two cells apart), or on a periodic axis the
 * len / floor(len / that) that divide it (n cells, n >= 1; otherwise n = 0: no wrap). */
AD_HD static inline int ad_spot_axis_cell(float v, float lo, float len, int periodic, float diameter, int *n)
{
    float d = diameter * 1.0001f;
    if (periodic) {
        int m = (int)(len / d);
        if (m < 1) m = 1;
        *n = m;
        int c = (int)floorf((v - lo) * ((float)m / len));
        c %= m;
        return c < 0 ? c + m : c;
    }
    *n = 0;
    float c = floorf((v - lo) / d);
    c = c < -1e9f ? -1e9f : c > 1e9f ? 1e9f : c; /* NaN never gets here: spots are finite */
    return (int)c;
}

AD_HD static inline uint32_t ad_spot_bucket(int cx, int cy)
{
    return ((uint32_t)cx * 73856093u ^ (uint32_t)cy * 19349663u) & (AD_SPOT_BUCKETS - 1u);
}

/* The bucket of spot q. */
AD_HD static inline uint32_t ad_spot_bucket_of(const ad_params *p, ad_state q)
{
    int nx, ny;
    int cx = ad_spot_axis_cell(q.x, p->x_min, p->len_x, p->periodic_x, p->diameter, &nx);
    int cy = ad_spot_axis_cell(q.y, p->y_min, p->len_y, p->periodic_y, p->diameter, &ny);
    return ad_spot_bucket(cx, cy);
}

/* 1 when none of spots[0..k) lies within a diameter of spot k, through the buckets: head[bucket] the
 * first spot of a bucket, next[j] the one after spot j (AD_SPOT_NONE ends a list). The lists may hold
 * spots after k: they are skipped. */
AD_HD static inline int ad_room_among_spots(const ad_params *p, const uint32_t *head, const uint32_t *next,
                                            const ad_state *spots, uint32_t k)
{
    float x = spots[k].x, y = spots[k].y;
    int nx, ny;
    int cx = ad_spot_axis_cell(x, p->x_min, p->len_x, p->periodic_x, p->diameter, &nx);
    int cy = ad_spot_axis_cell(y, p->y_min, p->len_y, p->periodic_y, p->diameter, &ny);
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int a = cx + dx, b = cy + dy;
            if (nx) a = a < 0 ? a + nx : a >= nx ? a - nx : a;
            if (ny) b = b < 0 ? b + ny : b >= ny ? b - ny : b;
            for (uint32_t j = head[ad_spot_bucket(a, b)]; j != AD_SPOT_NONE; j = next[j])
                if (j < k && ad_room_near(p, spots[j], x, y)) return 0;
        }
    return 1;
}

/* The gas's part of the test: through the tree (a BVH world) or the grid (tree NULL). */
AD_HD static inline int ad_room_in_gas(const ad_params *p, const uint32_t *start, const ad_bvh *tree,
                                       const ad_state *s, float x, float y)
{
    return tree ? ad_room_in_tree(p, tree, s, x, y) : ad_room_in_grid(p, start, s, x, y);
}

/* 1 when spot k of the step's list has room: none of the earlier spots (through the buckets) and none
 * of the gas within a diameter. */
AD_HD static inline int ad_room_for(const ad_params *p, const uint32_t *start, const ad_bvh *tree, const ad_state *s,
                                    const uint32_t *head, const uint32_t *next, const ad_state *spots, uint32_t k)
{
    return ad_room_among_spots(p, head, next, spots, k) && ad_room_in_gas(p, start, tree, s, spots[k].x, spots[k].y);
}

/* The reference: every earlier spot compared. */
AD_HD static inline int ad_room_for_plain(const ad_params *p, const uint32_t *start, const ad_bvh *tree,
                                          const ad_state *s, const ad_state *spots, uint32_t k)
{
    float x = spots[k].x, y = spots[k].y;
    for (uint32_t j = 0; j < k; j++)
        if (ad_room_near(p, spots[j], x, y)) return 0;
    return ad_room_in_gas(p, start, tree, s, x, y);
}

#endif
