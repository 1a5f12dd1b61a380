/* The counting-sort grid finds exactly the contact pairs that brute force finds, and sorts stably; the CPU gather sums what ad_gather_all sums. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/world_internal.h"
#include "cpu/gather_cpu.h"
#include "cpu/grid_cpu.h"
#include "physics/grid.h"
#include "physics/rng.h"
#include "test_pairs.h"
#include "test_util.h"


static int compare(const char *name, const ad_params *p, const ad_state *s, size_t n, int threads)
{
    size_t cap = n * (n - 1) / 2 + 1; /* clumps can touch everyone */
    pair *a = malloc(cap * sizeof *a), *b = malloc(cap * sizeof *b);
    int errors = 0;
    size_t na = brute_pairs(p, s, n, a);
    size_t nb = grid_pairs(p, s, n, threads, b, &errors);
    qsort(a, na, sizeof *a, pair_cmp);
    qsort(b, nb, sizeof *b, pair_cmp);
    if (na != nb || memcmp(a, b, na * sizeof *a) != 0) {
        printf("  %s: brute force finds %zu pairs, the grid %zu\n", name, na, nb);
        errors++;
    }
    printf("%-34s n=%5zu grid %4dx%-4d reach %d,%d threads %d: %zu pairs %s\n", name, n, p->nx, p->ny, p->reach_x,
           p->reach_y, threads, na, errors ? "MISMATCH" : "ok");
    free(a);
    free(b);
    return errors;
}

/* ad_cpu_scan against a serial sum at sizes around the AVX2 build's eight-cell steps (the
 * scan on several threads, inside ad_cpu_sort, is checked against this one by test_pairs.h),
 * with counters that fit their 8 bits, and with some that wrapped (true counts past 255,
 * counters holding them modulo 256): then the starts and diagnostics must come from the
 * cells the discs are in (cell_of). */
static int check_scan(void)
{
    int errors = 0;
    const size_t sizes[] = {1, 7, 8, 9, 1000, 65535, 70001, 200003, (1u << 21) + 7};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (int place = 1; place <= 4; place++) {
            int wrap = place == 4; /* the peak as in place 2, past 255 */
            size_t nc = sizes[z];
            uint32_t *count = malloc(nc * 4), *start = malloc((nc + 1) * 4), *ref = malloc((nc + 1) * 4);
            uint8_t *count8 = malloc(nc);
            uint64_t c = 0, over = 0;
            uint32_t mx = 0, run = 0, m3 = 0;
            /* a few crowded cells; the largest run of three a third, two thirds or all the way
             * in (the last where the eight-cell steps hand over to the scalar loop) */
            size_t peak = (nc * (size_t)(wrap ? 2 : place) + 2) / 3 - 1 - z % 3;
            for (size_t k = 0; k < nc; k++) {
                double u = ad_rng_uniform(77 + nc, c++);
                count[k] = u < 0.6 ? 0 : (u < 0.999 ? (uint32_t)(10 * u) : 200u);
                if (k >= peak && k < peak + 3 && nc > 1000) count[k] = wrap ? 300u + 7u * (uint32_t)(k - peak) : 250;
                if (wrap && nc <= 1000 && k == nc / 2) count[k] = 256; /* wraps to 0 */
            }
            for (size_t k = 0; k < nc; k++) {
                ref[k] = run;
                run += count[k];
                mx = count[k] > mx ? count[k] : mx;
                over += count[k] > 6 ? count[k] - 6 : 0;
                if (k + 2 < nc) m3 = count[k] + count[k + 1] + count[k + 2] > m3 ? count[k] + count[k + 1] + count[k + 2] : m3;
                count8[k] = (uint8_t)count[k];
            }
            ref[nc] = run;
            uint32_t *cell_of = malloc((run + 1) * sizeof *cell_of); /* the discs' cells, shuffled a little */
            for (size_t k = 0, i = 0; k < nc; k++)
                for (uint32_t j = 0; j < count[k]; j++) cell_of[i++] = (uint32_t)k;
            for (uint32_t i = 0; i + 1 < run; i += 2) {
                uint32_t t = cell_of[i];
                cell_of[i] = cell_of[run - 1 - i];
                cell_of[run - 1 - i] = t;
            }
            ad_grid_diag diag;
            ad_cpu_scan(count8, start, nc, cell_of, run, 6, &diag);
            int cleared = 1;
            for (size_t k = 0; k < nc; k++) cleared &= count8[k] == 0;
            int bad = memcmp(start, ref, (nc + 1) * 4) != 0 || !cleared ||
                      diag.max_occupancy != mx || diag.overflow != over || diag.max_run3 != m3;
            if (bad) {
                printf("  scan of %zu cells, peak %d/3 in%s: wrong starts, counters not cleared, or wrong diagnostics "
                       "(max %u/%u, overflow %llu/%llu, run of three %u/%u)\n",
                       nc, wrap ? 2 : place, wrap ? ", past 8 bits" : "", diag.max_occupancy, mx,
                       (unsigned long long)diag.overflow, (unsigned long long)over, diag.max_run3, m3);
                errors++;
            }
            free(count);
            free(count8);
            free(cell_of);
            free(start);
            free(ref);
        }
    printf("scan: %s\n", errors ? "MISMATCH" : "starts, cleared counters and occupancy diagnostics ok (8-bit "
                                              "counters, and wrapped ones counted again)");
    return errors;
}

