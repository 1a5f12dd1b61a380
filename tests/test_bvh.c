/* The Morton-code BVH finds exactly the grid's and brute force's contact pairs, keeps its invariants, and steps
 * worlds like the grid does. `test_bvh gpu` runs the GPU checks (exit 77 without a GPU); `test_bvh gpu quick`
 * shrinks the long periodic run (a quarter of the discs, 200 steps), for compute-sanitizer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/world_internal.h"
#include "cpu/bvh_cpu.h"
#include "physics/bvh.h"
#include "physics/rng.h"
#include "test_gpu_tunnel.h"
#include "test_pairs.h"
#include "test_util.h"

/* A tree over the points s[0..n) built as the CPU backend builds it: keys, sort,
 * reorder, nodes, boxes. sorted[] receives the points in leaf order. */
static ad_bvh build(const ad_params *p, const ad_state *s, size_t n, int threads, ad_cpu_bvh *b, ad_state *sorted)
{
    if (ad_cpu_bvh_alloc(b, n)) {
        printf("out of memory\n");
        exit(1);
    }
    ad_cpu_morton_keys(p, s, n, b, threads, NULL);
    ad_cpu_radix_sort(b, n, threads);
    for (size_t k = 0; k < n; k++) sorted[k] = s[b->perm[k]];
    return ad_cpu_bvh_build(b, sorted, NULL, n, threads);
}

static int box_contains(ad_bvh_box outer, ad_bvh_box inner)
{
    return outer.x0 <= inner.x0 && outer.y0 <= inner.y0 && outer.x1 >= inner.x1 && outer.y1 >= inner.y1;
}

/* Walks the whole tree from the root: every leaf reached exactly once, every
 * internal node once, parent boxes hold their children's, rightmost is the last
 * leaf below, parent[] points back, depth within the stack bound. */
static int check_invariants(const char *name, const ad_bvh *t, const ad_cpu_bvh *b)
{
    size_t n = t->n;
    int errors = 0;
    for (size_t k = 1; k < n; k++) {
        uint64_t prev = ((uint64_t)b->code[k - 1] << 32) | (k - 1), cur = ((uint64_t)b->code[k] << 32) | k;
        if (!(prev < cur)) {
            printf("  %s: keys %zu and %zu are not ascending\n", name, k - 1, k);
            return 1;
        }
    }
    if (n < 2) return 0;
    unsigned char *leaf_seen = calloc(n, 1), *node_seen = calloc(n - 1, 1);
    uint32_t *stack = malloc(2 * n * sizeof *stack), *depth = malloc(2 * n * sizeof *depth);
    size_t top = 0;
    uint32_t max_depth = 0;
    stack[top] = 0;
    depth[top++] = 0;
    while (top > 0 && !errors) {
        uint32_t k = stack[--top], d = depth[top];
        if (node_seen[k]++) {
            printf("  %s: internal node %u reached twice\n", name, k);
            errors++;
            break;
        }
        uint32_t last = 0;
        for (int side = 0; side < 2; side++) {
            uint32_t c = t->child[2 * (size_t)k + (size_t)side];
            ad_bvh_box cb;
            size_t pidx;
            if (c & AD_BVH_LEAF) {
                uint32_t i = c & ~AD_BVH_LEAF;
                if (i >= n || leaf_seen[i]++) {
                    printf("  %s: leaf %u out of range or reached twice\n", name, i);
                    errors++;
                    break;
                }
                cb = ad_bvh_leaf_box(t, i);
                pidx = n - 1 + i;
                last = i > last ? i : last;
                max_depth = d + 1 > max_depth ? d + 1 : max_depth;
            } else {
                if (c >= n - 1) {
                    printf("  %s: child %u of node %u out of range\n", name, c, k);
                    errors++;
                    break;
                }
                cb = t->box[c];
                pidx = c;
                last = t->rightmost[c] > last ? t->rightmost[c] : last;
                stack[top] = c;
                depth[top++] = d + 1;
            }
            if (!box_contains(t->box[k], cb)) {
                printf("  %s: the box of node %u does not hold its child %08x\n", name, k, c);
                errors++;
            }
            if (b->parent[pidx] != k) {
                printf("  %s: parent of %08x is %u, not %u\n", name, c, b->parent[pidx], k);
                errors++;
            }
        }
        if (!errors && t->rightmost[k] != last) {
            printf("  %s: rightmost of node %u is %u, its last leaf %u\n", name, k, t->rightmost[k], last);
            errors++;
        }
    }
    for (size_t i = 0; i < n && !errors; i++)
        if (!leaf_seen[i]) {
            printf("  %s: leaf %zu is not reachable from the root\n", name, i);
            errors++;
        }
    for (size_t k = 0; k + 1 < n && !errors; k++)
        if (!node_seen[k]) {
            printf("  %s: internal node %zu is not reachable from the root\n", name, k);
            errors++;
        }
    if (max_depth > AD_BVH_STACK) {
        printf("  %s: depth %u exceeds the walk's stack bound %d\n", name, max_depth, AD_BVH_STACK);
        errors++;
    }
    free(leaf_seen);
    free(node_seen);
    free(stack);
    free(depth);
    return errors;
}

