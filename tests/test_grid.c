/* The counting-sort grid finds exactly the contact pairs that brute force finds, and sorts stably; the CPU gather sums what ad_gather_all sums. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/world_internal.h"
#include "cpu/gather_cpu.h"
#include "cpu/grid.h"
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

static double u01(uint64_t seed, uint64_t *c) { return ad_rng_uniform(seed, (*c)++); }

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

int main(void)
{
    int failures = check_scan();
    enum { N = 3000 };
    ad_state *s = malloc(N * sizeof *s);
    for (int variant = 0; variant < 8; variant++) {
        ad_world_def d = ad_default_world_def();
        d.x_min = -3.0;
        d.x_max = 37.0;
        d.y_min = 1.0;
        d.y_max = 26.0;
        d.radius = 0.5;
        d.boundary_x = (variant & 1) ? AD_BOUNDARY_PERIODIC : AD_BOUNDARY_SOLID;
        d.boundary_y = (variant & 2) ? AD_BOUNDARY_PERIODIC : AD_BOUNDARY_SOLID;
        /* the default cell (one diameter), and cells below the cutoff (reach 2 and 3) */
        d.cell_size = (variant & 4) ? (variant == 5 ? 0.6 : 0.45) : 0.0;
        if (variant == 7) d.cell_size = 1.37;
        ad_params p;
        ad_status st = ad_params_from_def(&d, &p);
        if (!ENSURE_OK(st)) return 1;
        const char *bx = d.boundary_x == AD_BOUNDARY_PERIODIC ? "periodic" : "solid";
        const char *by = d.boundary_y == AD_BOUNDARY_PERIODIC ? "periodic" : "solid";
        char name[128];
        uint64_t seed = 1000 + (uint64_t)variant, c = 0;
        double W = d.x_max - d.x_min, H = d.y_max - d.y_min;

        /* uniform */
        for (int i = 0; i < N; i++)
            s[i] = (ad_state){(float)(d.x_min + W * u01(seed, &c)), (float)(d.y_min + H * u01(seed, &c)), 0, 0};
        snprintf(name, sizeof name, "uniform %s/%s", bx, by);
        failures += compare(name, &p, s, N, 1 + variant % 3);

        /* a gas at area fraction 0.3 with velocities: most discs touch nothing (the AVX2
         * screen's quiet discs), some touch one or two */
        enum { NGAS = 380 };
        for (int i = 0; i < NGAS; i++)
            s[i] = (ad_state){(float)(d.x_min + W * u01(seed, &c)), (float)(d.y_min + H * u01(seed, &c)),
                              (float)(2.0 * u01(seed, &c) - 1.0), (float)(2.0 * u01(seed, &c) - 1.0)};
        snprintf(name, sizeof name, "gas %s/%s", bx, by);
        failures += compare(name, &p, s, NGAS, 1 + variant % 2);

        /* dense clumps: many discs within a few diameters of a few centres */
        for (int i = 0; i < N; i++) {
            int k = i % 5;
            double cx = d.x_min + W * (0.1 + 0.2 * k), cy = d.y_min + H * (0.5 + 0.08 * (k - 2));
            s[i] = (ad_state){(float)(cx + 3.0 * (u01(seed, &c) - 0.5)), (float)(cy + 3.0 * (u01(seed, &c) - 0.5)),
                              0, 0};
        }
        snprintf(name, sizeof name, "clumps %s/%s", bx, by);
        failures += compare(name, &p, s, N, 2);

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
        snprintf(name, sizeof name, "piles %s/%s", bx, by);
        failures += compare(name, &p, s, N, 1 + variant % 3);

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
        snprintf(name, sizeof name, "cell edges %s/%s", bx, by);
        failures += compare(name, &p, s, N, 3);

        /* solid axes: centres outside the grid (pressed into or through walls) */
        for (int i = 0; i < N; i++) {
            double x = d.x_min + W * u01(seed, &c), y = d.y_min + H * u01(seed, &c);
            if (d.boundary_x == AD_BOUNDARY_SOLID && i % 2) x = (i % 4 == 1) ? d.x_min - 4.0 * u01(seed, &c)
                                                                             : d.x_max + 4.0 * u01(seed, &c);
            if (d.boundary_y == AD_BOUNDARY_SOLID && i % 3 == 0)
                y = (i % 6 == 0) ? d.y_min - 4.0 * u01(seed, &c) : d.y_max + 4.0 * u01(seed, &c);
            s[i] = (ad_state){(float)x, (float)y, 0, 0};
        }
        snprintf(name, sizeof name, "outside the grid %s/%s", bx, by);
        failures += compare(name, &p, s, N, 2);
    }

    /* a NaN centre is clamped into a cell and found with no one: no crash, no lost disc */
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
    /* the AVX2 quiet test must have passed over discs (in the gases) for its check to mean anything */
    printf("AVX2 quiet-disc test: %zu discs called quiet, each with zero sums in ad_gather_all\n", g_quiet);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && g_quiet < 100) {
        printf("  too few quiet discs: the quiet test did not run\n");
        failures++;
    }
#endif
    printf("%s\n", failures ? "FAILED" : "all grid checks passed");
    return failures ? 1 : 0;
}
