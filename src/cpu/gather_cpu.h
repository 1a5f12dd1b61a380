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
 * one disc in a hundred per step in the benchmark gas). Every other disc (border cells, reach
 * above 1, a row fuller than the buffer) takes ad_gather_all unchanged. */
#ifndef AD_CPU_GATHER_CPU_H
#define AD_CPU_GATHER_CPU_H

#include <stddef.h>
#include <string.h>

#include "../physics/gather.h"
#include "grid_cpu.h"

#define AD_CPU_LANES 8  /* candidates evaluated together */
#define AD_CPU_CAND 64  /* candidate buffer: a disc with more takes the shared path */
#define AD_CPU_PAD 4    /* states readable past the last disc (the fixed 4-state row copy) */
#define AD_CPU_XY_PAD 8 /* positions readable past the last disc (the screen's 8-lane rows) */

#if defined(__AVX2__) && defined(__FMA__)
#define AD_CPU_AVX2 1
#include <immintrin.h>
#endif

#if defined(__GNUC__)
#define AD_CPU_INLINE static inline __attribute__((always_inline))
#else
#define AD_CPU_INLINE static inline
#endif

/* The quiet test's clock (quiet_clock_cpu.c), as the pass hands it to ad_cpu_quiet8_avx2: the
 * world's quiet clock rounded up and down to floats, the separation beyond which the law's
 * float test sees no contact, and the rounding allowance taken off every margin. */
typedef struct ad_cpu_quiet_clock {
    float up, down;
    float dlim;  /* sqrt(diameter_sq) (1 + 1e-5) */
    float slack; /* 8 ulps of the largest coordinate of the grid, and 1e-6 diameters */
} ad_cpu_quiet_clock;

/* 1 when the grid allows the interior fast path at all. */
AD_CPU_INLINE int ad_cpu_fast_grid(const ad_params *p)
{
    return p->disc_contacts && p->reach_x == 1 && p->reach_y == 1 && p->nx >= 5 && p->ny >= 5;
}

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

/* The slot ranges [lo, hi) of the three neighbour rows of interior cell (cx, cy). */
AD_CPU_INLINE void ad_cpu_rows(const ad_params *p, const uint32_t *start, int cx, int cy, uint32_t lo[3],
                               uint32_t hi[3])
{
    const ptrdiff_t nx = p->nx;
    const uint32_t *st = start + (size_t)cy * (size_t)nx + (size_t)cx;
    lo[0] = st[-nx - 1];
    hi[0] = st[-nx + 2];
    lo[1] = st[-1];
    hi[1] = st[2];
    lo[2] = st[nx - 1];
    hi[2] = st[nx + 2];
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
 * (src/cpu/pass_avx2.c, chosen at run time); the others get the portable code only. */
#ifdef AD_CPU_AVX2

/* Eight consecutive states {x, y, vx, vy} (q: 32 floats) as four vectors of eight lanes:
 * rows {d0, d4}, {d1, d5}, {d2, d6}, {d3, d7}, then a 4x4 transpose in each half. */
AD_CPU_INLINE void ad_cpu_soa8(const float *q, __m256 *x, __m256 *y, __m256 *vx, __m256 *vy)
{
    __m256 r0 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(q + 0)), _mm_loadu_ps(q + 16), 1);
    __m256 r1 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(q + 4)), _mm_loadu_ps(q + 20), 1);
    __m256 r2 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(q + 8)), _mm_loadu_ps(q + 24), 1);
    __m256 r3 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(q + 12)), _mm_loadu_ps(q + 28), 1);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    *x = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    *y = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    *vx = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
    *vy = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
}

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

