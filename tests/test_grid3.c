/* The reference uniform grid in two and three dimensions (src/reference/grid3.c, physics/stencil.h):
 * the counting sort keeps every point once, in cell order and stably, and the stencil search finds
 * exactly the pairs that brute force finds, on random, clumped and boundary sets, with periodic,
 * solid and mixed axes. A search with a stencil cut to its own row must miss pairs: the comparison
 * can fail. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/grid3.h"
#include "test_util.h"

typedef struct pairs {
    uint64_t *key;
    size_t n, cap;
} pairs;

static void add_pair(uint32_t i, uint32_t j, void *ctx)
{
    pairs *p = ctx;
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 1024;
        p->key = realloc(p->key, p->cap * sizeof *p->key);
    }
    p->key[p->n++] = (uint64_t)(i < j ? i : j) << 32 | (i < j ? j : i);
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double urand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* Brute force: every pair, the same float minimum image as the search. */
static void brute(const ad_grid3 *g, const float *p, size_t n, float r, pairs *out)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            float d2 = 0;
            for (int d = 0; d < g->dims; d++) {
                float e = ad_min_image(p[3 * j + d] - p[3 * i + d], g->periodic[d], g->len[d], g->half[d]);
                d2 += e * e;
            }
            if (d2 < r * r) add_pair((uint32_t)i, (uint32_t)j, out);
        }
}

enum { RANDOM, CLUMPED, BOUNDARY };

/* n points of a kind in g's domain (outside it along solid axes for the boundary set). */
static void make_points(const ad_grid3 *g, int kind, size_t n, uint64_t *s, float *p)
{
    double w = g->cell;
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) {
            double lo = g->lo[d], hi = g->hi[d], x;
            if (d >= g->dims) x = 0;
            else if (kind == RANDOM) x = lo + urand(s) * (hi - lo);
            else if (kind == CLUMPED) x = i % 10 ? lo + 0.3 * (hi - lo) + urand(s) * 1.5 * w : lo + urand(s) * (hi - lo);
            else {
                /* on cell boundaries, on the domain's ends, and (solid axes) a little outside */
                double k = floor(urand(s) * (g->n[d] + 1));
                x = lo + k * (hi - lo) / g->n[d] + (urand(s) < 0.5 ? 0 : (urand(s) - 0.5) * 0.2 * w);
                if (g->periodic[d]) x = x < lo ? x + (hi - lo) : x >= hi ? x - (hi - lo) : x;
                else if (urand(s) < 0.1) x = urand(s) < 0.5 ? lo - 0.3 * w : hi + 0.3 * w;
            }
            p[3 * i + d] = (float)x;
        }
    for (size_t i = 0; i < n; i++) /* periodic axes: wrapped into [lo, hi) as the engine keeps them */
        for (int d = 0; d < g->dims; d++)
            if (g->periodic[d]) p[3 * i + d] = ad_wrap(p[3 * i + d], g->origin[d], g->len[d]);
}

/* A grid over [lo, hi] per axis (cell 1), n points of a kind in it, and room for its sort. */
typedef struct grid_case {
    ad_grid3 g;
    size_t n;
    float *p;
    uint32_t *start, *order;
} grid_case;

static void case_make(grid_case *c, int dims, const double lo[3], const double hi[3], const int periodic[3],
                      int kind, size_t n, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->g.dims = dims;
    c->g.cell = 1.0;
    for (int d = 0; d < 3; d++) {
        c->g.lo[d] = d < dims ? lo[d] : 0;
        c->g.hi[d] = d < dims ? hi[d] : 0;
        c->g.periodic[d] = d < dims ? periodic[d] : 0;
    }
    ENSURE_OK(ad_grid3_init(&c->g));
    c->n = n;
    c->p = malloc(3 * n * sizeof *c->p);
    c->start = malloc((ad_grid3_cells(&c->g) + 1) * sizeof *c->start);
    c->order = malloc(n * sizeof *c->order);
    uint64_t s = seed;
    make_points(&c->g, kind, n, &s, c->p);
}

static void case_free(grid_case *c)
{
    free(c->p);
    free(c->start);
    free(c->order);
}

static size_t search(const ad_grid3 *g, const float *p, size_t n, float r, pairs *out, uint32_t *start,
                     uint32_t *order)
{
    ENSURE_OK(ad_grid3_sort(g, p, n, start, order));
    ad_grid3_pairs(g, p, n, start, order, r, add_pair, out);
    return out->n;
}

