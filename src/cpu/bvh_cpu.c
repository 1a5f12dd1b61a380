/* The CPU BVH broad phase: Morton keys, a stable parallel radix sort, the Karras node build, bottom-up boxes. */
#include "bvh_cpu.h"

#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Below this many leaves one thread does each phase: the fork costs more. */
#define AD_BVH_SERIAL 16384

size_t ad_cpu_bvh_bytes(size_t cap)
{
    /* code, perm, their buffers; child x2, rightmost, parent x2, visits; boxes */
    return cap * (4 * sizeof(uint32_t) + 6 * sizeof(uint32_t) + sizeof(ad_bvh_box));
}

void ad_cpu_bvh_free(ad_cpu_bvh *b)
{
    free(b->code);
    free(b->perm);
    free(b->code_tmp);
    free(b->perm_tmp);
    free(b->child);
    free(b->rightmost);
    free(b->parent);
    free(b->visits);
    free(b->box);
    memset(b, 0, sizeof *b);
}

int ad_cpu_bvh_alloc(ad_cpu_bvh *b, size_t cap)
{
    memset(b, 0, sizeof *b);
    size_t c = cap ? cap : 1;
    b->cap = cap;
    b->code = malloc(c * sizeof *b->code);
    b->perm = malloc(c * sizeof *b->perm);
    b->code_tmp = malloc(c * sizeof *b->code_tmp);
    b->perm_tmp = malloc(c * sizeof *b->perm_tmp);
    b->child = malloc(2 * c * sizeof *b->child);
    b->rightmost = malloc(c * sizeof *b->rightmost);
    b->parent = malloc(2 * c * sizeof *b->parent);
    b->visits = malloc(c * sizeof *b->visits);
    b->box = malloc(c * sizeof *b->box);
    if (!b->code || !b->perm || !b->code_tmp || !b->perm_tmp || !b->child || !b->rightmost || !b->parent ||
        !b->visits || !b->box) {
        ad_cpu_bvh_free(b);
        return 1;
    }
    return 0;
}

static int threads_for(size_t n, int threads) { return n < AD_BVH_SERIAL || threads < 1 ? 1 : threads; }

uint64_t ad_cpu_morton_keys(const ad_params *p, const ad_state *s, size_t n, ad_cpu_bvh *b, int threads,
                            size_t *dead)
{
    const ad_params P = *p;
    uint32_t *code = b->code, *perm = b->perm;
    uint64_t outside = 0, removed = 0;
#pragma omp parallel for num_threads(threads_for(n, threads)) schedule(static) reduction(+ : outside, removed)
    for (size_t i = 0; i < n; i++) {
        ad_state q = s[i];
        code[i] = ad_bvh_key(&P, q);
        perm[i] = (uint32_t)i;
        int gone = q.x != q.x;
        removed += (uint64_t)gone;
        outside += (uint64_t)(!gone && ad_outside_domain(&P, q.x, q.y));
    }
    if (dead) *dead = (size_t)removed;
    return outside;
}

enum { RADIX = 256, MAX_SORT_THREADS = 256 };

void ad_cpu_radix_sort(ad_cpu_bvh *b, size_t n, int threads)
{
    int t = threads_for(n, threads);
    if (t > MAX_SORT_THREADS) t = MAX_SORT_THREADS;
    uint32_t *hist = malloc((size_t)t * RADIX * sizeof *hist);
    uint32_t *kin = b->code, *vin = b->perm, *kout = b->code_tmp, *vout = b->perm_tmp;
    /* without scratch for the histograms, one chunk: the same order, serially */
    uint32_t one[RADIX];
    if (!hist) {
        hist = one;
        t = 1;
    }
    for (int shift = 0; shift < 32; shift += 8) {
        int used = t;
#pragma omp parallel num_threads(t)
        {
#ifdef _OPENMP
            int k = omp_get_thread_num(), nt = omp_get_num_threads();
#else
            int k = 0, nt = 1;
#endif
#pragma omp single
            used = nt;
            size_t chunk = (n + (size_t)nt - 1) / (size_t)nt;
            size_t a = (size_t)k * chunk < n ? (size_t)k * chunk : n, e = a + chunk < n ? a + chunk : n;
            uint32_t *h = hist + (size_t)k * RADIX;
            memset(h, 0, RADIX * sizeof *h);
            for (size_t i = a; i < e; i++) h[(kin[i] >> shift) & 0xffu]++;
#pragma omp barrier
#pragma omp single
            {
                /* offsets in (digit, chunk) order: equal digits keep the chunks' order */
                uint32_t run = 0;
                for (int d = 0; d < RADIX; d++)
                    for (int c = 0; c < used; c++) {
                        uint32_t v = hist[(size_t)c * RADIX + d];
                        hist[(size_t)c * RADIX + d] = run;
                        run += v;
                    }
            }
            for (size_t i = a; i < e; i++) {
                uint32_t key = kin[i], dst = h[(key >> shift) & 0xffu]++;
                kout[dst] = key;
                vout[dst] = vin[i];
            }
        }
        uint32_t *tk = kin, *tv = vin;
        kin = kout;
        vin = vout;
        kout = tk;
        vout = tv;
    }
    /* four passes: the sorted data is back in code and perm */
    if (hist != one) free(hist);
}

ad_bvh ad_cpu_bvh_build(ad_cpu_bvh *b, const ad_state *points, const ad_bvh_box *leaf_boxes, size_t n, int threads)
{
    ad_bvh t = {(uint32_t)n, b->child, b->rightmost, b->box, points, points ? NULL : leaf_boxes};
    if (n < 2) return t;
    int nt = threads_for(n, threads);
    uint32_t m = (uint32_t)n;
    const uint32_t *code = b->code;
    uint32_t *child = b->child, *rightmost = b->rightmost, *parent = b->parent, *visits = b->visits;
    ad_bvh_box *box = b->box;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t k = 0; k < n - 1; k++) ad_bvh_build_node(code, m, (uint32_t)k, child, rightmost, parent);
    memset(visits, 0, (n - 1) * sizeof *visits);
    /* bottom-up: each leaf climbs; at a parent the first child to arrive stops and the
     * second merges both boxes. acq_rel on the counter: the first child's box, written
     * before its increment, is visible to the second after its own increment. */
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t i = 0; i < n; i++) ad_bvh_climb(&t, box, parent, visits, m, (uint32_t)i, 1);
    return t;
}
