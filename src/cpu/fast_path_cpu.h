/* What the CPU backend's fast paths share: the AVX2 switch, AD_CPU_INLINE, paddings, an interior cell's rows.
 *
 * The fast paths are the interior gather (gather_cpu.h), the candidate screen
 * (candidate_screen_cpu.h), the contact-free test (contact_free_cpu.h) and the eight-disc
 * integrate (integrate8_cpu.h). Each gives the plain path's results bit for bit; this header
 * holds only what several of them read. */
#ifndef AD_CPU_FAST_PATH_CPU_H
#define AD_CPU_FAST_PATH_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "../physics/params.h"
#include "../physics/state.h"

#define AD_CPU_PAD 4    /* states readable past the last disc (the gather's fixed 4-state row copy) */
#define AD_CPU_XY_PAD 8 /* positions readable past the last disc (the prefilters' 8-lane rows) */

/* x86-64 builds with GCC or Clang: SSE2 and, chosen at run time, AVX2 paths (the scan in
 * grid_cpu.c, the interact passes in interact_avx2.c and sphere_gather_avx2.c). */
#if defined(__GNUC__) && defined(__x86_64__)
#define AD_CPU_X86 1
#endif

/* The AVX2 code exists in the translation units compiled for AVX2 and FMA (interact_avx2.c,
 * chosen at run time); the others get the portable code only. */
#if defined(__AVX2__) && defined(__FMA__)
#define AD_CPU_AVX2 1
#include <immintrin.h>
#endif

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

/* Eight consecutive accelerations {ax, ay} (a: 16 floats) as two vectors of eight lanes, in order: two loads,
 * the even and odd floats of each 128-bit half (ax0 ax1 ax4 ax5 | ax2 ax3 ax6 ax7), the middle pairs swapped.
 * Vector loads of what scalar stores just wrote would stall on the store forwarding. */
AD_CPU_INLINE void ad_cpu_accel8_load(const float *a, __m256 *ax, __m256 *ay)
{
    __m256 lo = _mm256_loadu_ps(a), hi = _mm256_loadu_ps(a + 8);
    __m256 x = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)), y = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
    *ax = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(x), _MM_SHUFFLE(3, 1, 2, 0)));
    *ay = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(y), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* The other way: eight lanes of ax and ay written as eight {ax, ay} (a: 16 floats). */
AD_CPU_INLINE void ad_cpu_accel8_store(float *a, __m256 ax, __m256 ay)
{
    __m256 lo = _mm256_unpacklo_ps(ax, ay), hi = _mm256_unpackhi_ps(ax, ay); /* ax0 ay0 ax1 ay1 | ax4 ay4 ax5 ay5 */
    _mm256_storeu_ps(a, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(a + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}
#endif

#endif