/* Pairs as the gather walk finds them (each disc from its side; kept once, u < v in
 * the input's indices), or reflexively (each pair from its lower leaf only: a pair
 * met twice is an error). */
static size_t bvh_pairs(const ad_params *p, const ad_bvh *t, const ad_state *sorted, const uint32_t *perm,
                        int reflexive, pair *out, int *errors)
{
    size_t np = 0, n = t->n;
    uint32_t stack[AD_BVH_STACK];
    for (size_t k = 0; k < n; k++) {
        ad_bvh_box q[4];
        int nq = ad_bvh_disc_queries(p, sorted[k].x, sorted[k].y, q);
        for (int m = 0; m < nq; m++) {
            ad_bvh_walk w;
            ad_bvh_walk_begin(t, &w, q[m], reflexive ? (uint32_t)k + 1 : 0, stack, 1);
            uint32_t prev = 0;
            int first = 1;
            for (uint32_t j = ad_bvh_walk_next(t, &w); j != AD_BVH_NONE; j = ad_bvh_walk_next(t, &w)) {
                if (!first && j <= prev) {
                    printf("  leaves out of order: %u after %u\n", j, prev);
                    (*errors)++;
                }
                first = 0;
                prev = j;
                if (j == k || !touching(p, sorted[k], sorted[j])) continue;
                if (reflexive && j < k) {
                    printf("  reflexive walk of %zu met the lower leaf %u\n", k, j);
                    (*errors)++;
                }
                uint32_t u = perm[k], v = perm[j];
                if (reflexive) out[np++] = u < v ? (pair){u, v} : (pair){v, u};
                else if (u < v) out[np++] = (pair){u, v};
            }
        }
    }
    return np;
}

static int same_pairs(const char *what, pair *a, size_t na, pair *b, size_t nb)
{
    qsort(b, nb, sizeof *b, pair_cmp);
    if (na == nb && memcmp(a, b, na * sizeof *a) == 0) return 0;
    printf("  brute force finds %zu pairs, %s %zu\n", na, what, nb);
    return 1;
}

/* Brute force, the grid, the BVH gather and reflexive walks: the same pairs; the
 * tree keeps its invariants and is the same for 1 and 2 threads. */
