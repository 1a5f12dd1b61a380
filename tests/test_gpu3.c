/* The 3D world on the GPU (issue 18), against the CPU backend: sphere by sphere after 1 and 10 steps for
 * every integrator (positions, velocities, accelerations within abs + rel tolerances: the GPU takes
 * distances from its reciprocal square root, the CPU from a correctly rounded one), two GPU runs bit
 * for bit, and the cases every backend runs (world3_cases.h): collisions against the closed forms,
 * momentum, no sphere lost over 10^4 steps, checkpoints resumed bit for bit. Skipped (77) without a
 * GPU. The cell counters at two widths, and one pushed past its width. The 3D fields and probe against the
 * CPU's, and resumed from a checkpoint. The free stream (open x faces, physics/open3.h) on the GPU: a tunnel
 * against the CPU (counts, entries, removals, ids and every sphere's state), a free-molecular stream's entry
 * rate and gas against kinetic theory, the bookkeeping (ids unique, spheres = filled + entered - left), two
 * runs and a checkpoint resumed with spheres waiting bit for bit. The reservoir (a dense gas at volume
 * fraction 0.2, test_reservoir3's tunnel): against the CPU sphere by sphere after 200 steps for every
 * integrator (the same counts, removals, additions and ids), two runs and a checkpoint bit for bit, the
 * bookkeeping, a run with a body against the CPU's (densities along the tunnel, the drag within the
 * combined standard errors), and the long run that keeps the stream's density (reservoir3_long's
 * tolerances). The tunnels: tunnel3_cases.h. `test_gpu3 quick`: the one-step comparisons, the counters,
 * the fields and the tunnels against the CPU only (for compute-sanitizer). */
#include "world3_cases.h"

typedef struct spheres {
    size_t n;
    ad_particle3 *p;
    float *acc;
} spheres;

static spheres read_all(const ad_world *w)
{
    spheres s = {w->count, malloc(w->count * sizeof(ad_particle3)), malloc(3 * w->count * sizeof(float))};
    ad_particle_out out = {NULL, NULL, NULL, NULL, s.acc, s.p};
    size_t got;
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, s.n, &out, &got));
    return s;
}

/* The worst error over the tolerance of every component, and how many are past it. */
static double compare(const spheres *a, const spheres *b, size_t *outside)
{
    double worst = 0;
    *outside = 0;
    for (size_t i = 0; i < a->n; i++) {
        const float *x = &a->p[i].x, *y = &b->p[i].x;
        for (int k = 0; k < 6; k++) {
            double tol = k < 3 ? 1e-4 + 1e-6 * fabs(x[k]) : 1e-3 + 1e-3 * fabs(x[k]);
            double r = fabs(x[k] - y[k]) / tol;
            worst = fmax(worst, r);
            *outside += !(r <= 1.0);
        }
        for (int k = 0; k < 3; k++) {
            double r = fabs(a->acc[3 * i + k] - b->acc[3 * i + k]) / (1e-2 + 1e-3 * fabs(a->acc[3 * i + k]));
            worst = fmax(worst, r);
            *outside += !(r <= 1.0);
        }
    }
    return worst;
}

static void test_against_cpu(int quick)
{
    static const ad_integrator integ[4] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_EULER, AD_INTEGRATOR_VERLET,
                                           AD_INTEGRATOR_RK4};
    static const int steps[2] = {1, 10};
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < (quick ? 1 : 2); j++) {
            g_backend = AD_BACKEND_CPU;
            ad_world *c = gas(k % 2, 0.9, integ[k], 2, 0.3, 1);
            g_backend = AD_BACKEND_CUDA;
            ad_world *g = gas(k % 2, 0.9, integ[k], 2, 0.3, 1);
            REQUIRE_OK(ad_world_step(c, (uint64_t)steps[j]));
            REQUIRE_OK(ad_world_step(g, (uint64_t)steps[j]));
            spheres a = read_all(c), b = read_all(g);
            size_t outside;
            double worst = compare(&a, &b, &outside);
            ad_stats sc = tu_stats(c), sg = tu_stats(g);
            printf("  %-17s %2d steps  %zu spheres: worst error %.3g of tolerance, %zu values outside; KE %.9g vs "
                   "%.9g, time %.9g vs %.9g\n", ad_integrator_name(integ[k]), steps[j], a.n, worst, outside,
                   sc.kinetic_energy, sg.kinetic_energy, sc.time, sg.time);
            ENSURE(a.n == b.n && outside == 0);
            ENSURE_REL(sg.kinetic_energy, sc.kinetic_energy, 1e-5);
            ENSURE_REL(sg.time, sc.time, 1e-6);
            ENSURE(sg.backend == AD_BACKEND_CUDA && sc.backend == AD_BACKEND_CPU);
            free(a.p), free(a.acc), free(b.p), free(b.acc);
            ad_world_destroy(c);
            ad_world_destroy(g);
        }
}

