/* Per-panel sampling, once for every backend: which body panel a contact is on, and a step's per-panel sums
 * in 64-bit fixed point.
 *
 * A panel is one of the body's segments (2D) or triangles (3D), numbered in the order added. A disc
 * touching a connected outline (surface) feels one contact, from its closest point on the whole component
 * (segment.h, triangle.h); the contact is on the panel that point lies on (the nearest touching panel of
 * the component, ties to the first met in 2D and the lowest index in 3D, as the contact itself). A hit
 * records that panel, the closest point and the reaction of the contact on the body, the force the gather
 * adds to the body's sums: ad_contact_point's, with the same arguments, so the same bits.
 *
 * Fixed point. A step adds, per panel, the force on it (quantum AD_PANEL_QF = k r 2^-32 [N]), the energy
 * it receives in the step (quantum k r^2 2^-32 [J]) and the contacts begun, as int64 adds (atomic where
 * threads share a panel): integer adds commute, so the sums do not depend on the order the discs come in,
 * the thread count or the backend. The core folds them into the double totals after the step
 * (ad_panels_fold: impulse += F q_F dt). Range: 2^31 k r per panel and step, two billion discs pressed a
 * whole radius into one panel; resolution 2^-32 of one disc's largest spring force, below the float
 * resolution of the force itself (2^-24 of its magnitude) for any contact deeper than 2^-8 of a radius. */
#ifndef AD_PHYSICS_PANEL_H
#define AD_PHYSICS_PANEL_H

#include "contact.h"
#include "segment.h"

/* int64 words per panel in a step's sums: force x, y, z, energy, contacts begun. */
enum { AD_PANEL_FX = 0, AD_PANEL_FY = 1, AD_PANEL_FZ = 2, AD_PANEL_E = 3, AD_PANEL_N = 4, AD_PANEL_WORDS = 5 };
#define AD_PANEL_QBITS 4294967296.0 /* 2^32: a quantum is k r (forces) or k r^2 (energies) over this */

/* A disc's contacts with the body's panels in one force evaluation. */
#define AD_PANEL_HITS_MAX 8
typedef struct ad_panel_hits {
    int n;
    uint32_t panel[AD_PANEL_HITS_MAX], comp[AD_PANEL_HITS_MAX];
    float d2[AD_PANEL_HITS_MAX];   /* squared distance of the centre from q */
    float q[AD_PANEL_HITS_MAX][3]; /* the closest point [m] */
    float f[AD_PANEL_HITS_MAX][3]; /* the contact's force on the body [N] */
} ad_panel_hits;

/* The per-disc contact state (cold, one word a disc, moved with it): the panel of its nearest body
 * contact plus one in bits 0..24 (0: none), and in bits 25..30 the walls it touched (AD_WALL_* order), at
 * its previous evaluation. */
#define AD_TOUCH_PANEL_MASK 0x01FFFFFFu
#define AD_TOUCH_WALL_SHIFT 25
AD_HD static inline uint32_t ad_touch_pack(int panel, uint32_t walls)
{
    return (uint32_t)(panel + 1) | walls << AD_TOUCH_WALL_SHIFT;
}
AD_HD static inline int ad_touch_panel(uint32_t t) { return (int)(t & AD_TOUCH_PANEL_MASK) - 1; }
AD_HD static inline uint32_t ad_touch_walls(uint32_t t) { return t >> AD_TOUCH_WALL_SHIFT & 63u; }

/* Appends the hit of a disc (centre c, velocity v, dims 2 or 3) with panel `panel` of component `comp` at
 * its point q; the force computed by the contact law, as the gather does. A table already full keeps its
 * hits (a disc among more than AD_PANEL_HITS_MAX panels' contacts: its extra forces are not sampled). */
