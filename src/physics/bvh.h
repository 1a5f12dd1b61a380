/* Morton-code BVH broad phase (Karras 2012), once for both backends: keys, node build, box merge, traversal.
 *
 * Keys. A disc's key is the 64-bit value (morton << 32) | slot, where `morton`
 * interleaves 16-bit quantised x and y (x in the even bits) over the domain box,
 * clamped by ad_cell_coord like the grid, and `slot` is the disc's place after a
 * stable sort by `morton`. Only the 32-bit Morton code is stored and sorted (a
 * stable sort of (morton, slot) pairs is a sort of the 64-bit keys); the slot part
 * enters where keys are compared (ad_bvh_delta), so every key is unique even when
 * discs share a quantum (65536 per axis: a quarter diameter on a 10^8-disc tunnel).
 *
 * Tree. n leaves (the sorted discs) and n - 1 internal nodes. Internal node k
 * covers a contiguous range of leaves with k at one end (Karras): its children
 * come from a binary search for the split of that range, one thread per node and
 * no communication. A child is AD_BVH_LEAF | leaf or the index of an internal
 * node, so leaves are limited to 2^31 - 1. The rightmost leaf of node k is the top
 * of its range (stored: the reflexive walk prunes by it).
 *
 * Depth. Prefix lengths grow strictly from parent to child and a 64-bit key has
 * 64 of them, so a path holds at most 64 internal nodes; the walk keeps one
 * postponed sibling per internal node of its path: AD_BVH_STACK = 64 suffices.
 *
 * Boxes. A leaf's box is its disc centre (or, in a segment tree, the segment's box
 * grown by a radius); an internal box is the union of its children's, filled
 * bottom-up: each leaf climbs, and at every parent the first of the two children
 * to arrive stops (an atomic flag per node) while the second merges both boxes.
 * The backends own the atomics and the fence that makes the first child's box
 * visible to the second (ad_bvh_merge reads it through a volatile pointer).
 */
/* Dimensions. The boxes, the tree, the bottom-up boxes and the walk are written once for both
 * (bvh_dim.h: ad_bvh_box, ad_bvh, ad_bvh_walk_next in 2D; ad_bvh_box3, ad_bvh3, ad_bvh_walk_next3
 * in 3D); the node build reads only codes and is shared as it is. 2D codes interleave 16-bit x and y
 * into 32 bits; 3D codes (the body's triangle tree, gather3.h) interleave three 10-bit coordinates
 * into 30 bits, so the same 32-bit codes, the same 64-bit keys and the same depth bound serve. */
#ifndef AD_PHYSICS_BVH_H
#define AD_PHYSICS_BVH_H

#include "contact.h"
#include "grid.h"
#include "panel.h"
#include "segment.h"
#include "state.h"

#define AD_BVH_LEAF 0x80000000u
#define AD_BVH_NONE 0xffffffffu
#define AD_BVH_STACK 64
#define AD_BVH_MAX_LEAVES 0x7fffffffu
#define AD_MORTON_CELLS 65536

/* ------------------------------------------------------------------ keys -- */

/* Spreads the low 16 bits of v to the even bits. */
AD_HD static inline uint32_t ad_morton_spread(uint32_t v)
{
    v &= 0xffffu;
    v = (v | (v << 8)) & 0x00ff00ffu;
    v = (v | (v << 4)) & 0x0f0f0f0fu;
    v = (v | (v << 2)) & 0x33333333u;
    v = (v | (v << 1)) & 0x55555555u;
    return v;
}

/* Morton code of a point, quantised over the domain box; a point outside (a disc
 * pressed into a wall, a NaN) is clamped to the border, as the grid does. */
AD_HD static inline uint32_t ad_morton_code(const ad_params *p, float x, float y)
{
    int qx = ad_cell_coord(x, p->x_min, (float)AD_MORTON_CELLS / p->len_x, AD_MORTON_CELLS);
    int qy = ad_cell_coord(y, p->y_min, (float)AD_MORTON_CELLS / p->len_y, AD_MORTON_CELLS);
    return ad_morton_spread((uint32_t)qx) | (ad_morton_spread((uint32_t)qy) << 1);
}

