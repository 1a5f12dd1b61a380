/* The contact-free test (AVX2): which of eight discs touch nothing this step, and their expiries (free_until).
 *
 * Contract. ad_cpu_contact_free8_avx2 returns a bit for each of slots s..s+7; a set bit means
 * the disc's whole gather (ad_cpu_gather_all: other discs, segments, walls) is the zero sums,
 * and the pass then takes the accelerations of zero sums without gathering (interact_cpu.h).
 * A clear bit means nothing: the disc takes the ordinary gather. So the test may only err
 * towards clear bits, and every set bit is exact (test_grid checks each against ad_gather_all,
 * with discs driven straight at their nearest neighbours; test_isa steps whole worlds with and
 * without AVX2).
 *
 * A disc is contact-free when it qualifies:
 *  - its cell is two or more cells from every edge of the grid, so that its candidates, in the
 *    cells around it, are discs binned where they are (never clamped in from outside: their
 *    positions lie in those cells, and no difference overflows);
 *  - no segment's box and no solid wall is within its reach (the tests of ad_contact_segments
 *    and ad_contact_walls, lane by lane);
 * and either its expiry says it is still free (below), or its three rows hold at most eight
 * candidates each (checked here unless `rows_fit8`, below) and no live one other than the
 * disc itself is closer than a diameter (a coincident one counts as close). Lanes past a row's
 * end are the next cells' discs or padding: a hit there only sends the disc the full way.
 *
 * Valid where the candidate screen is (candidate_screen_cpu.h: no NaN state, speeds below
 * 1e15, so that the full path hands the law no lane whose difference is not finite) and with
 * cells below 1e17 m (three cells' separation squared stays finite): cpu_world.prefilter_valid.
 *
 * rows_fit8 (cpu_world.rows_fit8, from the last scan's ad_grid_diag.max_run3): no three
 * consecutive cells hold more than eight discs, so no row can, and the test leaves out its
 * row-length checks. It is compiled as two loops, with and without them (docs/PERFORMANCE.md:
 * the checks' spills slowed the hot loop).
 *
 * Expiries (free_until not NULL: free_until[s..s+7], in slot order, read and written, moved
 * with the discs by the reorder). A disc tested here also gets its margin, how much closer than
 * now any other disc can come before it could touch: the smaller of (its nearest candidate's
 * distance - dlim) and (its distance to the edge of its three-by-three cells + a cell - dlim:
 * every disc outside those cells is at least that far), less the slack. Where that is positive
 * its expiry becomes clock + margin, rounded down. The world's clock (free_clock,
 * contact_free_clock_cpu.c) grows after every step by twice the largest distance a disc moved
 * in it (plus rounding): no pair can close its distance by more in that step. So while the
 * clock is below a disc's expiry no two discs can have closed its margin, the disc is still
 * contact-free, and it skips its rows. Discs that jump instead of moving are accounted for:
 * a periodic wrap lands a disc within a step's move of an edge, two cells from any disc that
 * may skip; an open side (discs appear there) keeps no expiries at all; and the world advances
 * the clock past every expiry (margins stay below 1.5 cells) where a step's move exceeds a
 * quarter cell, where the pass did not run the prefilters, and after discs were added or
 * imported. A disc that does not qualify (near an edge, a wall or a segment box) gets no expiry
 * (-inf), so one with a live expiry has qualified at every step since it was tested. Most discs
 * of a gas are tested one step in several. */
#ifndef AD_CPU_CONTACT_FREE_CPU_H
#define AD_CPU_CONTACT_FREE_CPU_H

#include "../physics/segment.h"
#include "fast_path_cpu.h"
#include "grid_cpu.h"

/* The contact-free clock as the pass hands it to ad_cpu_contact_free8_avx2
 * (contact_free_clock_cpu.c): the world's free_clock rounded up and down to floats, the
 * separation beyond which the law's float test sees no contact, and the rounding allowance
 * taken off every margin. */
typedef struct ad_cpu_free_clock {
    float up, down;
    float dlim;  /* sqrt(diameter_sq) (1 + 1e-5) */
    float slack; /* 8 ulps of the largest coordinate of the grid, and 1e-6 diameters */
} ad_cpu_free_clock;

#ifdef AD_CPU_AVX2

/* The lanes of the eight discs at (X, Y), in cells (fx, fy) as ad_cpu_gather_all computes
 * them, that qualify (above: two cells from the grid's edges, no solid wall or segment box
 * within reach). */