static int compare(const char *name, const ad_params *p, const ad_state *s, size_t n)
{
    size_t cap = n * (n - 1) / 2 + 1;
    pair *a = malloc(cap * sizeof *a), *b = malloc(cap * sizeof *b);
    ad_state *sorted = malloc(n * sizeof *sorted), *sorted2 = malloc(n * sizeof *sorted2);
    int errors = 0;
    size_t na = brute_pairs(p, s, n, a);
    qsort(a, na, sizeof *a, pair_cmp);
    size_t nb = grid_pairs(p, s, n, 2, b, &errors);
    errors += same_pairs("the grid", a, na, b, nb);

    ad_cpu_bvh t1, t2;
    ad_bvh tree = build(p, s, n, 1, &t1, sorted);
    ad_bvh tree2 = build(p, s, n, 2, &t2, sorted2);
    errors += check_invariants(name, &tree, &t1);
    if (memcmp(t1.perm, t2.perm, n * 4) || memcmp(t1.child, t2.child, 2 * (n - 1) * 4) ||
        memcmp(t1.box, t2.box, (n - 1) * sizeof(ad_bvh_box))) {
        printf("  %s: the tree built by 2 threads differs from 1 thread's\n", name);
        errors++;
    }
    (void)tree2;
    nb = bvh_pairs(p, &tree, sorted, t1.perm, 0, b, &errors);
    errors += same_pairs("the BVH gather", a, na, b, nb);
    nb = bvh_pairs(p, &tree, sorted, t1.perm, 1, b, &errors);
    errors += same_pairs("the reflexive BVH walk", a, na, b, nb);
    printf("%-40s n=%5zu: %6zu pairs %s\n", name, n, na, errors ? "MISMATCH" : "ok");
    ad_cpu_bvh_free(&t1);
    ad_cpu_bvh_free(&t2);
    free(a);
    free(b);
    free(sorted);
    free(sorted2);
    return errors;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int pair_sets(void)
{
    int failures = 0;
    enum { N = 2500 };
    ad_state *s = malloc(N * sizeof *s);
    for (int variant = 0; variant < 4; variant++) {
        ad_world_def d = pairs_box(variant);
        d.broad_phase = AD_BROAD_PHASE_BVH;
        ad_params p;
        if (!ENSURE_OK(ad_params_from_def(&d, &p))) return 1;
        uint64_t seed = 2000 + (uint64_t)variant, c = 0;
        double W = d.x_max - d.x_min, H = d.y_max - d.y_min;

        uniform_discs(&d, seed, &c, s, N);
        failures += compare(case_name("uniform", &d), &p, s, N);

        /* dense clumps, some across the periodic sides */
        for (int i = 0; i < N; i++) {
            int k = i % 5;
            double cx = d.x_min + W * (0.2 * k), cy = d.y_min + H * (0.25 * k);
            float x = (float)(cx + 3.0 * (u01(seed, &c) - 0.5)), y = (float)(cy + 3.0 * (u01(seed, &c) - 0.5));
            if (variant & 1) x = ad_wrap(x, p.x_min, p.len_x);
            if (variant & 2) y = ad_wrap(y, p.y_min, p.len_y);
            s[i] = (ad_state){x, y, 0, 0};
        }
        failures += compare(case_name("clumps", &d), &p, s, N);

        /* polydisperse-looking: clusters of very different densities over a sparse
         * background, and a stack of discs on one point (equal Morton codes) */
        for (int i = 0; i < N; i++) {
            double x, y, r = u01(seed, &c);
            if (r < 0.3) { /* background */
                x = d.x_min + W * u01(seed, &c);
                y = d.y_min + H * u01(seed, &c);
            } else if (r < 0.6) { /* a packed blob of 1.5 diameters */
                x = 10.0 + 1.5 * u01(seed, &c);
                y = 10.0 + 1.5 * u01(seed, &c);
            } else if (r < 0.9) { /* a looser cloud of 8 diameters */
                x = 25.0 + 8.0 * u01(seed, &c);
                y = 15.0 + 8.0 * u01(seed, &c);
            } else { /* one point */
                x = 3.25;
                y = 20.5;
            }
            s[i] = (ad_state){(float)x, (float)y, 0, 0};
        }
        failures += compare(case_name("mixed densities", &d), &p, s, N);

        /* on the domain edges exactly, next to them, and (solid axes) outside */
        for (int i = 0; i < N; i++) {
            double x = d.x_min + W * u01(seed, &c), y = d.y_min + H * u01(seed, &c);
            float fx = (float)x, fy = (float)y;
            switch (i % 6) {
            case 0: fx = p.x_min; break;
            case 1: fx = nextafterf(p.x_max, -INFINITY); break;
            case 2: fy = p.y_min; break;
            case 3: fy = nextafterf(p.y_max, -INFINITY); break;
            case 4:
                if (!(variant & 1)) fx = (float)(i % 12 < 6 ? d.x_min - 4.0 * u01(seed, &c) : d.x_max + 4.0 * u01(seed, &c));
                break;
            default:
                if (!(variant & 2)) fy = (float)(d.y_max + 4.0 * u01(seed, &c));
            }
            s[i] = (ad_state){fx, fy, 0, 0};
        }
        failures += compare(case_name("edges and outside", &d), &p, s, N);
    }
    /* tiny trees: one and two leaves */
    {
        ad_world_def d = ad_default_world_def();
        ad_params p;
        ad_params_from_def(&d, &p);
        s[0] = (ad_state){5.0f, 5.0f, 0, 0};
        s[1] = (ad_state){5.5f, 5.0f, 0, 0};
        failures += compare("one disc", &p, s, 1);
        failures += compare("two discs", &p, s, 2);
    }
    free(s);
    return failures;
}

/* The segment tree finds the same segment contacts as the segment grid. */
static int segment_tree(void)
{
    ad_world_def d = ad_default_world_def();
    d.broad_phase = AD_BROAD_PHASE_BVH;
    d.backend = AD_BACKEND_CPU;
    d.capacity = 16;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    enum { M = 64 };
    ad_segment seg[M];
    for (int k = 0; k < M; k++) { /* a closed polygon round (50, 50) and a plate */
        double a0 = 2 * TU_PI * k / (M - 4), a1 = 2 * TU_PI * (k + 1) / (M - 4);
        if (k < M - 4)
            seg[k] = (ad_segment){(float)(50 + 20 * cos(a0)), (float)(50 + 12 * sin(a0)), (float)(50 + 20 * cos(a1)),
                                  (float)(50 + 12 * sin(a1))};
        else
            seg[k] = (ad_segment){10.0f + 3.0f * (float)(k - M + 4), 80.0f, 13.0f + 3.0f * (float)(k - M + 4), 81.0f};
    }
    REQUIRE_OK(ad_world_add_segments(w, seg, M));
    const ad_seg_tree *t = &w->seg.tree;
    ENSURE(t->t.n == M);
    uint64_t c = 0;
    int bad = 0, contacts = 0;
    uint32_t stack[AD_BVH_STACK];
    for (int i = 0; i < 20000; i++) {
        float x = (float)(5 + 70 * u01(77, &c)), y = (float)(30 + 55 * u01(77, &c));
        ad_accum a, b;
        ad_accum_zero(&a);
        ad_accum_zero(&b);
        ad_contact_segments(&w->params, &w->seg.grid, x, y, 1.0f, -0.5f, &a);
        ad_bvh_contact_segments(&w->params, t, x, y, 1.0f, -0.5f, stack, 1, &b);
        contacts += a.energy > 0;
        if (fabsf(a.fx - b.fx) > 1e-5f * (1 + fabsf(a.fx)) || fabsf(a.fy - b.fy) > 1e-5f * (1 + fabsf(a.fy)) ||
            fabsf(a.energy - b.energy) > 1e-5f * (1 + a.energy))
            bad++;
    }
    printf("segment tree vs segment grid: %d of 20000 points touch the body, %d differ\n", contacts, bad);
    ENSURE(contacts > 500);
    ENSURE(bad == 0);
    ad_world_destroy(w);
    return 0;
}

/* A gas in a flow tunnel with a body, on the grid and on the BVH: per disc after
 * some steps. The contacts are the same; only the order of each disc's sum may
 * differ, so the worlds agree to rounding (chaos amplifies it: few steps). */
static void world_vs_grid(ad_integrator integ, uint64_t steps)
{
    ad_world *w[2];
    for (int k = 0; k < 2; k++) {
        ad_world_def d = gt_def(AD_BACKEND_CPU, integ); /* the GPU tests' tunnel, smaller and denser */
        d.capacity = 6000;
        d.wall_restitution = ad_default_world_def().wall_restitution;
        d.deterministic = 0;
        d.broad_phase = k ? AD_BROAD_PHASE_BVH : AD_BROAD_PHASE_GRID;
        REQUIRE_OK(ad_world_create(&d, &w[k]));
        ad_segment sq[] = {{30, 20, 36, 20}, {36, 20, 36, 26}, {36, 26, 30, 26}, {30, 26, 30, 20}, {50, 35, 60, 32}};
        REQUIRE_OK(ad_world_add_segments(w[k], sq, 5));
        ad_fill_def f = {0, 0, 80, 50, 0.4, 3.0, 0.0, 1.0, 5, 0, 0, 0};
        REQUIRE_OK(ad_world_fill(w[k], &f, NULL));
        REQUIRE_OK(ad_world_step(w[k], steps));
    }
    ad_stats sa = tu_stats(w[0]), sb = tu_stats(w[1]);
    ENSURE(sa.count == sb.count);
    size_t n = sa.count, bad = 0;
    ad_particle *pa = malloc(n * sizeof *pa), *pb = malloc(n * sizeof *pb);
    float *fa = malloc(n * sizeof *fa), *fb = malloc(n * sizeof *fb);
    REQUIRE_OK(ad_world_read_particles(w[0], AD_READ_BY_ID, n, pa, NULL, fa, NULL, NULL));
    REQUIRE_OK(ad_world_read_particles(w[1], AD_READ_BY_ID, n, pb, NULL, fb, NULL, NULL));
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        const float *u = &pa[i].x, *v = &pb[i].x;
        for (int k = 0; k < 4; k++) {
            double e = fabs((double)u[k] - v[k]), tol = 1e-4 + 1e-5 * fabs((double)u[k]);
            bad += !(e <= tol);
            worst = fmax(worst, e / tol);
        }
        double ep = fabs((double)fa[i] - fb[i]), tp = 1e-2 + 1e-3 * fabs((double)fa[i]);
        bad += !(ep <= tp);
    }
    printf("%-18s grid vs BVH, %zu discs after %llu steps: worst %.3g of tolerance, %zu values outside; body "
           "impulse %.6g vs %.6g\n",
           ad_integrator_name(integ), n, (unsigned long long)steps, worst, bad, sa.body_impulse_x, sb.body_impulse_x);
    ENSURE_MSG(bad == 0, "%s: %zu values outside abs 1e-4 + rel 1e-5", ad_integrator_name(integ), bad);
    ENSURE_REL(sb.kinetic_energy, sa.kinetic_energy, 1e-5);
    ENSURE_REL(sb.body_impulse_x, sa.body_impulse_x, 1e-3);
    ENSURE(sb.max_cell_occupancy == 0 && sa.max_cell_occupancy > 0);
    free(pa);
    free(pb);
    free(fa);
    free(fb);
    ad_world_destroy(w[0]);
    ad_world_destroy(w[1]);
}