/* The sort: every point once, cells in order, stable within a cell. */
static void check_sort(const ad_grid3 *g, const float *p, size_t n, const uint32_t *start, const uint32_t *order,
                       const char *what)
{
    unsigned char *seen = calloc(n + 1, 1);
    int ok = start[ad_grid3_cells(g)] == n;
    for (size_t k = 0; k < n && ok; k++) {
        ok = order[k] < n && !seen[order[k]]++;
        uint32_t c = ad_grid3_cell_of(g, p + 3 * (size_t)order[k]);
        ok = ok && k >= start[c] && k < start[c + 1];
        if (ok && k > start[c]) ok = order[k] > order[k - 1];
    }
    ENSURE_MSG(ok, "%s: the counting sort lost, repeated or misordered a point", what);
    free(seen);
}

static void one_case(int dims, const int periodic[3], int kind, size_t n, uint64_t seed, size_t *total)
{
    static const double lo[3] = {-2.0, -2.0, -2.0}, hi[3] = {12.3, 9.0, 7.6};
    grid_case c;
    case_make(&c, dims, lo, hi, periodic, kind, n, seed);
    const float r = 0.999f; /* within a cell */
    pairs found = {0}, want = {0};
    search(&c.g, c.p, n, r, &found, c.start, c.order);
    brute(&c.g, c.p, n, r, &want);
    char what[160];
    static const char *kinds[] = {"random", "clumped", "boundary"};
    snprintf(what, sizeof what, "%dD, periodic %d%d%d, %s, %zu points", dims, periodic[0], periodic[1],
             dims == 3 ? periodic[2] : 0, kinds[kind], n);
    check_sort(&c.g, c.p, n, c.start, c.order, what);
    qsort(found.key, found.n, sizeof *found.key, by_key);
    qsort(want.key, want.n, sizeof *want.key, by_key);
    ENSURE_MSG(found.n == want.n && (want.n == 0 || !memcmp(found.key, want.key, want.n * sizeof *want.key)),
               "%s: the grid found %zu pairs, brute force %zu", what, found.n, want.n);
    ENSURE_MSG(want.n > 0, "%s: no pairs at all: the case tests nothing", what);
    *total += want.n;
    free(found.key);
    free(want.key);
    case_free(&c);
}

/* The same search with the stencil cut to the point's own row must miss pairs. */
static void check_sensitive(void)
{
    static const double lo[3] = {0, 0, 0}, hi[3] = {8, 8, 8};
    static const int solid[3] = {0, 0, 0};
    grid_case c;
    case_make(&c, 3, lo, hi, solid, RANDOM, 2000, 99);
    pairs full = {0}, cut = {0};
    search(&c.g, c.p, c.n, 0.999f, &full, c.start, c.order);
    ad_stencil_make(0, 0, &c.g.stencil);
    search(&c.g, c.p, c.n, 0.999f, &cut, c.start, c.order);
    ENSURE_MSG(cut.n < full.n, "a stencil of one row found %zu pairs of %zu: the comparison cannot fail", cut.n, full.n);
    printf("a stencil cut to its own row finds %zu of the %zu pairs\n", cut.n, full.n);
    free(full.key);
    free(cut.key);
    case_free(&c);
}

static void check_refusals(void)
{
    ad_grid3 g;
    memset(&g, 0, sizeof g);
    g.dims = 3;
    g.cell = 1.0;
    g.hi[0] = g.hi[1] = 5;
    g.hi[2] = 0; /* zero depth */
    ad_status st = ad_grid3_init(&g);
    ENSURE_MSG(st.code == AD_ERR_INVALID && strstr(st.message, "along z"), "zero depth: %s", st.message);
    g.hi[2] = 2;
    g.periodic[2] = 1; /* two cells along a periodic z */
    st = ad_grid3_init(&g);
    ENSURE_MSG(st.code == AD_ERR_INVALID && strstr(st.message, "periodic z"), "a short periodic axis: %s", st.message);
    g.periodic[2] = 0;
    g.hi[1] = NAN;
    st = ad_grid3_init(&g);
    ENSURE_MSG(st.code == AD_ERR_INVALID && strstr(st.message, "along y"), "NaN: %s", st.message);
    g.dims = 4;
    st = ad_grid3_init(&g);
    ENSURE_MSG(st.code == AD_ERR_INVALID, "4 dimensions: %s", st.message);
}

int main(void)
{
    static const int periodic[4][3] = {{1, 1, 1}, {0, 0, 0}, {1, 0, 1}, {0, 1, 0}};
    size_t total = 0;
    int cases = 0;
    for (int dims = 2; dims <= 3; dims++)
        for (int b = 0; b < 4; b++)
            for (int kind = RANDOM; kind <= BOUNDARY; kind++, cases++)
                one_case(dims, periodic[b], kind, dims == 3 ? 3000 : 1500, 1000u * (unsigned)cases + 7, &total);
    printf("grid against brute force: %d cases (2D and 3D; periodic, solid, mixed; random, clumped, boundary), "
           "%zu pairs, all equal\n",
           cases, total);
    check_sensitive();
    check_refusals();
    return tu_finish("grid3");
}