#ifdef AD_CPU_X86
/* The contact-free test's expiries (contact_free_cpu.h): discs that each move by at most `move` a step,
 * half of them straight at their nearest neighbours (the fastest way to close a gap), some
 * across the periodic edges, with the clock grown by twice that move a step as the world grows it.
 * Every disc the test calls contact-free, by its rows or by its expiry, must have zero sums in
 * ad_gather_all; and most tests must have been skipped by expiries for this to mean much. */
static int check_expiry(void)
{
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0;
    ad_world_def d = ad_default_world_def();
    d.x_max = 48.0;
    d.y_max = 36.0;
    d.radius = 0.5;
    d.boundary_x = d.boundary_y = AD_BOUNDARY_PERIODIC;
    ad_params p;
    if (!ENSURE_OK(ad_params_from_def(&d, &p))) return 1;
    p.disc_contacts = 1;
    enum { NX = 29, NY = 22, N = NX * NY, STEPS = 60 }; /* area fraction 0.29 */
    size_t ncell = (size_t)p.nx * (size_t)p.ny;
    ad_state *s = malloc(N * sizeof *s), *sorted = calloc(N + AD_CPU_PAD, sizeof *sorted);
    uint32_t *cell_of = malloc(N * 4), *start = malloc((ncell + 2) * 4), *ids = malloc(N * 4), *perm = malloc(N * 4);
    uint32_t *strays = malloc(N * 4);
    uint8_t *count = calloc(ncell, 1);
    float *free_until = malloc((N + 8) * 4), *qnext = malloc((N + 8) * 4);
    ad_cpu_xy xy = {calloc(N + AD_CPU_XY_PAD, 4), calloc(N + AD_CPU_XY_PAD, 4)};
    ad_seg_grid g;
    memset(&g, 0, sizeof g);
    uint64_t c = 0;
    for (int i = 0; i < N; i++) {
        /* a gas, not overlapping: a lattice 1.65 diameters apart, shaken by up to 0.3 */
        s[i] = (ad_state){(float)(48.0 / NX * (i % NX + 0.5) + 0.6 * (u01(5, &c) - 0.5)),
                          (float)(36.0 / NY * (i / NX + 0.5) + 0.6 * (u01(5, &c) - 0.5)), 0, 0};
        ids[i] = (uint32_t)i;
        free_until[i] = -INFINITY;
    }
    double ulp = ldexp(1.0, ilogb(48.0) - 23), clock = 0.0;
    size_t quiet_n = 0, clear_n = 0, tested_n = 0, loud = 0;
    for (int step = 0; step < STEPS; step++) {
        /* the grid, with the expiries moved along (as step_cpu.c's build_grid) */
        ad_grid_diag diag;
        ad_cpu_bin(&p, s, N, cell_of, count, 1 + step % 2, &diag);
        start[0] = 0;
        const ad_cpu_reorder_job job = {cell_of, start + 1, s, sorted, ids, perm, NULL, NULL, free_until, qnext, &xy, NULL, NULL};
        ad_cpu_sort(count, &job, N, ncell, 1 + step % 2, 8, NULL, strays, N, &diag);
        memcpy(ids, perm, N * 4);
        float *t = free_until;
        free_until = qnext;
        qnext = t;
        float f = (float)clock;
        ad_cpu_free_clock qc = {(double)f >= clock ? f : nextafterf(f, INFINITY),
                                 (double)f <= clock ? f : nextafterf(f, -INFINITY), sqrtf(p.diameter_sq) * (1.0f + 1e-5f),
                                 (float)(8.0 * ulp + 1e-6 * p.diameter)};
        for (size_t k = 0; k + 8 <= N; k += 8) {
            for (int l = 0; l < 8; l++) clear_n += free_until[k + l] > qc.up;
            unsigned q = ad_cpu_contact_free8_avx2_entry(&p, &g, start, &xy, k, diag.max_run3 <= 8, free_until, &qc);
            for (int l = 0; l < 8; l++) {
                if (!(q >> l & 1)) continue;
                quiet_n++;
                ad_state me = sorted[k + l];
                ad_accum ref;
                int cx = ad_cell_coord(me.x, p.origin_x, p.inv_cell_x, p.nx);
                int cy = ad_cell_coord(me.y, p.origin_y, p.inv_cell_y, p.ny);
                ad_gather_all(&p, &g, start, sorted, (uint32_t)(k + l), me, cx, cy, &ref);
                loud += ref.energy != 0.0f || ref.fx != 0.0f || ref.fy != 0.0f || ref.pressure != 0.0f;
            }
        }
        for (size_t k = N - N % 8; k < N; k++) free_until[k] = -INFINITY; /* as the pass: untested, no expiry */
        tested_n += N;
        /* each disc at most `move`, half of them straight at their nearest neighbours; then the clock */
        double move = 0.002 + 0.008 * (step % 5) / 4.0;
        for (int i = 0; i < N; i++) {
            float bx = 0, by = 0, best = INFINITY;
            for (int j = 0; j < N; j++) {
                if (j == i) continue;
                float dx = ad_min_image(sorted[j].x - sorted[i].x, 1, p.len_x, p.half_x);
                float dy = ad_min_image(sorted[j].y - sorted[i].y, 1, p.len_y, p.half_y);
                float r2 = dx * dx + dy * dy;
                if (r2 < best && r2 > 0.0f) best = r2, bx = dx, by = dy;
            }
            if (i % 2) { /* half of them in a random direction instead */
                double a = 6.283185307179586 * u01(6, &c);
                bx = (float)cos(a), by = (float)sin(a), best = 1.0f;
            }
            float r = sqrtf(best), k = r > 0.0f ? (float)move / r : 0.0f;
            s[i] = sorted[i];
            if (r > 2.0f * (float)move) { /* a disc already touching stays */
                s[i].x = ad_wrap(s[i].x + k * bx, p.x_min, p.len_x);
                s[i].y = ad_wrap(s[i].y + k * by, p.y_min, p.len_y);
            }
        }
        clock += 2.0 * move * (1.0 + 1e-6) + 2.0 * ulp;
    }
    int errors = loud != 0 || clear_n < tested_n / 3;
    printf("contact-free expiries: %zu of %zu tests skipped by an expiry, %zu discs called contact-free, %zu of them "
           "with contacts%s\n",
           clear_n, tested_n, quiet_n, loud, errors ? "  FAILED" : "");
    free(s);
    free(sorted);
    free(cell_of);
    free(start);
    free(ids);
    free(perm);
    free(strays);
    free(count);
    free(free_until);
    free(qnext);
    free(xy.x);
    free(xy.y);
    return errors;
}
#else
static int check_expiry(void) { return 0; }
#endif

