/* The eight-disc integrate (AVX2): the interact pass's motion half for eight discs at once, and the motion sums.
 *
 * Contract. After the gather of eight consecutive slots (their accelerations in AX, AY),
 * ad_cpu_integrate8_avx2 does for all eight in AVX2 lanes what interact_motion
 * (interact_cpu.h) does for one disc after its gather, for symplectic and explicit Euler on
 * the grid: the step (ad_step_symplectic / ad_step_euler), the periodic wraps (ad_wrap's
 * first correction), the next step's cell (ad_cell_index) and domain test
 * (ad_outside_domain), the fused bin (fused_bin_cpu.h), the writes, and the motion sums
 * (ad_motion8_add).
 *
 * Why that is exact: every lane computes the same IEEE single operations in the same order
 * as those functions (the build does not contract a*b+c), so the results are theirs bit for
 * bit; the double sums go to the lane sums of ad_motion8, which the scalar code adds to
 * lane by lane, and which are folded in one fixed tree at the block's end. What it skips is
 * only the rare paths, and it does not guess them: it gives up, having written nothing, when
 * a lane needs what it does not do (a disc past an open side, removed; one in the reservoir's
 * band, with its draws, open.h; a coordinate still outside a periodic axis after one
 * correction, ad_wrap's full reduction), and the caller then takes the scalar path for those
 * eight (test_isa compares both lane by lane on edge cases). */
#ifndef AD_CPU_INTEGRATE8_CPU_H
#define AD_CPU_INTEGRATE8_CPU_H

#include "../core/world_internal.h"
#include "fast_path_cpu.h"
#include "fused_bin_cpu.h"

/* The motion sums of a block by slot mod 8 (ad_motion8, src/physics/step_sums.h): the scalar code
 * adds one lane (ad_motion8_add), the eight-disc integrate a group of eight with two vector adds a
 * quantity: the same sums in both builds, in any mix. */

#ifdef AD_CPU_AVX2

/* ad_wrap's first correction for eight coordinates; *ok clears where a lane is still
 * outside [lo, lo + len) (far outside, or NaN): ad_wrap would reduce it fully. */
AD_CPU_INLINE __m256 ad_cpu_wrap8(__m256 x, float lo, float len, __m256 *ok)
{
    __m256 vlo = _mm256_set1_ps(lo), vlen = _mm256_set1_ps(len), vhi = _mm256_set1_ps(lo + len);
    __m256 below = _mm256_cmp_ps(x, vlo, _CMP_LT_OQ);
    __m256 above = _mm256_andnot_ps(below, _mm256_cmp_ps(x, vhi, _CMP_GE_OQ));
    x = _mm256_blendv_ps(x, _mm256_add_ps(x, vlen), below);
    x = _mm256_blendv_ps(x, _mm256_sub_ps(x, vlen), above);
    __m256 in = _mm256_and_ps(_mm256_cmp_ps(x, vlo, _CMP_GE_OQ), _mm256_cmp_ps(x, vhi, _CMP_LT_OQ));
    *ok = _mm256_and_ps(*ok, in);
    return x;
}

/* ad_cell_coord for eight coordinates. */
AD_CPU_INLINE __m256i ad_cpu_cell_coord8(__m256 x, float origin, float inv_cell, int n)
{
    __m256 f = _mm256_mul_ps(_mm256_sub_ps(x, _mm256_set1_ps(origin)), _mm256_set1_ps(inv_cell));
    __m256i last = _mm256_set1_epi32(n - 1);
    __m256i c = _mm256_min_epi32(_mm256_cvttps_epi32(f), last); /* in [0, n): the truncation */
    c = _mm256_blendv_epi8(c, last, _mm256_castps_si256(_mm256_cmp_ps(f, _mm256_set1_ps((float)n), _CMP_GE_OQ)));
    /* !(f >= 0), NaN included: cell 0 */
    return _mm256_and_si256(c, _mm256_castps_si256(_mm256_cmp_ps(f, _mm256_setzero_ps(), _CMP_GE_OQ)));
}