/* The screen: the interior search again, from the positions alone (xy, the slots' x and y
 * as two arrays, which the reorder writes), and for most discs of a gas the whole of it.
 * Each row of candidates is two 8-lane loads (x, y) and the distance test, with none of
 * the candidate buffer's copies and transposes; where no live lane is closer than a
 * diameter (nearly every disc of a gas in a step) the disc touches nothing, and where some
 * are, the law runs on those lanes alone, in candidate order (rows cy-1, cy, cy+1, slots
 * ascending), with their velocities read from the states: the sums of
 * ad_cpu_gather_interior_avx2 term for term. Returns 0, having accumulated nothing, where
 * that path must run instead: a row of more than eight candidates, or a live lane whose
 * d2 is infinite (its difference overflowed or a position is infinite; the full path
 * tests those with their velocities).
 *
 * Valid only where no state holds a NaN and every speed is below 1e15 (cpu_step checks
 * both in the sums of the pass that wrote the states): the full path also hands the law
 * any lane whose velocity difference is not finite, which with those bounds is none. */
AD_CPU_INLINE int ad_cpu_screen_avx2(const ad_params *p, const uint32_t *start, const ad_state *s, const ad_cpu_xy *xy,
                                     ad_state me, int cx, int cy, ad_accum *a)
{
    uint32_t lo[3], hi[3];
    ad_cpu_rows(p, start, cx, cy, lo, hi);
    uint32_t k0 = hi[0] - lo[0], k1 = hi[1] - lo[1], k2 = hi[2] - lo[2];
    if ((k0 > 8) | (k1 > 8) | (k2 > 8)) return 0;
    const __m256 mx = _mm256_set1_ps(me.x), my = _mm256_set1_ps(me.y), D = _mm256_set1_ps(p->diameter_sq);
    const __m256 zero = _mm256_setzero_ps(), inf = _mm256_set1_ps(INFINITY);
    __m256 near[3], big[3], hit = zero;
    for (int r = 0; r < 3; r++) {
        /* d2 as the law computes it: dx dx + dy dy, not contracted */
        __m256 dx = _mm256_sub_ps(_mm256_loadu_ps(xy->x + lo[r]), mx);
        __m256 dy = _mm256_sub_ps(_mm256_loadu_ps(xy->y + lo[r]), my);
        __m256 d2 = _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy));
        /* lanes past the row (the next cells' discs, or the padding past the last slot)
         * are tested too: a hit there only costs the exact look below */
        near[r] = _mm256_and_ps(_mm256_cmp_ps(d2, D, _CMP_LT_OQ), _mm256_cmp_ps(d2, zero, _CMP_GT_OQ));
        big[r] = _mm256_cmp_ps(d2, inf, _CMP_EQ_OQ);
        hit = _mm256_or_ps(hit, _mm256_or_ps(near[r], big[r]));
    }
    if (_mm256_testz_ps(hit, hit)) return 1; /* nothing within a diameter: no terms */
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const uint32_t k[3] = {k0, k1, k2};
    unsigned m[3];
    for (int r = 0; r < 3; r++) {
        __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)k[r]), iota));
        if (_mm256_movemask_ps(_mm256_and_ps(live, big[r]))) return 0;
        m[r] = (unsigned)_mm256_movemask_ps(_mm256_and_ps(live, near[r]));
    }
    for (int r = 0; r < 3; r++)
        for (unsigned mr = m[r]; mr; mr &= mr - 1) {
            uint32_t j = lo[r] + (uint32_t)__builtin_ctz(mr);
            ad_accum u; /* one lane's terms, from zero, added as ad_cpu_add_lanes adds them */
            ad_accum_zero(&u);
            ad_contact_disc(p, xy->x[j] - me.x, xy->y[j] - me.y, s[j].vx - me.vx, s[j].vy - me.vy, &u);
            a->fx += u.fx;
            a->fy += u.fy;
            a->pressure += u.pressure;
            a->virial += u.virial;
            a->energy += u.energy;
            a->max_overlap = a->max_overlap > u.max_overlap ? a->max_overlap : u.max_overlap;
        }
    return 1;
}