/* The key a disc is sorted by: its Morton code, the top quantum's merged into its neighbour's, and a
 * removed disc (open.h) the largest, so that removed discs sort after every other. */
AD_HD static inline uint32_t ad_bvh_key(const ad_params *p, ad_state s)
{
    if (s.x != s.x) return 0xffffffffu;
    uint32_t k = ad_morton_code(p, s.x, s.y);
    return k < 0xffffffffu ? k : 0xfffffffeu;
}

/* Spreads the low 10 bits of v to every third bit (bits 0, 3, ..., 27). A plain loop: 3D codes are made
 * on the host, once a triangle, when the tree is built. */
AD_HD static inline uint32_t ad_morton_spread3(uint32_t v)
{
    uint32_t r = 0;
    for (int b = 0; b < 10; b++) r |= (v >> b & 1u) << (3 * b);
    return r;
}

#define AD_MORTON_CELLS3 1024

/* 30-bit Morton code of a 3D point quantised over a box: lo its low corner, inv[d] = AD_MORTON_CELLS3
 * over its extent along axis d (0 for a box flat along d); outside points are clamped, as in 2D. */
AD_HD static inline uint32_t ad_morton_code3(float x, float y, float z, const float lo[3], const float inv[3])
{
    uint32_t qx = (uint32_t)ad_cell_coord(x, lo[0], inv[0], AD_MORTON_CELLS3);
    uint32_t qy = (uint32_t)ad_cell_coord(y, lo[1], inv[1], AD_MORTON_CELLS3);
    uint32_t qz = (uint32_t)ad_cell_coord(z, lo[2], inv[2], AD_MORTON_CELLS3);
    return ad_morton_spread3(qx) | ad_morton_spread3(qy) << 1 | ad_morton_spread3(qz) << 2;
}

AD_HD static inline int ad_clz32(uint32_t x)
{
#if defined(__CUDA_ARCH__)
    return __clz((int)x);
#else
    return x ? __builtin_clz(x) : 32;
#endif
}

/* Common prefix length of the keys of leaves i and j (the 64-bit key: code, then
 * slot); -1 when j is outside [0, n). */
AD_HD static inline int ad_bvh_delta(const uint32_t *code, int64_t n, int64_t i, int64_t j)
{
    if (j < 0 || j >= n) return -1;
    uint32_t a = code[i], b = code[j];
    if (a != b) return ad_clz32(a ^ b);
    return 32 + ad_clz32((uint32_t)i ^ (uint32_t)j);
}

/* ----------------------------------------------------------------- build -- */

/* Internal node i of a tree over n >= 2 sorted codes: its children, its rightmost
 * leaf, and the parent of each child (parent[] is indexed by internal node k, then
 * by n - 1 + leaf). Writes only what node i owns: one thread per node, no races. */
AD_HD static inline void ad_bvh_build_node(const uint32_t *code, uint32_t n, uint32_t i, uint32_t *child,
                                           uint32_t *rightmost, uint32_t *parent)
{
    int64_t N = n, I = i;
    /* the direction of the range: towards the neighbour sharing the longer prefix */
    int d = ad_bvh_delta(code, N, I, I + 1) - ad_bvh_delta(code, N, I, I - 1) > 0 ? 1 : -1;
    int dmin = ad_bvh_delta(code, N, I, I - d);
    /* the other end: exponential search for a bound, then binary search */
    int64_t lmax = 2;
    while (ad_bvh_delta(code, N, I, I + lmax * d) > dmin) lmax *= 2;
    int64_t l = 0;
    for (int64_t t = lmax / 2; t >= 1; t /= 2)
        if (ad_bvh_delta(code, N, I, I + (l + t) * d) > dmin) l += t;
    int64_t j = I + l * d;
    /* the split: the last leaf sharing more than the range's common prefix with i */
    int dnode = ad_bvh_delta(code, N, I, j);
    int64_t s = 0, t = l;
    do {
        t = (t + 1) / 2;
        if (ad_bvh_delta(code, N, I, I + (s + t) * d) > dnode) s += t;
    } while (t > 1);
    int64_t gamma = I + s * d + (d < 0 ? -1 : 0);
    int64_t lo = I < j ? I : j, hi = I < j ? j : I;
    uint32_t left = lo == gamma ? AD_BVH_LEAF | (uint32_t)gamma : (uint32_t)gamma;
    uint32_t right = hi == gamma + 1 ? AD_BVH_LEAF | (uint32_t)(gamma + 1) : (uint32_t)(gamma + 1);
    child[2 * (size_t)i] = left;
    child[2 * (size_t)i + 1] = right;
    rightmost[i] = (uint32_t)hi;
    parent[left & AD_BVH_LEAF ? n - 1 + (left & ~AD_BVH_LEAF) : left] = i;
    parent[right & AD_BVH_LEAF ? n - 1 + (right & ~AD_BVH_LEAF) : right] = i;
}