/* 1 where one of eight discs with cell coordinates (cx, cy) is in the reservoir's band (its
 * draws are scalar, open.h). */
AD_CPU_INLINE int ad_cpu_in_band8(const ad_params *P, __m256i cx, __m256i cy)
{
    __m256i band = _mm256_or_si256(
        _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(P->res_l), cx),
                        _mm256_cmpgt_epi32(cx, _mm256_set1_epi32(P->nx - P->res_r - 1))),
        _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(P->res_b), cy),
                        _mm256_cmpgt_epi32(cy, _mm256_set1_epi32(P->ny - P->res_t - 1))));
    return !_mm256_testz_si256(band, band);
}

/* ad_outside_domain for eight discs: how many are outside. */
AD_CPU_INLINE uint32_t ad_cpu_outside8(const ad_params *P, __m256 x, __m256 y)
{
    __m256 inside = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    if (!P->open_y)
        inside = _mm256_and_ps(_mm256_cmp_ps(y, _mm256_set1_ps(P->y_min), _CMP_GE_OQ),
                               _mm256_cmp_ps(y, _mm256_set1_ps(P->y_max), _CMP_LE_OQ));
    if (!P->open_x)
        inside = _mm256_and_ps(inside, _mm256_and_ps(_mm256_cmp_ps(x, _mm256_set1_ps(P->x_min), _CMP_GE_OQ),
                                                     _mm256_cmp_ps(x, _mm256_set1_ps(P->x_max), _CMP_LE_OQ)));
    return (uint32_t)__builtin_popcount(~(unsigned)_mm256_movemask_ps(inside) & 0xffu);
}

/* Eight states back to AoS at out: rows {d0, d4}, {d1, d5}, {d2, d6}, {d3, d7}, then halves paired. */
AD_CPU_INLINE void ad_cpu_store8(ad_state *out, __m256 x, __m256 y, __m256 vx, __m256 vy)
{
    __m256 a = _mm256_unpacklo_ps(x, y), b = _mm256_unpackhi_ps(x, y);
    __m256 c = _mm256_unpacklo_ps(vx, vy), d = _mm256_unpackhi_ps(vx, vy);
    __m256 o0 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(a), _mm256_castps_pd(c)));
    __m256 o1 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(a), _mm256_castps_pd(c)));
    __m256 o2 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(b), _mm256_castps_pd(d)));
    __m256 o3 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(b), _mm256_castps_pd(d)));
    float *o = &out[0].x;
    _mm256_storeu_ps(o + 0, _mm256_permute2f128_ps(o0, o1, 0x20));
    _mm256_storeu_ps(o + 8, _mm256_permute2f128_ps(o2, o3, 0x20));
    _mm256_storeu_ps(o + 16, _mm256_permute2f128_ps(o0, o1, 0x31));
    _mm256_storeu_ps(o + 24, _mm256_permute2f128_ps(o2, o3, 0x31));
}

/* ad_motion8_add for eight lanes at once: lane l adds to the sums of slot mod 8 = l, as the scalar
 * code does, with the same operations (the non-finite test, the double sums, the largest speed). */
