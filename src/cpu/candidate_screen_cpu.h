/* The candidate screen (AVX2): a disc's interior disc-disc search from the slots' positions alone.
 *
 * Contract. ad_cpu_candidate_screen_avx2 stands in for ad_cpu_gather_interior_avx2 (the
 * interior search of gather_cpu.h) on one disc of an interior cell, and gives its sums bit
 * for bit, or returns 0 having accumulated nothing, where that search must run instead.
 *
 * What it skips: the candidate buffer's copies and transposes, and the contact law on every
 * lane that does not touch. Each of the three neighbour rows is two 8-lane loads of the
 * positions as two arrays (cpu_world.xy, written by the reorder in slot order) and the
 * distance test d2 = dx dx + dy dy < diameter^2, d2 > 0: the law's own test, on the same
 * floats in the same order (not contracted). Where no live lane is that close (nearly every
 * disc of a gas in a step) the disc touches no disc, and the interior search would have added
 * only zero terms. Where some are, the law runs on those lanes alone, in candidate order
 * (rows cy-1, cy, cy+1, slots ascending, as ad_gather_all), with their velocities read from
 * the states: the same terms added in the same order, so the same sums.
 *
 * Why that is exact: the interior search also hands the law every lane whose difference is
 * not finite (the law would return NaN terms). The screen sees positions only, so it is valid
 * only where no state holds a NaN and every speed is below 1e15 (cpu_world.prefilter_valid,
 * set by cpu_one_step from the sums of the pass that wrote the states): then no velocity
 * difference overflows, and a position difference that does shows as an infinite d2, for which
 * the screen returns 0. A row of more than eight candidates also returns 0 (two loads hold
 * eight). Lanes past a row's end (the next cells' discs, or the AD_CPU_XY_PAD padding past the
 * last slot) are tested too: a hit there costs only the exact look. */
#ifndef AD_CPU_CANDIDATE_SCREEN_CPU_H
#define AD_CPU_CANDIDATE_SCREEN_CPU_H

#include "../physics/gather.h"
#include "fast_path_cpu.h"
#include "grid_cpu.h"

#ifdef AD_CPU_AVX2
/* The candidate screen of disc `me` in interior cell (cx, cy) (above): 1 with its disc-disc
 * terms added to *a, 0 where the full interior search must run. */
AD_CPU_INLINE int ad_cpu_candidate_screen_avx2(const ad_params *p, const uint32_t *start, const ad_state *s,
                                               const ad_cpu_xy *xy, ad_state me, int cx, int cy, ad_accum *a)
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
#endif

#endif