static void test_two_runs(void)
{
    uint64_t h[2];
    for (int k = 0; k < 2; k++) {
        ad_world *w = gas(1, 0.9, AD_INTEGRATOR_SYMPLECTIC_EULER, 1, 0.3, 1);
        REQUIRE_OK(ad_world_step(w, 500));
        h[k] = tu3_hash(w);
        ad_world_destroy(w);
    }
    printf("two GPU runs of 500 steps: %016llx %016llx\n", (unsigned long long)h[0], (unsigned long long)h[1]);
    ENSURE(h[0] == h[1]);
}

/* The cell counters at two widths (src/cuda/counts.cuh): cells of one diameter (8 bits) and of 6
 * diameters (16 bits: ~80 spheres a cell at 0.3), each against the CPU after 10 steps; then 300
 * spheres dropped into one cell of 8-bit counters fail the step with a message, nothing written
 * outside the arrays meanwhile (test_gpu3 quick runs this under memcheck). */
static void test_counter_widths(void)
{
    const struct {
        double cell;
        uint32_t bits;
    } k[] = {{0, 8}, {6, 16}};
    for (int i = 0; i < 2; i++) {
        ad_world_def d = def3();
        d.cell_size = k[i].cell;
        ad_world *w[2];
        for (int b = 0; b < 2; b++) {
            d.backend = b ? AD_BACKEND_CUDA : AD_BACKEND_CPU;
            REQUIRE_OK(ad_world_create(&d, &w[b]));
            ad_fill_def f = {0, 0, 20, 20, 0.3, 0.3, -0.2, 1.0, 77, 0, 20, 0.1};
            REQUIRE_OK(ad_world_fill(w[b], &f, NULL));
            REQUIRE_OK(ad_world_step(w[b], 10));
        }
        ad_stats s = tu_stats(w[1]);
        ENSURE_MSG(s.cell_counter_bits == k[i].bits, "cells of %g m: %u-bit counters, expected %u", k[i].cell,
                   s.cell_counter_bits, k[i].bits);
        spheres a = read_all(w[0]), c = read_all(w[1]);
        size_t outside;
        double worst = compare(&a, &c, &outside);
        printf("  %u-bit counters, 10 steps: worst error %.3g of tolerance, %zu values outside\n", s.cell_counter_bits,
               worst, outside);
        ENSURE(a.n == c.n && outside == 0);
        free(a.p), free(a.acc), free(c.p), free(c.acc);
        ad_world_destroy(w[0]);
        ad_world_destroy(w[1]);
    }
    ad_world_def d = def3();
    d.backend = AD_BACKEND_CUDA;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ENSURE(tu_stats(w).cell_counter_bits == 8);
    ad_particle3 p[300];
    for (int i = 0; i < 300; i++) /* all in the cell [10, 11)^3, deep in each other */
        p[i] = (ad_particle3){10.02f + 0.14f * (float)(i % 7), 10.02f + 0.14f * (float)((i / 7) % 7),
                              10.02f + 0.14f * (float)(i / 49), 0, 0, 0};
    REQUIRE_OK(ad_world_add_particles3(w, p, 300));
    ad_status st = ad_world_step(w, 3);
    printf("  300 spheres in one cell of 8-bit counters: %s\n", st.message);
    ENSURE(st.code == AD_ERR_UNSTABLE && strstr(st.message, "cell counters"));
    ad_world_destroy(w);
}