/* The quiet discs among slots s..s+7: those the screen can tell, without a contact law or
 * the full search, touch nothing, whose whole gather (ad_cpu_gather_all) is therefore
 * the zero sums. Bit l set: slot s + l is quiet. A disc qualifies when
 *  - its cell is two or more cells from every edge of the grid, so that its candidates,
 *    in the cells around it, are discs binned where they are (never clamped in from
 *    outside: their positions lie in those cells, and no difference overflows);
 *  - no segment's box and no solid wall is within its reach (the tests of
 *    ad_contact_segments and ad_contact_walls, lane by lane);
 *  - and either its expiry says it is still clear (below), or its three rows hold at most
 *    eight candidates each (checked here unless `rows_fit`: no three consecutive cells
 *    hold more than eight, ad_grid_diag.max_run3) and no live one other than the disc itself
 *    is closer than a diameter (a coincident one counts as close).
 * Lanes past a row's end are the next cells' discs or padding: a hit there only sends
 * the disc the full way. Valid under the same conditions as ad_cpu_screen_avx2 (no NaN
 * state, speeds below 1e15, so that the full path hands the law no lane) and with cells
 * below 1e17 m (three cells' separation squared stays finite).
 *
 * Expiries (qexp not NULL: qexp[s..s+7], in slot order, read and written): a disc tested
 * here also gets its margin, how much closer than now any other disc can come before it
 * could touch: the smallest of (its nearest candidate's distance - dlim) and (its distance to
 * the edge of its three-by-three cells + a cell - dlim: every disc outside those cells is at
 * least that far), less the slack. Where that is positive its expiry becomes clock + margin
 * (rounded down). The world's clock (quiet_clock_cpu.c) grows after every step by
 * twice the largest distance a disc moved in it (plus rounding), so while the clock is below
 * a disc's expiry no two discs can have closed its margin: the disc is still clear and skips
 * the rows. Discs that jump instead of moving (a periodic wrap: they land within a step's
 * move of an edge, and a disc that may skip is two cells in; re-entry at an inlet, which
 * switches expiries off) and discs added or imported are accounted for by the world: it
 * advances the clock past every expiry where a step's move exceeds a quarter cell, where
 * the pass did not screen, and after any change from outside. A disc that does not qualify
 * (near an edge, a wall or a segment) gets no expiry (-inf), so one with a live expiry has
 * qualified at every step since it was tested. Most discs of a gas are tested one step in
 * several. */