#define AD_DIM 2
#include "bvh_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "bvh_dim.h"
#undef AD_DIM

/* --------------------------------------------------------- 2D queries -- */

/* The static segments as a tree: leaf i is segment item[i], its box grown by a radius. */
typedef struct ad_seg_tree {
    ad_bvh t;
    const uint32_t *item;
    const ad_seg *segs;
} ad_seg_tree;

/* The shifts of a query interval [a, b] along one axis: 0, and on a periodic axis
 * +len / -len when it reaches past a side (points lie in [lo, hi)). The search
 * distance is below half the axis (the grid's periodic check), so the shifted
 * intervals never overlap each other and no pair is found twice. */
AD_HD static inline int ad_bvh_shifts(float a, float b, int periodic, float lo, float hi, float len, float out[2])
{
    out[0] = 0.0f;
    if (!periodic) return 1;
    if (a < lo) {
        out[1] = len;
        return 2;
    }
    if (b >= hi) {
        out[1] = -len;
        return 2;
    }
    return 1;
}

/* The query boxes of a disc centred at (x, y): its square of half-edge p->search
 * and, across periodic sides, the square's images. Returns how many (1 to 4). */
AD_HD static inline int ad_bvh_disc_queries(const ad_params *p, float x, float y, ad_bvh_box q[4])
{
    float h = p->search, sx[2], sy[2];
    ad_bvh_box b = {x - h, y - h, x + h, y + h};
    int nx = ad_bvh_shifts(b.x0, b.x1, p->periodic_x, p->x_min, p->x_max, p->len_x, sx);
    int ny = ad_bvh_shifts(b.y0, b.y1, p->periodic_y, p->y_min, p->y_max, p->len_y, sy);
    int k = 0;
    for (int a = 0; a < ny; a++)
        for (int c = 0; c < nx; c++) {
            ad_bvh_box s = {b.x0 + sx[c], b.y0 + sy[a], b.x1 + sx[c], b.y1 + sy[a]};
            q[k++] = s;
        }
    return k;
}

/* Gather: disc i (leaf i, centred at `at` in the tree's state) sums its contacts
 * with every other disc near it, reading their current state from `s` (RK4 stages
 * differ from the tree's state; the search distance covers the skin). Each disc
 * writes only itself, in a fixed order (leaf order per image): no atomics, and
 * the same sums on both backends. */
AD_HD static inline void ad_bvh_gather_discs(const ad_params *p, const ad_bvh *t, const ad_state *s, uint32_t i,
                                             ad_state at, ad_state me, uint32_t *stack, uint32_t stride,
                                             ad_accum *a)
{
    ad_bvh_box q[4];
    int nq = ad_bvh_disc_queries(p, at.x, at.y, q);
    for (int k = 0; k < nq; k++) {
        ad_bvh_walk w;
        ad_bvh_walk_begin(t, &w, q[k], 0, stack, stride);
        for (uint32_t j = ad_bvh_walk_next(t, &w); j != AD_BVH_NONE; j = ad_bvh_walk_next(t, &w)) {
            if (j == i) continue;
            ad_state o = s[j];
            float dx = ad_min_image(o.x - me.x, p->periodic_x, p->len_x, p->half_x);
            float dy = ad_min_image(o.y - me.y, p->periodic_y, p->len_y, p->half_y);
            ad_contact_disc(p, dx, dy, o.vx - me.vx, o.vy - me.vy, a);
        }
    }
}

