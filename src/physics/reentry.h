/* Where a disc that re-enters through the inlet comes back: a fresh height, drawn uniformly
 * over the inlet and checked for room. Shared by both backends.
 *
 * Why. The tunnel keeps its number of discs: a disc past the outlet comes back through the
 * inlet. Coming back at the height where it left (a plain wrap) copies the outflow's
 * profile into the inflow: the body's wake (a density deficit behind a wedge's base, for one)
 * re-enters at its own height and the body sits in its own wake. A free stream is uniform, so
 * the re-entry height is drawn uniformly instead.
 *
 * Room. Dropping a disc at a random point of a gas overlaps a neighbour with probability of
 * order n pi d^2 (0.2 at area fraction 0.05), and an overlap of a fraction of a diameter
 * stores far more elastic energy than kT. So candidate t = 0 .. AD_REENTRY_TRIES-1 of a
 * re-entrant is taken only when no disc of the gas lies within one diameter of it, and no
 * other re-entrant of the same step could be there: none of their current positions, and
 * none of the candidates of the re-entrants with a smaller id. When no candidate has room,
 * the disc keeps its place (rare: if a third of the candidates have room, a rough guess for
 * area fraction 0.3, all 16 fail once in about 10^3 re-entries). The rule depends only on ids, positions and
 * the counter-based random numbers (seed, step, id, t), not on the order in which the
 * re-entrants are listed or processed: the CPU and the GPU agree, for any thread count.
 *
 * Room is judged with the contacts as they act: across the inlet/outlet as if periodic (the
 * outlet's gas stands in for the free stream's collisional pressure at the inlet). But where
 * the outlet's gas is thin, behind a body, a candidate would find room more often, and the
 * inflow would be denser there (+20 % behind a circle blocking a third of a dilute periodic
 * channel). So a disc across the seam does not reject a candidate: it pushes the spot into
 * the tunnel until it is a diameter away (at most one diameter), and room is judged where
 * the spot lands. That leaves +4 % in the same channel (tests/test_tunnel.c) and makes the
 * first 8 m of an empty tunnel's inflow 2.4 % fast and 2.6 % thin at area fraction 0.2.
 *
 * When. At the end of the pass that completes a step (symplectic and forward Euler, velocity
 * Verlet's kick, whose drift leaves the crossings to it, RK4's last stage), on the grid or
 * tree that pass used: slots are in its order, and positions moved by at most max_move
 * radii since binning, which the search reach covers. More than AD_REENTRY_MAX re-entrants
 * in one step all keep their heights (the pairwise rule is quadratic in their number). */
#ifndef AD_PHYSICS_REENTRY_H
#define AD_PHYSICS_REENTRY_H

#include "bvh.h"
#include "grid.h"
#include "rng.h"
#include "state.h"

#define AD_REENTRY_TRIES 16
#define AD_REENTRY_MAX 1024

/* Candidate height t of disc `id` re-entering at `step`: uniform over the heights a centre can
 * take (one radius off solid walls). */
AD_HD static inline float ad_reentry_candidate(const ad_params *p, uint32_t id, uint64_t step, int t)
{
    uint64_t seed = (p->seed ^ 0x2545F4914F6CDD1Dull) + step * 0x9E3779B97F4A7C15ull;
    double u = ad_rng_uniform(seed, (uint64_t)id * AD_REENTRY_TRIES + (uint64_t)t); /* (0, 1] */
    if (p->periodic_y) {
        float y = p->y_min + (float)(u * (double)(p->y_max - p->y_min));
        return y < p->y_max ? y : p->y_min;
    }
    double lo = (double)p->y_min + p->radius, span = (double)(p->y_max - p->y_min) - 2.0 * p->radius;
    return (float)(lo + u * (span > 0.0 ? span : 0.0));
}

AD_HD static inline int ad_reentry_listed(const uint32_t *list, uint32_t count, uint32_t slot)
{
    for (uint32_t k = 0; k < count; k++)
        if (list[k] == slot) return 1;
    return 0;
}

AD_HD static inline int ad_reentry_wrap_cell(int c, int n, int periodic)
{
    if (c >= 0 && c < n) return c;
    if (!periodic) return -1;
    c %= n;
    return c < 0 ? c + n : c;
}

/* The neighbours of a spot (x, y): `room` receives the squared distance to the nearest disc
 * centre other than the listed re-entrants, capped at a diameter squared (= room enough), and
 * `push` the smallest x at which no disc upstream of it (its image across the inlet/outlet
 * seam, or a disc beside the inlet) is within a diameter. */
AD_HD static inline void ad_reentry_near(const ad_params *p, const ad_state *s, uint32_t j, const uint32_t *list,
                                         uint32_t count, float x, float y, float *room, float *push)
{
    ad_state o = s[j];
    float ex = ad_min_image(o.x - x, p->periodic_x, p->len_x, p->half_x);
    float ey = ad_min_image(o.y - y, p->periodic_y, p->len_y, p->half_y);
    float d2 = ex * ex + ey * ey;
    /* distance first: the list is searched only for the few discs that are near */
    if (d2 >= p->diameter_sq || ad_reentry_listed(list, count, j)) return;
    if (d2 < *room) *room = d2;
    if (ex <= 0.0f) {
        float need = x + ex + sqrtf(p->diameter_sq - ey * ey) * 1.0001f;
        if (need > *push) *push = need;
    }
}

