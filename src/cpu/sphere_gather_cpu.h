/* The CPU gather of one sphere: an interior path that hands the contact law only the candidates that touch.
 *
 * Contract. ad_cpu_gather_all3 stands in for ad_plain_gather3 (ad_gather_all3 on the cell of `at`) and
 * gives its sums bit for bit, the sign of a zero included.
 *
 * Where. A sphere whose cell is at least one cell away from every edge of the grid (reach 1 on every
 * axis, at least 5 cells an axis, the stencil's 9 rows) meets its neighbours without a wrap: each row's
 * three cells cx-1..cx+1 are one slot range, and no separation can exceed half a periodic box (both
 * centres lie in the box, within two cells of each other), so the minimum image is the identity.
 * Every other sphere (a border cell, a reach above 1) takes the same skipping over its rows as
 * ad_gather_discs3 finds them (ad_cpu_ranges3), with its minimum image.
 *
 * What it skips, and why that is exact. ad_gather_discs3 hands the law every candidate, in the stencil's
 * row order and slot order. For a candidate apart (d2 >= diameter^2, or d2 == 0) with a finite d2 and a
 * finite velocity difference the law adds only zeros: touch = inv = 0, so n = d 0, delta = (diameter -
 * dist) 0, vn = dv.n and f = k delta - gamma vn are zeros, and a + (+-0) == a for every sum that starts
 * at +0 and never becomes -0 (forces, pressure, virial, energy). The one exception is the largest
 * overlap: max(m, +-0) with m a zero takes the later zero, so where nothing touched it ends with the
 * sign of the last candidate's (diameter - dist) 0. The paths below therefore run the law, in
 * candidate order, on the candidates that touch or whose differences are not finite (the law's NaN
 * terms must reach the sums), and where the last candidate was skipped they apply its zero overlap
 * (ad_cpu_apart3): the same terms in the same order.
 *
 * The screen (AVX2, where the positions are mirrored, ad_cpu_xyz): each row is one 4-lane load of each
 * of x, y and z (two rows a vector), d2 = dx dx + dy dy + dz dz as the law computes it (not contracted: ISO C11 builds), and
 * the law's own test. The mirror holds NaN for a slot whose state is not finite, whose speed is 1e15 m/s
 * or more (its velocity differences could overflow), or whose centre lies outside the box along a
 * periodic axis; a live lane with a NaN or infinite d2 sends the sphere to the scalar path, which tests
 * the velocities itself. A row of more than four spheres does too. */
#ifndef AD_CPU_SPHERE_GATHER_CPU_H
#define AD_CPU_SPHERE_GATHER_CPU_H

#include <math.h>

#include "../physics/gather3.h"
#include "fast_path_cpu.h"

/* The positions of the slots of one state array (mirror) as three arrays, NaN where the screen may not
 * trust a slot (above); AD_CPU_XY_PAD readable floats past the last slot. */
typedef struct ad_cpu_xyz {
    float *x, *y, *z;
    const ad_state3 *mirror;
} ad_cpu_xyz;

/* 1 when the grid allows the interior path at all. */
AD_CPU_INLINE int ad_cpu_fast_grid3(const ad_params *p)
{
    return p->disc_contacts && p->reach_x == 1 && p->reach_y == 1 && p->reach_z == 1 && p->stencil.rows == 9 &&
           p->nx >= 5 && p->ny >= 5 && p->nz >= 5;
}

/* The slot ranges [lo, hi) of the nine rows of interior cell (cx, cy, cz), in the stencil's order. */
AD_CPU_INLINE void ad_cpu_rows3(const ad_params *p, const uint32_t *start, int cx, int cy, int cz, uint32_t lo[9],
                                uint32_t hi[9])
{
    for (int k = 0; k < 9; k++) {
        size_t base = ((size_t)(cz + p->stencil.dz[k]) * (size_t)p->ny + (size_t)(cy + p->stencil.dy[k])) *
                          (size_t)p->nx + (size_t)cx;
        lo[k] = start[base - 1];
        hi[k] = start[base + 2];
    }
}

/* The slot ranges [lo, hi) of any cell's neighbour rows, in ad_gather_discs3's order (the stencil's rows,
 * each split in two runs where a periodic x wraps); their number. */
AD_CPU_INLINE int ad_cpu_ranges3(const ad_params *p, const uint32_t *start, int cx, int cy, int cz,
                                 uint32_t lo[2 * AD_STENCIL_ROWS_MAX], uint32_t hi[2 * AD_STENCIL_ROWS_MAX])
{
    int xlo[2], xhi[2], m = 0;
    int runs = ad_neighbour_runs(cx, p->reach_x, p->nx, p->periodic_x, xlo, xhi);
    for (int k = 0; k < p->stencil.rows; k++) {
        int row = ad_neighbour_row(cy, p->stencil.dy[k], p->ny, p->periodic_y);
        int layer = ad_neighbour_row(cz, p->stencil.dz[k], p->nz, p->periodic_z);
        if (row < 0 || layer < 0) continue;
        size_t base = ((size_t)layer * (size_t)p->ny + (size_t)row) * (size_t)p->nx;
        for (int r = 0; r < runs; r++, m++) {
            lo[m] = start[base + (size_t)xlo[r]];
            hi[m] = start[base + (size_t)xhi[r] + 1];
        }
    }
    return m;
}

