/* Prototype for the CPU issue's 3x goal: the interior disc-disc search with SIMD lanes across
 * discs (eight discs a group, one candidate of each at a time, by AVX2 gathers) against the
 * engine's lanes across candidates (one disc, its three rows copied and transposed:
 * ad_cpu_gather_interior_avx2, src/cpu/gather_cpu.h). Same gas as bench_core's box (a square
 * lattice at area fraction 0.3, each disc moved at random, in cell order), the same law
 * (ad_contact_disc) and the same order of terms per disc, so the two must give the same bits;
 * the program checks that and prints nanoseconds a disc for each. Not part of the build.
 *
 * Build: gcc -O3 -mavx2 -mfma -fopenmp -std=gnu11 -Iinclude -Isrc dev/cpu/across.c -lm -o across
 *        ./across [N [JIGGLE]]   (JIGGLE: each disc moved by up to +-JIGGLE/2 lattice spacings) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/gather_cpu.h"
#include "../../bench/bench_gas.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* Lanes across discs: slots g..g+7; res[k] receives disc k's sums (interior lanes only,
 * *interior gets their mask). */
static void across8(const ad_params *p, const uint32_t *start, const ad_state *s, size_t g, ad_accum res[8],
                    unsigned *interior)
{
    __m256 mx, my, mvx, mvy;
    ad_cpu_soa8(&s[g].x, &mx, &my, &mvx, &mvy);
    __m256 fx = _mm256_mul_ps(_mm256_sub_ps(mx, _mm256_set1_ps(p->origin_x)), _mm256_set1_ps(p->inv_cell_x));
    __m256 fy = _mm256_mul_ps(_mm256_sub_ps(my, _mm256_set1_ps(p->origin_y)), _mm256_set1_ps(p->inv_cell_y));
    __m256 one = _mm256_set1_ps(1.0f);
    __m256 in = _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(fx, one, _CMP_GE_OQ),
                                            _mm256_cmp_ps(fx, _mm256_set1_ps((float)(p->nx - 1)), _CMP_LT_OQ)),
                              _mm256_and_ps(_mm256_cmp_ps(fy, one, _CMP_GE_OQ),
                                            _mm256_cmp_ps(fy, _mm256_set1_ps((float)(p->ny - 1)), _CMP_LT_OQ)));
    __m256i cx = _mm256_cvttps_epi32(fx), cy = _mm256_cvttps_epi32(fy);
    __m256i base = _mm256_add_epi32(_mm256_mullo_epi32(cy, _mm256_set1_epi32(p->nx)), cx);
    __m256i inm = _mm256_castps_si256(in);
    base = _mm256_and_si256(base, inm); /* lanes outside: cell 0 (never read: length 0) */
    *interior = (unsigned)_mm256_movemask_ps(in);
    _Alignas(32) float acc[6][8];
    memset(acc, 0, sizeof acc);
    const float *sx = &s[0].x;
    for (int r = -1; r <= 1; r++) {
        __m256i row = _mm256_add_epi32(base, _mm256_set1_epi32(r * p->nx));
        __m256i lo = _mm256_i32gather_epi32((const int *)start, _mm256_sub_epi32(row, _mm256_set1_epi32(1)), 4);
        __m256i hi = _mm256_i32gather_epi32((const int *)start, _mm256_add_epi32(row, _mm256_set1_epi32(2)), 4);
        __m256i len = _mm256_and_si256(_mm256_sub_epi32(hi, lo), inm);
        _Alignas(32) int L[8];
        _mm256_store_si256((__m256i *)L, len);
        int most = 0;
        for (int l = 0; l < 8; l++) most = L[l] > most ? L[l] : most;
        for (int j = 0; j < most; j++) {
            __m256i jj = _mm256_set1_epi32(j);
            __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(len, jj));
            __m256i at = _mm256_slli_epi32(_mm256_add_epi32(lo, jj), 2); /* float index of x */
            /* lanes past their row's end read the disc itself: zero separation, no force */
            __m256 X = _mm256_mask_i32gather_ps(mx, sx, at, live, 4);
            __m256 Y = _mm256_mask_i32gather_ps(my, sx + 1, at, live, 4);
            __m256 dx = _mm256_sub_ps(X, mx), dy = _mm256_sub_ps(Y, my);
            __m256 d2 = _mm256_fmadd_ps(dy, dy, _mm256_mul_ps(dx, dx));
            __m256 near = _mm256_and_ps(_mm256_cmp_ps(d2, _mm256_set1_ps(p->diameter_sq), _CMP_LT_OQ),
                                        _mm256_cmp_ps(d2, _mm256_setzero_ps(), _CMP_GT_OQ));
            unsigned m = (unsigned)_mm256_movemask_ps(near);
            if (!m) continue;
            _Alignas(32) float DX[8], DY[8], MVX[8], MVY[8];
            _Alignas(32) int AT[8];
            _mm256_store_ps(DX, dx);
            _mm256_store_ps(DY, dy);
            _mm256_store_ps(MVX, mvx);
            _mm256_store_ps(MVY, mvy);
            _mm256_store_si256((__m256i *)AT, at);
            while (m) { /* the law of each touching lane, its terms added as ad_cpu_add_lanes does */
                int l = __builtin_ctz(m);
                m &= m - 1;
                ad_accum u;
                ad_accum_zero(&u);
                ad_contact_disc(p, DX[l], DY[l], sx[AT[l] + 2] - MVX[l], sx[AT[l] + 3] - MVY[l], &u);
                acc[0][l] += u.fx;
                acc[1][l] += u.fy;
                acc[2][l] += u.pressure;
                acc[3][l] += u.virial;
                acc[4][l] += u.energy;
                acc[5][l] = acc[5][l] > u.max_overlap ? acc[5][l] : u.max_overlap;
            }
        }
    }
    for (int l = 0; l < 8; l++) {
        ad_accum_zero(&res[l]);
        res[l].fx = acc[0][l];
        res[l].fy = acc[1][l];
        res[l].pressure = acc[2][l];
        res[l].virial = acc[3][l];
        res[l].energy = acc[4][l];
        res[l].max_overlap = acc[5][l];
    }
}