/* A disc against the segments whose grown boxes hold its centre. */
AD_HD static inline void ad_bvh_contact_segments(const ad_params *p, const ad_seg_tree *g, float x, float y,
                                                 float vx, float vy, uint32_t *stack, uint32_t stride, ad_accum *a)
{
    if (g->t.n == 0) return;
    ad_bvh_box q = {x, y, x, y};
    ad_bvh_walk w;
    ad_bvh_walk_begin(&g->t, &w, q, 0, stack, stride);
    ad_seg_touches t; /* one contact a connected outline (segment.h) */
    t.n = 0;
    for (uint32_t k = ad_bvh_walk_next(&g->t, &w); k != AD_BVH_NONE; k = ad_bvh_walk_next(&g->t, &w))
        ad_seg_touch_contact(p, &g->segs[g->item[k]], g->item[k], x, y, vx, vy, &t, a);
    ad_seg_touches_apply(p, &t, x, y, vx, vy, a);
}

/* A 2D disc's hits on the segments whose grown boxes hold its centre (panel.h's ad_seg_hits through the
 * segment tree of the BVH broad phase). */
AD_HD static inline void ad_bvh_seg_hits(const ad_params *p, const ad_seg_tree *g, float x, float y, float vx,
                                         float vy, uint32_t *stack, uint32_t stride, ad_panel_hits *h)
{
    h->n = 0;
    if (g->t.n == 0) return;
    ad_bvh_box q = {x, y, x, y};
    ad_bvh_walk w;
    ad_bvh_walk_begin(&g->t, &w, q, 0, stack, stride);
    const float ctr[3] = {x, y, 0.0f}, v[3] = {vx, vy, 0.0f};
    ad_seg_touches t;
    t.n = 0;
    for (uint32_t k = ad_bvh_walk_next(&g->t, &w); k != AD_BVH_NONE; k = ad_bvh_walk_next(&g->t, &w))
        ad_seg_hit_candidate(p, g->segs, g->item[k], ctr, v, &t, h);
    ad_seg_hits_finish(p, &t, ctr, v, h);
}

/* All contacts of disc i through the trees: discs, segments, walls. */
AD_HD static inline void ad_bvh_gather_all(const ad_params *p, const ad_bvh *t, const ad_seg_tree *g,
                                           const ad_state *s, uint32_t i, ad_state at, ad_state me,
                                           uint32_t *stack, uint32_t stride, ad_accum *a)
{
    ad_accum_zero(a);
    if (p->disc_contacts) ad_bvh_gather_discs(p, t, s, i, at, me, stack, stride, a);
    ad_bvh_contact_segments(p, g, me.x, me.y, me.vx, me.vy, stack, stride, a);
    ad_contact_walls(p, me.x, me.y, me.vx, me.vy, a);
}

/* Reflexive: the pair (i, j) with j > i from i's walk, once. *mine receives i's
 * side; the caller adds the mirror (ad_accum_mirror) to j. Returns 0 when apart. */
AD_HD static inline int ad_bvh_pair(const ad_params *p, ad_state me, ad_state o, ad_accum *mine)
{
    float dx = ad_min_image(o.x - me.x, p->periodic_x, p->len_x, p->half_x);
    float dy = ad_min_image(o.y - me.y, p->periodic_y, p->len_y, p->half_y);
    float d2 = dx * dx + dy * dy;
    if (!(d2 < p->diameter_sq && d2 > 0.0f)) return 0;
    ad_accum_zero(mine);
    ad_contact_disc(p, dx, dy, o.vx - me.vx, o.vy - me.vy, mine);
    return 1;
}

/* Disc j's side of a contact whose side for disc i is *a (ad_contact_disc is
 * antisymmetric: the same force magnitude along the opposite normal). */
AD_HD static inline void ad_accum_mirror(const ad_accum *a, ad_accum *j)
{
    ad_accum_zero(j);
    j->fx = -a->fx;
    j->fy = -a->fy;
    j->pressure = a->pressure;
    j->virial = a->virial;
    j->energy = a->energy;
    j->max_overlap = a->max_overlap;
}

#endif