/* ------------------------------------------------------------ 3D fields -- */

/* A gas with a 5 x 4 x 3 field grid sampled every step and a probe (src/cuda/fields3.cuh on the GPU). */
static ad_world *gas_fields(ad_backend b, ad_integrator integ)
{
    g_backend = b;
    ad_world *w = gas(1, 0.9, integ, 2, 0.3, 1);
    g_backend = AD_BACKEND_CUDA;
    ad_field_def fd = {5, 4, 0, 0, 20, 20, 1, 3, 1, 19};
    REQUIRE_OK(ad_world_set_fields(w, &fd));
    ad_probe_def pd = {2, 2, 18, 18, 1, 0.5, 2, 18};
    REQUIRE_OK(ad_world_set_probe(w, &pd));
    return w;
}

/* Every field of a against b (abs + rel x scale tolerances per field), the probe's sums to rel x scale;
 * returns the values outside, *worst the largest error over its tolerance. */
static size_t compare_fields(const ad_world *a, const ad_world *b, double scale, double *worst)
{
    /* density, vx, vy, T, p, ax, ay, contact, vz, az: float sums of the GPU's contacts against the CPU's */
    static const double abs_tol[AD_FIELD_COUNT] = {1e-6, 2e-3, 2e-3, 1e-6, 1e-6, 2e-2, 2e-2, 1e-2, 2e-3, 2e-2};
    static const double rel_tol[AD_FIELD_COUNT] = {2e-3, 1e-3, 1e-3, 1e-3, 2e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3};
    enum { CELLS = 5 * 4 * 3 };
    size_t outside = 0;
    *worst = 0;
    for (int f = 0; f < AD_FIELD_COUNT; f++) {
        float x[CELLS], y[CELLS];
        uint64_t sa, sb;
        REQUIRE_OK(ad_world_read_field(a, (ad_field)f, x, &sa));
        REQUIRE_OK(ad_world_read_field(b, (ad_field)f, y, &sb));
        outside += sa != sb;
        for (int c = 0; c < CELLS; c++) {
            double tol = scale * (abs_tol[f] + rel_tol[f] * fabs(x[c])), r = fabs(x[c] - y[c]) / tol;
            *worst = fmax(*worst, r);
            outside += !(r <= 1.0);
        }
    }
    ad_probe_sums pa, pb;
    REQUIRE_OK(ad_world_read_probe(a, &pa));
    REQUIRE_OK(ad_world_read_probe(b, &pb));
    const double qa[5] = {pa.count, pa.v_par, pa.v_perp, pa.v_par2, pa.v_perp2};
    const double qb[5] = {pb.count, pb.v_par, pb.v_perp, pb.v_par2, pb.v_perp2};
    for (int k = 0; k < 5; k++) {
        double r = fabs(qa[k] - qb[k]) / (scale * 1e-3 * (1.0 + fabs(qa[k])));
        *worst = fmax(*worst, r);
        outside += !(r <= 1.0);
    }
    outside += pa.samples != pb.samples || !(pa.count > 0);
    return outside;
}

/* The GPU's 3D fields against the CPU's after 4 sampled steps (within float tolerances), and a checkpoint of
 * a GPU world with fields resumed on the GPU (the same to the double atomics' rounding: their order varies). */