int main(int argc, char **argv)
{
    int nside = argc > 1 ? (int)sqrt(atof(argv[1])) : 320;
    double jiggle = argc > 2 ? atof(argv[2]) : 0.5; /* each disc moved by up to +-jiggle/2 lattice spacings */
    size_t n = (size_t)nside * nside;
    double L = sqrt(n * M_PI * 0.25 / 0.3), a = L / nside;
    ad_params p;
    memset(&p, 0, sizeof p);
    bench_disc_law(&p, 2.0f);
    p.nx = p.ny = (int)floor(L);
    p.cell_x = p.cell_y = (float)(L / p.nx);
    p.inv_cell_x = p.inv_cell_y = (float)(p.nx / L);
    p.reach_x = p.reach_y = 1;
    ad_stencil_make(1, 0, &p.stencil);
    size_t ncell = (size_t)p.nx * p.ny;
    ad_state *raw = malloc(n * sizeof *raw), *s = malloc((n + AD_CPU_PAD) * sizeof *s);
    uint32_t *cell = malloc(n * 4), *start = calloc(ncell + 1, 4), *cur = calloc(ncell, 4);
    for (int i = 0; i < nside; i++)
        for (int j = 0; j < nside; j++) {
            ad_state q = {(float)((i + 0.5 + jiggle * (urand() - 0.5)) * a),
                          (float)((j + 0.5 + jiggle * (urand() - 0.5)) * a),
                          (float)(urand() - 0.5), (float)(urand() - 0.5)};
            raw[(size_t)i * nside + j] = q;
        }
    for (size_t i = 0; i < n; i++) {
        cell[i] = ad_cell_index(&p, raw[i].x, raw[i].y);
        start[cell[i] + 1]++;
    }
    for (size_t c = 0; c < ncell; c++) start[c + 1] += start[c];
    for (size_t i = 0; i < n; i++) s[start[cell[i]] + cur[cell[i]]++] = raw[i];
    memset(s + n, 0, AD_CPU_PAD * sizeof *s);

    ad_accum *A = malloc(n * sizeof *A), *B = malloc(n * sizeof *B);
    char *inA = calloc(n, 1), *inB = calloc(n, 1);
    int reps = 20;
    double ta = 1e30, tb = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        double t0 = now();
        for (size_t i = 0; i < n; i++) {
            ad_state me = s[i];
            float fx = (me.x - p.origin_x) * p.inv_cell_x, fy = (me.y - p.origin_y) * p.inv_cell_y;
            inA[i] = 0;
            if (fx >= 1.0f && fx < (float)(p.nx - 1) && fy >= 1.0f && fy < (float)(p.ny - 1)) {
                ad_accum_zero(&A[i]);
                inA[i] = (char)ad_cpu_gather_interior_avx2(&p, start, s, me, (int)fx, (int)fy, &A[i]);
            }
        }
        double t1 = now();
        size_t g = 0;
        for (; g + 8 <= n; g += 8) {
            unsigned m;
            across8(&p, start, s, g, B + g, &m);
            for (int l = 0; l < 8; l++) inB[g + l] = (char)((m >> l) & 1);
        }
        double t2 = now();
        ta = t1 - t0 < ta ? t1 - t0 : ta;
        tb = t2 - t1 < tb ? t2 - t1 : tb;
    }
    size_t both = 0, differ = 0, touching = 0;
    for (size_t i = 0; i + 8 <= n; i++) {
        if (!inA[i] || !inB[i]) continue;
        both++;
        touching += A[i].energy != 0.0f;
        if (memcmp(&A[i], &B[i], 6 * sizeof(float))) differ++;
    }
    printf("%zu discs, %d x %d cells, %zu interior discs compared (%.1f %% touching), %zu differ\n", n, p.nx, p.ny,
           both, 100.0 * touching / both, differ);
    printf("lanes across candidates (the engine's): %.2f ns a disc\nlanes across discs (gathers):           %.2f ns a disc\n",
           1e9 * ta / n, 1e9 * tb / n);
    return differ != 0;
}