AD_HD static inline void ad_panel_hit_add(const ad_params *p, int dims, const float c[3], const float v[3],
                                          uint32_t panel, uint32_t comp, const float q[3], ad_panel_hits *h)
{
    float f[3] = {0.0f, 0.0f, 0.0f};
    int touch;
    if (dims == 2) {
        ad_accum a;
        ad_accum_zero(&a);
        touch = ad_contact_point(p, c[0], c[1], v[0], v[1], q[0], q[1], &f[0], &f[1], &a);
    } else {
        ad_accum3 a;
        ad_accum_zero3(&a);
        touch = ad_contact_point3(p, c[0], c[1], c[2], v[0], v[1], v[2], q[0], q[1], q[2], &f[0], &f[1], &f[2], &a);
    }
    if (!touch || h->n == AD_PANEL_HITS_MAX) return;
    int k = h->n++;
    h->panel[k] = panel;
    h->comp[k] = comp;
    float d2 = 0.0f;
    for (int j = 0; j < 3; j++) {
        float d = j < dims ? c[j] - q[j] : 0.0f;
        d2 += d * d;
        h->q[k][j] = j < dims ? q[j] : 0.0f;
        h->f[k][j] = -f[j];
    }
    h->d2[k] = d2;
}

/* The nearest hit (-1 when none): the panel a disc's contact state remembers. */
AD_HD static inline int ad_panel_hits_nearest(const ad_panel_hits *h)
{
    int best = -1;
    for (int k = 0; k < h->n; k++)
        if (best < 0 || h->d2[k] < h->d2[best]) best = k;
    return best;
}

/* A 2D disc's candidate segment `si` for its hits: into the table of segment.h (one contact a component,
 * at its nearest point), or a hit of its own where the table is full, as the gather applies it. */
AD_HD static inline void ad_seg_hit_candidate(const ad_params *p, const ad_seg *segs, uint32_t si, const float c[3],
                                              const float v[3], ad_seg_touches *t, ad_panel_hits *h)
{
    float q[3] = {0.0f, 0.0f, 0.0f};
    if (ad_seg_touch(p, &segs[si], si, c[0], c[1], t, &q[0], &q[1]))
        ad_panel_hit_add(p, 2, c, v, si, segs[si].flags >> AD_SEG_COMP_SHIFT, q, h);
}

/* The table's contacts as hits, one a component, each on its nearest segment. */
AD_HD static inline void ad_seg_hits_finish(const ad_params *p, const ad_seg_touches *t, const float c[3],
                                            const float v[3], ad_panel_hits *h)
{
    for (int k = 0; k < t->n; k++) {
        const float q[3] = {t->qx[k], t->qy[k], 0.0f};
        ad_panel_hit_add(p, 2, c, v, t->seg[k], t->comp[k], q, h);
    }
}

/* A 2D disc's hits on the segments of the coarse grid (the candidates of ad_contact_segments). */
AD_HD static inline void ad_seg_hits(const ad_params *p, const ad_seg_grid *g, float x, float y, float vx, float vy,
                                     ad_panel_hits *h)
{
    h->n = 0;
    if (g->count == 0 || !(x >= g->box_x0 && x <= g->box_x1 && y >= g->box_y0 && y <= g->box_y1)) return;
    int cx = ad_cell_coord(x, g->origin_x, g->inv_cell_x, g->nx);
    int cy = ad_cell_coord(y, g->origin_y, g->inv_cell_y, g->ny);
    uint32_t c = (uint32_t)cy * (uint32_t)g->nx + (uint32_t)cx;
    const float ctr[3] = {x, y, 0.0f}, v[3] = {vx, vy, 0.0f};
    ad_seg_touches t;
    t.n = 0;
    for (uint32_t k = g->start[c]; k < g->start[c + 1]; k++) ad_seg_hit_candidate(p, g->segs, g->index[k], ctr, v, &t, h);
    ad_seg_hits_finish(p, &t, ctr, v, h);
}

/* Adds to an int64 sum: an atomic add where threads (GPU lanes) share it. */
AD_HD static inline void ad_panel_add(int64_t *sum, int64_t v)
{
    if (v == 0) return;
#if defined(__CUDA_ARCH__)
    atomicAdd((unsigned long long *)sum, (unsigned long long)v);
#else
    __atomic_fetch_add(sum, v, __ATOMIC_RELAXED);
#endif
}

/* A value in quanta, rounded to the nearest (half away from zero); clamped to +-2^62. */
AD_HD static inline int64_t ad_panel_fix(double v, double inv_quantum)
{
    double q = v * inv_quantum;
    q = q > 4.6e18 ? 4.6e18 : q < -4.6e18 ? -4.6e18 : q;
    return q >= 0.0 ? (int64_t)(q + 0.5) : -(int64_t)(0.5 - q);
}

#endif