static void test_fields(void)
{
    const ad_integrator integ[2] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_VERLET};
    for (int k = 0; k < 2; k++) {
        ad_world *c = gas_fields(AD_BACKEND_CPU, integ[k]), *g = gas_fields(AD_BACKEND_CUDA, integ[k]);
        REQUIRE_OK(ad_world_step(c, 4));
        REQUIRE_OK(ad_world_step(g, 4));
        double worst;
        size_t outside = compare_fields(c, g, 1.0, &worst);
        printf("  fields, %s, 4 samples: worst error %.3g of tolerance, %zu values outside\n",
               ad_integrator_name(integ[k]), worst, outside);
        ENSURE(outside == 0);
        ad_world_destroy(c);
        ad_world_destroy(g);
    }
    char path[] = "/tmp/aerodem_gpu3_fields_XXXXXX";
    int fd = mkstemp(path);
    ENSURE(fd >= 0);
    close(fd);
    ad_world *a = gas_fields(AD_BACKEND_CUDA, AD_INTEGRATOR_VERLET), *b = NULL;
    REQUIRE_OK(ad_world_step(a, 20));
    REQUIRE_OK(ad_world_save(a, path, NULL, 0));
    REQUIRE_OK(ad_world_step(a, 20));
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_CUDA, -1, &b, NULL, NULL));
    REQUIRE_OK(ad_world_step(b, 20));
    double worst;
    size_t outside = compare_fields(a, b, 1e-3, &worst);
    printf("  fields resumed from a checkpoint on the GPU: worst error %.3g of 1e-3 x the tolerance (a float's "
           "rounding), %zu outside; spheres %s\n", worst, outside, tu3_hash(a) == tu3_hash(b) ? "identical" : "DIFFER");
    ENSURE(outside == 0 && tu3_hash(a) == tu3_hash(b));
    ad_world_destroy(a);
    ad_world_destroy(b);
}

/* ------------------------------------------- the free stream (open x faces) -- */

/* test_open3.c's tunnel (tunnel3_cases.h): 16 x 8 x 8 m, open along x, periodic along y and z, the
 * stream at 2 m/s with kT/m = 1 and n spheres a cubic metre, filled with the stream's gas at volume
 * fraction `fraction`. */
static ad_world *tunnel3(ad_backend b, double n, double fraction, int contacts, ad_integrator integ)
{
    ad_world_def d = tu3_tunnel(b, 2, 16.0, n, contacts);
    d.integrator = integ;
    return tu3_filled(&d, fraction);
}

static uint32_t *read_ids(const ad_world *w)
{
    uint32_t *id = malloc(w->count * sizeof *id + 1);
    ad_particle_out out = {NULL, id, NULL, NULL, NULL, NULL};
    size_t got;
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, w->count, &out, &got));
    ENSURE(got == w->count);
    return id;
}

/* Tunnels c (CPU) and g (GPU) of one definition and fill after `steps` steps: the same density fields
 * (a 4 x 2 grid sampled every 10 steps: only the world's spheres, not the removed ones past its end), the
 * same spheres (ids), entered, left, waiting and the reservoir's added and removed, and every sphere's
 * state within test_gpu3's tolerances. */
static void compare_tunnels(const char *what, ad_world *c, ad_world *g, int steps)
{
    ad_field_def fd = {4, 2, 0, 0, c->def.x_max, 8, 10, 2, 0, 8};
    REQUIRE_OK(ad_world_set_fields(c, &fd));
    REQUIRE_OK(ad_world_set_fields(g, &fd));
    size_t n0 = c->count;
    REQUIRE_OK(ad_world_step(c, (uint64_t)steps));
    REQUIRE_OK(ad_world_step(g, (uint64_t)steps));
    float fc[16], fgpu[16];
    uint64_t sa = 0, sb = 0;
    REQUIRE_OK(ad_world_read_field(c, AD_FIELD_DENSITY, fc, &sa));
    REQUIRE_OK(ad_world_read_field(g, AD_FIELD_DENSITY, fgpu, &sb));
    int off = sa != sb;
    for (int q = 0; q < 16; q++) off += !(fabs(fc[q] - fgpu[q]) <= 1e-6 + 2e-3 * fabs(fc[q]));
    printf("  density fields over %llu samples: %d of 16 cells differ (cell 0: %.5g / %.5g)\n",
           (unsigned long long)sa, off, fc[0], fgpu[0]);
    ENSURE(off == 0 && sa > 0);
    ad_stats sc = tu_stats(c), sg = tu_stats(g);
    printf("  %-17s %d steps from %zu spheres: %zu / %zu spheres, entered %llu / %llu, left %llu / %llu, waiting "
           "%u / %u, reservoir +%llu -%llu / +%llu -%llu (CPU / GPU)", what, steps, n0, c->count, g->count,
           (unsigned long long)sc.entered, (unsigned long long)sg.entered, (unsigned long long)sc.left,
           (unsigned long long)sg.left, sc.entries_waiting, sg.entries_waiting,
           (unsigned long long)sc.reservoir_added, (unsigned long long)sc.reservoir_removed,
           (unsigned long long)sg.reservoir_added, (unsigned long long)sg.reservoir_removed);
    ENSURE(sg.backend == AD_BACKEND_CUDA && sc.backend == AD_BACKEND_CPU);
    ENSURE(c->count == g->count && sc.count == sg.count && sg.count == g->count);
    ENSURE(sc.entered == sg.entered && sc.left == sg.left && sc.entries_waiting == sg.entries_waiting);
    ENSURE(sc.entries_lost == sg.entries_lost);
    ENSURE(sc.reservoir_added == sg.reservoir_added && sc.reservoir_removed == sg.reservoir_removed);
    if (c->count == g->count) {
        uint32_t *ic = read_ids(c), *ig = read_ids(g);
        size_t same_ids = !memcmp(ic, ig, c->count * sizeof *ic);
        spheres a = read_all(c), b = read_all(g);
        size_t outside;
        double worst = same_ids ? compare(&a, &b, &outside) : 0;
        printf(": ids %s, worst error %.3g of tolerance, %zu values outside\n", same_ids ? "the same" : "DIFFERENT",
               worst, same_ids ? outside : 0);
        ENSURE(same_ids && outside == 0);
        ENSURE_REL(sg.kinetic_energy, sc.kinetic_energy, 1e-4);
        ENSURE_REL(sg.time, sc.time, 1e-6);
        free(ic), free(ig), free(a.p), free(a.acc), free(b.p), free(b.acc);
    } else {
        printf("\n");
    }
}

