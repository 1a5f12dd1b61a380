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
 * itself: zero separation, no force) add nothing. Every other disc (border cells, reach
 * above 1, a row fuller than the buffer) takes ad_gather_all unchanged. */
#ifndef AD_CPU_GATHER_CPU_H
#define AD_CPU_GATHER_CPU_H

#include <stddef.h>
#include <string.h>

#include "../physics/gather.h"

#define AD_CPU_LANES 8  /* candidates evaluated together */
#define AD_CPU_CAND 64  /* candidate buffer: a disc with more takes the shared path */
#define AD_CPU_PAD 4    /* states readable past the last disc (the fixed 4-state row copy) */

#if defined(__GNUC__)
#define AD_CPU_INLINE static inline __attribute__((always_inline))
#else
#define AD_CPU_INLINE static inline
#endif

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

/* Copies the candidates of the three neighbour rows of interior cell (cx, cy) into
 * buf as {x, y, vx, vy}; returns their number, or -1 when they do not fit. */
AD_CPU_INLINE int ad_cpu_candidates(const ad_params *p, const uint32_t *start, const ad_state *s, int cx, int cy,
                                    float *buf)
{
    const ptrdiff_t nx = p->nx;
    const uint32_t *st = start + (size_t)cy * (size_t)nx + (size_t)cx;
    const uint32_t lo[3] = {st[-nx - 1], st[-1], st[nx - 1]};
    const uint32_t hi[3] = {st[-nx + 2], st[2], st[nx + 2]};
    uint32_t m = 0;
    for (int r = 0; r < 3; r++) {
        uint32_t k = hi[r] - lo[r];
        if (k <= 4) {
            memcpy(buf + 4 * m, s + lo[r], 4 * sizeof(ad_state)); /* reads at most AD_CPU_PAD past the end */
        } else {
            if (m + k > AD_CPU_CAND) return -1;
            memcpy(buf + 4 * m, s + lo[r], k * sizeof(ad_state));
        }
        m += k;
    }
    return m > AD_CPU_CAND ? -1 : (int)m;
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

#if defined(__GNUC__) && defined(__x86_64__)
#define AD_CPU_X86 1
#include <immintrin.h>

/* The same with AVX2 data movement: the candidates are transposed to SoA in
 * registers and the lane mask is one compare; the law is still ad_cpu_lane_law. */
__attribute__((target("avx2,fma"))) static inline int ad_cpu_gather_interior_avx2(const ad_params *p,
                                                                                   const uint32_t *start,
                                                                                   const ad_state *s, ad_state me,
                                                                                   int cx, int cy, ad_accum *a)
{
    float buf[4 * (AD_CPU_CAND + AD_CPU_LANES)];
    int m = ad_cpu_candidates(p, start, s, cx, cy, buf);
    if (m < 0) return 0;
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int k0 = 0; k0 < m; k0 += AD_CPU_LANES) {
        _Alignas(32) float X[AD_CPU_LANES], Y[AD_CPU_LANES], VX[AD_CPU_LANES], VY[AD_CPU_LANES];
        _Alignas(32) float t[6][AD_CPU_LANES], z[AD_CPU_LANES];
        const float *b = buf + 4 * k0;
        /* rows {c0, c4}, {c1, c5}, {c2, c6}, {c3, c7}: a 4x4 transpose in each half gives lanes in order */
        __m256 r0 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(b + 0)), _mm_loadu_ps(b + 16), 1);
        __m256 r1 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(b + 4)), _mm_loadu_ps(b + 20), 1);
        __m256 r2 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(b + 8)), _mm_loadu_ps(b + 24), 1);
        __m256 r3 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(b + 12)), _mm_loadu_ps(b + 28), 1);
        __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(m - k0), iota));
        __m256 vx = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
        __m256 vy = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
        __m256 vvx = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
        __m256 vvy = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
        /* lanes past m take the disc itself: zero separation, no force */
        _mm256_store_ps(X, _mm256_blendv_ps(_mm256_set1_ps(me.x), vx, live));
        _mm256_store_ps(Y, _mm256_blendv_ps(_mm256_set1_ps(me.y), vy, live));
        _mm256_store_ps(VX, _mm256_blendv_ps(_mm256_set1_ps(me.vx), vvx, live));
        _mm256_store_ps(VY, _mm256_blendv_ps(_mm256_set1_ps(me.vy), vvy, live));
        ad_cpu_lane_law(p, me, X, Y, VX, VY, t, z);
        /* unordered not-equal: NaN lanes count as touching */
        unsigned mask = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_load_ps(z), _mm256_setzero_ps(), _CMP_NEQ_UQ));
        ad_cpu_add_lanes(mask, t, a);
    }
    return 1;
}
#endif

/* All contacts of disc i (slot i, state me): the CPU's ad_gather_all. `fast` is
 * ad_cpu_fast_grid(p), hoisted out of the loop; `avx2` (a constant where this is
 * inlined) picks the AVX2 interior path, for callers compiled for AVX2. */
AD_CPU_INLINE void ad_cpu_gather_all(const ad_params *p, const ad_seg_grid *g, const uint32_t *start,
                                     const ad_state *s, uint32_t i, ad_state me, int fast, int avx2, ad_accum *a)
{
    /* the same expressions as ad_cell_coord: inside [1, n-1) the truncation is its cell */
    float fx = (me.x - p->origin_x) * p->inv_cell_x, fy = (me.y - p->origin_y) * p->inv_cell_y;
    if (fast && fx >= 1.0f && fx < (float)(p->nx - 1) && fy >= 1.0f && fy < (float)(p->ny - 1)) {
        int cx = (int)fx, cy = (int)fy;
        if (cx <= p->nx - 2 && cy <= p->ny - 2) {
            ad_accum_zero(a);
#ifdef AD_CPU_X86
            int done = avx2 ? ad_cpu_gather_interior_avx2(p, start, s, me, cx, cy, a)
                            : ad_cpu_gather_interior(p, start, s, me, cx, cy, a);
#else
            int done = ad_cpu_gather_interior(p, start, s, me, cx, cy, a);
            (void)avx2;
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