/* What the law adds for a candidate apart at distance squared d2 (finite): its zero overlap. */
AD_CPU_INLINE void ad_cpu_apart3(const ad_params *p, float d2, ad_accum3 *a)
{
    float delta = (p->diameter - sqrtf(d2)) * 0.0f; /* the law's (diameter - dist) touch, touch = 0 */
    a->max_overlap = a->max_overlap > delta ? a->max_overlap : delta;
}

/* The sphere-sphere terms of sphere i (state me, slot i of s) over m slot ranges, any length, with
 * ad_gather_discs3's minimum image: the law on the candidates that touch or are not finite, the last
 * skipped one's zero overlap. */
AD_CPU_INLINE void ad_cpu_spheres_skip(const ad_params *p, const uint32_t *lo, const uint32_t *hi, int m,
                                       const ad_state3 *s, uint32_t i, ad_state3 me, ad_accum3 *a)
{
    int skipped = 0;
    float far_d2 = 0.0f;
    for (int r = 0; r < m; r++)
        for (uint32_t j = lo[r]; j < hi[r]; j++) {
            if (j == i) continue;
            ad_state3 o = s[j];
            float dx = ad_min_image(o.x - me.x, p->periodic_x, p->len_x, p->half_x);
            float dy = ad_min_image(o.y - me.y, p->periodic_y, p->len_y, p->half_y);
            float dz = ad_min_image(o.z - me.z, p->periodic_z, p->len_z, p->half_z);
            float dvx = o.vx - me.vx, dvy = o.vy - me.vy, dvz = o.vz - me.vz;
            float d2 = dx * dx + dy * dy + dz * dz, t = dvx + dvy + dvz;
            skipped = !(d2 < p->diameter_sq && d2 > 0.0f) && d2 < INFINITY && t - t == 0.0f;
            if (skipped) far_d2 = d2;
            else ad_contact_disc3(p, dx, dy, dz, dvx, dvy, dvz, a);
        }
    if (skipped) ad_cpu_apart3(p, far_d2, a);
}

#ifdef AD_CPU_AVX2
/* The last candidate of the nine rows of sphere i (the highest slot other than i of the last row that
 * has one), or UINT32_MAX where there is none. */
AD_CPU_INLINE uint32_t ad_cpu_last_candidate3(const uint32_t lo[9], const uint32_t hi[9], uint32_t i)
{
    for (int r = 8; r >= 0; r--) {
        uint32_t j = hi[r];
        if (j > lo[r] && j - 1 == i) j--;
        if (j > lo[r]) return j - 1;
    }
    return UINT32_MAX;
}

/* The screen of sphere i in interior cell `cell` (above): 1 with its sphere-sphere terms added to *a,
 * 0 (nothing added) where the scalar path must run. Two rows share a vector, four lanes each (rows
 * 2h and 2h + 1, the ninth alone), so a row of more than four spheres sends the sphere to the scalar
 * path. The sphere's own lane (d2 = 0) is neither close nor bad, so it needs no mask. */
AD_CPU_INLINE int ad_cpu_sphere_screen_avx2(const ad_params *p, const uint32_t *start, size_t cell,
                                            const ad_cpu_xyz *q, const ad_state3 *s, uint32_t i, ad_state3 me,
                                            ad_accum3 *a)
{
    const ptrdiff_t nx = p->nx, nxy = (ptrdiff_t)p->nx * p->ny;
    const uint32_t *st = start + cell;
    uint32_t lo[10], hi[10], over = 0;
#pragma GCC unroll 9
    for (int r = 0; r < 9; r++) { /* the stencil of reach 1: dz outermost, then dy (ad_stencil_make) */
        ptrdiff_t o = (r / 3 - 1) * nxy + (r % 3 - 1) * nx;
        lo[r] = st[o - 1];
        hi[r] = st[o + 2];
        over |= hi[r] - lo[r] > 4;
    }
    if (over) return 0;
    lo[9] = hi[9] = lo[8]; /* the ninth row's partner: no live lane */
    const __m256 mx = _mm256_set1_ps(me.x), my = _mm256_set1_ps(me.y), mz = _mm256_set1_ps(me.z);
    const __m256 D = _mm256_set1_ps(p->diameter_sq), zero = _mm256_setzero_ps(), inf = _mm256_set1_ps(INFINITY);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3);
    __m256 near[5], any = zero, bad = zero;