static const ad_integrator all_integ[4] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_EULER, AD_INTEGRATOR_VERLET,
                                           AD_INTEGRATOR_RK4};

/* The tunnel with contacts (volume fraction 0.05, the stream's 0.1 spheres a cubic metre) on the CPU
 * and the GPU for every integrator, compared after `steps`. */
static void test_open_against_cpu(int steps)
{
    for (int k = 0; k < 4; k++) {
        ad_world *c = tunnel3(AD_BACKEND_CPU, 0.1, 0.05, 1, all_integ[k]);
        ad_world *g = tunnel3(AD_BACKEND_CUDA, 0.1, 0.05, 1, all_integ[k]);
        compare_tunnels(ad_integrator_name(all_integ[k]), c, g, steps);
        ENSURE(steps < 500 || (tu_stats(c).entered > 5 && tu_stats(c).left > 5));
        ad_world_destroy(c);
        ad_world_destroy(g);
    }
}

/* A free-molecular stream (no sphere contacts, 0.4 spheres a cubic metre) through the tunnel filled with
 * its gas, on the GPU (test_open3's stream_case): the entries per second through the two x faces
 * against kinetic theory's one-way flux A n sigma (phi(a) + a Phi(a)), a = +-2, and the gas kept at the
 * stream over six transits (its number, mean velocity and temperature). */