AD_CPU_INLINE void ad_cpu_motion8_add8(const ad_params *P, __m256 x, __m256 y, __m256 vx, __m256 vy, ad_motion8 *m8,
                                       ad_step_sums *sums)
{
    __m256 v2 = _mm256_add_ps(_mm256_mul_ps(vx, vx), _mm256_mul_ps(vy, vy));
    __m256 z = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_sub_ps(x, x), _mm256_sub_ps(y, y)),
                                           _mm256_sub_ps(vx, vx)),
                             _mm256_sub_ps(vy, vy));
    sums->nonfinite += (uint32_t)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_cmp_ps(z, z, _CMP_UNORD_Q)));
    __m256d kc = _mm256_set1_pd(0.5 * (double)P->mass), mc = _mm256_set1_pd((double)P->mass);
    __m256 q[3] = {v2, vx, vy};
    double *acc[3] = {m8->ke, m8->px, m8->py};
    for (int k = 0; k < 3; k++) {
        __m256d f = k ? mc : kc;
        __m256d lo = _mm256_mul_pd(f, _mm256_cvtps_pd(_mm256_castps256_ps128(q[k])));
        __m256d hi = _mm256_mul_pd(f, _mm256_cvtps_pd(_mm256_extractf128_ps(q[k], 1)));
        _mm256_storeu_pd(acc[k], _mm256_add_pd(_mm256_loadu_pd(acc[k]), lo));
        _mm256_storeu_pd(acc[k] + 4, _mm256_add_pd(_mm256_loadu_pd(acc[k] + 4), hi));
    }
    _Alignas(32) float V2[8];
    _mm256_store_ps(V2, v2);
    float vmax2 = sums->vmax2;
    for (int l = 0; l < 8; l++) vmax2 = vmax2 > V2[l] ? vmax2 : V2[l];
    sums->vmax2 = vmax2;
}

/* Slots s..s+7: `in` their states before the step, AX/AY their accelerations. Returns 1
 * when it wrote them (out, cell_of, counters, sums), 0, having written nothing, when the
 * scalar path must (the contract above). */
AD_CPU_INLINE int ad_cpu_integrate8_avx2(const ad_params *P, const ad_state *in, ad_state *out, const float *AX,
                                         const float *AY, float dt, int symplectic, uint32_t *cell_of,
                                         ad_cpu_fused_bin *bins, ad_motion8 *m8, ad_step_sums *sums,
                                         uint32_t *outside)
{
    __m256 x, y, vx, vy;
    ad_cpu_soa8(&in[0].x, &x, &y, &vx, &vy);
    __m256 vdt = _mm256_set1_ps(dt);
    __m256 ax = _mm256_loadu_ps(AX), ay = _mm256_loadu_ps(AY);
    if (symplectic) { /* ad_step_symplectic */
        vx = _mm256_add_ps(vx, _mm256_mul_ps(ax, vdt));
        vy = _mm256_add_ps(vy, _mm256_mul_ps(ay, vdt));
        x = _mm256_add_ps(x, _mm256_mul_ps(vx, vdt));
        y = _mm256_add_ps(y, _mm256_mul_ps(vy, vdt));
    } else { /* ad_step_euler */
        x = _mm256_add_ps(x, _mm256_mul_ps(vx, vdt));
        y = _mm256_add_ps(y, _mm256_mul_ps(vy, vdt));
        vx = _mm256_add_ps(vx, _mm256_mul_ps(ax, vdt));
        vy = _mm256_add_ps(vy, _mm256_mul_ps(ay, vdt));
    }
    /* ad_apply_boundaries: ad_wrap_state, then a disc past an open side is removed (scalar) */
    __m256 ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    if (P->periodic_x) x = ad_cpu_wrap8(x, P->x_min, P->len_x, &ok);
    if (P->periodic_y) y = ad_cpu_wrap8(y, P->y_min, P->len_y, &ok);
    /* ad_left_open, side by side */
    if (P->open[0]) ok = _mm256_and_ps(ok, _mm256_cmp_ps(x, _mm256_set1_ps(P->x_min), _CMP_GE_OQ));
    if (P->open[1]) ok = _mm256_and_ps(ok, _mm256_cmp_ps(x, _mm256_set1_ps(P->x_max), _CMP_LT_OQ));
    if (P->open[2]) ok = _mm256_and_ps(ok, _mm256_cmp_ps(y, _mm256_set1_ps(P->y_min), _CMP_GE_OQ));
    if (P->open[3]) ok = _mm256_and_ps(ok, _mm256_cmp_ps(y, _mm256_set1_ps(P->y_max), _CMP_LT_OQ));
    if (_mm256_movemask_ps(ok) != 0xff) return 0;
    /* the next step's bin (ad_cell_index, ad_outside_domain) */
    __m256i cx = ad_cpu_cell_coord8(x, P->origin_x, P->inv_cell_x, P->nx);
    __m256i cy = ad_cpu_cell_coord8(y, P->origin_y, P->inv_cell_y, P->ny);
    if (P->res_boxes && ad_cpu_in_band8(P, cx, cy)) return 0; /* the reservoir's draws are scalar */
    __m256i cell = _mm256_add_epi32(_mm256_mullo_epi32(cy, _mm256_set1_epi32(P->nx)), cx);
    *outside += ad_cpu_outside8(P, x, y);
    _mm256_storeu_si256((__m256i *)cell_of, cell);
    _Alignas(32) uint32_t C[8];
    _mm256_store_si256((__m256i *)C, cell);
    if (bins->width == UINT32_MAX) /* one thread: every cell is its own */
        for (int l = 0; l < 8; l++) bins->count[C[l]]++;
    else
        for (int l = 0; l < 8; l++) ad_cpu_fused_bin_count(bins, C[l], bins->slot + (uint32_t)l);
    ad_cpu_store8(out, x, y, vx, vy);
    ad_cpu_motion8_add8(P, x, y, vx, vy, m8, sums);
    return 1;
}