AD_CPU_INLINE unsigned ad_cpu_quiet8_avx2(const ad_params *p, const ad_seg_grid *g, const uint32_t *start,
                                          const ad_cpu_xy *xy, size_t s, int rows_fit, float *qexp,
                                          const ad_cpu_quiet_clock *qc)
{
    const __m256 X = _mm256_loadu_ps(xy->x + s), Y = _mm256_loadu_ps(xy->y + s);
    /* the cell coordinates as ad_cpu_gather_all computes them */
    __m256 fx = _mm256_mul_ps(_mm256_sub_ps(X, _mm256_set1_ps(p->origin_x)), _mm256_set1_ps(p->inv_cell_x));
    __m256 fy = _mm256_mul_ps(_mm256_sub_ps(Y, _mm256_set1_ps(p->origin_y)), _mm256_set1_ps(p->inv_cell_y));
    const __m256 two = _mm256_set1_ps(2.0f);
    __m256 ok = _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(fx, two, _CMP_GE_OQ),
                                            _mm256_cmp_ps(fx, _mm256_set1_ps((float)(p->nx - 2)), _CMP_LT_OQ)),
                              _mm256_and_ps(_mm256_cmp_ps(fy, two, _CMP_GE_OQ),
                                            _mm256_cmp_ps(fy, _mm256_set1_ps((float)(p->ny - 2)), _CMP_LT_OQ)));
    const __m256 r = _mm256_set1_ps(p->radius);
    /* ad_contact_walls: lo < radius or hi < radius touches */
    if (p->wall[0]) ok = _mm256_and_ps(ok, _mm256_cmp_ps(_mm256_sub_ps(X, _mm256_set1_ps(p->x_min)), r, _CMP_NLT_UQ));
    if (p->wall[1]) ok = _mm256_and_ps(ok, _mm256_cmp_ps(_mm256_sub_ps(_mm256_set1_ps(p->x_max), X), r, _CMP_NLT_UQ));
    if (p->wall[2]) ok = _mm256_and_ps(ok, _mm256_cmp_ps(_mm256_sub_ps(Y, _mm256_set1_ps(p->y_min)), r, _CMP_NLT_UQ));
    if (p->wall[3]) ok = _mm256_and_ps(ok, _mm256_cmp_ps(_mm256_sub_ps(_mm256_set1_ps(p->y_max), Y), r, _CMP_NLT_UQ));
    if (g->count) { /* ad_contact_segments: inside the segments' box looks further */
        __m256 in = _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(X, _mm256_set1_ps(g->box_x0), _CMP_GE_OQ),
                                                _mm256_cmp_ps(X, _mm256_set1_ps(g->box_x1), _CMP_LE_OQ)),
                                  _mm256_and_ps(_mm256_cmp_ps(Y, _mm256_set1_ps(g->box_y0), _CMP_GE_OQ),
                                                _mm256_cmp_ps(Y, _mm256_set1_ps(g->box_y1), _CMP_LE_OQ)));
        ok = _mm256_andnot_ps(in, ok);
    }
    const __m256 none = _mm256_set1_ps(-INFINITY);
    __m256 old = none, clear = _mm256_setzero_ps(); /* the lanes whose expiry says they are still clear */
    if (qexp) {
        old = _mm256_loadu_ps(qexp + s);
        clear = _mm256_and_ps(ok, _mm256_cmp_ps(old, _mm256_set1_ps(qc->up), _CMP_GT_OQ));
    }
    const unsigned tested = (unsigned)_mm256_movemask_ps(ok) & ~(unsigned)_mm256_movemask_ps(clear);
    unsigned cand = tested;
    if (!cand) {
        if (qexp) _mm256_storeu_ps(qexp + s, _mm256_blendv_ps(none, old, clear));
        return (unsigned)_mm256_movemask_ps(clear);
    }
    const ptrdiff_t nx = p->nx;
    _Alignas(32) int32_t base[8];
    _mm256_store_si256((__m256i *)base, _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvttps_epi32(fy),
                                                                            _mm256_set1_epi32(p->nx)),
                                                         _mm256_cvttps_epi32(fx)));
    const __m256 D = _mm256_set1_ps(p->diameter_sq), zero = _mm256_setzero_ps(), inf = _mm256_set1_ps(INFINITY);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    _Alignas(32) float M[8] = {0}; /* with expiries: the smallest d2 of the other candidates (0: not tested) */
    unsigned quiet = 0;
    for (; cand; cand &= cand - 1) {
        int l = __builtin_ctz(cand);
        const uint32_t *st = start + base[l];
        uint32_t l0 = st[-nx - 1], l1 = st[-1], l2 = st[nx - 1];
        if (!rows_fit && ((st[-nx + 2] - l0 > 8) | (st[2] - l1 > 8) | (st[nx + 2] - l2 > 8))) continue;
        const __m256 mx = _mm256_broadcast_ss(xy->x + s + l), my = _mm256_broadcast_ss(xy->y + s + l);
        __m256 dx0 = _mm256_sub_ps(_mm256_loadu_ps(xy->x + l0), mx), dy0 = _mm256_sub_ps(_mm256_loadu_ps(xy->y + l0), my);
        __m256 dx1 = _mm256_sub_ps(_mm256_loadu_ps(xy->x + l1), mx), dy1 = _mm256_sub_ps(_mm256_loadu_ps(xy->y + l1), my);
        __m256 dx2 = _mm256_sub_ps(_mm256_loadu_ps(xy->x + l2), mx), dy2 = _mm256_sub_ps(_mm256_loadu_ps(xy->y + l2), my);
        /* d2 as the law computes it: dx dx + dy dy, not contracted */
        __m256 d0 = _mm256_add_ps(_mm256_mul_ps(dx0, dx0), _mm256_mul_ps(dy0, dy0));
        __m256 d1 = _mm256_add_ps(_mm256_mul_ps(dx1, dx1), _mm256_mul_ps(dy1, dy1));
        __m256 d2 = _mm256_add_ps(_mm256_mul_ps(dx2, dx2), _mm256_mul_ps(dy2, dy2));
        if (qexp) {
            /* the disc itself: lane s + l - l1 of the middle row (which holds at most eight) */
            __m256 self = _mm256_castsi256_ps(_mm256_cmpeq_epi32(iota, _mm256_set1_epi32((int)(s + (size_t)l - l1))));
            __m256 mn = _mm256_min_ps(_mm256_min_ps(d0, d2), _mm256_blendv_ps(d1, inf, self));
            __m128 h = _mm_min_ps(_mm256_castps256_ps128(mn), _mm256_extractf128_ps(mn, 1));
            h = _mm_min_ps(h, _mm_movehl_ps(h, h));
            M[l] = _mm_cvtss_f32(_mm_min_ss(h, _mm_shuffle_ps(h, h, 1)));
        } else {
            /* the disc itself is in the middle row at zero separation; coincident discs in the
             * others count as hits (the full way gives them no force) */
            __m256 hit = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(d0, D, _CMP_LT_OQ), _mm256_cmp_ps(d2, D, _CMP_LT_OQ)),
                                      _mm256_and_ps(_mm256_cmp_ps(d1, D, _CMP_LT_OQ), _mm256_cmp_ps(d1, zero, _CMP_GT_OQ)));
            quiet |= (unsigned)_mm256_testz_ps(hit, hit) << l;
        }
    }
    if (!qexp) return quiet;
    const __m256 m2 = _mm256_load_ps(M), one = _mm256_set1_ps(1.0f);
    const __m256 was_tested = _mm256_castsi256_ps(
        _mm256_cmpgt_epi32(_mm256_and_si256(_mm256_set1_epi32((int)tested), _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128)),
                           _mm256_setzero_si256()));
    /* quiet now: no other candidate closer than a diameter (an untested lane has M = 0) */
    __m256 now = _mm256_and_ps(was_tested, _mm256_cmp_ps(m2, D, _CMP_GE_OQ));
    /* the margin: the nearest candidate, and the edge of the three-by-three cells */
    const __m256 dlim = _mm256_set1_ps(qc->dlim);
    __m256 gap = _mm256_sub_ps(_mm256_mul_ps(_mm256_sqrt_ps(m2), _mm256_set1_ps(1.0f - 1e-6f)), dlim);
    __m256 frx = _mm256_sub_ps(fx, _mm256_round_ps(fx, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
    __m256 fry = _mm256_sub_ps(fy, _mm256_round_ps(fy, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
    __m256 ex = _mm256_mul_ps(_mm256_set1_ps(p->cell_x), _mm256_add_ps(one, _mm256_min_ps(frx, _mm256_sub_ps(one, frx))));
    __m256 ey = _mm256_mul_ps(_mm256_set1_ps(p->cell_y), _mm256_add_ps(one, _mm256_min_ps(fry, _mm256_sub_ps(one, fry))));
    __m256 margin = _mm256_sub_ps(_mm256_min_ps(gap, _mm256_sub_ps(_mm256_min_ps(ex, ey), dlim)),
                                  _mm256_set1_ps(qc->slack));
    __m256 grant = _mm256_and_ps(now, _mm256_cmp_ps(margin, _mm256_setzero_ps(), _CMP_GT_OQ));
    /* clock + margin, rounded down: one ulp below the nearest (both positive) */
    __m256 due = _mm256_castsi256_ps(_mm256_sub_epi32(
        _mm256_castps_si256(_mm256_add_ps(_mm256_set1_ps(qc->down), margin)), _mm256_set1_epi32(1)));
    _mm256_storeu_ps(qexp + s, _mm256_blendv_ps(_mm256_blendv_ps(none, due, grant), old, clear));
    return (unsigned)_mm256_movemask_ps(_mm256_or_ps(clear, now));
}
#endif

/* All contacts of disc i (slot i, state me): the CPU's ad_gather_all. `fast` is
 * ad_cpu_fast_grid(p), hoisted out of the loop. The interior path is the AVX2 one in
 * translation units compiled for AVX2, the portable one elsewhere; xy (NULL where not
 * valid) lets the AVX2 one screen first (ad_cpu_screen_avx2). */
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
            int done = (xy && ad_cpu_screen_avx2(p, start, s, xy, me, cx, cy, a)) ||
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