/* Through the grid: `s` is in the cell order of `start`; discs moved since binning by at
 * most half a diameter, so cells within 1.5 diameters are searched. */
AD_HD static inline void ad_reentry_gas(const ad_params *p, const uint32_t *start, const ad_state *s,
                                        const uint32_t *list, uint32_t count, float x, float y, float *room,
                                        float *push)
{
    *room = p->diameter_sq;
    *push = x;
    int rx = (int)(1.5f * p->diameter * p->inv_cell_x) + 1, ry = (int)(1.5f * p->diameter * p->inv_cell_y) + 1;
    if (2 * rx + 1 > p->nx) rx = p->nx / 2; /* every column once, also on a wrapped axis */
    if (2 * ry + 1 > p->ny) ry = p->ny / 2;
    int cx = ad_cell_coord(x, p->origin_x, p->inv_cell_x, p->nx);
    int cy = ad_cell_coord(y, p->origin_y, p->inv_cell_y, p->ny);
    for (int dy = -ry; dy <= ry; dy++) {
        int row = ad_reentry_wrap_cell(cy + dy, p->ny, p->periodic_y);
        if (row < 0) continue;
        for (int dx = -rx; dx <= rx; dx++) {
            int col = ad_reentry_wrap_cell(cx + dx, p->nx, p->periodic_x);
            if (col < 0) continue;
            uint32_t c = (uint32_t)row * (uint32_t)p->nx + (uint32_t)col;
            for (uint32_t j = start[c]; j < start[c + 1]; j++) ad_reentry_near(p, s, j, list, count, x, y, room, push);
        }
    }
}

/* The same through a BVH world's disc tree (leaf i is slot i; boxes of the tree's state). */
AD_HD static inline void ad_reentry_tree(const ad_params *p, const ad_bvh *t, const ad_state *s,
                                         const uint32_t *list, uint32_t count, float x, float y, float *room,
                                         float *push)
{
    *room = p->diameter_sq;
    *push = x;
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
                ad_reentry_near(p, s, j, list, count, x, y, room, push);
        }
}

typedef struct ad_reentry_spot {
    float x, y;
} ad_reentry_spot;

/* 1 when no other re-entrant of the step could be at (x, y): not where it is now, and not at
 * any candidate of one with a smaller id. */
AD_HD static inline int ad_reentry_clear_of_others(const ad_params *p, const ad_state *s, const uint32_t *ids,
                                                   const uint32_t *list, uint32_t count, uint32_t k, uint64_t step,
                                                   float x, float y)
{
    uint32_t id = ids[list[k]];
    for (uint32_t j = 0; j < count; j++) {
        if (j == k) continue;
        ad_state o = s[list[j]];
        float ex = ad_min_image(o.x - x, p->periodic_x, p->len_x, p->half_x);
        float ey = ad_min_image(o.y - y, p->periodic_y, p->len_y, p->half_y);
        if (ex * ex + ey * ey < p->diameter_sq) return 0; /* it may stay where it is */
        uint32_t oid = ids[list[j]];
        if (oid >= id) continue;
        /* or take any of its candidates, pushed in by up to a diameter */
        if (ex > p->diameter || ex < -2.0f * p->diameter) continue;
        for (int u = 0; u < AD_REENTRY_TRIES; u++) {
            ey = ad_min_image(ad_reentry_candidate(p, oid, step, u) - y, p->periodic_y, p->len_y, p->half_y);
            if (ey * ey < p->diameter_sq) return 0;
        }
    }
    return 1;
}

/* Where re-entrant k of the list goes (see the rule above). The gas is searched through the
 * disc tree when `tree` is given, else through the grid's `start`. */
AD_HD static inline ad_reentry_spot ad_reentry_place(const ad_params *p, const uint32_t *start, const ad_bvh *tree,
                                                     const ad_state *s, const uint32_t *ids, const uint32_t *list,
                                                     uint32_t count, uint32_t k, uint64_t step)
{
    ad_state me = s[list[k]];
    ad_reentry_spot keep = {me.x, me.y};
    if (count > AD_REENTRY_MAX) return keep;
    for (int t = 0; t < AD_REENTRY_TRIES; t++) {
        float y = ad_reentry_candidate(p, ids[list[k]], step, t), x = me.x, room, push;
        /* a disc upstream of the spot (across the seam) pushes it in; the room is then judged
         * where it lands. Room alone would favour the heights where the outlet's gas is thin */
        for (int again = 0; again < 2; again++) {
            if (tree) ad_reentry_tree(p, tree, s, list, count, x, y, &room, &push);
            else ad_reentry_gas(p, start, s, list, count, x, y, &room, &push);
            if (push <= x || push > me.x + p->diameter) break;
            x = push;
        }
        if (room < p->diameter_sq || !(x <= me.x + p->diameter)) continue;
        if (ad_reentry_clear_of_others(p, s, ids, list, count, k, step, x, y)) {
            ad_reentry_spot at = {x, y};
            return at;
        }
    }
    return keep;
}

#endif
