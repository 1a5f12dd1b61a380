/* The CPU gather of one disc: an interior fast path that evaluates the candidates of its three neighbour rows in SIMD lanes with the shared contact law.
 *
 * A disc whose cell is at least one cell away from every edge of the grid (reach 1)
 * needs no wrap and no minimum image: its neighbour cells cx-1..cx+1 of rows cy-1..cy+1
 * are three contiguous slot ranges, and no separation can exceed half a periodic box
 * (nx, ny >= 5). Such a disc copies the states of those ranges into a small contiguous
 * buffer (a fixed 4-state copy per row: no data-dependent loop in the common case) and
 * evaluates ad_contact_disc, the one contact law of both backends, on AD_CPU_LANES
 * candidates at once into per-lane terms. The terms of the lanes that touch are then
 * added in candidate order, so the sums are those of ad_gather_all term for term (up to
 * the sign of a zero): the order is rows cy-1, cy, cy+1, slots ascending, as there. A
 * lane that does not touch, the disc itself, and the padding lanes (set to the disc
 * itself: zero separation, no force) add nothing. The AVX2 build first tests the
 * distance of all lanes at once and calls the law only when one is in contact (about
 * one disc in a hundred per step in the benchmark gas), and where the prefilters are valid it
 * runs the candidate screen before all that (candidate_screen_cpu.h). Every other disc (border
 * cells, reach above 1, a row fuller than the buffer) takes ad_gather_all unchanged. */
#ifndef AD_CPU_GATHER_CPU_H
#define AD_CPU_GATHER_CPU_H

#include <stddef.h>
#include <string.h>

#include "../physics/gather.h"
#include "candidate_screen_cpu.h"
#include "fast_path_cpu.h"
#include "grid_cpu.h"

#define AD_CPU_LANES 8 /* candidates evaluated together */
#define AD_CPU_CAND 64 /* candidate buffer: a disc with more takes the shared path */

/* The per-lane terms of AD_CPU_LANES candidates (SoA), from the shared contact law:
 * t[0..5] = fx, fy, pressure, virial, energy, max_overlap accumulated from zero, and
 * z = the sum of their magnitudes, 0 exactly when every term is 0 (NaN when one is). */
AD_CPU_INLINE void ad_cpu_lane_law(const ad_params *p, ad_state me, const float *X, const float *Y, const float *VX,
                                   const float *VY, float t[6][AD_CPU_LANES], float *z)
{
#pragma omp simd
    for (int l = 0; l < AD_CPU_LANES; l++) {
        ad_accum u;
        ad_accum_zero(&u);
        ad_contact_disc(p, X[l] - me.x, Y[l] - me.y, VX[l] - me.vx, VY[l] - me.vy, &u);
        t[0][l] = u.fx;
        t[1][l] = u.fy;
        t[2][l] = u.pressure;
        t[3][l] = u.virial;
        t[4][l] = u.energy;
        t[5][l] = u.max_overlap;
        z[l] = fabsf(u.fx) + fabsf(u.fy) + fabsf(u.pressure) + fabsf(u.virial) + fabsf(u.energy) +
               fabsf(u.max_overlap);
    }
}

/* Adds the terms of the lanes in `mask` (bit l = lane l = candidate k0 + l) in lane
 * order: the order ad_gather_discs adds them in. A lane left out has only zero terms. */
AD_CPU_INLINE void ad_cpu_add_lanes(unsigned mask, float t[6][AD_CPU_LANES], ad_accum *a)
{
    while (mask) { /* most discs of a gas touch nothing: mask == 0 */
        int l = __builtin_ctz(mask);
        mask &= mask - 1;
        a->fx += t[0][l]; /* t = 0 - f nx, and a + (0 - f nx) == a - f nx */
        a->fy += t[1][l];
        a->pressure += t[2][l];
        a->virial += t[3][l];
        a->energy += t[4][l];
        a->max_overlap = a->max_overlap > t[5][l] ? a->max_overlap : t[5][l];
    }
}

/* Copies the candidates of rows [lo, hi) into buf as {x, y, vx, vy}; returns their
 * number, or -1 when they do not fit. Any row length: the path of crowded cells. */
static inline int ad_cpu_copy_rows(const ad_state *s, const uint32_t lo[3], const uint32_t hi[3], float *buf)
{
    uint32_t m = 0;
    for (int r = 0; r < 3; r++) {
        uint32_t k = hi[r] - lo[r];
        if (m + k > AD_CPU_CAND) return -1;
        memcpy(buf + 4 * m, s + lo[r], k * sizeof(ad_state));
        m += k;
    }
    return (int)m;
}

/* The same for rows of at most 4 discs each (nearly all of a gas): a fixed 4-state
 * copy per row, no data-dependent loop. Reads at most AD_CPU_PAD states past a row. */