/* A periodic box on the BVH: pair forces cancel exactly, so momentum stays. */
static void periodic_momentum(void)
{
    ad_world_def d = tu_square(ad_default_world_def(), 60, AD_BOUNDARY_PERIODIC);
    d.backend = AD_BACKEND_CPU;
    d.capacity = 4000;
    d.restitution = 0.7;
    d.threads = 2;
    d.broad_phase = AD_BROAD_PHASE_BVH;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_fill_def f = {0, 0, 60, 60, 0.45, 0.7, -0.3, 2.0, 9, 0, 0, 0};
    REQUIRE_OK(ad_world_fill(w, &f, NULL));
    REQUIRE_OK(ad_world_step(w, 1)); /* the statistics of a state come with a step */
    ad_stats s0 = tu_stats(w);
    REQUIRE_OK(ad_world_step(w, 400));
    ad_stats s1 = tu_stats(w);
    double p0 = hypot(s0.momentum_x, s0.momentum_y);
    printf("periodic box on the BVH, %zu discs, 400 steps: momentum (%.9g, %.9g) -> (%.9g, %.9g), KE %.6g -> %.6g\n",
           s1.count, s0.momentum_x, s0.momentum_y, s1.momentum_x, s1.momentum_y, s0.kinetic_energy, s1.kinetic_energy);
    ENSURE_NEAR(s1.momentum_x, s0.momentum_x, 1e-5 * p0 + 1e-3);
    ENSURE_NEAR(s1.momentum_y, s0.momentum_y, 1e-5 * p0 + 1e-3);
    ENSURE(s1.potential_energy > 0);     /* contacts happened */
    ENSURE(s1.kinetic_energy < s0.kinetic_energy); /* inelastic */
    ad_world_destroy(w);
}