/* Velocity Verlet's kick for slots s..s+7 (what interact_motion does for one disc of a Verlet step):
 * ad_verlet_kick with the accelerations of the last evaluation (acc_in) and of this one (AX, AY), the
 * periodic wraps of ad_apply_boundaries (the drift wrapped the positions: nothing moves, but the same
 * test runs), the writes of the states and the accelerations, and the motion sums. The pass does not
 * bin: the drift bins (verlet_drift, step_cpu.c). Returns 0, having written nothing, where the world
 * has an open side (removals and the reservoir's draws are scalar) or a lane fails the wraps' test. */
AD_CPU_INLINE int ad_cpu_kick8_avx2(const ad_params *P, const ad_state *in, ad_state *out, const ad_accel *acc_in,
                                    ad_accel *acc_out, const float *AX, const float *AY, float dt, ad_motion8 *m8,
                                    ad_step_sums *sums)
{
    if (P->open_x || P->open_y) return 0;
    __m256 x, y, vx, vy;
    ad_cpu_soa8(&in[0].x, &x, &y, &vx, &vy);
    __m256 ox, oy;
    ad_cpu_accel8_load(&acc_in[0].ax, &ox, &oy);
    __m256 vdt = _mm256_set1_ps(dt), half = _mm256_set1_ps(0.5f);
    __m256 ax = _mm256_loadu_ps(AX), ay = _mm256_loadu_ps(AY);
    /* ad_verlet_kick: v += 0.5 (a - a_old) dt, in that order */
    vx = _mm256_add_ps(vx, _mm256_mul_ps(_mm256_mul_ps(half, _mm256_sub_ps(ax, ox)), vdt));
    vy = _mm256_add_ps(vy, _mm256_mul_ps(_mm256_mul_ps(half, _mm256_sub_ps(ay, oy)), vdt));
    __m256 ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    if (P->periodic_x) x = ad_cpu_wrap8(x, P->x_min, P->len_x, &ok);
    if (P->periodic_y) y = ad_cpu_wrap8(y, P->y_min, P->len_y, &ok);
    if (_mm256_movemask_ps(ok) != 0xff) return 0;
    ad_cpu_store8(out, x, y, vx, vy);
    ad_cpu_accel8_store(&acc_out[0].ax, ax, ay);
    ad_cpu_motion8_add8(P, x, y, vx, vy, m8, sums);
    return 1;
}

#endif
#endif