int main(void)
{
    int failures = check_scan() + check_expiry();
    enum { N = 3000 };
    ad_state *s = malloc(N * sizeof *s);
    for (int variant = 0; variant < 8; variant++) {
        ad_world_def d = pairs_box(variant);
        d.radius = 0.5;
        /* the default cell (one diameter), and cells below the cutoff (reach 2 and 3) */
        d.cell_size = (variant & 4) ? (variant == 5 ? 0.6 : 0.45) : 0.0;
        if (variant == 7) d.cell_size = 1.37;
        ad_params p;
        ad_status st = ad_params_from_def(&d, &p);
        if (!ENSURE_OK(st)) return 1;
        uint64_t seed = 1000 + (uint64_t)variant, c = 0;
        double W = d.x_max - d.x_min, H = d.y_max - d.y_min;

        uniform_discs(&d, seed, &c, s, N);
        failures += compare(case_name("uniform", &d), &p, s, N, 1 + variant % 3);

        /* a gas at area fraction 0.3 with velocities: most discs touch nothing (the AVX2
         * prefilters' contact-free discs), some touch one or two */
        enum { NGAS = 380 };
        for (int i = 0; i < NGAS; i++)
            s[i] = (ad_state){(float)(d.x_min + W * u01(seed, &c)), (float)(d.y_min + H * u01(seed, &c)),
                              (float)(2.0 * u01(seed, &c) - 1.0), (float)(2.0 * u01(seed, &c) - 1.0)};
        failures += compare(case_name("gas", &d), &p, s, NGAS, 1 + variant % 2);

        /* dense clumps: many discs within a few diameters of a few centres */
        for (int i = 0; i < N; i++) {
            int k = i % 5;
            double cx = d.x_min + W * (0.1 + 0.2 * k), cy = d.y_min + H * (0.5 + 0.08 * (k - 2));
            s[i] = (ad_state){(float)(cx + 3.0 * (u01(seed, &c) - 0.5)), (float)(cy + 3.0 * (u01(seed, &c) - 0.5)),
                              0, 0};
        }
        failures += compare(case_name("clumps", &d), &p, s, N, 2);

        /* piles: 300 and 700 discs in two cells, past the 8-bit counters (grid.h: counted
         * again in 32 bits), among uniform ones */
        for (int i = 0; i < N; i++) {
            double x = d.x_min + W * u01(seed, &c), y = d.y_min + H * u01(seed, &c);
            if (i % 3 == 0 && i < 2100) { /* 700 */
                x = d.x_min + 0.31 * W + 0.01 * u01(seed, &c);
                y = d.y_min + 0.52 * H + 0.01 * u01(seed, &c);
            } else if (i % 3 == 1 && i < 900) { /* 300 */
                x = d.x_min + 0.77 * W + 0.01 * u01(seed, &c);
                y = d.y_min + 0.21 * H + 0.01 * u01(seed, &c);
            }
            s[i] = (ad_state){(float)x, (float)y, 0, 0};
        }
        failures += compare(case_name("piles", &d), &p, s, N, 1 + variant % 3);

        /* on cell edges and domain edges exactly, and next to them */
        for (int i = 0; i < N; i++) {
            double gx = floor(u01(seed, &c) * (p.nx + 1)), gy = floor(u01(seed, &c) * (p.ny + 1));
            float x = (float)(p.origin_x + gx * p.cell_x), y = (float)(p.origin_y + gy * p.cell_y);
            if (i % 3 == 1) x = nextafterf(x, -INFINITY);
            if (i % 3 == 2) y = nextafterf(y, INFINITY);
            if (d.boundary_x == AD_BOUNDARY_PERIODIC) x = ad_wrap(x, p.x_min, p.len_x);
            if (d.boundary_y == AD_BOUNDARY_PERIODIC) y = ad_wrap(y, p.y_min, p.len_y);
            s[i] = (ad_state){x, y, 0, 0};
        }
        failures += compare(case_name("cell edges", &d), &p, s, N, 3);

        /* solid axes: centres outside the grid (pressed into or through walls) */
        for (int i = 0; i < N; i++) {
            double x = d.x_min + W * u01(seed, &c), y = d.y_min + H * u01(seed, &c);
            if (d.boundary_x == AD_BOUNDARY_SOLID && i % 2) x = (i % 4 == 1) ? d.x_min - 4.0 * u01(seed, &c)
                                                                             : d.x_max + 4.0 * u01(seed, &c);
            if (d.boundary_y == AD_BOUNDARY_SOLID && i % 3 == 0)
                y = (i % 6 == 0) ? d.y_min - 4.0 * u01(seed, &c) : d.y_max + 4.0 * u01(seed, &c);
            s[i] = (ad_state){(float)x, (float)y, 0, 0};
        }
        failures += compare(case_name("outside the grid", &d), &p, s, N, 2);
    }

    /* a NaN centre is a removed disc (open.h): binned in the cell after the grid's, sorted after
     * every other, found with no one; no crash, no lost disc */
    {
        ad_world_def d = ad_default_world_def();
        ad_params p;
        ad_params_from_def(&d, &p);
        for (int i = 0; i < 100; i++) s[i] = (ad_state){0.9f * (float)(i % 10), 0.9f * (float)(i / 10), 0, 0};
        s[17].x = NAN;
        failures += compare("NaN centre", &p, s, 100, 1);
    }
    free(s);
#ifdef AD_CPU_X86
    /* the AVX2 contact-free test must have passed over discs (in the gases) for its check to mean anything */
    printf("AVX2 contact-free test: %zu discs called contact-free, each with zero sums in ad_gather_all\n", g_quiet);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && g_quiet < 100) {
        printf("  too few contact-free discs: the contact-free test did not run\n");
        failures++;
    }
#endif
    printf("%s\n", failures ? "FAILED" : "all grid checks passed");
    return failures ? 1 : 0;
}