/* Definitions the BVH refuses, each naming its field. */
static void refusals(void)
{
    ad_world_def d = ad_default_world_def();
    d.broad_phase = (ad_broad_phase)7;
    ad_status st = ad_world_def_validate(&d);
    ENSURE(st.code == AD_ERR_INVALID && !strcmp(st.field, "broad_phase"));
    d = ad_default_world_def();
    d.bvh_traversal = (ad_bvh_traversal)3;
    st = ad_world_def_validate(&d);
    ENSURE(st.code == AD_ERR_INVALID && !strcmp(st.field, "bvh_traversal"));
    d = ad_default_world_def();
    d.broad_phase = AD_BROAD_PHASE_BVH;
    d.capacity = (size_t)AD_BVH_MAX_LEAVES + 1;
    st = ad_world_def_validate(&d);
    ENSURE(st.code == AD_ERR_INVALID && !strcmp(st.field, "capacity"));
    d = ad_default_world_def();
    d.broad_phase = AD_BROAD_PHASE_BVH;
    d.bvh_traversal = AD_BVH_REFLEXIVE;
    d.backend = AD_BACKEND_CPU;
    ad_world *w = NULL;
    st = ad_world_create(&d, &w);
    ENSURE(st.code == AD_ERR_INVALID && !strcmp(st.field, "bvh_traversal") && w == NULL);
    printf("refused: %s\n", st.message);
}