static void test_open_stream(void)
{
    const double n = 0.4;
    ad_world *w = tunnel3(AD_BACKEND_CUDA, n, n * 4.0 / 3.0 * TU_PI * 0.125, 0, AD_INTEGRATOR_SYMPLECTIC_EULER);
    size_t n0 = w->count;
    double a = 2.0, phi = exp(-0.5 * a * a) / sqrt(2.0 * TU_PI), Phi = 0.5 * erfc(-a / sqrt(2.0));
    double want = 64.0 * n * ((phi + a * Phi) + (phi - a * (1 - Phi)));
    while (tu_stats(w).time < 8.0) REQUIRE_OK(ad_world_step(w, 200));
    ad_stats s0 = tu_stats(w);
    ad_particle3 *p = malloc(w->def.capacity * sizeof *p);
    ad_particle_out out = {NULL, NULL, NULL, NULL, NULL, p};
    double sum_n = 0, sum_v[3] = {0, 0, 0}, sum_v2[3] = {0, 0, 0};
    int samples = 0;
    while (tu_stats(w).time < 56.0) {
        REQUIRE_OK(ad_world_step(w, 20));
        size_t got;
        REQUIRE_OK(ad_world_read(w, 0, w->def.capacity, &out, &got));
        sum_n += (double)got;
        samples++;
        for (size_t i = 0; i < got; i++) {
            const float v[3] = {p[i].vx, p[i].vy, p[i].vz};
            for (int k = 0; k < 3; k++) sum_v[k] += v[k], sum_v2[k] += (double)v[k] * v[k];
        }
    }
    ad_stats s1 = tu_stats(w);
    double rate = (double)(s1.entered - s0.entered) / (s1.time - s0.time), count = sum_n / samples;
    double vx = sum_v[0] / sum_n, temp = 0;
    for (int k = 0; k < 3; k++) temp += (sum_v2[k] / sum_n - (sum_v[k] / sum_n) * (sum_v[k] / sum_n)) / 3.0;
    printf("free-molecular stream on the GPU, n = %g: entries %.2f/s (theory %.2f), %.1f spheres (stream: %.1f, "
           "filled with %zu), vx %.4f (2), T %.4f (1); %llu entered, %llu left\n", n, rate, want, count,
           n * 16.0 * 64.0, n0, vx, temp, (unsigned long long)s1.entered, (unsigned long long)s1.left);
    ENSURE_REL(w->params.side_rate[0] + w->params.side_rate[1], want, 1e-6);
    ENSURE_REL(rate, want, 0.01); /* the entries owed are counted exactly: only the step's fraction is off */
    ENSURE_REL(count, n * 16.0 * 64.0, 0.03);
    ENSURE_REL(vx, 2.0, 0.02);
    ENSURE_REL(temp, 1.0, 0.03);
    ENSURE(s1.count == n0 + s1.entered - s1.left && s1.entries_lost == 0 && s1.entries_waiting == 0);
    free(p);
    ad_world_destroy(w);
}

/* 3000 steps of the tunnel with contacts on the GPU, the backend auto's choice: no sphere lost or
 * duplicated (ids unique and below the counter, spheres = filled + entered - left), all inside. */
static void test_open_bookkeeping(void)
{
    ad_world_def d = tu3_tunnel(AD_BACKEND_AUTO, 2, 16.0, 0.2, 1);
    ad_stats s = tu3_bookkeeping(&d, 0.1, 3000);
    printf("  backend auto: %s\n", s.backend == AD_BACKEND_CUDA ? "cuda" : "NOT cuda");
    ENSURE(s.backend == AD_BACKEND_CUDA && s.entered > 50);
}

/* A dense stream (volume fraction 0.26) into a gas at 0.25 has spheres waiting for room: two GPU runs
 * are the same bits, and a checkpoint taken with spheres waiting resumes on the GPU bit for bit. */
static void test_open_checkpoint(void)
{
    ad_world_def d = tu3_tunnel(AD_BACKEND_CUDA, 2, 16.0, 0.5, 1);
    uint64_t h0 = tu3_run_hash(&d, 0.25, 500), h1 = tu3_run_hash(&d, 0.25, 500);
    printf("two GPU runs of 500 steps: %016llx %016llx\n", (unsigned long long)h0, (unsigned long long)h1);
    ENSURE(h0 == h1);
    tu3_checkpoint(&d, 0.25, 0, 1, AD_BACKEND_CUDA);
}

/* ------------------------------------------ the reservoir (a dense gas) -- */

/* test_reservoir3's tunnel (24 x 8 x 8 m, bands of 4 m) at volume fraction 0.2 on the CPU and the GPU
 * for every integrator, compared after `steps` (compare_tunnels): the reservoir's plans (each box's
 * count and controller, the spheres it removes), its thermostat and its additions the same. A dense gas
 * is chaotic: after 200 steps the GPU's arithmetic (its reciprocal square root) has moved a few
 * spheres past the tolerances (H200, 2026-12-02), so the comparison stops at 100; in so few steps the
 * controllers have not yet added or removed a sphere (+0 -0 on both, which must agree): the additions
 * and removals are compared statistically by test_reservoir_statistics and the long runs below. */