#pragma GCC unroll 5
    for (int h = 0; h < 5; h++) {
        const uint32_t l0 = lo[2 * h], l1 = lo[2 * h + 1];
        __m256i k = _mm256_setr_epi32((int)(hi[2 * h] - l0), (int)(hi[2 * h] - l0), (int)(hi[2 * h] - l0),
                                      (int)(hi[2 * h] - l0), (int)(hi[2 * h + 1] - l1), (int)(hi[2 * h + 1] - l1),
                                      (int)(hi[2 * h + 1] - l1), (int)(hi[2 * h + 1] - l1));
        __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(k, iota));
        __m256 dx = _mm256_sub_ps(_mm256_loadu2_m128(q->x + l1, q->x + l0), mx);
        __m256 dy = _mm256_sub_ps(_mm256_loadu2_m128(q->y + l1, q->y + l0), my);
        __m256 dz = _mm256_sub_ps(_mm256_loadu2_m128(q->z + l1, q->z + l0), mz);
        __m256 d2 = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)), _mm256_mul_ps(dz, dz));
        __m256 close = _mm256_and_ps(_mm256_cmp_ps(d2, D, _CMP_LT_OQ), _mm256_cmp_ps(d2, zero, _CMP_GT_OQ));
        near[h] = _mm256_and_ps(close, live);
        any = _mm256_or_ps(any, near[h]);
        bad = _mm256_or_ps(bad, _mm256_and_ps(_mm256_cmp_ps(d2, inf, _CMP_NLT_UQ), live)); /* inf or NaN */
    }
    if (!_mm256_testz_ps(bad, bad)) return 0;
    if (!_mm256_testz_ps(any, any))
        for (int h = 0; h < 5; h++) /* lanes 0-3 are row 2h, 4-7 row 2h + 1: ascending is candidate order */
            for (unsigned m = (unsigned)_mm256_movemask_ps(near[h]); m; m &= m - 1) {
                unsigned l = (unsigned)__builtin_ctz(m);
                uint32_t j = l < 4 ? lo[2 * h] + l : lo[2 * h + 1] + l - 4;
                ad_contact_disc3(p, q->x[j] - me.x, q->y[j] - me.y, q->z[j] - me.z, s[j].vx - me.vx,
                                 s[j].vy - me.vy, s[j].vz - me.vz, a);
            }
    if (a->max_overlap > 0.0f) return 1; /* a touch: the last candidate's zero overlap changes nothing */
    uint32_t j = ad_cpu_last_candidate3(lo, hi, i);
    if (j == UINT32_MAX) return 1;
    float dx = q->x[j] - me.x, dy = q->y[j] - me.y, dz = q->z[j] - me.z, d2 = dx * dx + dy * dy + dz * dz;
    if (!(d2 < p->diameter_sq && d2 > 0.0f)) ad_cpu_apart3(p, d2, a); /* skipped above */
    return 1;
}
#endif

/* All contacts of the sphere in slot i (state me; s holds every slot's state, the grid was built from
 * `at`): ad_plain_gather3's sums. q: the mirror of s's positions, or NULL. */
AD_CPU_INLINE void ad_cpu_gather_all3(const ad_params *p, const ad_tri_tree *g, const uint32_t *start,
                                      const ad_state3 *s, const ad_cpu_xyz *q, uint32_t i, ad_state3 at, ad_state3 me,
                                      ad_accum3 *a)
{
    int cx = ad_cell_coord(at.x, p->origin_x, p->inv_cell_x, p->nx);
    int cy = ad_cell_coord(at.y, p->origin_y, p->inv_cell_y, p->ny);
    int cz = ad_cell_coord(at.z, p->origin_z, p->inv_cell_z, p->nz);
    if (!p->disc_contacts) {
        ad_gather_all3(p, g, start, s, i, me, cx, cy, cz, a);
        return;
    }
    int interior = ad_cpu_fast_grid3(p) && cx >= 1 && cx <= p->nx - 2 && cy >= 1 && cy <= p->ny - 2 && cz >= 1 &&
                   cz <= p->nz - 2;
    uint32_t lo[2 * AD_STENCIL_ROWS_MAX], hi[2 * AD_STENCIL_ROWS_MAX];
    ad_accum_zero3(a);
    if (interior) {
#ifdef AD_CPU_AVX2
        size_t cell = ((size_t)cz * (size_t)p->ny + (size_t)cy) * (size_t)p->nx + (size_t)cx;
        if (!(q && q->mirror == s && ad_cpu_sphere_screen_avx2(p, start, cell, q, s, i, me, a)))
#endif
        {
            ad_cpu_rows3(p, start, cx, cy, cz, lo, hi);
            ad_cpu_spheres_skip(p, lo, hi, 9, s, i, me, a);
        }
    } else {
        ad_cpu_spheres_skip(p, lo, hi, ad_cpu_ranges3(p, start, cx, cy, cz, lo, hi), s, i, me, a);
    }
#ifndef AD_CPU_AVX2
    (void)q;
#endif
    ad_contact_triangles(p, g, ad_v3(me.x, me.y, me.z), ad_v3(me.vx, me.vy, me.vz), a);
    ad_contact_walls3(p, me.x, me.y, me.z, me.vx, me.vy, me.vz, a);
}

#endif