/* ------------------------------------------------------------ GPU parts -- */
#if defined(AD_HAVE_CUDA)

static ad_world *tunnel(ad_backend b, ad_integrator integ, ad_bvh_traversal trav, int shared_stack)
{
    ad_world_def d = gt_def(b, integ);
    /* the GPU's BVH runs closed and periodic worlds (open sides take the grid there): the GPU tests'
     * tunnel as a periodic channel, its stream carried by the fill */
    d.boundary_x = AD_BOUNDARY_PERIODIC;
    d.reservoir = 0.0;
    d.stream_density = 0.0;
    d.deterministic = 0;
    d.broad_phase = AD_BROAD_PHASE_BVH;
    d.bvh_traversal = trav;
    ad_world *w = gt_create(&d);
    w->bvh_shared_stack = shared_stack;
    gt_fill(w);
    return w;
}

static ad_bvh_dump dump_alloc(size_t n)
{
    ad_bvh_dump d = {n,
                     malloc(n * 4),
                     malloc(2 * n * 4),
                     malloc(n * 4),
                     malloc(2 * n * 4),
                     malloc(n * 4),
                     malloc(n * sizeof(ad_bvh_box)),
                     malloc(n * sizeof(ad_state))};
    return d;
}

static void dump_free(ad_bvh_dump *d)
{
    free(d->code);
    free(d->child);
    free(d->rightmost);
    free(d->parent);
    free(d->id);
    free(d->box);
    free(d->point);
}

/* Per disc, by id: positions, velocities and pressures within abs + rel. */
static void agree(const char *what, ad_world *a, ad_world *b, double abs_tol, double rel_tol)
{
    ad_stats sa = tu_stats(a), sb = tu_stats(b);
    ENSURE(sa.count == sb.count);
    size_t n = sa.count, bad = 0;
    ad_particle *pa = malloc(n * sizeof *pa), *pb = malloc(n * sizeof *pb);
    float *fa = malloc(n * sizeof *fa), *fb = malloc(n * sizeof *fb);
    REQUIRE_OK(ad_world_read_particles(a, AD_READ_BY_ID, n, pa, NULL, fa, NULL, NULL));
    REQUIRE_OK(ad_world_read_particles(b, AD_READ_BY_ID, n, pb, NULL, fb, NULL, NULL));
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        const float *u = &pa[i].x, *v = &pb[i].x;
        for (int k = 0; k < 4; k++) {
            double e = fabs((double)u[k] - v[k]), tol = abs_tol + rel_tol * fabs((double)u[k]);
            bad += !(e <= tol);
            worst = fmax(worst, e / tol);
        }
        double ep = fabs((double)fa[i] - fb[i]), tp = 1e-2 + 1e-3 * fabs((double)fa[i]);
        bad += !(ep <= tp);
    }
    printf("  %-40s %zu discs: worst %.3g of tolerance, %zu values outside\n", what, n, worst, bad);
    ENSURE_MSG(bad == 0, "%s: %zu values outside abs %.1g + rel %.1g", what, bad, abs_tol, rel_tol);
    ENSURE_REL(sb.kinetic_energy, sa.kinetic_energy, 1e-4);
    free(pa);
    free(pb);
    free(fa);
    free(fb);
}

/* The GPU's tree equals the CPU's bit for bit (same keys, stable sorts, same node
 * and box code), keeps the invariants, and gives brute force's pairs; worlds
 * stepped on the GPU agree with the CPU per disc. */
