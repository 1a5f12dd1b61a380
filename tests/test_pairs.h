/* Contact pairs found three ways for the broad-phase tests: brute force, the grid as the gather walks it
 * (with the CPU gather's sums checked against ad_gather_all on every grid built). */
#ifndef AERODEM_TEST_PAIRS_H
#define AERODEM_TEST_PAIRS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/world_internal.h"
#include "cpu/cpu_world.h"
#include "cpu/gather_cpu.h"
#include "cpu/grid_cpu.h"
#include "physics/grid.h"
#include "physics/rng.h"
#include "test_util.h"

/* Discs the AVX2 contact-free test passed over (check_gather), for the callers to see it ran. */
static size_t g_quiet;

typedef struct pair {
    uint32_t a, b;
} pair;

static int pair_cmp(const void *x, const void *y)
{
    const pair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

/* The box the pair tests fill, [-3, 37] x [1, 26]: each axis periodic where its bit of `variant` is set
 * (1: x, 2: y), solid otherwise. */
static ad_world_def pairs_box(int variant)
{
    ad_world_def d = ad_default_world_def();
    d.x_min = -3.0;
    d.x_max = 37.0;
    d.y_min = 1.0;
    d.y_max = 26.0;
    d.boundary_x = (variant & 1) ? AD_BOUNDARY_PERIODIC : AD_BOUNDARY_SOLID;
    d.boundary_y = (variant & 2) ? AD_BOUNDARY_PERIODIC : AD_BOUNDARY_SOLID;
    return d;
}

static const char *side_name(ad_boundary b) { return b == AD_BOUNDARY_PERIODIC ? "periodic" : "solid"; }

/* "<what> <x side>/<y side>": a case's name in d's box (until the next call). */
static const char *case_name(const char *what, const ad_world_def *d)
{
    static char name[128];
    snprintf(name, sizeof name, "%s %s/%s", what, side_name(d->boundary_x), side_name(d->boundary_y));
    return name;
}

/* The random numbers of the pair tests' discs: the next of stream `seed`, *c counting them. */
static double u01(uint64_t seed, uint64_t *c) { return ad_rng_uniform(seed, (*c)++); }

/* n discs at rest, uniform over d's domain. */
static void uniform_discs(const ad_world_def *d, uint64_t seed, uint64_t *c, ad_state *s, size_t n)
{
    double W = d->x_max - d->x_min, H = d->y_max - d->y_min;
    for (size_t i = 0; i < n; i++)
        s[i] = (ad_state){(float)(d->x_min + W * u01(seed, c)), (float)(d->y_min + H * u01(seed, c)), 0, 0};
}

/* the same distance test the contact law uses, on the same float values */
static int touching(const ad_params *p, ad_state u, ad_state v)
{
    float dx = ad_min_image(v.x - u.x, p->periodic_x, p->len_x, p->half_x);
    float dy = ad_min_image(v.y - u.y, p->periodic_y, p->len_y, p->half_y);
    float d2 = dx * dx + dy * dy;
    return d2 < p->diameter_sq;
}

static size_t brute_pairs(const ad_params *p, const ad_state *s, size_t n, pair *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (touching(p, s[i], s[j])) out[k++] = (pair){(uint32_t)i, (uint32_t)j};
    return k;
}

/* Equal sums: the same value in every field (+0 and -0 count as equal, NaN as NaN). */
static int same_sums(const ad_accum *a, const ad_accum *b)
{
    const float *u = &a->fx, *v = &b->fx;
    for (size_t k = 0; k < sizeof *a / sizeof(float); k++)
        if (!(u[k] == v[k] || (u[k] != u[k] && v[k] != v[k]))) return 0;
    return 1;
}


/* 1 when the world-level conditions of the AVX2 prefilters hold for these discs (candidate_screen_cpu.h):
 * no NaN or infinite state, speeds below 1e15, cells below 1e17 m. */
static int screen_allowed(const ad_params *p, const ad_state *s, size_t n)
{
    if (!(p->cell_x < 1e17f && p->cell_y < 1e17f)) return 0;
    for (size_t k = 0; k < n; k++) {
        float z = (s[k].x - s[k].x) + (s[k].y - s[k].y) + (s[k].vx - s[k].vx) + (s[k].vy - s[k].vy);
        if (z != z || !(s[k].vx * s[k].vx + s[k].vy * s[k].vy < 1e30f)) return 0;
    }
    return 1;
}

/* The CPU gather of every disc (portable build, and the AVX2 build where the CPU has
 * it, without and with the candidate screen on xy) against ad_gather_all on the sorted discs; and
 * the AVX2 contact-free test: every disc it calls contact-free has zero sums there. */
static void check_gather(const ad_params *p, const uint32_t *start, const ad_state *sorted, const ad_cpu_xy *xy,
                         size_t n, int rows_fit, int *errors)
{
    ad_seg_grid g;
    memset(&g, 0, sizeof g);
    ad_params q = *p;
    q.disc_contacts = 1;
    size_t bad = 0, fast = 0, loud = 0, quiet_differ = 0;
#ifdef AD_CPU_X86
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const ad_cpu_xy *screen = screen_allowed(&q, sorted, n) ? xy : NULL;
    unsigned quiet = 0;
#endif
    for (size_t k = 0; k < n; k++) {
        ad_state me = sorted[k];
        int cx = ad_cell_coord(me.x, q.origin_x, q.inv_cell_x, q.nx);
        int cy = ad_cell_coord(me.y, q.origin_y, q.inv_cell_y, q.ny);
        ad_accum ref, a, zero;
        ad_gather_all(&q, &g, start, sorted, (uint32_t)k, me, cx, cy, &ref);
        ad_cpu_gather_all(&q, &g, start, sorted, NULL, (uint32_t)k, me, ad_cpu_fast_grid(&q), &a);
        bad += !same_sums(&ref, &a);
        fast += ref.max_overlap > 0.0f;
#ifdef AD_CPU_X86
        if (avx2) {
            ad_cpu_gather_all_avx2_entry(&q, &g, start, sorted, NULL, (uint32_t)k, me, ad_cpu_fast_grid(&q), &a);
            bad += !same_sums(&ref, &a);
            if (screen) {
                ad_cpu_gather_all_avx2_entry(&q, &g, start, sorted, screen, (uint32_t)k, me, ad_cpu_fast_grid(&q),
                                             &a);
                bad += !same_sums(&ref, &a);
                if (k % 8 == 0 && k + 8 <= n && ad_cpu_fast_grid(&q)) {
                    /* with the row lengths checked, and unchecked where the scan says they fit */
                    quiet = ad_cpu_contact_free8_avx2_entry(&q, &g, start, screen, k, 0, NULL, NULL);
                    if (rows_fit && ad_cpu_contact_free8_avx2_entry(&q, &g, start, screen, k, 1, NULL, NULL) != quiet) quiet_differ++;
                }
                ad_accum_zero(&zero);
                if (quiet >> (k % 8) & 1) {
                    loud += !same_sums(&ref, &zero) || ref.energy != 0.0f;
                    g_quiet++;
                }
            }
        }
#endif
    }
    if (bad) {
        printf("  the CPU gather differs from ad_gather_all for %zu discs (%zu in contact)\n", bad, fast);
        (*errors)++;
    }
    if (quiet_differ) {
        printf("  the contact-free test with rows unchecked differs for %zu groups, where the scan says rows fit\n",
               quiet_differ);
        (*errors)++;
    }
    if (loud) {
        printf("  %zu discs called contact-free have contacts\n", loud);
        (*errors)++;
    }
}

/* Builds the grid with the backend's own functions, then walks neighbour cells the
 * way the gather does (ad_neighbour_runs / ad_neighbour_row). */
static size_t grid_pairs(const ad_params *p, const ad_state *s, size_t n, int threads, pair *out, int *errors)
{
    /* the grid's cells and the cell of removed discs after them (open.h), as in the backend */
    size_t ncell = (size_t)p->nx * (size_t)p->ny + 1;
    uint32_t *cell_of = malloc(n * sizeof *cell_of);
    uint8_t *count = calloc(ncell, 1);
    /* as in the backend: the scan writes the starts one place on, the reorder counts them up
     * into place, and `start` is then the start array */
    uint32_t *start = malloc((ncell + 2) * sizeof *start), *perm = malloc(n * sizeof *perm);
    uint32_t *scanned = malloc((ncell + 1) * sizeof *scanned);
    /* the fast gather may read AD_CPU_PAD states past the last one, as in the backend */
    ad_state *sorted = calloc(n + AD_CPU_PAD, sizeof *sorted);
    ad_grid_diag diag;
    ad_cpu_bin(p, s, n, cell_of, count, threads, &diag);
    start[0] = 0;
    ad_cpu_scan(count, start + 1, ncell, cell_of, n, 4, &diag);
    memcpy(scanned, start + 1, (ncell + 1) * sizeof *scanned);
    for (size_t c = 0; c < ncell; c++)
        if (count[c] != 0) {
            printf("  the scan left counter %zu at %u, not cleared\n", c, count[c]);
            (*errors)++;
            break;
        }
    /* the reorder moves ids along with states: with ids 0..n-1 they come out as the permutation */
    uint32_t *ids = malloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++) ids[i] = (uint32_t)i;
    /* room for every disc in the lists of strays: random sets are mostly strays to their
     * thread's window, so the listing path of the reorder is the one tested */
    uint32_t *strays = malloc(n * sizeof *strays);
    /* the positions in SoA too, padded as in the backend (the prefilters read 8 lanes a row) */
    ad_cpu_xy xy = {malloc((n + AD_CPU_XY_PAD) * sizeof(float)), malloc((n + AD_CPU_XY_PAD) * sizeof(float))};
    for (size_t k = n; k < n + AD_CPU_XY_PAD; k++) xy.x[k] = xy.y[k] = 0.0f;
    const ad_cpu_reorder_job job = {cell_of, start + 1, s, sorted, ids, perm, NULL, NULL, NULL, NULL, &xy, NULL, NULL};
    ad_cpu_reorder(&job, n, ncell, threads, strays, n);
    if (memcmp(start, scanned, (ncell + 1) * sizeof *start)) {
        printf("  the starts counted up by the reorder, one place back, are not the scan's starts\n");
        (*errors)++;
    }
    for (size_t k = 0; k < n; k++)
        if (memcmp(&xy.x[k], &sorted[k].x, 4) || memcmp(&xy.y[k], &sorted[k].y, 4)) {
            printf("  slot %zu: the SoA positions differ from the state's\n", k);
            (*errors)++;
            break;
        }
    /* the pass's leavers, the discs that left their blocks' cells (ad_cpu_leavers), for any
     * set: each block's first cell the largest of its first slot's and the blocks' before,
     * and every disc outside its block's cells listed */
    size_t nblk = (n + AD_BLOCK - 1) / AD_BLOCK;
    uint32_t *blo = malloc(nblk * sizeof *blo), *bcount = calloc(nblk, sizeof *bcount), *blist = malloc(n * sizeof *blist);
    for (size_t b = 0; b < nblk; b++) {
        blo[b] = cell_of[b * AD_BLOCK];
        if (b > 0 && blo[b - 1] > blo[b]) blo[b] = blo[b - 1];
    }
    for (size_t i = 0; i < n; i++) {
        size_t b = i / AD_BLOCK;
        uint32_t hi = b + 1 < nblk ? blo[b + 1] : (uint32_t)ncell;
        if (!(cell_of[i] >= blo[b] && cell_of[i] < hi)) blist[b * AD_BLOCK + bcount[b]++] = (uint32_t)i;
    }
    const ad_cpu_leavers moved = {blo, blist, bcount};
    /* the fused scan and reorder (ad_cpu_sort): the same starts, order, positions and
     * diagnostics, with room for the strays and without, and with the strays
     * listed from the account */
    for (int room = 2; room >= 0; room--) {
        uint8_t *count2 = calloc(ncell, 1);
        uint32_t *start2 = malloc((ncell + 2) * sizeof *start2);
        uint32_t *perm2 = malloc(n * sizeof *perm2);
        ad_state *sorted2 = calloc(n + AD_CPU_PAD, sizeof *sorted2);
        ad_cpu_xy xy2 = {malloc((n + AD_CPU_XY_PAD) * sizeof(float)), malloc((n + AD_CPU_XY_PAD) * sizeof(float))};
        ad_grid_diag diag2;
        ad_cpu_bin(p, s, n, cell_of, count2, threads, &diag2);
        start2[0] = 0;
        const ad_cpu_reorder_job job2 = {cell_of, start2 + 1, s, sorted2, ids, perm2, NULL, NULL, NULL, NULL, &xy2, NULL, NULL};
        ad_cpu_sort(count2, &job2, n, ncell, threads, 4, room == 2 ? &moved : NULL, strays, room ? n : 8, &diag2);
        int cleared = 1;
        for (size_t c = 0; c < ncell; c++) cleared &= count2[c] == 0;
        if (!cleared || memcmp(start2, start, (ncell + 1) * sizeof *start) || memcmp(perm2, perm, n * sizeof *perm) ||
            memcmp(sorted2, sorted, n * sizeof *sorted) || memcmp(xy2.x, xy.x, n * sizeof(float)) ||
            memcmp(xy2.y, xy.y, n * sizeof(float)) || diag2.max_occupancy != diag.max_occupancy ||
            diag2.max_run3 != diag.max_run3 || diag2.overflow != diag.overflow) {
            printf("  the fused scan and reorder (%s lists of strays) differ from the scan, then the reorder\n",
                   room == 2 ? "the pass's account of" : room ? "long" : "short");
            (*errors)++;
        }
        free(count2);
        free(start2);
        free(perm2);
        free(sorted2);
        free(xy2.x);
        free(xy2.y);
    }
    free(blo);
    free(bcount);
    free(blist);
    /* and with lists too short for them: every thread reads every disc, the same order */
    uint32_t *perm_short = malloc(n * sizeof *perm_short);
    ad_state *sorted_short = malloc(n * sizeof *sorted_short);
    const ad_cpu_reorder_job job_short = {cell_of, scanned, s, sorted_short, ids, perm_short, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    ad_cpu_reorder(&job_short, n, ncell, threads, strays, 8);
    if (memcmp(perm, perm_short, n * sizeof *perm) || memcmp(sorted, sorted_short, n * sizeof *sorted)) {
        printf("  the reorder with short lists differs from the one with room for every disc\n");
        (*errors)++;
    }
    free(perm_short);
    free(sorted_short);
    free(strays);
    free(ids);

    if (start[ncell] != n) {
        printf("  total in start[ncell] = %u, expected %zu\n", start[ncell], n);
        (*errors)++;
    }
    /* perm is a permutation, cells ascend, and inside a cell the indices ascend (stable) */
    char *seen = calloc(n, 1);
    for (size_t k = 0; k < n; k++) {
        uint32_t i = perm[k];
        if (i >= n || seen[i]) {
            printf("  perm[%zu] = %u repeats or is out of range\n", k, i);
            (*errors)++;
            break;
        }
        seen[i] = 1;
        if (memcmp(&sorted[k], &s[i], sizeof *s) != 0) {
            printf("  slot %zu holds another disc's state than perm says\n", k);
            (*errors)++;
            break;
        }
        if (k > 0) {
            uint32_t c0 = cell_of[perm[k - 1]], c1 = cell_of[i];
            if (c1 < c0 || (c1 == c0 && perm[k - 1] > i)) {
                printf("  slot %zu breaks the stable cell order\n", k);
                (*errors)++;
                break;
            }
        }
        if (k < start[cell_of[i]] || k >= start[cell_of[i] + 1]) {
            printf("  slot %zu lies outside its cell's range\n", k);
            (*errors)++;
            break;
        }
    }
    free(seen);
    /* the scan's occupancy diagnostics equal those of the cell ranges */
    uint32_t mx = 0, m3 = 0;
    uint64_t ov = 0;
    for (size_t c = 0; c < ncell; c++) {
        uint32_t k = start[c + 1] - start[c];
        mx = k > mx ? k : mx;
        ov += k > 4 ? k - 4 : 0;
        if (c + 3 <= ncell) m3 = start[c + 3] - start[c] > m3 ? start[c + 3] - start[c] : m3;
    }
    if (diag.max_run3 != m3) {
        printf("  diagnostics: the most discs in three consecutive cells %u, expected %u\n", diag.max_run3, m3);
        (*errors)++;
    }
    if (diag.max_occupancy != mx || diag.overflow != ov) {
        printf("  diagnostics: max occupancy %u, overflow %llu; expected %u, %llu\n", diag.max_occupancy,
               (unsigned long long)diag.overflow, mx, (unsigned long long)ov);
        (*errors)++;
    }

    check_gather(p, start, sorted, &xy, n, diag.max_run3 <= 8, errors);
    free(xy.x);
    free(xy.y);

    size_t np = 0;
    for (size_t k = 0; k < n; k++) {
        ad_state me = sorted[k];
        int cx = ad_cell_coord(me.x, p->origin_x, p->inv_cell_x, p->nx);
        int cy = ad_cell_coord(me.y, p->origin_y, p->inv_cell_y, p->ny);
        int lo[2], hi[2];
        int runs = ad_neighbour_runs(cx, p->reach_x, p->nx, p->periodic_x, lo, hi);
        for (int d = -p->reach_y; d <= p->reach_y; d++) {
            int row = ad_neighbour_row(cy, d, p->ny, p->periodic_y);
            if (row < 0) continue;
            for (int r = 0; r < runs; r++) {
                uint32_t a = start[(size_t)row * p->nx + lo[r]], b = start[(size_t)row * p->nx + hi[r] + 1];
                for (uint32_t j = a; j < b; j++) {
                    if (j == k || !touching(p, me, sorted[j])) continue;
                    uint32_t u = perm[k], v = perm[j];
                    /* the gather meets each pair from both sides; keep the side u < v */
                    if (u < v) out[np++] = (pair){u, v};
                }
            }
        }
    }
    free(cell_of);
    free(count);
    free(start);
    free(scanned);
    free(perm);
    free(sorted);
    return np;
}

#endif