static void test_reservoir_against_cpu(int steps)
{
    for (int k = 0; k < 4; k++) {
        ad_world_def dc = tu3_reservoir_tunnel(AD_BACKEND_CPU, 2, 0.2), dg = dc;
        dc.integrator = dg.integrator = all_integ[k];
        dg.backend = AD_BACKEND_CUDA;
        ad_world *c = tu3_filled(&dc, 0.2), *g = tu3_filled(&dg, 0.2);
        compare_tunnels(ad_integrator_name(all_integ[k]), c, g, steps);
        ad_world_destroy(c);
        ad_world_destroy(g);
    }
}

/* A run with a body: per batch the drag and the density of three regions along the tunnel (the inlet's
 * band [0, 4) m, the tunnel [4, 20) m with the body, the outlet's band [20, 24) m); their means and
 * standard errors over the batches (batch means). */
enum { RES_BATCHES = 10, RES_REGIONS = 3 };
static const int res_edge[RES_REGIONS + 1] = {0, 4, 20, 24};

typedef struct mean_se {
    double mean, se;
} mean_se;

static mean_se batch_mean(const double *x, int n)
{
    double m = 0, v = 0;
    for (int k = 0; k < n; k++) m += x[k] / n;
    for (int k = 0; k < n; k++) v += (x[k] - m) * (x[k] - m) / (n - 1);
    mean_se r = {m, sqrt(v / n)};
    return r;
}

typedef struct res_run {
    mean_se drag, density[RES_REGIONS];
    ad_stats stats;
} res_run;

/* The reservoir tunnel at 0.2 with a cube of 2 m (x 11-13 m, y and z 3-5 m) on backend b: 10 s to settle,
 * then RES_BATCHES batches of 10 s. */
static res_run reservoir_with_body(ad_backend b)
{
    ad_world_def d = tu3_reservoir_tunnel(b, 2, 0.2);
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_triangle t[12];
    cube_at(t, 11, 3, 3, 2);
    REQUIRE_OK(ad_world_add_triangles(w, t, 12));
    ad_fill_def f = {0, 0, d.x_max, 8, 0.2, 2.0, 0.0, 1.0, 5, 0, 8, 0.0};
    REQUIRE_OK(ad_world_fill(w, &f, NULL));
    tu3_run_until(w, 10.0);
    double drag[RES_BATCHES], dens[RES_REGIONS][RES_BATCHES];
    for (int k = 0; k < RES_BATCHES; k++) {
        ad_stats s0 = tu_stats(w);
        tu3_slabs *s = tu3_sample(w, s0.time + 10.0);
        ad_stats s1 = tu_stats(w);
        drag[k] = (s1.body_impulse_x - s0.body_impulse_x) / (s1.time - s0.time);
        for (int r = 0; r < RES_REGIONS; r++) {
            double sum = 0;
            for (int j = res_edge[r]; j < res_edge[r + 1]; j++) sum += s->n[j];
            dens[r][k] = sum / (s->samples * 64.0 * (res_edge[r + 1] - res_edge[r]));
        }
        free(s);
    }
    res_run r;
    r.drag = batch_mean(drag, RES_BATCHES);
    for (int k = 0; k < RES_REGIONS; k++) r.density[k] = batch_mean(dens[k], RES_BATCHES);
    r.stats = tu_stats(w);
    ad_world_destroy(w);
    return r;
}

/* |a - b| within 3 combined standard errors, the errors at least `floor` of the mean each (batches of
 * 10 s are shorter than the slowest fluctuations of a region: about 2 % over 200 s in test_reservoir3's
 * seeds); returns the distance in combined errors. */
static double apart(mean_se a, mean_se b, double floor)
{
    double ea = fmax(a.se, floor * fabs(a.mean)), eb = fmax(b.se, floor * fabs(b.mean));
    double z = fabs(a.mean - b.mean) / sqrt(ea * ea + eb * eb);
    ENSURE_LE(z, 3.0);
    return z;
}

/* The GPU's reservoir against the CPU's in a run with a body, where the two part after a few hundred
 * steps (the GPU's distances round otherwise): the density of three regions along the tunnel and the
 * drag on the cube, each within 3 combined standard errors of the CPU's. */
