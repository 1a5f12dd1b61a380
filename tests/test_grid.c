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
#include "test_util.h"

typedef struct pair {
    uint32_t a, b;
} pair;

static int pair_cmp(const void *x, const void *y)
{
    const pair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
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

#ifdef AD_CPU_X86
__attribute__((target("avx2,fma"))) static void gather_avx2(const ad_params *p, const ad_seg_grid *g,
                                                             const uint32_t *start, const ad_state *s, uint32_t i,
                                                             ad_accum *a)
{
    ad_cpu_gather_all(p, g, start, s, i, s[i], ad_cpu_fast_grid(p), 1, a);
}
#endif

/* The CPU gather of every disc (portable build, and the AVX2 build where the CPU has
 * it) against ad_gather_all on the sorted discs. */
static void check_gather(const ad_params *p, const uint32_t *start, const ad_state *sorted, size_t n, int *errors)
{
    ad_seg_grid g;
    memset(&g, 0, sizeof g);
    ad_params q = *p;
    q.disc_contacts = 1;
    size_t bad = 0, fast = 0;
    for (size_t k = 0; k < n; k++) {
        ad_state me = sorted[k];
        int cx = ad_cell_coord(me.x, q.origin_x, q.inv_cell_x, q.nx);
        int cy = ad_cell_coord(me.y, q.origin_y, q.inv_cell_y, q.ny);
        ad_accum ref, a;
        ad_gather_all(&q, &g, start, sorted, (uint32_t)k, me, cx, cy, &ref);
        ad_cpu_gather_all(&q, &g, start, sorted, (uint32_t)k, me, ad_cpu_fast_grid(&q), 0, &a);
        bad += !same_sums(&ref, &a);
        fast += ref.max_overlap > 0.0f;
#ifdef AD_CPU_X86
        if (__builtin_cpu_supports("avx2")) {
            gather_avx2(&q, &g, start, sorted, (uint32_t)k, &a);
            bad += !same_sums(&ref, &a);
        }
#endif
    }
    if (bad) {
        printf("  the CPU gather differs from ad_gather_all for %zu discs (%zu in contact)\n", bad, fast);
        (*errors)++;
    }
}

/* Builds the grid with the backend's own functions, then walks neighbour cells the
 * way the gather does (ad_neighbour_runs / ad_neighbour_row). */
static size_t grid_pairs(const ad_params *p, const ad_state *s, size_t n, int threads, pair *out, int *errors)
{
    size_t ncell = (size_t)p->nx * (size_t)p->ny;
    uint32_t *cell_of = malloc(n * sizeof *cell_of), *count = calloc(ncell, sizeof *count);
    uint32_t *start = malloc((ncell + 1) * sizeof *start), *perm = malloc(n * sizeof *perm);
    /* the fast gather may read AD_CPU_PAD states past the last one, as in the backend */
    ad_state *sorted = calloc(n + AD_CPU_PAD, sizeof *sorted);
    ad_grid_diag diag;
    ad_cpu_bin(p, s, n, cell_of, count, threads, &diag);
    ad_cpu_scan(count, start, ncell, threads);
    memset(count, 0, ncell * sizeof *count);
    /* the reorder moves ids along with states: with ids 0..n-1 they come out as the permutation */
    uint32_t *ids = malloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++) ids[i] = (uint32_t)i;
    ad_cpu_reorder(cell_of, n, start, count, ncell, 4, threads, s, sorted, ids, perm, NULL, NULL, &diag);
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
    /* occupancy diagnostics from the ranks equal those of the cell ranges */
    uint32_t mx = 0;
    uint64_t ov = 0;
    for (size_t c = 0; c < ncell; c++) {
        uint32_t k = start[c + 1] - start[c];
        mx = k > mx ? k : mx;
        ov += k > 4 ? k - 4 : 0;
    }
    if (diag.max_occupancy != mx || diag.overflow != ov) {
        printf("  diagnostics: max occupancy %u, overflow %llu; expected %u, %llu\n", diag.max_occupancy,
               (unsigned long long)diag.overflow, mx, (unsigned long long)ov);
        (*errors)++;
    }

    check_gather(p, start, sorted, n, errors);

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
    free(perm);
    free(sorted);
    return np;
}

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

int main(void)
{
    int failures = 0;
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

        /* dense clumps: many discs within a few diameters of a few centres */
        for (int i = 0; i < N; i++) {
            int k = i % 5;
            double cx = d.x_min + W * (0.1 + 0.2 * k), cy = d.y_min + H * (0.5 + 0.08 * (k - 2));
            s[i] = (ad_state){(float)(cx + 3.0 * (u01(seed, &c) - 0.5)), (float)(cy + 3.0 * (u01(seed, &c) - 0.5)),
                              0, 0};
        }
        snprintf(name, sizeof name, "clumps %s/%s", bx, by);
        failures += compare(name, &p, s, N, 2);

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
    printf("%s\n", failures ? "FAILED" : "all grid checks passed");
    return failures ? 1 : 0;
}
