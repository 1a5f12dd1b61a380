/* Whether a spot has room for a new disc (an entering disc at an open side, a disc the reservoir adds):
 * no centre of the gas and none of the step's earlier new spots within a diameter. Shared by both backends.
 *
 * The gas is searched as it is after the step's pass, through the broad phase the pass used: the
 * grid's `start` (slots in its cell order, positions moved by at most max_move radii since binning,
 * so cells within 1.5 diameters are searched) or the BVH's disc tree (query boxes grown the same).
 * Removed discs (open.h) have NaN positions and never block. The new spots of a step are listed in a
 * fixed order; spot k is compared with the spots before it whether or not they were placed, so that
 * each spot is judged on its own (in parallel, in any order) and the outcome is the same everywhere. */
#ifndef AD_PHYSICS_ROOM_H
#define AD_PHYSICS_ROOM_H

#include "bvh.h"
#include "grid.h"
#include "state.h"

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

/* 1 when spot k of the step's list (spots[0..k)) has room: none of the gas and none of the earlier spots
 * within a diameter. `tree` NULL: through the grid. */
AD_HD static inline int ad_room_for(const ad_params *p, const uint32_t *start, const ad_bvh *tree, const ad_state *s,
                                    const ad_state *spots, uint32_t k)
{
    float x = spots[k].x, y = spots[k].y;
    for (uint32_t j = 0; j < k; j++)
        if (ad_room_near(p, spots[j], x, y)) return 0;
    return tree ? ad_room_in_tree(p, tree, s, x, y) : ad_room_in_grid(p, start, s, x, y);
}

#endif
