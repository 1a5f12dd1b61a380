/* Velocity Verlet's drift on the CPU, binned where it is written: step 1 of a Verlet step fused into its drift.
 *
 * Contract. ad_cpu_drift_range moves discs [a, b) in place by ad_verlet_drift with their last
 * accelerations and wraps them (ad_wrap_state: a disc past an open side is removed at the end
 * of its step, by the kick), then does what ad_cpu_bin (grid_cpu.c) would do for the drifted
 * states: each disc's cell is ad_bin_cell (the dead cell for a removed one), cell_of and the
 * 8-bit counters are written, and the live discs outside the domain are counted. Where several
 * threads drift, each block of AD_BLOCK slots counts into its own cells and lists its leavers as
 * the pass does (fused_bin_cpu.h; verlet_drift in step_cpu.c sets the blocks' cells and counts the
 * leavers after; integer counts give the same totals in any order). So the grid that
 * follows skips its bin (cpu_world.bin_current, build_grid in step_cpu.c) and gets what the drift
 * and the bin gave as two passes, bit for bit. It also records, for the next pass's prefilters
 * and the contact-free clock, the largest speed squared of a live disc before or after its drift
 * (the drift moves a disc by (v + a dt / 2) dt, the mean of the two velocities times dt: at most
 * the larger speed times dt) and how many live discs' drifted states are not finite.
 *
 * The AVX2 build takes eight discs at a time with the same IEEE single operations in the same
 * order (the build does not contract a*b+c), and gives eight to the scalar code, having written
 * nothing, where a lane is a removed disc (or a NaN position after the drift: the dead cell) or
 * ad_wrap's first correction does not bring it inside (ad_wrap's full reduction). */
#ifndef AD_CPU_VERLET_DRIFT_CPU_H
#define AD_CPU_VERLET_DRIFT_CPU_H

#include "../physics/integrate.h"
#include "fast_path_cpu.h"
#include "fused_bin_cpu.h"
#include "integrate8_cpu.h"

/* What a drift saw (the contract above). */
typedef struct ad_cpu_drift_seen {
    float v2;         /* the largest speed squared of a live disc before or after its drift */
    uint32_t bad;     /* live discs whose drifted state (or speed squared) is not finite */
    uint64_t outside; /* live discs binned outside the domain */
} ad_cpu_drift_seen;

/* One disc: drift, wrap, bin, and what the drift saw. */
AD_CPU_INLINE void ad_cpu_drift_one(const ad_params *P, ad_state *s, const ad_accel *acc, size_t i, float dt,
                                    uint32_t *cell_of, ad_cpu_fused_bin *bins, ad_cpu_drift_seen *d)
{
    ad_state q = s[i];
    ad_state nw = ad_wrap_state(P, ad_verlet_drift(q, acc[i].ax, acc[i].ay, dt));
    s[i] = nw;
    uint32_t cell = ad_bin_cell(P, nw);
    cell_of[i] = cell;
    ad_cpu_fused_bin_count(bins, cell, (uint32_t)i);
    d->outside += (uint64_t)(!ad_is_dead(nw) && ad_outside_domain(P, nw.x, nw.y));
    if (ad_is_dead(q)) return;
    float v0 = q.vx * q.vx + q.vy * q.vy, v1 = nw.vx * nw.vx + nw.vy * nw.vy;
    float m = v0 > v1 ? v0 : v1;
    d->v2 = d->v2 > m ? d->v2 : m;
    /* x - x is NaN exactly when x is infinite or NaN */
    float z = (nw.x - nw.x) + (nw.y - nw.y) + (v0 - v0) + (v1 - v1);
    d->bad += z != z;
}

#ifdef AD_CPU_AVX2
/* Discs i..i+7 (the contract above; s, acc and cell_of from slot i): 1 when written, 0 (nothing written) where
 * the scalar code must. */