static int gpu_tests(int quick)
{
    if (ad_cuda_device_count() == 0) {
        printf("SKIP: no CUDA GPU\n");
        return 77;
    }
    ad_world *cpu = tunnel(AD_BACKEND_CPU, AD_INTEGRATOR_SYMPLECTIC_EULER, AD_BVH_GATHER, 0);
    ad_world *gpu = tunnel(AD_BACKEND_CUDA, AD_INTEGRATOR_SYMPLECTIC_EULER, AD_BVH_GATHER, 0);
    REQUIRE_OK(ad_world_step(cpu, 1));
    REQUIRE_OK(ad_world_step(gpu, 1));
    size_t n = tu_stats(cpu).count;
    ad_bvh_dump a = dump_alloc(n), b = dump_alloc(n);
    REQUIRE_OK(ad_cpu_bvh_dump(cpu, &a));
    REQUIRE_OK(ad_cuda_bvh_dump(gpu, &b));
    ENSURE(a.n == n && b.n == n);
    ENSURE_MSG(!memcmp(a.code, b.code, n * 4), "sorted Morton codes differ");
    ENSURE_MSG(!memcmp(a.id, b.id, n * 4), "leaf orders (ids) differ");
    ENSURE_MSG(!memcmp(a.point, b.point, n * sizeof(ad_state)), "leaf centres differ");
    ENSURE_MSG(!memcmp(a.child, b.child, 2 * (n - 1) * 4), "children differ");
    ENSURE_MSG(!memcmp(a.rightmost, b.rightmost, (n - 1) * 4), "rightmost leaves differ");
    ENSURE_MSG(!memcmp(a.box, b.box, (n - 1) * sizeof(ad_bvh_box)), "internal boxes differ");
    ad_bvh t = {(uint32_t)n, b.child, b.rightmost, b.box, b.point, NULL};
    ad_cpu_bvh nodes;
    memset(&nodes, 0, sizeof nodes);
    nodes.code = b.code;
    nodes.parent = b.parent;
    ENSURE(check_invariants("GPU tree", &t, &nodes) == 0);
    {
        int errors = 0;
        size_t cap = 40 * n;
        pair *p1 = malloc(cap * sizeof *p1), *p2 = malloc(cap * sizeof *p2);
        uint32_t *iota = malloc(n * 4);
        for (size_t k = 0; k < n; k++) iota[k] = (uint32_t)k;
        /* the fill leaves no disc touching another after one step: pairs within 1.5 diameters instead,
         * with the walk's search box widened to match, so that the sets are not empty */
        ad_params wide = gpu->params;
        wide.diameter_sq = 2.25f * wide.diameter * wide.diameter;
        if (wide.search < 1.5f * wide.diameter) wide.search = 1.5f * wide.diameter;
        size_t n1 = brute_pairs(&wide, b.point, n, p1);
        qsort(p1, n1, sizeof *p1, pair_cmp);
        size_t n2 = bvh_pairs(&wide, &t, b.point, iota, 1, p2, &errors);
        errors += same_pairs("the GPU tree's reflexive walk", p1, n1, p2, n2);
        printf("GPU tree of %zu leaves: the CPU's bit for bit, invariants hold, %zu pairs within 1.5 d as brute force\n",
               n, n1);
        ENSURE(errors == 0);
        ENSURE(n1 > n / 2);
        free(p1);
        free(p2);
        free(iota);
    }
    dump_free(&a);
    dump_free(&b);
    /* as test_gpu: FMA contraction differs between gcc and nvcc, and chaos grows it */
    REQUIRE_OK(ad_world_step(cpu, 9));
    REQUIRE_OK(ad_world_step(gpu, 9));
    agree("symplectic Euler, gather, 10 steps", cpu, gpu, 1e-4, 1e-4);
    ad_world_destroy(gpu);

    /* the shared-memory stack walks the same tree in the same order */
    ad_world *sh = tunnel(AD_BACKEND_CUDA, AD_INTEGRATOR_SYMPLECTIC_EULER, AD_BVH_GATHER, 1);
    ad_world *lo = tunnel(AD_BACKEND_CUDA, AD_INTEGRATOR_SYMPLECTIC_EULER, AD_BVH_GATHER, 0);
    REQUIRE_OK(ad_world_step(sh, 10));
    REQUIRE_OK(ad_world_step(lo, 10));
    agree("shared vs local stack, 10 steps", lo, sh, 1e-6, 1e-6);
    ad_world_destroy(sh);
    ad_world_destroy(lo);

    /* reflexive: the same contacts, summed in another order with atomics */
    for (int stack = 0; stack < 2; stack++) {
        ad_world *rf = tunnel(AD_BACKEND_CUDA, AD_INTEGRATOR_SYMPLECTIC_EULER, AD_BVH_REFLEXIVE, stack);
        REQUIRE_OK(ad_world_step(rf, 10));
        agree(stack ? "reflexive (shared stack), 10 steps" : "reflexive, 10 steps", cpu, rf, 1e-4, 1e-4);
        ad_world_destroy(rf);
    }
    ad_world_destroy(cpu);

    ad_integrator other[] = {AD_INTEGRATOR_VERLET, AD_INTEGRATOR_RK4, AD_INTEGRATOR_EULER};
    for (int k = 0; k < 3; k++) {
        ad_world *x = tunnel(AD_BACKEND_CPU, other[k], AD_BVH_GATHER, 0);
        ad_world *y = tunnel(AD_BACKEND_CUDA, other[k], AD_BVH_GATHER, 0);
        REQUIRE_OK(ad_world_step(x, 10));
        REQUIRE_OK(ad_world_step(y, 10));
        char what[64];
        snprintf(what, sizeof what, "%s, gather, 10 steps", ad_integrator_name(other[k]));
        agree(what, x, y, 1e-4, 1e-4);
        ad_world_destroy(x);
        ad_world_destroy(y);
    }
    /* many steps on the GPU: momentum of a periodic box is kept */
    {
        double side = quick ? 200 : 400;
        ad_world_def d = tu_square(ad_default_world_def(), side, AD_BOUNDARY_PERIODIC);
        d.backend = AD_BACKEND_CUDA;
        d.capacity = 200000;
        d.restitution = 0.7;
        d.broad_phase = AD_BROAD_PHASE_BVH;
        ad_world *w;
        REQUIRE_OK(ad_world_create(&d, &w));
        ad_fill_def f = {0, 0, side, side, 0.45, 0.7, -0.3, 2.0, 9, 0, 0, 0};
        REQUIRE_OK(ad_world_fill(w, &f, NULL));
        REQUIRE_OK(ad_world_step(w, 1));
        ad_stats s0 = tu_stats(w);
        int steps = quick ? 200 : 5000;
        REQUIRE_OK(ad_world_step(w, steps));
        ad_stats s1 = tu_stats(w);
        double p0 = hypot(s0.momentum_x, s0.momentum_y);
        printf("  periodic box on the GPU BVH, %zu discs, %d steps: momentum (%.9g, %.9g) -> (%.9g, %.9g)\n",
               s1.count, steps, s0.momentum_x, s0.momentum_y, s1.momentum_x, s1.momentum_y);
        ENSURE_NEAR(s1.momentum_x, s0.momentum_x, 1e-4 * p0 + 1e-2);
        ENSURE_NEAR(s1.momentum_y, s0.momentum_y, 1e-4 * p0 + 1e-2);
        ENSURE(s1.kinetic_energy < s0.kinetic_energy);
        ad_world_destroy(w);
    }
    return tu_finish("bvh gpu");
}
#endif

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "gpu")) {
#if defined(AD_HAVE_CUDA)
        return gpu_tests(argc > 2 && !strcmp(argv[2], "quick"));
#else
        printf("SKIP: this build has no CUDA backend\n");
        return 77;
#endif
    }
    double t0 = now_s();
    int failures = pair_sets();
    printf("pair sets: %.2f s\n", now_s() - t0);
    ENSURE_MSG(failures == 0, "%d pair-set checks failed", failures);
    segment_tree();
    t0 = now_s();
    world_vs_grid(AD_INTEGRATOR_SYMPLECTIC_EULER, 1500);
    printf("world: %.2f s\n", now_s() - t0);
    world_vs_grid(AD_INTEGRATOR_VERLET, 1000);
    world_vs_grid(AD_INTEGRATOR_RK4, 400);
    periodic_momentum();
    refusals();
    return tu_finish("bvh");
}