AD_CPU_INLINE __m256 ad_cpu_free_qualify8(const ad_params *p, const ad_seg_grid *g, __m256 X, __m256 Y, __m256 fx,
                                          __m256 fy)
{
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
    return ok;
}

/* The margins of eight discs (the contract above) from the smallest d2 of their other
 * candidates (m2) and their cell coordinates (fx, fy): the nearest candidate's distance and the
 * distance to the edge of the three-by-three cells plus a cell, each less dlim, less the slack. */
AD_CPU_INLINE __m256 ad_cpu_free_margin8(const ad_params *p, const ad_cpu_free_clock *fc, __m256 m2, __m256 fx,
                                         __m256 fy)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 dlim = _mm256_set1_ps(fc->dlim);
    __m256 gap = _mm256_sub_ps(_mm256_mul_ps(_mm256_sqrt_ps(m2), _mm256_set1_ps(1.0f - 1e-6f)), dlim);
    __m256 frx = _mm256_sub_ps(fx, _mm256_round_ps(fx, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
    __m256 fry = _mm256_sub_ps(fy, _mm256_round_ps(fy, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
    __m256 ex = _mm256_mul_ps(_mm256_set1_ps(p->cell_x), _mm256_add_ps(one, _mm256_min_ps(frx, _mm256_sub_ps(one, frx))));
    __m256 ey = _mm256_mul_ps(_mm256_set1_ps(p->cell_y), _mm256_add_ps(one, _mm256_min_ps(fry, _mm256_sub_ps(one, fry))));
    return _mm256_sub_ps(_mm256_min_ps(gap, _mm256_sub_ps(_mm256_min_ps(ex, ey), dlim)), _mm256_set1_ps(fc->slack));
}

/* The contact-free discs among slots s..s+7 (bit l: slot s + l), with their expiries
 * free_until[s..s+7] read and renewed where free_until is not NULL (the contract above). */
AD_CPU_INLINE unsigned ad_cpu_contact_free8_avx2(const ad_params *p, const ad_seg_grid *g, const uint32_t *start,
                                                 const ad_cpu_xy *xy, size_t s, int rows_fit8, float *free_until,
                                                 const ad_cpu_free_clock *fc)
{
    const __m256 X = _mm256_loadu_ps(xy->x + s), Y = _mm256_loadu_ps(xy->y + s);
    /* the cell coordinates as ad_cpu_gather_all computes them */
    __m256 fx = _mm256_mul_ps(_mm256_sub_ps(X, _mm256_set1_ps(p->origin_x)), _mm256_set1_ps(p->inv_cell_x));
    __m256 fy = _mm256_mul_ps(_mm256_sub_ps(Y, _mm256_set1_ps(p->origin_y)), _mm256_set1_ps(p->inv_cell_y));
    __m256 ok = ad_cpu_free_qualify8(p, g, X, Y, fx, fy);
    const __m256 none = _mm256_set1_ps(-INFINITY);
    __m256 old = none, still_free = _mm256_setzero_ps(); /* the lanes whose expiry says they are still free */
    if (free_until) {
        old = _mm256_loadu_ps(free_until + s);
        still_free = _mm256_and_ps(ok, _mm256_cmp_ps(old, _mm256_set1_ps(fc->up), _CMP_GT_OQ));
    }
    const unsigned tested = (unsigned)_mm256_movemask_ps(ok) & ~(unsigned)_mm256_movemask_ps(still_free);
    unsigned cand = tested;
    if (!cand) {
        if (free_until) _mm256_storeu_ps(free_until + s, _mm256_blendv_ps(none, old, still_free));
        return (unsigned)_mm256_movemask_ps(still_free);
    }
    const ptrdiff_t nx = p->nx;
    _Alignas(32) int32_t base[8];
    _mm256_store_si256((__m256i *)base, _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvttps_epi32(fy),
                                                                            _mm256_set1_epi32(p->nx)),
                                                         _mm256_cvttps_epi32(fx)));
    const __m256 D = _mm256_set1_ps(p->diameter_sq), zero = _mm256_setzero_ps(), inf = _mm256_set1_ps(INFINITY);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    /* with expiries: the smallest d2 of the other candidates (0: not tested), lane by lane in a register (a
     * vector load of lanes just stored one by one would stall on the store forwarding) */
    __m256 m2 = _mm256_setzero_ps();
    unsigned free_bits = 0;
    for (; cand; cand &= cand - 1) {
        int l = __builtin_ctz(cand);
        const uint32_t *st = start + base[l];
        uint32_t l0 = st[-nx - 1], l1 = st[-1], l2 = st[nx - 1];
        if (!rows_fit8 && ((st[-nx + 2] - l0 > 8) | (st[2] - l1 > 8) | (st[nx + 2] - l2 > 8))) continue;
        const __m256 mx = _mm256_broadcast_ss(xy->x + s + l), my = _mm256_broadcast_ss(xy->y + s + l);
        __m256 dx0 = _mm256_sub_ps(_mm256_loadu_ps(xy->x + l0), mx), dy0 = _mm256_sub_ps(_mm256_loadu_ps(xy->y + l0), my);
        __m256 dx1 = _mm256_sub_ps(_mm256_loadu_ps(xy->x + l1), mx), dy1 = _mm256_sub_ps(_mm256_loadu_ps(xy->y + l1), my);
        __m256 dx2 = _mm256_sub_ps(_mm256_loadu_ps(xy->x + l2), mx), dy2 = _mm256_sub_ps(_mm256_loadu_ps(xy->y + l2), my);
        /* d2 as the law computes it: dx dx + dy dy, not contracted */
        __m256 d0 = _mm256_add_ps(_mm256_mul_ps(dx0, dx0), _mm256_mul_ps(dy0, dy0));
        __m256 d1 = _mm256_add_ps(_mm256_mul_ps(dx1, dx1), _mm256_mul_ps(dy1, dy1));
        __m256 d2 = _mm256_add_ps(_mm256_mul_ps(dx2, dx2), _mm256_mul_ps(dy2, dy2));
        if (free_until) {
            /* the disc itself: lane s + l - l1 of the middle row (which holds at most eight) */
            __m256 self = _mm256_castsi256_ps(_mm256_cmpeq_epi32(iota, _mm256_set1_epi32((int)(s + (size_t)l - l1))));
            __m256 mn = _mm256_min_ps(_mm256_min_ps(d0, d2), _mm256_blendv_ps(d1, inf, self));
            /* the smallest of the eight in every lane (no NaN, no -0: the minimum is exact in any order) */
            mn = _mm256_min_ps(mn, _mm256_permute2f128_ps(mn, mn, 1));
            mn = _mm256_min_ps(mn, _mm256_shuffle_ps(mn, mn, _MM_SHUFFLE(1, 0, 3, 2)));
            mn = _mm256_min_ps(mn, _mm256_shuffle_ps(mn, mn, _MM_SHUFFLE(2, 3, 0, 1)));
            m2 = _mm256_blendv_ps(m2, mn, _mm256_castsi256_ps(_mm256_cmpeq_epi32(iota, _mm256_set1_epi32(l))));
        } else {
            /* the disc itself is in the middle row at zero separation; coincident discs in the
             * others count as hits (the full way gives them no force) */
            __m256 hit = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(d0, D, _CMP_LT_OQ), _mm256_cmp_ps(d2, D, _CMP_LT_OQ)),
                                      _mm256_and_ps(_mm256_cmp_ps(d1, D, _CMP_LT_OQ), _mm256_cmp_ps(d1, zero, _CMP_GT_OQ)));
            free_bits |= (unsigned)_mm256_testz_ps(hit, hit) << l;
        }
    }
    if (!free_until) return free_bits;
    const __m256 was_tested = _mm256_castsi256_ps(
        _mm256_cmpgt_epi32(_mm256_and_si256(_mm256_set1_epi32((int)tested), _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128)),
                           _mm256_setzero_si256()));
    /* free now: no other candidate closer than a diameter (an untested lane has M = 0) */
    __m256 now = _mm256_and_ps(was_tested, _mm256_cmp_ps(m2, D, _CMP_GE_OQ));
    /* the margin: the nearest candidate, and the edge of the three-by-three cells */
    __m256 margin = ad_cpu_free_margin8(p, fc, m2, fx, fy);
    __m256 grant = _mm256_and_ps(now, _mm256_cmp_ps(margin, _mm256_setzero_ps(), _CMP_GT_OQ));
    /* clock + margin, rounded down: one ulp below the nearest (both positive) */
    __m256 due = _mm256_castsi256_ps(_mm256_sub_epi32(
        _mm256_castps_si256(_mm256_add_ps(_mm256_set1_ps(fc->down), margin)), _mm256_set1_epi32(1)));
    _mm256_storeu_ps(free_until + s, _mm256_blendv_ps(_mm256_blendv_ps(none, due, grant), old, still_free));
    return (unsigned)_mm256_movemask_ps(_mm256_or_ps(still_free, now));
}
#endif

#endif