AD_CPU_INLINE int ad_cpu_drift8_avx2(const ad_params *P, ad_state *s, const ad_accel *acc, float dt,
                                     uint32_t *cell_of, size_t i, ad_cpu_fused_bin *bins, ad_cpu_drift_seen *d,
                                     __m256 *v2max)
{
    __m256 x, y, vx, vy, ax, ay;
    ad_cpu_soa8(&s[0].x, &x, &y, &vx, &vy);
    ad_cpu_accel8_load(&acc[0].ax, &ax, &ay);
    __m256 ok = _mm256_cmp_ps(x, x, _CMP_ORD_Q); /* a removed disc (NaN position): scalar */
    const __m256 vdt = _mm256_set1_ps(dt), half = _mm256_set1_ps(0.5f);
    const __m256 v0 = _mm256_add_ps(_mm256_mul_ps(vx, vx), _mm256_mul_ps(vy, vy));
    /* ad_verlet_drift: x += (v + 0.5 a dt) dt, then v += a dt */
    x = _mm256_add_ps(x, _mm256_mul_ps(_mm256_add_ps(vx, _mm256_mul_ps(_mm256_mul_ps(half, ax), vdt)), vdt));
    y = _mm256_add_ps(y, _mm256_mul_ps(_mm256_add_ps(vy, _mm256_mul_ps(_mm256_mul_ps(half, ay), vdt)), vdt));
    vx = _mm256_add_ps(vx, _mm256_mul_ps(ax, vdt));
    vy = _mm256_add_ps(vy, _mm256_mul_ps(ay, vdt));
    ok = _mm256_and_ps(ok, _mm256_cmp_ps(x, x, _CMP_ORD_Q)); /* nor one the drift made one */
    if (P->periodic_x) x = ad_cpu_wrap8(x, P->x_min, P->len_x, &ok);
    if (P->periodic_y) y = ad_cpu_wrap8(y, P->y_min, P->len_y, &ok);
    if (_mm256_movemask_ps(ok) != 0xff) return 0;
    /* ad_bin_cell of a live disc: ad_cell_index */
    __m256i cx = ad_cpu_cell_coord8(x, P->origin_x, P->inv_cell_x, P->nx);
    __m256i cy = ad_cpu_cell_coord8(y, P->origin_y, P->inv_cell_y, P->ny);
    __m256i cell = _mm256_add_epi32(_mm256_mullo_epi32(cy, _mm256_set1_epi32(P->nx)), cx);
    _mm256_storeu_si256((__m256i *)cell_of, cell);
    _Alignas(32) uint32_t C[8];
    _mm256_store_si256((__m256i *)C, cell);
    for (int l = 0; l < 8; l++) ad_cpu_fused_bin_count(bins, C[l], (uint32_t)(i + (size_t)l));
    d->outside += ad_cpu_outside8(P, x, y); /* ad_outside_domain */
    ad_cpu_store8(s, x, y, vx, vy);
    const __m256 v1 = _mm256_add_ps(_mm256_mul_ps(vx, vx), _mm256_mul_ps(vy, vy));
    __m256 z = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_sub_ps(x, x), _mm256_sub_ps(y, y)),
                                           _mm256_sub_ps(v0, v0)),
                             _mm256_sub_ps(v1, v1));
    d->bad += (uint32_t)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_cmp_ps(z, z, _CMP_UNORD_Q)));
    /* the largest speed, lane by lane (a NaN lane is counted bad above) */
    *v2max = _mm256_max_ps(*v2max, _mm256_max_ps(v0, v1));
    return 1;
}
#endif

/* Discs [a, b) (the contract above), counted through bins; *d accumulates. */
AD_CPU_INLINE void ad_cpu_drift_range(const ad_params *P, ad_state *s, const ad_accel *acc, size_t a, size_t b,
                                      float dt, uint32_t *cell_of, ad_cpu_fused_bin *bins, ad_cpu_drift_seen *d)
{
    size_t i = a;
#ifdef AD_CPU_AVX2
    __m256 v2max = _mm256_setzero_ps();
    for (; i + 8 <= b; i += 8)
        if (!ad_cpu_drift8_avx2(P, s + i, acc + i, dt, cell_of + i, i, bins, d, &v2max))
            for (size_t k = i; k < i + 8; k++) ad_cpu_drift_one(P, s, acc, k, dt, cell_of, bins, d);
    _Alignas(32) float V[8];
    _mm256_store_ps(V, v2max);
    for (int l = 0; l < 8; l++) d->v2 = d->v2 > V[l] ? d->v2 : V[l];
#endif
    for (; i < b; i++) ad_cpu_drift_one(P, s, acc, i, dt, cell_of, bins, d);
}

#endif