static void test_reservoir_statistics(void)
{
    res_run c = reservoir_with_body(AD_BACKEND_CPU), g = reservoir_with_body(AD_BACKEND_CUDA);
    double n = tu3_density_of(0.2);
    for (int k = 0; k < RES_REGIONS; k++) {
        double z = apart(c.density[k], g.density[k], 0.01);
        printf("  x in [%2d, %2d) m: density / n %.4f +- %.4f (CPU), %.4f +- %.4f (GPU): %.2f combined errors apart\n",
               res_edge[k], res_edge[k + 1], c.density[k].mean / n, c.density[k].se / n, g.density[k].mean / n,
               g.density[k].se / n, z);
    }
    double z = apart(c.drag, g.drag, 0.0);
    printf("  drag on the cube: %.3f +- %.3f N (CPU), %.3f +- %.3f N (GPU): %.2f combined standard errors apart; "
           "reservoir +%llu -%llu (CPU), +%llu -%llu (GPU)\n", c.drag.mean, c.drag.se, g.drag.mean, g.drag.se, z,
           (unsigned long long)c.stats.reservoir_added, (unsigned long long)c.stats.reservoir_removed,
           (unsigned long long)g.stats.reservoir_added, (unsigned long long)g.stats.reservoir_removed);
    /* the controllers added and removed spheres on both (the sphere-by-sphere comparison is too short) */
    ENSURE(c.stats.reservoir_added > 0 && c.stats.reservoir_removed > 0);
    ENSURE(g.stats.reservoir_added > 0 && g.stats.reservoir_removed > 0);
    ENSURE(c.drag.mean > 0 && c.drag.se < 0.2 * c.drag.mean);
}

/* The reservoir on the GPU: two runs the same bits, a checkpoint with the controllers part way resumed
 * on the GPU bit for bit, every sphere accounted for over 3000 steps. */
static void test_reservoir_runs(void)
{
    ad_world_def d = tu3_reservoir_tunnel(AD_BACKEND_CUDA, 2, 0.2);
    uint64_t h0 = tu3_run_hash(&d, 0.2, 1500), h1 = tu3_run_hash(&d, 0.2, 1500);
    printf("two GPU runs of 1500 steps with the reservoir: %016llx %016llx\n", (unsigned long long)h0,
           (unsigned long long)h1);
    ENSURE(h0 == h1);
    tu3_checkpoint(&d, 0.2, 700, 0, AD_BACKEND_CUDA);
    ad_stats s = tu3_bookkeeping(&d, 0.2, 3000);
    ENSURE(s.reservoir_added > 0 && s.reservoir_removed > 0);
}

/* quick: the comparisons after one step only (for compute-sanitizer) */
int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "quick");
    char desc[512];
    if (ad_backend_describe(AD_BACKEND_CUDA, desc, sizeof desc) <= 0) {
        printf("test_gpu3: no CUDA GPU (or no CUDA backend in this build): skipped\n");
        return 77;
    }
    printf("per-sphere agreement with the CPU:\n");
    test_against_cpu(quick);
    printf("cell counters:\n");
    test_counter_widths();
    printf("3D fields:\n");
    test_fields();
    printf("the free stream against the CPU:\n");
    test_open_against_cpu(quick ? 50 : 800);
    printf("the reservoir against the CPU:\n");
    test_reservoir_against_cpu(quick ? 20 : 100);
    g_backend = AD_BACKEND_CUDA;
    if (quick) return tu_finish("test_gpu3 quick");
    test_two_runs();
    test_pair_collision();
    test_triangle_collisions();
    test_momentum();
    test_no_loss();
    test_checkpoint();
    test_open_stream();
    test_open_bookkeeping();
    test_open_checkpoint();
    printf("the reservoir on the GPU:\n");
    test_reservoir_runs();
    test_reservoir_statistics();
    /* the long run that keeps the reservoir's density (reservoir3_long's on the CPU): 40 s to settle,
     * means over 200 s */
    tu3_reservoir_case(AD_BACKEND_CUDA, 0.1, 40.0, 240.0, 3, 0.03, 0.02, 0.05);
    tu3_reservoir_case(AD_BACKEND_CUDA, 0.2, 40.0, 240.0, 1, 0.03, 0.02, 0.05);
    return tu_finish("test_gpu3");
}