AD_CPU_INLINE int ad_cpu_candidates(const ad_params *p, const uint32_t *start, const ad_state *s, int cx, int cy,
                                    float *buf)
{
    uint32_t lo[3], hi[3];
    ad_cpu_rows(p, start, cx, cy, lo, hi);
    uint32_t k0 = hi[0] - lo[0], k1 = hi[1] - lo[1], k2 = hi[2] - lo[2];
    if ((k0 > 4) | (k1 > 4) | (k2 > 4)) return ad_cpu_copy_rows(s, lo, hi, buf);
#ifdef AD_CPU_AVX2 /* 32-byte moves (gcc copies the 64 bytes of memcpy in smaller pieces) */
    const float *q0 = &s[lo[0]].x, *q1 = &s[lo[1]].x, *q2 = &s[lo[2]].x;
    float *d1 = buf + 4 * k0, *d2 = buf + 4 * (k0 + k1);
    _mm256_storeu_ps(buf, _mm256_loadu_ps(q0));
    _mm256_storeu_ps(buf + 8, _mm256_loadu_ps(q0 + 8));
    _mm256_storeu_ps(d1, _mm256_loadu_ps(q1));
    _mm256_storeu_ps(d1 + 8, _mm256_loadu_ps(q1 + 8));
    _mm256_storeu_ps(d2, _mm256_loadu_ps(q2));
    _mm256_storeu_ps(d2 + 8, _mm256_loadu_ps(q2 + 8));
#else
    memcpy(buf, s + lo[0], 4 * sizeof(ad_state));
    memcpy(buf + 4 * k0, s + lo[1], 4 * sizeof(ad_state));
    memcpy(buf + 4 * (k0 + k1), s + lo[2], 4 * sizeof(ad_state));
#endif
    return (int)(k0 + k1 + k2);
}

/* Disc contacts of a disc in interior cell (cx, cy), portable C. Returns 0, having
 * accumulated nothing, when the candidates do not fit the buffer. */
AD_CPU_INLINE int ad_cpu_gather_interior(const ad_params *p, const uint32_t *start, const ad_state *s, ad_state me,
                                         int cx, int cy, ad_accum *a)
{
    float buf[4 * (AD_CPU_CAND + AD_CPU_LANES)]; /* {x, y, vx, vy} of each candidate */
    int m = ad_cpu_candidates(p, start, s, cx, cy, buf);
    if (m < 0) return 0;
    for (int k0 = 0; k0 < m; k0 += AD_CPU_LANES) {
        float X[AD_CPU_LANES], Y[AD_CPU_LANES], VX[AD_CPU_LANES], VY[AD_CPU_LANES], t[6][AD_CPU_LANES],
            z[AD_CPU_LANES];
        const float *b0 = buf + 4 * k0; /* affine lane addresses, or gcc will not vectorise */
        const int live = m - k0;
#pragma omp simd
        for (int l = 0; l < AD_CPU_LANES; l++) {
            /* past m the buffer is stale or unset: those lanes take the disc itself */
            const float *q = b0 + 4 * l;
            int in = l < live;
            X[l] = in ? q[0] : me.x;
            Y[l] = in ? q[1] : me.y;
            VX[l] = in ? q[2] : me.vx;
            VY[l] = in ? q[3] : me.vy;
        }
        ad_cpu_lane_law(p, me, X, Y, VX, VY, t, z);
        unsigned mask = 0;
        for (int l = 0; l < AD_CPU_LANES; l++) mask |= (unsigned)(z[l] != 0.0f) << l; /* != holds for NaN */
        ad_cpu_add_lanes(mask, t, a);
    }
    return 1;
}

/* The AVX2 code below exists in the translation units compiled for AVX2 and FMA
 * (src/cpu/interact_avx2.c, chosen at run time); the others get the portable code only. */
#ifdef AD_CPU_AVX2

/* The lanes the contact law must see: closer than a diameter and apart (the law's
 * own test, on the same d2 = dx dx + dy dy), or with a non-finite difference (the law
 * would return NaN terms, and they must reach the sums as in ad_gather_discs). Every
 * other lane would add terms that are all zero. */
AD_CPU_INLINE unsigned ad_cpu_near_avx2(const ad_params *p, ad_state me, __m256 X, __m256 Y, __m256 VX, __m256 VY)
{
    __m256 dx = _mm256_sub_ps(X, _mm256_set1_ps(me.x)), dy = _mm256_sub_ps(Y, _mm256_set1_ps(me.y));
    __m256 dvx = _mm256_sub_ps(VX, _mm256_set1_ps(me.vx)), dvy = _mm256_sub_ps(VY, _mm256_set1_ps(me.vy));
    __m256 d2 = _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy));
    __m256 near = _mm256_and_ps(_mm256_cmp_ps(d2, _mm256_set1_ps(p->diameter_sq), _CMP_LT_OQ),
                                _mm256_cmp_ps(d2, _mm256_setzero_ps(), _CMP_GT_OQ));
    __m256 sum = _mm256_add_ps(_mm256_add_ps(dx, dy), _mm256_add_ps(dvx, dvy));
    __m256 bad = _mm256_cmp_ps(_mm256_sub_ps(sum, sum), _mm256_setzero_ps(), _CMP_UNORD_Q); /* inf or NaN */
    return (unsigned)_mm256_movemask_ps(_mm256_or_ps(near, bad));
}

/* The same with AVX2 data movement: the candidates are transposed to SoA in
 * registers and the lane mask is one compare; the law is still ad_cpu_lane_law. */
AD_CPU_INLINE int ad_cpu_gather_interior_avx2(const ad_params *p, const uint32_t *start, const ad_state *s, ad_state me,
                                              int cx, int cy, ad_accum *a)
{
    float buf[4 * (AD_CPU_CAND + AD_CPU_LANES)];
    int m = ad_cpu_candidates(p, start, s, cx, cy, buf);
    if (m < 0) return 0;
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int k0 = 0; k0 < m; k0 += AD_CPU_LANES) {
        _Alignas(32) float X[AD_CPU_LANES], Y[AD_CPU_LANES], VX[AD_CPU_LANES], VY[AD_CPU_LANES];
        _Alignas(32) float t[6][AD_CPU_LANES], z[AD_CPU_LANES];
        __m256 vx, vy, vvx, vvy;
        ad_cpu_soa8(buf + 4 * k0, &vx, &vy, &vvx, &vvy);
        __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(m - k0), iota));
        /* lanes past m take the disc itself: zero separation, no force */
        __m256 X8 = _mm256_blendv_ps(_mm256_set1_ps(me.x), vx, live);
        __m256 Y8 = _mm256_blendv_ps(_mm256_set1_ps(me.y), vy, live);
        __m256 VX8 = _mm256_blendv_ps(_mm256_set1_ps(me.vx), vvx, live);
        __m256 VY8 = _mm256_blendv_ps(_mm256_set1_ps(me.vy), vvy, live);
        unsigned mask = ad_cpu_near_avx2(p, me, X8, Y8, VX8, VY8);
        if (!mask) continue; /* nearly always: about 1 disc in 100 has a contact in a step */
        _mm256_store_ps(X, X8);
        _mm256_store_ps(Y, Y8);
        _mm256_store_ps(VX, VX8);
        _mm256_store_ps(VY, VY8);
        ad_cpu_lane_law(p, me, X, Y, VX, VY, t, z);
        ad_cpu_add_lanes(mask, t, a);
    }
    return 1;
}
#endif

/* All contacts of disc i (slot i, state me): the CPU's ad_gather_all. `fast` is
 * ad_cpu_fast_grid(p), hoisted out of the loop. The interior path is the AVX2 one in
 * translation units compiled for AVX2, the portable one elsewhere; xy (NULL where the
 * prefilters are not valid, cpu_world.prefilter_valid) lets the AVX2 one run the candidate
 * screen first (candidate_screen_cpu.h). */
AD_CPU_INLINE void ad_cpu_gather_all(const ad_params *p, const ad_seg_grid *g, const uint32_t *start, const ad_state *s,
                                     const ad_cpu_xy *xy, uint32_t i, ad_state me, int fast, ad_accum *a)
{
    /* the same expressions as ad_cell_coord: inside [1, n-1) the truncation is its cell */
    float fx = (me.x - p->origin_x) * p->inv_cell_x, fy = (me.y - p->origin_y) * p->inv_cell_y;
    if (fast && fx >= 1.0f && fx < (float)(p->nx - 1) && fy >= 1.0f && fy < (float)(p->ny - 1)) {
        int cx = (int)fx, cy = (int)fy;
        if (cx <= p->nx - 2 && cy <= p->ny - 2) {
            ad_accum_zero(a);
#ifdef AD_CPU_AVX2
            int done = (xy && ad_cpu_candidate_screen_avx2(p, start, s, xy, me, cx, cy, a)) ||
                       ad_cpu_gather_interior_avx2(p, start, s, me, cx, cy, a);
#else
            (void)xy;
            int done = ad_cpu_gather_interior(p, start, s, me, cx, cy, a);
#endif
            if (done) {
                ad_contact_segments(p, g, me.x, me.y, me.vx, me.vy, a);
                ad_contact_walls(p, me.x, me.y, me.vx, me.vy, a);
                return;
            }
        }
    }
    int cx = ad_cell_coord(me.x, p->origin_x, p->inv_cell_x, p->nx);
    int cy = ad_cell_coord(me.y, p->origin_y, p->inv_cell_y, p->ny);
    ad_gather_all(p, g, start, s, i, me, cx, cy, a);
}

#endif
